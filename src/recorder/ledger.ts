import {
  ACTIVITY_CHILD_SECONDS,
  ACTIVITY_END,
  ACTIVITY_FIELDS,
  ACTIVITY_PARENT,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_START,
  markDigested,
  openActivity,
  type Journey,
  type Transfer,
} from "./journey.js";
import { ambientLedger, NO_ARGUMENTS, type AmbientFrame, type MutableFrame } from "./ambient.js";
import type { Accumulators } from "./accumulators.js";
import type { Interner } from "./interner.js";
import type { Machine } from "../model/machine.js";
import type { DropReason } from "./drop-reasons.js";
import type { OptionsFailures } from "./call-options.js";
import { isAsyncFunction, isThenable, type AnyFunction } from "../shared/functions.js";
import { show } from "../model/show.js";

/**
 * What a ledger needs from its recorder. An ended ledger settles its own records into the
 * accumulators and hands the recorder only what moves its keys on (`executionEnded`,
 * `transferEnded`). The recorder calls into a ledger only to close it when its journey ends
 * first (`closeEarly`), so that no ledger the caller forgot keeps a journey open.
 */
export interface LedgerHost {
  now(at?: unknown): number;
  /**
   * Reads the clock into `lastReading`. The hot path reads time so, not through now(): a double
   * returned from a call that is not inlined is a fresh 16 B HeapNumber (see Recorder.tick).
   */
  tick(): void;
  readonly lastReading: number;
  /** Seconds a time may lie from the clock; a longer digested duration is absurd too. */
  readonly maxClockSkew: number;
  activityId(name: string): number;
  unitId(name: string): number;
  /** Bad input: counted, told once, thrown when strict (failures.ts). */
  drop(reason: DropReason, detail: string, journey?: undefined, kind?: string): void;
  /** The failure path itself, for input() and deprecated() (end()'s options, call-options.ts). */
  readonly failures: OptionsFailures;
  /** False: ambient frames are synchronous only (no AsyncLocalStorage); see ambient.ts. Default true. */
  readonly asyncContext?: boolean;
  readonly accumulators: Accumulators;
  readonly units: Interner;
  /** The state machine: where an ended execution or transfer moves its keys. */
  readonly machine: Machine;
  /** The QUANTITY_UNITS index of a unit id, or -1 for a unit metrics do not aggregate. */
  quantityUnit(unitId: number): number;
  /** An execution ended at `time`: its journey moves on to `nextState` (a state id). */
  executionEnded(journey: Journey, nextState: number, time: number): void;
  /**
   * A transfer ended at `time` (its `end` and `outcome` set): each key carried gets its share of
   * the transfer's activities (see `addTransferShare`, with `lumpId` and `other`) and moves on to
   * `nextState`.
   */
  transferEnded(transfer: Transfer, nextState: number, lumpId: number, other: number, time: number): void;
}

/** close()'s `end` for the clock's now. */
const NOW = Number.NaN;

/**
 * An outcome a ledger's end() does not take (a typo: `end("done")`): counted (invalid-outcome)
 * and told once per distinct value, naming the ledger, the value and the outcomes it takes.
 * Recorded as `failure` only when an error came with it, the one sure sign that the work failed;
 * else as `success`, what end() records without an outcome. A misspelt outcome says nothing of
 * how the work went, and reading every one as a failure turned successes into failures (failed
 * counts, error spans kept, failed keys in the report) that never happened; told at once, the
 * mistake is fixed either way. Returns the outcome recorded.
 */
export function unknownOutcome<T extends string>(
  host: LedgerHost,
  ledger: "execute" | "gather" | "serve",
  subject: string,
  outcome: unknown,
  valid: readonly string[],
  error: unknown,
  success: T,
  failure: T,
  // The state the journey goes to, by the machine's own name (a custom machine's "done", not
  // Dask's "memory"), where it differs from the outcome recorded.
  shown: { success: string; failure: string } = { success, failure },
): T {
  const recorded = error === undefined ? success : failure;
  const named = error === undefined ? shown.success : shown.failure;
  host.drop(
    "invalid-outcome",
    `the ${ledger} ledger ${subject}: end(${show(outcome)}): not an outcome it takes (${valid.map((name) => `"${name}"`).join(", ")}); ` +
      `recorded as "${named}" (${error === undefined ? "no error given: success, as end() without an outcome" : "an error given"})`,
    undefined,
    `invalid-outcome ${ledger} ${typeof outcome === "string" ? outcome.slice(0, 64) : typeof outcome}`,
  );
  return recorded;
}

/**
 * Meters the activities of one execution or one transfer. Activity records are appended to a flat
 * number array; a nested activity's wall time is subtracted from its parent's self time, so self
 * times of one ledger add up to at most its wall time and the remainder is `other`.
 */
export abstract class Ledger {
  /** The innermost record opened by synchronous nesting, or -1. */
  private openRecord = -1;
  /** Async records still open, for closing them at the ledger's end (and after it: see holdRecords()). */
  protected asyncOpen = 0;
  /** Wall seconds of this ledger's top-level records. */
  protected topLevelSeconds = 0;
  protected readonly firstRecord: number;
  ended = false;
  /**
   * Ended by the recorder, not the caller: its journey ended (or was evicted) first, which was
   * counted then. The caller's later meter(), digest() and end() are not counted again.
   */
  protected closedEarly = false;
  /**
   * The ambient frame of this ledger's top level (`run()`), made on first use. Without
   * asyncContext it is also the one frame of all its activities, its record set for each call
   * and back to -1 after (see meterApply; a field of its own cost 8 B a ledger).
   */
  private topFrame: MutableFrame | undefined = undefined;

  constructor(
    protected readonly host: LedgerHost,
    protected readonly records: number[],
    readonly start: number,
  ) {
    this.firstRecord = records.length;
  }

  /** The visit index stamped on new records (the current state visit for execute ledgers). */
  protected abstract currentVisit(): number;

  /**
   * Times `work` as `activity`. Sync work is timed to its return, async work to its settlement;
   * the result, the thrown error or the rejection passes through unchanged.
   */
  meter<T>(activity: string, work: () => T): T {
    if (typeof work !== "function") {
      // Nothing to run: opening a record here would leave it open until the ledger's end.
      this.host.drop("invalid-work", `meter(${show(activity)}) given ${show(work)}, not a function`);
      return undefined as T;
    }
    if (this.ended) {
      if (!this.closedEarly) this.host.drop("ledger-ended", `meter(${show(activity)}) after end()`);
      return work();
    }
    return this.meterApply(activity, work, undefined, NO_ARGUMENTS, isAsyncFunction(work)) as T;
  }

  /**
   * meter() of `fn` called with `self` and `args`: the wrappers' path, which makes no closure per
   * call. `async`: `fn` is an async function, so activities after its first await nest under it.
   * If recording fails before `fn` runs, `onFailure` is told (without it, the error is thrown)
   * and `fn` runs untimed. On an ended ledger `fn` runs untimed, and nothing is counted.
   */
  meterApply(
    activity: string,
    fn: AnyFunction,
    self: unknown,
    args: ArrayLike<unknown>,
    async: boolean,
    onFailure?: (error: unknown) => void,
  ): unknown {
    if (this.ended) return Reflect.apply(fn, self, args);
    let record: number;
    let frame: AmbientFrame | undefined = undefined;
    const asyncContext = this.host.asyncContext !== false;
    try {
      const activityId = this.host.activityId(activity);
      const parent = this.parentRecord();
      this.host.tick();
      record = this.open(activityId, parent, this.host.lastReading);
      // The record is the ambient frame's, so `journeys.meter()` and `currentLedger()` inside the
      // work find this ledger and nest under the record: synchronously, and (with asyncContext)
      // in the continuations of whatever promise the work makes, async function or not. Without
      // asyncContext the frame is seen only while the work runs, so the ledger's one frame is
      // reused (ambientLedger.applyAt): a 40 B object per activity less.
      if (asyncContext) frame = { ledger: this, record };
    } catch (error) {
      if (onFailure === undefined) throw error;
      // taskjourney failed before the work ran: run it untouched.
      onFailure(error);
      return Reflect.apply(fn, self, args);
    }
    if (async) {
      this.asyncOpen++;
      let pending: unknown;
      try {
        pending =
          frame !== undefined
            ? ambientLedger.apply(frame, fn, self, args)
            : ambientLedger.applyAt(this.syncFrame(), record, fn, self, args);
      } catch (error) {
        this.asyncOpen--;
        this.close(record, NOW);
        throw error;
      }
      return this.closeWhenSettled(record, pending);
    }
    // A plain function's synchronous nesting is tracked by `openRecord`, with no lookup.
    const outer = this.openRecord;
    this.openRecord = record;
    let result: unknown;
    try {
      result =
        frame !== undefined
          ? ambientLedger.apply(frame, fn, self, args)
          : ambientLedger.applyAt(this.syncFrame(), record, fn, self, args);
    } catch (error) {
      this.openRecord = outer;
      this.close(record, NOW);
      throw error;
    }
    this.openRecord = outer;
    if (isThenable(result)) {
      this.asyncOpen++;
      return this.closeWhenSettled(record, result);
    }
    this.close(record, NOW);
    return result;
  }

  /**
   * Records a measurement taken elsewhere (a worker thread's CPU time, bytes read). Seconds
   * become an activity ending now; other units are kept as quantities of the activity.
   */
  digest(activity: string, value: number, unit: string = "seconds"): void {
    if (this.ended) {
      if (!this.closedEarly) this.host.drop("ledger-ended", `digest(${show(activity)}) after end()`);
      return;
    }
    if (typeof unit !== "string") {
      this.host.drop("invalid-name", `digest(${show(activity)}) given a unit that is ${show(unit)}, not a string`);
      return;
    }
    // Seconds longer than a time may be off the clock, or quantities past exact integers, are
    // absurd: summed, one would poison the totals for good.
    const limit = unit === "seconds" ? this.host.maxClockSkew : Number.MAX_SAFE_INTEGER;
    if (typeof value !== "number" || !(value >= 0 && value <= limit) || value === Infinity) {
      this.host.drop("invalid-value", `digest(${show(activity)}, ${show(value)}, ${show(unit)})`);
      return;
    }
    if (unit === "seconds") {
      this.host.tick();
      const now = this.host.lastReading;
      const record = this.open(this.host.activityId(activity), this.parentRecord(), now - value);
      this.close(record, now);
      markDigested(this.records, record);
    } else {
      this.quantity(this.host.activityId(activity), this.host.unitId(unit), value);
    }
  }

  private syncFrame(): MutableFrame {
    return (this.topFrame ??= { ledger: this, record: -1 });
  }

  /** Runs `work` with this ledger as the ambient one for `journeys.meter()` calls inside it. */
  run<T>(work: () => T): T {
    if (typeof work !== "function") {
      this.host.drop("invalid-work", `run() given ${show(work)}, not a function`);
      return undefined as T;
    }
    return this.runApply(work, undefined, NO_ARGUMENTS) as T;
  }

  /** run() of `fn` called with `self` and `args`: the wrappers' path, which makes no closure per call. */
  runApply(fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
    // One frame per ledger, made on its first run: the worker's ledgers are entered ~3 times each.
    const frame = (this.topFrame ??= { ledger: this, record: -1 });
    return ambientLedger.apply(frame, fn, self, args, this.host.asyncContext !== false);
  }

  /** end() on an ended ledger: counted, unless the recorder closed it (counted then). */
  protected endedAgain(): void {
    if (!this.closedEarly) this.host.drop("ledger-ended", "end() called twice");
  }

  /** The time `end(…, at)` ends at: never before the ledger's start (a `time-backwards` drop), so no wall time is negative. */
  protected endTime(at: unknown): number {
    let time: number;
    if (at === undefined) {
      this.host.tick();
      time = this.host.lastReading;
    } else time = this.host.now(at);
    if (time >= this.start) return time;
    this.host.drop("time-backwards", `end() at ${time}, before the ledger began at ${this.start}; ended at its start`);
    return this.start;
  }

  protected abstract quantity(activityId: number, unitId: number, value: number): void;

  private parentRecord(): number {
    if (this.openRecord !== -1) return this.openRecord;
    // Only an async activity of this ledger, still open, can be the ambient parent: without one,
    // the ambient frame need not be looked up at all.
    if (this.asyncOpen === 0) return -1;
    const frame = ambientLedger.getStore();
    if (frame !== undefined && frame.ledger === this && frame.record !== -1) {
      const records = this.records;
      // Only while the parent is still open; a late child of a closed parent stands alone.
      if (records[frame.record + ACTIVITY_END] !== records[frame.record + ACTIVITY_END]) return frame.record;
    }
    return -1;
  }

  private open(activityId: number, parent: number, start: number): number {
    return openActivity(this.records, this.currentVisit(), activityId, parent, start);
  }

  /** Closes `record` at `end`; NOW (NaN): at the clock's now, read here so that no reading crosses a call boxed. */
  private close(record: number, end: number): void {
    if (end !== end) {
      this.host.tick();
      end = this.host.lastReading;
    }
    const records = this.records;
    if (records[record + ACTIVITY_END] === records[record + ACTIVITY_END]) return; // closed at end()
    const start = records[record + ACTIVITY_START];
    if (end < start) end = start;
    const wall = end - start;
    records[record + ACTIVITY_END] = end;
    const self = wall - records[record + ACTIVITY_CHILD_SECONDS];
    records[record + ACTIVITY_SELF_SECONDS] = self > 0 ? self : 0;
    const parent = records[record + ACTIVITY_PARENT];
    if (parent === -1) {
      this.topLevelSeconds += wall;
    } else {
      records[parent + ACTIVITY_CHILD_SECONDS] += wall;
      if (records[parent + ACTIVITY_END] === records[parent + ACTIVITY_END]) {
        const parentSelf = records[parent + ACTIVITY_SELF_SECONDS] - wall;
        records[parent + ACTIVITY_SELF_SECONDS] = parentSelf > 0 ? parentSelf : 0;
      }
    }
  }

  private closeWhenSettled<T>(record: number, pending: T): T {
    try {
      return this.awaitSettled(record, pending);
    } catch {
      // A thenable whose then() throws is not one to wait for: the activity ends now, the value
      // goes back as it was.
      this.asyncOpen--;
      this.close(record, NOW);
      return pending;
    }
  }

  private awaitSettled<T>(record: number, pending: T): T {
    return (pending as unknown as PromiseLike<unknown>).then(
      (value) => {
        this.asyncOpen--;
        this.close(record, NOW);
        return value;
      },
      (error: unknown) => {
        this.asyncOpen--;
        this.close(record, NOW);
        throw error;
      },
    ) as unknown as T;
  }

  /**
   * Closes what is still open at `end` (an activity outliving its ledger is cut at the ledger's
   * end) and returns the ledger's wall seconds not covered by top-level activities.
   */
  protected closeAll(end: number): number {
    const records = this.records;
    if (this.asyncOpen > 0 || this.openRecord !== -1) {
      // Innermost first, so parents see their children's time.
      for (let record = records.length - ACTIVITY_FIELDS; record >= this.firstRecord; record -= ACTIVITY_FIELDS) {
        if (records[record + ACTIVITY_END] !== records[record + ACTIVITY_END]) this.close(record, end);
      }
      this.openRecord = -1;
    }
    const remainder = end - this.start - this.topLevelSeconds;
    return remainder > 0 ? remainder : 0;
  }
}
