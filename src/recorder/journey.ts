import type { WaitInterval } from "../model/apportion.js";
import type { Key } from "../model/keys.js";
import type { FailureDetail } from "./failure-detail.js";
import type { ExecuteOutcome } from "../model/activities.js";
import type { ChunkList } from "./chunk-list.js";

/**
 * What a journey is: the compute of a key, the fetch of a dependency, or a scheduler's view; the
 * index of its name in JOURNEY_KINDS (model/breakdown-builder.ts).
 */
/**
 * An execution ledger still open on its journey (execution-ledger.ts's ExecutionLedger), as the
 * journey lists it: named here, so that journey.ts imports no ledger (the ledgers import it).
 */
export interface OpenExecution {
  /** The execution ledger opened before this one on the same journey, still open. */
  previous: OpenExecution | undefined;
  /** Closed by the recorder at the journey's end (settled under `outcome`) or eviction (undefined). */
  closeEarly(time: number, outcome: ExecuteOutcome | undefined): void;
}

/** A transfer's open ledger (transfer-ledger.ts's TransferLedger), as the transfer holds it. */
export interface OpenTransfer {
  /** Closed by the recorder once every key it carried ended (`settle`: by a terminal state, not an eviction). */
  closeEarly(time: number, settle: boolean): void;
}

export const COMPUTE_JOURNEY = 0;
export const FETCH_JOURNEY = 1;
export const SCHEDULER_JOURNEY = 2;
export type JourneyKindId = typeof COMPUTE_JOURNEY | typeof FETCH_JOURNEY | typeof SCHEDULER_JOURNEY;

// The flat activity and quantity records, in a file of their own (this one stays under 600 lines).
export * from "./activity-records.js";

/**
 * An empty array whose elements are already doubles. Activity records hold times, so the first
 * push into a `[]` would convert its elements from small integers to doubles, which V8 does by
 * allocating the backing store twice; starting as doubles halves that per journey.
 */
function emptyNumbers(): number[] {
  const numbers = [0.5];
  numbers.pop();
  return numbers;
}

/**
 * A journey's empty activity records with room for three (an execution's usual few): made as a
 * literal of 21 doubles popped back to none. emptyNumbers() grows at the first record by V8's
 * rule to 26 numbers (224 B), its own one-number store (24 B) thrown away. Measured
 * (bench/guard): 1,039 → 975 B a journey. (Popped in code V8 has not optimized, the store is
 * trimmed back, as with any pop: correct, only not the saving.)
 */
function emptyRecords(): number[] {
  // prettier-ignore
  const records = [
    0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
    0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
    0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
  ];
  for (let left = records.length; left > 0; left--) records.pop();
  return records;
}

/**
 * A journey's visits array, its first visit in it, with room for four visits: made as a
 * literal that long and popped back to two numbers (pop() keeps the backing store; setting
 * `length` would be a runtime call). A `[state, start]` literal grows at the second visit by
 * V8's rule (+16 slots): a 19-number store (168 B) and the first one's 32 B thrown away, where a
 * worker's compute journey has four visits. Measured (bench/guard): 1,183 → 1,039 B a journey;
 * a live journey holds 48 B more for the room.
 */
function firstVisit(state: number, start: number): number[] {
  // 0.5: the literal's elements are doubles from the start (times), never converted.
  const visits = [state, start, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5];
  visits.pop();
  visits.pop();
  visits.pop();
  visits.pop();
  visits.pop();
  visits.pop();
  return visits;
}

/** The activity records of a journey that has none; frozen, so a write that skipped activityRecords() throws. */
const NO_ACTIVITIES: readonly number[] = Object.freeze([]);

/** Journey.flags: the kind in its low two bits, then one bit each. */
const KIND_MASK = 3;
const FLAG_SAMPLED = 4;
const FLAG_MOVED_BY_LEDGER = 8;
const FLAG_ENDED = 16;
const FLAG_RECORDS_HELD = 32;
/** The bits above the flags: the journey's computation slot (computations.ts), 0 for none. */
const COMPUTATION_SHIFT = 6;
const FLAG_BITS = (1 << COMPUTATION_SHIFT) - 1;

/**
 * The fields of a journey that few journeys use (the scheduler's and most fetches' never do), kept
 * apart and made on the first write to any of them: 16 fields a journey would otherwise carry, 128
 * B on every live one (Node.js has no pointer compression: 8 B a field). Journey reads and writes
 * them through accessors of the same names.
 */
export class JourneyDetail {
  /** The key's map id, when it is not the key itself (a tuple's canonical text). */
  id: string | number | undefined = undefined;
  quantities: number[] | undefined = undefined;
  waitBreakdown: number[] | undefined = undefined;
  dependencyIds: Array<string | number> | undefined = undefined;
  notedDependents: Set<Journey> | undefined = undefined;
  waitSources: ChunkList<Journey> | undefined = undefined;
  waitIntervals: WaitInterval[] | undefined = undefined;
  fetchedBy: ChunkList<Journey> | undefined = undefined;
  transfers: Transfer[] | undefined = undefined;
  transferVisits: number[] | undefined = undefined;
  queueReason = -1;
  failureVisit = -1;
  failureOutcome = "";
  failure: FailureDetail | undefined = undefined;
  reasonVisits: number[] | undefined = undefined;
  reasons: Array<FailureDetail | undefined> | undefined = undefined;
  /** By reason: the outcome of an attempt that was not an error (a move into cancelled with why), made on first one. */
  reasonOutcomes: Array<string | undefined> | undefined = undefined;
  group: string | undefined = undefined;
  /** When an evicted journey was let go (it has no terminal visit to end at). */
  abandonedAt = Number.NaN;
  /**
   * Live fetches whose notedDependents hold this dependent (Dependencies.note, .ended): while
   * any does, it may hand this journey its waiting time, so the journey is never reused.
   */
  notedBy = 0;

  /**
   * Every field back to its default, for a journey reused (Journey.reuse): the object is kept
   * (~180 B a worker journey with dependencies), what it referenced let go. Lists keep their
   * items' journeys alive and others may hold them (the last apportioning holds a fetchedBy), so
   * they are dropped, not emptied.
   */
  reset(): void {
    this.id = undefined;
    this.quantities = undefined;
    this.waitBreakdown = undefined;
    this.dependencyIds = undefined;
    this.notedDependents = undefined;
    this.waitSources = undefined;
    this.waitIntervals = undefined;
    this.fetchedBy = undefined;
    this.transfers = undefined;
    this.transferVisits = undefined;
    this.queueReason = -1;
    this.failureVisit = -1;
    this.failureOutcome = "";
    this.failure = undefined;
    this.reasonVisits = undefined;
    this.reasons = undefined;
    this.reasonOutcomes = undefined;
    this.group = undefined;
    this.abandonedAt = Number.NaN;
    this.notedBy = 0;
  }
}

/**
 * One key's life on one process, from its first non-released state to a terminal one. Plain
 * data: visits and activities are flat number arrays so a transition appends two numbers. Its
 * fields are what every journey uses; the rest is in `detail` (JourneyDetail), made on first use.
 */
export class Journey {
  /**
   * [stateId, startSeconds] per visit; a visit ends where the next begins or at `end`. Made with
   * its first visit and room for four (firstVisit()): a push into `[]` reserves 19 numbers, a
   * two-number literal grows to 19 at the second visit.
   * An ended journey's last visit is its terminal state's, of no length: its start is the end.
   */
  readonly visits: number[];
  /**
   * Activity records, ACTIVITY_FIELDS numbers each, see the ACTIVITY_* field offsets. The shared,
   * frozen NO_ACTIVITIES until the first record: most journeys (the scheduler's, most fetches)
   * never have one. Write through `activityRecords()`.
   */
  activities: readonly number[] = NO_ACTIVITIES;
  /** Ledgers still open on this journey (executions and transfers carrying its key). */
  openLedgers = 0;
  /**
   * The newest execution ledger still open on this journey, the older ones through its
   * `previous`: what the journey's end closes when the caller never ended them.
   */
  execution: OpenExecution | undefined = undefined;
  /** The terminal state it ended in, or -1 (live, or evicted: see `ended`). */
  outcomeState = -1;
  /**
   * The kind (JourneyKindId, two bits) and the FLAG_* bits in one small integer: four fields of
   * their own would be 24 B more on every live journey.
   */
  private flags: number;
  /** Neighbours in the recorder's list of live journeys, oldest first: what maxLiveJourneys evicts from. */
  older: Journey | undefined = undefined;
  newer: Journey | undefined = undefined;
  /** The prefix as chosen (describe(), keyPrefix, key_split), before folding into "other" past prefixLimit. */
  prefixName = "";
  /**
   * Owned by the span bridge: the live spans of a sampled journey, or the ids it handed out. A
   * field of its own, not the detail's: a scheduler's journeys nearly all hand ids out (every task
   * sent on with a carrier), and the detail made for it was ~190 B a journey (issue 34).
   */
  spanState: unknown = undefined;
  /** The fields few journeys use, once one of them is written. */
  detail: JourneyDetail | undefined = undefined;

  constructor(
    /** The key as the caller gave it (rewritten only by reuse()). */
    public key: Key,
    /** The key's identity in maps: the string or number itself, or the canonical text of a tuple. */
    id: string | number,
    public prefixId: number,
    kind: JourneyKindId,
    start: number,
    sampled: boolean,
    public state: number,
  ) {
    this.flags = kind | (sampled ? FLAG_SAMPLED : 0);
    this.visits = firstVisit(state, start);
    if (id !== key) this.more().id = id;
  }

  /**
   * Makes a retired journey nothing references (LiveJourneysRecorder.recycle) new, keeping its
   * arrays' room: emptied by pop(), which keeps the backing store (setting `length` trims it).
   */
  reuse(
    key: Key,
    id: string | number,
    prefixId: number,
    kind: JourneyKindId,
    start: number,
    sampled: boolean,
    state: number,
  ): void {
    this.key = key;
    this.prefixId = prefixId;
    this.state = state;
    this.flags = kind | (sampled ? FLAG_SAMPLED : 0);
    const visits = this.visits;
    while (visits.length > 2) visits.pop();
    visits[0] = state;
    visits[1] = start;
    const activities = this.activities;
    if (activities !== NO_ACTIVITIES) {
      const records = activities as number[];
      while (records.length > 0) records.pop();
    }
    this.openLedgers = 0;
    this.execution = undefined;
    this.outcomeState = -1;
    this.older = undefined;
    this.newer = undefined;
    this.prefixName = "";
    this.spanState = undefined;
    // The detail object kept, its fields reset: reads give the defaults, as with none.
    this.detail?.reset();
    if (id !== key) this.more().id = id;
  }

  /** An execution ledger ended with an async activity pending, which settles into the records later: never reused. */
  get recordsHeld(): boolean {
    return (this.flags & FLAG_RECORDS_HELD) !== 0;
  }
  holdRecords(): void {
    this.flags |= FLAG_RECORDS_HELD;
  }

  /** What the journey is: compute, fetch or the scheduler's (JourneyKindId). */
  get kind(): JourneyKindId {
    return (this.flags & KIND_MASK) as JourneyKindId;
  }

  /** Whether head sampling chose this journey for a span tree. */
  get sampled(): boolean {
    return (this.flags & FLAG_SAMPLED) !== 0;
  }

  /** The last move was made by a ledger, so the caller repeating it is not an error. */
  get movedByLedger(): boolean {
    return (this.flags & FLAG_MOVED_BY_LEDGER) !== 0;
  }
  set movedByLedger(value: boolean) {
    this.flags = value ? this.flags | FLAG_MOVED_BY_LEDGER : this.flags & ~FLAG_MOVED_BY_LEDGER;
  }

  /**
   * Ended: in a terminal state (outcomeState), or evicted past maxLiveJourneys. Not a time: a
   * double field is a boxed number made with each journey (16 B); `end` reads the time from the
   * terminal visit (or the detail, when evicted).
   */
  get ended(): boolean {
    return (this.flags & FLAG_ENDED) !== 0;
  }
  set ended(value: boolean) {
    this.flags = value ? this.flags | FLAG_ENDED : this.flags & ~FLAG_ENDED;
  }

  /**
   * The slot of the computation it was begun under (computations.ts), 0 for none: in the flags'
   * upper bits, so a journey without one is no larger, and one with one holds no object more.
   */
  get computationSlot(): number {
    return this.flags >>> COMPUTATION_SHIFT;
  }
  set computationSlot(slot: number) {
    this.flags = (this.flags & FLAG_BITS) | (slot << COMPUTATION_SHIFT);
  }

  /** The detail, made on first use. */
  more(): JourneyDetail {
    let detail = this.detail;
    if (detail === undefined) this.detail = detail = new JourneyDetail();
    return detail;
  }

  /** The key's identity in maps: the key itself when it is a string or a number. */
  get id(): string | number {
    const key = this.key;
    return typeof key === "string" || typeof key === "number" ? key : this.detail!.id!;
  }

  /** When the journey began: its first visit's start (not a field of its own: a double field is a boxed number). */
  get start(): number {
    return this.visits[1];
  }

  /** When it ended (its terminal visit's start, or when it was evicted), NaN while live. */
  get end(): number {
    if (this.outcomeState !== -1) return this.visits[this.visits.length - 1];
    // Ended and not in a terminal state: evicted, or (within Recorder.finish) not there yet.
    return this.ended && this.detail !== undefined ? this.detail.abandonedAt : Number.NaN;
  }

  /** The activity records, made writable (allocated) on first use. */
  activityRecords(): number[] {
    if (this.activities === NO_ACTIVITIES) this.activities = emptyRecords();
    return this.activities as number[];
  }

  /** Index of the current (last) visit. */
  get visitIndex(): number {
    return (this.visits.length >> 1) - 1;
  }

  get stateStart(): number {
    return this.visits[this.visits.length - 1];
  }

  /** Seconds from the first non-released state to the terminal one (or NaN while live). */
  get duration(): number {
    return this.end - this.start;
  }

  visitState(index: number): number {
    return this.visits[index * 2];
  }

  visitStart(index: number): number {
    return this.visits[index * 2 + 1];
  }

  visitEnd(index: number): number {
    const next = index * 2 + 3;
    return next < this.visits.length ? this.visits[next] : this.end;
  }

  /** Number of visits, the terminal state's zero-length marker included once ended. */
  get visitCount(): number {
    return this.visits.length >> 1;
  }

  // ---- the detail's fields, read as undefined (or their default) until it exists --------------

  /** Non-time digests, QUANTITY_FIELDS numbers each. */
  get quantities(): number[] | undefined {
    return this.detail?.quantities;
  }
  set quantities(value: number[] | undefined) {
    this.more().quantities = value;
  }
  /** [visitIndex, activityId, seconds] per apportioned activity of a waiting visit. */
  get waitBreakdown(): number[] | undefined {
    return this.detail?.waitBreakdown;
  }
  set waitBreakdown(value: number[] | undefined) {
    this.more().waitBreakdown = value;
  }
  /** Keys (as map ids) this journey depends on, when told by `dependencies()`. */
  get dependencyIds(): Array<string | number> | undefined {
    return this.detail?.dependencyIds;
  }
  set dependencyIds(value: Array<string | number> | undefined) {
    this.more().dependencyIds = value;
  }
  /** For a fetch journey: the dependents that were waiting for it while it was fetched. */
  get notedDependents(): Set<Journey> | undefined {
    return this.detail?.notedDependents;
  }
  set notedDependents(value: Set<Journey> | undefined) {
    this.more().notedDependents = value;
  }
  /** For a dependent: finished fetch journeys of its dependencies (their weights are in their `waitIntervals`). */
  get waitSources(): ChunkList<Journey> | undefined {
    return this.detail?.waitSources;
  }
  set waitSources(value: ChunkList<Journey> | undefined) {
    this.more().waitSources = value;
  }
  /** For an ended fetch journey: what it did while dependents waited, made at its end once for all of them (dependencies.ts). */
  get waitIntervals(): WaitInterval[] | undefined {
    return this.detail?.waitIntervals;
  }
  set waitIntervals(value: WaitInterval[] | undefined) {
    this.more().waitIntervals = value;
  }
  /**
   * For a dependent: the fetch journeys that served its waiting visits (its `waitSources`, kept
   * once apportioned instead of dropped), so the span bridge can link a journey kept only at its
   * end to the gather_dep transfers that fetched its dependencies.
   */
  get fetchedBy(): ChunkList<Journey> | undefined {
    return this.detail?.fetchedBy;
  }
  set fetchedBy(value: ChunkList<Journey> | undefined) {
    this.more().fetchedBy = value;
  }
  /** Transfers that carried this key (fetch journeys), in order, for span links. */
  get transfers(): Transfer[] | undefined {
    return this.detail?.transfers;
  }
  set transfers(value: Transfer[] | undefined) {
    this.more().transfers = value;
  }
  /** The visit (a flight) each of `transfers` began in: by index, not by time, which two transfers may share. */
  get transferVisits(): number[] | undefined {
    return this.detail?.transferVisits;
  }
  set transferVisits(value: number[] | undefined) {
    this.more().transferVisits = value;
  }
  /** The reason the caller gave for the current stay in `fetch`, as an activity id, or -1. */
  get queueReason(): number {
    return this.detail?.queueReason ?? -1;
  }
  set queueReason(value: number) {
    if (value !== -1 || this.detail !== undefined) this.more().queueReason = value;
  }
  /**
   * An execution that did not succeed: the visit it ended (-1: none), its outcome ("error",
   * "cancelled") and, when `end("error", error)` said, why.
   */
  get failureVisit(): number {
    return this.detail?.failureVisit ?? -1;
  }
  set failureVisit(value: number) {
    this.more().failureVisit = value;
  }
  get failureOutcome(): string {
    return this.detail?.failureOutcome ?? "";
  }
  set failureOutcome(value: string) {
    this.more().failureOutcome = value;
  }
  get failure(): FailureDetail | undefined {
    return this.detail?.failure;
  }
  set failure(value: FailureDetail | undefined) {
    this.more().failure = value;
  }
  /**
   * Attempts the caller said failed, by moving out of them with a reason (`transition(…, error)`:
   * a scheduler's view, e.g. active → delayed for a retry): the visits left, in visit order, and why.
   */
  get reasonVisits(): number[] | undefined {
    return this.detail?.reasonVisits;
  }
  get reasons(): Array<FailureDetail | undefined> | undefined {
    return this.detail?.reasons;
  }
  /** Whether an attempt was left with a reason as an error (not a cancellation with why). */
  get hadFailedAttempt(): boolean {
    const reasons = this.detail?.reasons;
    if (reasons === undefined) return false;
    const outcomes = this.detail!.reasonOutcomes;
    if (outcomes === undefined) return true;
    for (let index = 0; index < reasons.length; index++) if (outcomes[index] === undefined) return true;
    return false;
  }
  /** By reason, the attempt's outcome when it was not "error" (see addReason), else undefined. */
  get reasonOutcomes(): Array<string | undefined> | undefined {
    return this.detail?.reasonOutcomes;
  }
  /**
   * Marks `visit` (default the current one, which the journey is leaving) as an attempt that
   * failed for `reason` (undefined: none was given). Visits are marked in order, each once.
   */
  addReason(reason: FailureDetail | undefined, visit = this.visitIndex, outcome?: string): void {
    const detail = this.more();
    const visits = (detail.reasonVisits ??= []);
    if (visits.length > 0 && visits[visits.length - 1] >= visit) return;
    visits.push(visit);
    (detail.reasons ??= []).push(reason);
    // An attempt that ended in a state that is no failure (cancelled, with why): named by that state.
    if (outcome !== undefined) (detail.reasonOutcomes ??= [])[visits.length - 1] = outcome;
  }
  /**
   * Marks the last visit left, `visit`, as a failed attempt for `reason`, as addReason() does, or
   * gives it that reason if it was marked without one (an execute ledger ended into a retry
   * with no error, then the caller's own transition told why).
   */
  explainAttempt(reason: FailureDetail, visit: number): void {
    if (visit === this.failureVisit) return;
    const visits = this.reasonVisits;
    const last = visits === undefined ? -1 : visits.length - 1;
    if (last >= 0 && visits![last] === visit) {
      if (this.reasons![last] === undefined) this.reasons![last] = reason;
      return;
    }
    this.addReason(reason, visit);
  }
  /** The task group given by describe(), or undefined for the default. */
  get group(): string | undefined {
    return this.detail?.group;
  }
  set group(value: string | undefined) {
    this.more().group = value;
  }
}

/** One gather_dep call: a bundle of keys fetched from one peer. */
export class Transfer {
  /** Activity records, ACTIVITY_FIELDS numbers each; Visit is unused (-1). */
  readonly activities: number[] = emptyNumbers();
  end = Number.NaN;
  outcome = "";
  /** Why it failed, when `end("failed", error)` said. */
  failure: FailureDetail | undefined = undefined;
  /** Keys of `journeys` still live while the transfer is open: the last one to end closes it. */
  liveKeys: number;
  /** The transfer's ledger, for closing it when every key it carried ended before it did. */
  ledger: OpenTransfer | undefined = undefined;
  /** Owned by the span bridge. */
  spanState: unknown = undefined;

  constructor(
    readonly id: number,
    readonly peer: string,
    readonly journeys: Journey[],
    public bytes: number,
    readonly start: number,
  ) {
    this.liveKeys = journeys.length;
  }

  get duration(): number {
    return this.end - this.start;
  }
}
