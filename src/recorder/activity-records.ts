import { firstAtOrAfter } from "./sorted.js";

/**
 * Fields of one activity record in a flat `number[]`; records are written on the hot path without
 * allocating an object each. A record's self time is its wall time minus its nested records'.
 */
export const ACTIVITY_VISIT = 0;
export const ACTIVITY_ID = 1;
export const ACTIVITY_PARENT = 2;
export const ACTIVITY_START = 3;
export const ACTIVITY_END = 4;
export const ACTIVITY_CHILD_SECONDS = 5;
export const ACTIVITY_SELF_SECONDS = 6;
export const ACTIVITY_FIELDS = 7;

/**
 * Appends an activity record still open (its end NaN until closed) to `records` and returns its
 * offset. `visit` is the journey's visit index (-1 on a transfer); `parent` a record offset or -1.
 */
export function openActivity(
  records: number[],
  visit: number,
  activity: number,
  parent: number,
  start: number,
): number {
  const record = records.length;
  records.push(visit, activity, parent, start, Number.NaN, 0, 0);
  return record;
}

/**
 * Marks `record` as made by digest() (its interval inferred, ending when the measurement was
 * taken): its child seconds, always 0 in a digested record (it is closed as it is opened, so
 * nothing nests under it), are written as -0. A mark in the record itself, where a list of
 * digested offsets was an array and the journey's JourneyDetail made per digesting ledger
 * (~350 B a task in the replayed cluster worker); copied with the records (RetainedJourneys),
 * and 0 to every sum.
 */
export function markDigested(records: number[], record: number): void {
  records[record + ACTIVITY_CHILD_SECONDS] = -0;
}

/** Whether `record` was made by digest() (see markDigested). */
export function isDigested(records: ArrayLike<number>, record: number): boolean {
  const child = records[record + ACTIVITY_CHILD_SECONDS];
  return child === 0 && 1 / child < 0;
}

/** Appends a closed top-level activity record of `seconds` self time over [start, end]. */
export function addActivity(
  records: number[],
  visit: number,
  activity: number,
  start: number,
  end: number,
  seconds: number,
): void {
  records.push(visit, activity, -1, start, end, 0, seconds);
}

/**
 * The offset of the first of `records` whose visit is at or after `visit`: records are appended
 * with the visit current when written (a journey's visits only advance; a transfer's and a serve's
 * records are all visit -1), so they come in visit order (sorted.ts).
 */
export function firstRecordOf(records: readonly number[], visit: number): number {
  return firstAtOrAfter(records, visit, ACTIVITY_FIELDS, ACTIVITY_VISIT) * ACTIVITY_FIELDS;
}

/** Fields of one non-time quantity digested into a ledger (bytes, counts). */
export const QUANTITY_VISIT = 0;
export const QUANTITY_ACTIVITY = 1;
export const QUANTITY_UNIT = 2;
export const QUANTITY_VALUE = 3;
export const QUANTITY_FIELDS = 4;

/** Appends a quantity (QUANTITY_FIELDS numbers) of `unit` digested into `activity` on `visit`. */
export function addQuantity(quantities: number[], visit: number, activity: number, unit: number, value: number): void {
  quantities.push(visit, activity, unit, value);
}
