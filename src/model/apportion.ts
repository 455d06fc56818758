/**
 * Waiting-time apportioning: why did a task wait? Pure arithmetic on intervals, no clocks.
 *
 * Each fetched dependency contributes intervals of what it was doing (queued in `fetch`, a
 * transfer's activities in `flight`, `missing`), weighted by 1 / (number of dependents that were
 * waiting for it). DESIGN.md rescales the whole sum once to the covered part of the waiting
 * interval; we rescale piecewise instead: the waiting interval is cut at every interval boundary,
 * and each elementary segment is filled by the activities of the intervals active during it,
 * in proportion to their weighted share. The single global rescale gives the same answer for both
 * of the field checks only when no dependency queues behind another; piecewise rescaling also
 * gives the right answer when the second of two serial fetches was queued during the first
 * (the queue time overlapped the first transfer, so the dependent was not waiting *for* it).
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
  /** [activityId, seconds] pairs: what the dependency did during this interval. */
  activities: ReadonlyArray<readonly [number, number]>;
}

/**
 * Splits [waitStart, waitEnd] among the activities of `intervals`, adding seconds per activity id
 * into `into`; uncovered time goes to `dependenciesId`, covered time with no activity seconds to
 * `otherId`.
 */
export function apportionWaiting(
  waitStart: number,
  waitEnd: number,
  intervals: readonly WaitInterval[],
  dependenciesId: number,
  otherId: number,
  into: Map<number, number> = new Map(),
): Map<number, number> {
  const add = (id: number, seconds: number): void => {
    if (seconds > 0) into.set(id, (into.get(id) ?? 0) + seconds);
  };
  if (!(waitEnd > waitStart)) return into;

  const cuts = [waitStart, waitEnd];
  for (const interval of intervals) {
    if (interval.start > waitStart && interval.start < waitEnd) cuts.push(interval.start);
    if (interval.end > waitStart && interval.end < waitEnd) cuts.push(interval.end);
  }
  cuts.sort((a, b) => a - b);

  const segmentShares = new Map<number, number>();
  for (let c = 0; c + 1 < cuts.length; c++) {
    const from = cuts[c];
    const to = cuts[c + 1];
    const length = to - from;
    if (!(length > 0)) continue;
    segmentShares.clear();
    let raw = 0;
    let covered = false;
    let best = Infinity;
    for (const interval of intervals) {
      if (interval.start <= from && interval.end >= to && interval.priority < best) best = interval.priority;
    }
    for (const interval of intervals) {
      if (!(interval.start <= from && interval.end >= to && interval.end > interval.start)) continue;
      if (interval.priority !== best) continue;
      covered = true;
      // The part of this interval's activity seconds that falls in the segment, weighted.
      const fraction = (length / (interval.end - interval.start)) * interval.weight;
      for (const [id, seconds] of interval.activities) {
        if (!(seconds > 0)) continue;
        const share = seconds * fraction;
        segmentShares.set(id, (segmentShares.get(id) ?? 0) + share);
        raw += share;
      }
    }
    if (!covered) {
      add(dependenciesId, length);
    } else if (!(raw > 0)) {
      add(otherId, length);
    } else {
      const scale = length / raw;
      for (const [id, share] of segmentShares) add(id, share * scale);
    }
  }
  return into;
}
