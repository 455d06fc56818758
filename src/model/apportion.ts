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
 * A sweep over the intervals' boundaries: O(n log n + s·a) for n intervals, s ≤ 2n elementary
 * segments and a the distinct activities of the lowest priority present (a handful). Each
 * priority keeps, per activity, the sum of its active intervals' rates (weighted activity seconds
 * per second of interval), so a segment's shares are read off the running sums instead of
 * rescanning every interval — the rescan made a task leaving `waiting` after 8,000 fetched
 * dependencies take 2–4 s. Intervals already in time order without overlap skip the sort and the
 * sums: O(n). Runs once per waiting visit that had dependencies fetched, often before
 * V8 has optimised it: plain index loops, no closure per segment.
 */
export function apportionWaiting(
  waitStart: number,
  waitEnd: number,
  intervals: readonly WaitInterval[],
  dependenciesId: number,
  otherId: number,
  into: Map<number, number> = new Map(),
  /** How many of `intervals` to read (a caller's reused list may hold more). */
  intervalCount: number = intervals.length,
): Map<number, number> {
  const shares = apportionShares(waitStart, waitEnd, intervals, dependenciesId, otherId, [], intervalCount);
  for (let share = 0; share < shares.length; share += 2)
    into.set(shares[share], (into.get(shares[share]) ?? 0) + shares[share + 1]);
  return into;
}

/**
 * apportionWaiting() into a flat list, activity id and seconds after each other, in the order
 * the activities were first given time (a Map's order): the recorder's path, once per dependent
 * that waited for fetches. A Map there made a table and a boxed number per share, and its
 * entries an array each when read (≈ 500 B a task in the cluster worker).
 */
export function apportionShares(
  waitStart: number,
  waitEnd: number,
  intervals: readonly WaitInterval[],
  dependenciesId: number,
  otherId: number,
  into: number[],
  intervalCount: number = intervals.length,
): number[] {
  if (!(waitEnd > waitStart)) return into;

  // Events: an interval's clipped start (code 2i) and end (code 2i + 1), ordered by time. Module
  // scratch arrays grown as needed, not fresh arrays per call: with one call per dependent of
  // thousands of shared fetches, the per-call arrays were most of the garbage.
  let count = 0;
  let sorted = true;
  let last = -Infinity;
  for (let i = 0; i < intervalCount; i++) {
    const interval = intervals[i];
    if (!(interval.end > interval.start) || !(interval.end > waitStart) || !(interval.start < waitEnd)) continue;
    if (count + 2 > times.length) grow(count + 2);
    const start = interval.start > waitStart ? interval.start : waitStart;
    const end = interval.end < waitEnd ? interval.end : waitEnd;
    if (start < last) sorted = false;
    last = end;
    times[count] = start;
    codes[count++] = 2 * i;
    times[count] = end;
    codes[count++] = 2 * i + 1;
  }
  if (count === 0) {
    add(into, dependenciesId, waitEnd - waitStart);
    return into;
  }
  // Serial fetches and a retried dependency's visits come in time order without overlapping:
  // then each interval is a segment of its own and the gaps between them are the dependencies
  // time, with no sort and no running sums (the sweep below gives the same shares, slower).
  if (sorted) {
    let cursor = waitStart;
    for (let k = 0; k < count; k += 2) {
      if (times[k] > cursor) add(into, dependenciesId, times[k] - cursor);
      fillFromOne(intervals[codes[k] >> 1], times[k + 1] - times[k], otherId, into);
      cursor = times[k + 1];
    }
    if (waitEnd > cursor) add(into, dependenciesId, waitEnd - cursor);
    return into;
  }
  const sequence = sortedOrder(count);

  const groups: PriorityGroup[] = [];
  let cursor = waitStart;
  let e = 0;
  while (cursor < waitEnd) {
    while (e < count && times[sequence[e]] <= cursor) {
      const code = codes[sequence[e++]];
      apply(groups, intervals, code >> 1, (code & 1) === 0);
    }
    const next = e < count && times[sequence[e]] < waitEnd ? times[sequence[e]] : waitEnd;
    const length = next - cursor;
    if (length > 0) fill(groups, intervals, length, dependenciesId, otherId, into);
    cursor = next;
  }
  return into;
}

/** The active intervals of one priority: how many, and their summed rate per activity. */
interface PriorityGroup {
  priority: number;
  active: number;
  /** Sum of the active intervals' indices: while one is active, its index (the exact path). */
  indexSum: number;
  ids: number[];
  /** Summed rate per activity: activity seconds × weight / interval length. */
  rates: number[];
  /** Active intervals contributing to each rate; at 0 the rate is reset to exactly 0 (no drift). */
  contributors: number[];
}

function apply(groups: PriorityGroup[], intervals: readonly WaitInterval[], index: number, starts: boolean): void {
  const interval = intervals[index];
  let group: PriorityGroup | undefined;
  for (let g = 0; g < groups.length; g++) {
    if (groups[g].priority === interval.priority) {
      group = groups[g];
      break;
    }
  }
  if (group === undefined) {
    group = { priority: interval.priority, active: 0, indexSum: 0, ids: [], rates: [], contributors: [] };
    groups.push(group);
  }
  const sign = starts ? 1 : -1;
  group.active += sign;
  group.indexSum += sign * index;
  const perSecond = interval.weight / (interval.end - interval.start);
  const activities = interval.activities;
  for (let a = 0; a + 1 < activities.length; a += 2) {
    const seconds = activities[a + 1];
    if (!(seconds > 0)) continue;
    let slot = group.ids.indexOf(activities[a]);
    if (slot === -1) {
      slot = group.ids.length;
      group.ids.push(activities[a]);
      group.rates.push(0);
      group.contributors.push(0);
    }
    group.contributors[slot] += sign;
    group.rates[slot] = group.contributors[slot] === 0 ? 0 : group.rates[slot] + sign * seconds * perSecond;
  }
}

/** One elementary segment: shared among the lowest priority present, in proportion to its rates. */
function fill(
  groups: PriorityGroup[],
  intervals: readonly WaitInterval[],
  length: number,
  dependenciesId: number,
  otherId: number,
  into: number[],
): void {
  let best: PriorityGroup | undefined;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    if (group.active > 0 && (best === undefined || group.priority < best.priority)) best = group;
  }
  if (best === undefined) {
    add(into, dependenciesId, length);
    return;
  }
  if (best.active === 1) {
    fillFromOne(intervals[best.indexSum], length, otherId, into);
    return;
  }
  // Shares as a plain proportional split would round them: rate × length, rescaled to the length.
  let raw = 0;
  for (let slot = 0; slot < best.ids.length; slot++) if (best.rates[slot] > 0) raw += best.rates[slot] * length;
  if (!(raw > 0)) {
    add(into, otherId, length);
    return;
  }
  const scale = length / raw;
  for (let slot = 0; slot < best.ids.length; slot++) {
    if (best.rates[slot] > 0) add(into, best.ids[slot], best.rates[slot] * length * scale);
  }
}

/**
 * The usual segment, covered by one interval: its activities' shares computed directly, in the
 * order and with the rounding of a plain proportional split, so a lone transfer's activities come
 * out exact (2 s of network is 2, not 2.0000000000000004 from the running rate sums).
 */
function fillFromOne(interval: WaitInterval, length: number, otherId: number, into: number[]): void {
  const fraction = (length / (interval.end - interval.start)) * interval.weight;
  const activities = interval.activities;
  // The scratch arrays are reused with a count, not truncated: `length = 0` frees their storage,
  // and with one segment per fetched dependency that churn was most of the sweep's time.
  let count = 0;
  let raw = 0;
  for (let a = 0; a + 1 < activities.length; a += 2) {
    const seconds = activities[a + 1];
    if (!(seconds > 0)) continue;
    const share = seconds * fraction;
    const id = activities[a];
    let slot = 0;
    while (slot < count && scratchIds[slot] !== id) slot++;
    if (slot === count) {
      scratchIds[count] = id;
      scratchShares[count++] = share;
    } else {
      scratchShares[slot] += share;
    }
    raw += share;
  }
  if (!(raw > 0)) {
    add(into, otherId, length);
    return;
  }
  const scale = length / raw;
  for (let slot = 0; slot < count; slot++) add(into, scratchIds[slot], scratchShares[slot] * scale);
}
const scratchIds: number[] = [];
const scratchShares: number[] = [];

/** Adds `seconds` to activity `id`'s share in `into` (a handful of activities: a linear search). */
function add(into: number[], id: number, seconds: number): void {
  if (!(seconds > 0)) return;
  for (let share = 0; share < into.length; share += 2) {
    if (into[share] === id) {
      into[share + 1] += seconds;
      return;
    }
  }
  into.push(id, seconds);
}

let times = new Float64Array(64);
let codes = new Int32Array(64);
let order = new Int32Array(64);

function grow(needed: number): void {
  let size = times.length;
  while (size < needed) size *= 2;
  const grownTimes = new Float64Array(size);
  grownTimes.set(times);
  times = grownTimes;
  const grownCodes = new Int32Array(size);
  grownCodes.set(codes);
  codes = grownCodes;
  order = new Int32Array(size);
}

/**
 * Indices of the first `count` times in ascending order of time, ties in index order (as the
 * intervals were given): insertion sort for the usual handful, else a stable sort().
 */
function sortedOrder(count: number): Int32Array {
  for (let i = 0; i < count; i++) order[i] = i;
  if (count > 16) {
    order.subarray(0, count).sort((a, b) => times[a] - times[b] || a - b);
    return order;
  }
  for (let i = 1; i < count; i++) {
    const index = order[i];
    const value = times[index];
    let j = i - 1;
    while (j >= 0 && times[order[j]] > value) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = index;
  }
  return order;
}
