/**
 * Waiting-time apportioning: why did a task wait? Pure arithmetic on intervals, no clocks.
 *
 * Each fetched dependency contributes intervals of what it was doing (queued in `fetch`, a
 * transfer's activities in `flight`, `missing`), weighted by 1 / (number of dependents that were
 * waiting for it). The first design rescaled the whole sum once to the covered part of the waiting
 * interval; we rescale piecewise instead (docs/apportioning.md): the waiting interval is cut at
 * every interval boundary, and each elementary segment is filled by the activities of the
 * intervals active during it, in proportion to their weighted share. The single global rescale
 * gives the same answer for both of the field checks only when no dependency queues behind
 * another; piecewise rescaling also gives the right answer when the second of two serial fetches
 * was queued during the first (the queue time overlapped the first transfer, so the dependent was
 * not waiting *for* it).
 * Segments covered by no interval are `dependencies` time (computing locally, scheduling).
 * The result always sums to the waiting time and no share is negative.
 */

export interface WaitInterval {
  start: number;
  end: number;
  /** 1 / number of dependents the dependency was noted for. */
  weight: number;
  /** Lower wins: within a segment only the intervals of the lowest priority present count. */
  priority: number;
  /** What the dependency did during this interval: activityId, seconds, activityId, seconds, … */
  activities: readonly number[];
}

/**
 * Splits [waitStart, waitEnd] among the activities of `intervals`, adding seconds per activity id
 * into `into`; uncovered time goes to `dependenciesId`, covered time with no activity seconds to
 * `otherId`.
 *
 * Runs once per waiting visit that had dependencies fetched, often before V8 has optimised it:
 * plain index loops and a few small arrays, no per-segment Map or closure.
 */
export function apportionWaiting(
  waitStart: number,
  waitEnd: number,
  intervals: readonly WaitInterval[],
  dependenciesId: number,
  otherId: number,
  into: Map<number, number> = new Map(),
): Map<number, number> {
  if (!(waitEnd > waitStart)) return into;

  const cuts = [waitStart, waitEnd];
  for (let i = 0; i < intervals.length; i++) {
    const interval = intervals[i];
    if (interval.start > waitStart && interval.start < waitEnd) cuts.push(interval.start);
    if (interval.end > waitStart && interval.end < waitEnd) cuts.push(interval.end);
  }
  sortNumbers(cuts);

  // The shares of one segment, by activity: a handful of ids, so parallel arrays searched linearly.
  const shareIds: number[] = [];
  const shares: number[] = [];
  for (let c = 0; c + 1 < cuts.length; c++) {
    const from = cuts[c];
    const to = cuts[c + 1];
    const length = to - from;
    if (!(length > 0)) continue;
    shareIds.length = 0;
    shares.length = 0;
    let raw = 0;
    let covered = false;
    let best = Infinity;
    for (let i = 0; i < intervals.length; i++) {
      const interval = intervals[i];
      if (interval.start <= from && interval.end >= to && interval.priority < best) best = interval.priority;
    }
    for (let i = 0; i < intervals.length; i++) {
      const interval = intervals[i];
      if (!(interval.start <= from && interval.end >= to && interval.end > interval.start)) continue;
      if (interval.priority !== best) continue;
      covered = true;
      // The part of this interval's activity seconds that falls in the segment, weighted.
      const fraction = (length / (interval.end - interval.start)) * interval.weight;
      const activities = interval.activities;
      for (let a = 0; a + 1 < activities.length; a += 2) {
        const seconds = activities[a + 1];
        if (!(seconds > 0)) continue;
        const share = seconds * fraction;
        const slot = shareIds.indexOf(activities[a]);
        if (slot === -1) {
          shareIds.push(activities[a]);
          shares.push(share);
        } else {
          shares[slot] += share;
        }
        raw += share;
      }
    }
    if (!covered) {
      add(into, dependenciesId, length);
    } else if (!(raw > 0)) {
      add(into, otherId, length);
    } else {
      const scale = length / raw;
      for (let slot = 0; slot < shareIds.length; slot++) add(into, shareIds[slot], shares[slot] * scale);
    }
  }
  return into;
}

function add(into: Map<number, number>, id: number, seconds: number): void {
  if (seconds > 0) into.set(id, (into.get(id) ?? 0) + seconds);
}

/** Ascending, in place: insertion sort, as there are a few cuts per waiting visit. */
function sortNumbers(values: number[]): void {
  for (let i = 1; i < values.length; i++) {
    const value = values[i];
    let j = i - 1;
    while (j >= 0 && values[j] > value) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = value;
  }
}
