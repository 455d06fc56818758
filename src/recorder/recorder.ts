import { keySplitUncached, keyToText, type Key } from "../model/keys.js";
import {
  ALL_STATES,
  STATE_COUNT,
  stateId,
  stateMembership,
  terminalMask,
  transitionTable,
  type Role,
} from "../model/states.js";
import {
  DEPENDENCIES_ACTIVITY,
  EXECUTE_ACTIVITIES,
  EXECUTE_LUMP,
  EXECUTE_OUTCOMES,
  GATHER_ACTIVITIES,
  NETWORK_ACTIVITY,
  OTHER_ACTIVITY,
  QUEUED_ACTIVITY,
  QUANTITY_UNITS,
  TRANSFER_LUMP,
  TRANSFER_OUTCOMES,
  type ExecuteOutcome,
  type TransferOutcome,
} from "../model/activities.js";
import { apportionWaiting, type WaitInterval } from "../model/apportion.js";
import { DurationStatistics, type DurationStats } from "../model/statistics/index.js";
import { Accumulators } from "./accumulators.js";
import { Interner } from "./interner.js";
import {
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_VISIT,
  COMPUTE_JOURNEY,
  FETCH_JOURNEY,
  Journey,
  SCHEDULER_JOURNEY,
  Transfer,
  type JourneyKindId,
} from "./journey.js";
import { Ledger, type LedgerHost } from "./ledger.js";
import type { RecorderListener } from "./listener.js";
import { InvalidTransition } from "./errors.js";

const RELEASED = stateId("released");
const WAITING = stateId("waiting");
const FETCH = stateId("fetch");
const FLIGHT = stateId("flight");
const MISSING = stateId("missing");
const EXECUTING = stateId("executing");
const LONG_RUNNING = stateId("long-running");
const MEMORY = stateId("memory");
const ERROR = stateId("error");
const CANCELLED = stateId("cancelled");

const IS_TERMINAL = terminalMask();

/** Activity ids fixed at construction, in this order, so the recorder needs no lookups for them. */
const SEED_ACTIVITIES = [
  OTHER_ACTIVITY,
  DEPENDENCIES_ACTIVITY,
  QUEUED_ACTIVITY,
  "missing",
  "busy",
  "failed",
  "cancelled",
  ...EXECUTE_ACTIVITIES,
  ...GATHER_ACTIVITIES,
];
const ACTIVITY_CACHE_MASK = 31;
const OTHER = 0;
const DEPENDENCIES = 1;
const QUEUED = 2;
const MISSING_ACTIVITY = 3;

const TRANSFER_NEXT_STATE: Record<TransferOutcome, number> = {
  ok: MEMORY,
  busy: FETCH,
  missing: MISSING,
  failed: FETCH,
  cancelled: CANCELLED,
};

export interface RecorderConfig {
  role: Role;
  instance: string;
  clock: () => number;
  prefixLimit: number;
  activityLimit: number;
  retainedJourneys: number;
  maxKeyLength: number;
  strict: boolean;
  /** Head sampling per key id, or undefined when no journey is ever sampled at its start. */
  sampler: ((id: string | number) => boolean) | undefined;
  makeStatistics: () => DurationStatistics;
  /** Told once per drop reason, with the first occurrence's detail. */
  report: (reason: string, detail: string) => void;
  /** False: ledgers are ambient only synchronously, without AsyncLocalStorage (see ambient.ts). Default true. */
  asyncContext?: boolean;
}

/**
 * The hot path: a pure state machine from transitions and ledger events to journeys and
 * accumulators. It knows nothing of OpenTelemetry; finished journeys go to `listener`.
 */
export class Recorder implements LedgerHost {
  readonly role: Role;
  readonly instance: string;
  readonly clock: () => number;
  readonly prefixes: Interner;
  readonly activities: Interner;
  readonly units = new Interner(16, "other", ["seconds", "bytes", "count"]);
  readonly accumulators: Accumulators;
  listener: RecorderListener | undefined = undefined;
  /** Journeys in flight, by key id. Changed only through addLive() and removeLive(). */
  readonly live = new Map<string | number, Journey>();
  /** See liveJourney(). */
  private recentId: string | number | undefined = undefined;
  private recentJourney: Journey | undefined = undefined;
  /** Dependents registered through `dependencies()`, by the dependency's key id. */
  private readonly dependentsOf = new Map<string | number, Journey[]>();
  /** `dependencies()` told before the key's journey began, consumed when it begins. */
  private readonly pendingDependencies = new Map<string | number, Array<string | number>>();
  private readonly retained: Array<Journey | undefined>;
  private retainedNext = 0;
  private readonly table: Uint8Array;
  private readonly member: Uint8Array;
  private readonly reported = new Set<string>();
  private readonly config: RecorderConfig;
  private transferIds = 0;
  /** queued() reasons to their `queued (<reason>)` activity ids, so a reason's name is built once. */
  private readonly queueReasons = new Map<string, number>();
  private readonly activityCacheNames = new Array<string>(ACTIVITY_CACHE_MASK + 1).fill("");
  private readonly activityCacheIds = new Int32Array(ACTIVITY_CACHE_MASK + 1);
  readonly noLedger: NoLedger;
  readonly asyncContext: boolean;

  constructor(config: RecorderConfig) {
    this.config = config;
    this.asyncContext = config.asyncContext !== false;
    this.role = config.role;
    this.instance = config.instance;
    this.clock = config.clock;
    this.prefixes = new Interner(config.prefixLimit, "other");
    this.activities = new Interner(Math.max(config.activityLimit, SEED_ACTIVITIES.length), OTHER_ACTIVITY, SEED_ACTIVITIES);
    this.accumulators = new Accumulators(
      this.prefixes.capacity,
      STATE_COUNT,
      this.activities.limit,
      config.makeStatistics,
    );
    this.retained = new Array<Journey | undefined>(config.retainedJourneys).fill(undefined);
    this.table = transitionTable(config.role);
    this.member = stateMembership(config.role);
    this.noLedger = new NoLedger();
  }

  // ---- time, ids, drops -------------------------------------------------------------------

  now(at?: number): number {
    if (at === undefined) return this.clock();
    if (at >= 0 && at !== Infinity) return at;
    this.drop("invalid-time", `time ${String(at)} replaced by the clock`);
    return this.clock();
  }

  /**
   * Activity names arrive as the same few literals over and over ("deserialize", "thread-cpu"):
   * a small direct-mapped cache by length and first character answers them without hashing.
   */
  activityId(name: string): number {
    if (typeof name !== "string") name = String(name);
    const slot = (name.length + name.charCodeAt(0) * 3) & ACTIVITY_CACHE_MASK;
    if (this.activityCacheNames[slot] === name) return this.activityCacheIds[slot];
    let id = this.activities.id(name);
    if (id === this.activities.limit) id = OTHER;
    this.activityCacheNames[slot] = name;
    this.activityCacheIds[slot] = id;
    return id;
  }

  unitId(name: string): number {
    return this.units.id(name);
  }

  /** The QUANTITY_UNITS index of a unit id, or -1 for a unit metrics do not aggregate. */
  quantityUnit(unitId: number): number {
    return (QUANTITY_UNITS as readonly string[]).indexOf(this.units.name(unitId));
  }

  /** Counts and reports once, but never throws, even strict: for failures of telemetry's own making. */
  count(reason: string, detail: string): void {
    this.accumulators.drop(reason);
    if (!this.reported.has(reason)) {
      this.reported.add(reason);
      this.config.report(reason, detail);
    }
  }

  drop(reason: string, detail: string, journey?: Journey): void {
    this.accumulators.drop(reason);
    if (this.config.strict) {
      throw new InvalidTransition(detail, reason, journey === undefined ? [] : this.story(journey));
    }
    if (!this.reported.has(reason)) {
      this.reported.add(reason);
      this.config.report(reason, detail);
    }
  }

  /** The key's id in maps; undefined (and counted) for values that are not keys. */
  idOf(key: unknown): string | number | undefined {
    if (typeof key === "string") {
      if (key.length <= this.config.maxKeyLength) return key;
      this.drop("key-too-long", `a key of ${key.length} characters (maxKeyLength ${this.config.maxKeyLength})`);
      return undefined;
    }
    if (typeof key === "number" && key === key) return key;
    const text = keyToText(key);
    if (text === undefined) {
      this.drop("invalid-key", `a ${key === null ? "null" : typeof key} is not a key`);
      return undefined;
    }
    if (text.length > this.config.maxKeyLength) {
      this.drop("key-too-long", `a key of ${text.length} characters (maxKeyLength ${this.config.maxKeyLength})`);
      return undefined;
    }
    return text;
  }

  private story(journey: Journey): string[] {
    const story: string[] = [];
    const first = Math.max(0, journey.visitCount - 8);
    for (let visit = first; visit < journey.visitCount; visit++) {
      story.push(`${ALL_STATES[journey.visitState(visit)]}@${journey.visitStart(visit).toFixed(6)}`);
    }
    return story;
  }

  private stateOf(name: string): number {
    const id = stateId(name);
    if (id !== -1 && this.member[id] === 1) return id;
    this.drop(
      id === -1 ? "unknown-state" : "wrong-role-state",
      id === -1 ? `unknown state "${String(name).slice(0, 64)}"` : `state "${name}" is not a ${this.role} state`,
    );
    return -1;
  }

  // ---- transitions --------------------------------------------------------------------------

  transition(key: Key, from: string, to: string, at?: number): void {
    // A time passed in is checked first; the clock is read only once the call records something
    // (a key ending without a journey here, the most common call after a journey, records nothing).
    const given = at === undefined ? -1 : this.now(at);
    const fromId = this.stateOf(from);
    if (fromId === -1) return;
    const toId = this.stateOf(to);
    if (toId === -1) return;
    const id = this.idOf(key);
    if (id === undefined) return;
    const journey = this.liveJourney(id);
    if (journey === undefined) {
      // A key that ends without a journey here (memory → released, released → forgotten) is normal.
      if (IS_TERMINAL[toId] === 1) return;
      if (fromId !== RELEASED && IS_TERMINAL[fromId] !== 1) {
        this.drop("unknown-key", `${from} → ${to} of a key with no journey; a journey starts at ${to}`);
      }
      this.begin(key, id, toId, given === -1 ? this.clock() : given);
      return;
    }
    this.move(journey, fromId, toId, given === -1 ? this.clock() : given);
  }

  /**
   * The live journey of a key id. The last one looked up, begun or ended is remembered, so the
   * calls that follow each other for one key (a transition and its ledger, a ledger's end and
   * the caller's own transition) skip the Map. `recentJourney` is always `live.get(recentId)`:
   * `live` changes only through addLive() and removeLive(), which keep it so.
   */
  private liveJourney(id: string | number): Journey | undefined {
    if (id === this.recentId) return this.recentJourney;
    const journey = this.live.get(id);
    this.recentId = id;
    this.recentJourney = journey;
    return journey;
  }

  private addLive(id: string | number, journey: Journey): void {
    this.live.set(id, journey);
    this.recentId = id;
    this.recentJourney = journey;
  }

  private removeLive(journey: Journey): void {
    // Only if it is the live one: a finished journey is never removed in place of its successor.
    if (this.recentJourney !== journey && this.live.get(journey.id) !== journey) return;
    this.live.delete(journey.id);
    this.recentId = journey.id;
    this.recentJourney = undefined;
  }

  private begin(key: Key, id: string | number, state: number, time: number): Journey {
    // Once per journey, and a journey's key is new: the memo of keySplit would only churn.
    const prefixId = this.prefixes.id(keySplitUncached(key));
    const kind: JourneyKindId =
      this.role === "scheduler"
        ? SCHEDULER_JOURNEY
        : state === FETCH || state === FLIGHT || state === MISSING
          ? FETCH_JOURNEY
          : COMPUTE_JOURNEY;
    const sampler = this.config.sampler;
    const sampled = sampler !== undefined && sampler(id);
    const journey = new Journey(key, id, prefixId, kind, time, sampled, state);
    this.addLive(id, journey);
    if (state === FLIGHT && this.dependentsOf.size > 0) this.noteWaitingDependents(journey);
    const cell = prefixId * STATE_COUNT + state;
    this.accumulators.transitions[cell] += 1;
    if (this.pendingDependencies.size > 0) {
      const dependencies = this.pendingDependencies.get(id);
      if (dependencies !== undefined) {
        this.pendingDependencies.delete(id);
        this.attachDependencies(journey, dependencies);
      }
    }
    if (sampled && this.listener?.journeyStarted !== undefined) this.notify("journeyStarted", journey);
    return journey;
  }

  private move(journey: Journey, fromId: number, toId: number, time: number): void {
    const current = journey.state;
    const movedByLedger = journey.movedByLedger;
    journey.movedByLedger = false;
    if (current !== fromId) {
      // Already there because a ledger moved it (execute() to executing, gather() to flight,
      // end() onwards) before the caller reported the same transition itself.
      if (current === toId && movedByLedger) return;
      this.drop(
        "state-mismatch",
        `${ALL_STATES[fromId]} → ${ALL_STATES[toId]} but the key is in ${ALL_STATES[current]}; repaired from ${ALL_STATES[current]}`,
        journey,
      );
    } else if (this.table[fromId * STATE_COUNT + toId] !== 1) {
      this.drop("impossible-transition", `${ALL_STATES[fromId]} → ${ALL_STATES[toId]} is not a ${this.role} transition`, journey);
    }
    const stateStart = journey.stateStart;
    if (time < stateStart) {
      this.drop("time-backwards", `a transition at ${time} before the state began at ${stateStart}`, journey);
      time = stateStart;
    }
    const accumulators = this.accumulators;
    const base = journey.prefixId * STATE_COUNT;
    accumulators.visit(base + current, time - stateStart);
    accumulators.transitions[base + toId] += 1;
    if (current === WAITING) this.apportion(journey, time);
    else if (current === FETCH) this.leaveFetch(journey, time);
    // From fetch as usual, or straight from missing/released when the caller's gather() is first.
    if (toId === FLIGHT && this.dependentsOf.size > 0) this.noteWaitingDependents(journey);

    if (IS_TERMINAL[toId] === 1) {
      this.finish(journey, toId, time);
      return;
    }
    journey.visits.push(toId, time);
    journey.state = toId;
    if (journey.sampled && this.listener?.stateEntered !== undefined) this.notify("stateEntered", journey);
  }

  /** A move a ledger makes on the caller's behalf; the caller may still report it, harmlessly. */
  private moveForLedger(journey: Journey, toId: number, time: number): void {
    this.move(journey, journey.state, toId, time);
    journey.movedByLedger = true;
  }

  private finish(journey: Journey, toId: number, time: number): void {
    journey.visits.push(toId, time);
    journey.state = toId;
    journey.end = time;
    journey.outcomeState = toId;
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined) this.detachDependencies(journey);
    const noted = journey.notedDependents;
    if (noted !== undefined) {
      const weight = 1 / noted.length;
      for (const dependent of noted) {
        if (dependent.ended || dependent.state !== WAITING) continue;
        (dependent.waitSources ??= []).push(journey);
        (dependent.waitWeights ??= []).push(weight);
      }
      journey.notedDependents = undefined;
    }
    if (journey.openLedgers === 0) this.retire(journey);
  }

  /** Hands a finished journey out and keeps it for explain(). */
  private retire(journey: Journey): void {
    // Every journey passes here: the listener is called directly, not through notify().
    const listener = this.listener;
    if (listener !== undefined && listener.journeyEnded !== undefined) {
      try {
        listener.journeyEnded(journey);
      } catch (error) {
        this.listenerFailed("journeyEnded", error);
      }
    }
    const capacity = this.retained.length;
    if (capacity === 0) return;
    // No index by key: explain() scans the ring, so retiring a journey stays one store.
    this.retained[this.retainedNext] = journey;
    this.retainedNext = this.retainedNext + 1 === capacity ? 0 : this.retainedNext + 1;
  }

  private notify(
    event: "journeyStarted" | "stateEntered" | "journeyEnded",
    journey: Journey,
  ): void {
    try {
      this.listener![event]!(journey);
    } catch (error) {
      this.listenerFailed(event, error);
    }
  }

  private listenerFailed(event: string, error: unknown): void {
    // A failing exporter bridge must not become the scheduler's failure, strict or not.
    this.accumulators.drop("listener-error");
    if (!this.reported.has("listener-error")) {
      this.reported.add("listener-error");
      this.config.report("listener-error", `${event}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // ---- dependencies and waiting-time apportioning ------------------------------------------

  dependencies(key: Key, dependencies: readonly Key[]): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    if (!Array.isArray(dependencies)) {
      this.drop("invalid-key", "dependencies() takes an array of keys");
      return;
    }
    const ids: Array<string | number> = [];
    for (const dependency of dependencies) {
      const dependencyId = this.idOf(dependency);
      if (dependencyId !== undefined) ids.push(dependencyId);
    }
    const journey = this.live.get(id);
    if (journey !== undefined) {
      if (journey.dependencyIds !== undefined) this.detachDependencies(journey);
      this.attachDependencies(journey, ids);
    } else if (this.pendingDependencies.size < 100_000) {
      this.pendingDependencies.set(id, ids);
    } else {
      this.drop("dependencies-overflow", "over 100000 keys told dependencies() before their journey began");
    }
  }

  private attachDependencies(journey: Journey, ids: Array<string | number>): void {
    journey.dependencyIds = ids;
    for (const dependencyId of ids) {
      let dependents = this.dependentsOf.get(dependencyId);
      if (dependents === undefined) {
        dependents = [];
        this.dependentsOf.set(dependencyId, dependents);
      }
      dependents.push(journey);
      // A dependency already being fetched serves this dependent too.
      const dependency = this.live.get(dependencyId);
      if (dependency !== undefined && dependency.kind === FETCH_JOURNEY && journey.state === WAITING) {
        this.note(dependency, journey);
      }
    }
  }

  private detachDependencies(journey: Journey): void {
    for (const dependencyId of journey.dependencyIds!) {
      const dependents = this.dependentsOf.get(dependencyId);
      if (dependents === undefined) continue;
      const index = dependents.indexOf(journey);
      if (index !== -1) dependents.splice(index, 1);
      if (dependents.length === 0) this.dependentsOf.delete(dependencyId);
    }
  }

  private note(dependency: Journey, dependent: Journey): void {
    const noted = (dependency.notedDependents ??= []);
    if (!noted.includes(dependent)) noted.push(dependent);
  }

  /** At a dependency's flight, the dependents waiting for it are the ones it serves. */
  private noteWaitingDependents(journey: Journey): void {
    const dependents = this.dependentsOf.get(journey.id);
    if (dependents !== undefined) {
      for (const dependent of dependents) if (dependent.state === WAITING) this.note(journey, dependent);
    }
  }

  private leaveFetch(journey: Journey, time: number): void {
    if (journey.queueReason !== -1) {
      const start = journey.stateStart;
      journey.activityRecords().push(journey.visitIndex, journey.queueReason, -1, start, time, 0, time - start);
      journey.queueReason = -1;
    }
  }

  /** Why the key sits in `fetch` (e.g. "local-saturated"): its queue time is reported under it. */
  queued(key: Key, reason: string): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const journey = this.live.get(id);
    if (journey === undefined || journey.state !== FETCH) return;
    let activity = this.queueReasons.get(reason);
    if (activity === undefined) {
      activity = this.activityId(`${QUEUED_ACTIVITY} (${String(reason)})`);
      // Bounded like the activities themselves: past the limit, reasons are looked up each time.
      if (this.queueReasons.size < this.activities.limit) this.queueReasons.set(reason, activity);
    }
    journey.queueReason = activity;
  }

  private apportion(journey: Journey, time: number): void {
    const waitStart = journey.stateStart;
    const base = journey.prefixId * this.activities.limit;
    const sources = journey.waitSources;
    if (sources === undefined) {
      this.accumulators.waitSeconds[base + DEPENDENCIES] += time - waitStart;
      return;
    }
    const intervals: WaitInterval[] = [];
    const weights = journey.waitWeights!;
    for (let s = 0; s < sources.length; s++) this.collectIntervals(sources[s], weights[s], waitStart, time, intervals);
    const shares = apportionWaiting(waitStart, time, intervals, DEPENDENCIES, OTHER);
    const breakdown = (journey.waitBreakdown ??= []);
    const visit = journey.visitIndex;
    for (const [activity, seconds] of shares) {
      breakdown.push(visit, activity, seconds);
      this.accumulators.waitSeconds[base + activity] += seconds;
    }
    journey.waitSources = undefined;
    journey.waitWeights = undefined;
    // Kept (not copied) for span links; a second waiting visit appends to the first's array.
    const served = journey.fetchedBy;
    if (served === undefined) journey.fetchedBy = sources;
    else for (const source of sources) served.push(source);
  }

  /** What a fetched dependency was doing, visit by visit, inside [from, to]. */
  private collectIntervals(source: Journey, weight: number, from: number, to: number, into: WaitInterval[]): void {
    for (let visit = 0; visit < source.visitCount; visit++) {
      const state = source.visitState(visit);
      if (state !== FETCH && state !== FLIGHT && state !== MISSING) continue;
      const start = source.visitStart(visit);
      const end = source.visitEnd(visit);
      if (!(end > from) || !(start < to) || !(end > start)) continue;
      const activities: number[] = [];
      const records = source.activities;
      for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
        if (records[record + ACTIVITY_VISIT] === visit) {
          activities.push(records[record + ACTIVITY_ID], records[record + ACTIVITY_SELF_SECONDS]);
        }
      }
      if (activities.length === 0) {
        activities.push(state === FETCH ? QUEUED : state === MISSING ? MISSING_ACTIVITY : OTHER, end - start);
      }
      into.push({ start, end, weight, priority: state === FLIGHT ? 0 : 1, activities });
    }
  }

  // ---- ledgers ------------------------------------------------------------------------------

  execute(key: Key, at?: number): ExecutionLedger | NoLedger {
    const time = this.now(at);
    const id = this.idOf(key);
    if (id === undefined) return this.noLedger;
    let journey = this.liveJourney(id);
    if (journey === undefined) journey = this.begin(key, id, EXECUTING, time);
    else if (journey.state !== EXECUTING && journey.state !== LONG_RUNNING) this.moveForLedger(journey, EXECUTING, time);
    if (journey.ended) return this.noLedger;
    journey.openLedgers++;
    return new ExecutionLedger(this, journey, time);
  }

  gather(peer: string, keys: readonly Key[], bytes?: number, at?: number): TransferLedger | NoLedger {
    const time = this.now(at);
    if (!Array.isArray(keys)) {
      this.drop("invalid-key", "gather() takes an array of keys");
      return this.noLedger;
    }
    const journeys: Journey[] = [];
    for (const key of keys) {
      const id = this.idOf(key);
      if (id === undefined) continue;
      let journey = this.liveJourney(id);
      if (journey === undefined) journey = this.begin(key, id, FLIGHT, time);
      else if (journey.state !== FLIGHT) this.moveForLedger(journey, FLIGHT, time);
      if (!journey.ended) {
        journeys.push(journey);
        journey.openLedgers++;
      }
    }
    let nbytes = 0;
    if (bytes !== undefined) {
      if (bytes >= 0 && bytes !== Infinity) nbytes = bytes;
      else this.drop("invalid-value", `gather() bytes ${String(bytes)}`);
    }
    const transfer = new Transfer(++this.transferIds, String(peer), journeys, nbytes, time);
    for (const journey of journeys) {
      (journey.transfers ??= []).push(transfer);
      (journey.transferVisits ??= []).push(journey.visitIndex);
    }
    if (this.listener?.transferStarted !== undefined) {
      try {
        this.listener.transferStarted(transfer);
      } catch (error) {
        this.listenerFailed("transferStarted", error);
      }
    }
    return new TransferLedger(this, transfer, time);
  }

  /** @internal Called by ExecutionLedger.end. */
  executeEnded(journey: Journey, outcome: ExecuteOutcome, seconds: number, other: number, ledger: ExecutionLedger, time: number): void {
    const accumulators = this.accumulators;
    const base = journey.prefixId * this.activities.limit;
    const lump = EXECUTE_LUMP[outcome];
    if (lump !== undefined) {
      accumulators.executeSeconds[base + this.activityId(lump)] += seconds;
    } else {
      ledger.addSelfTimes(accumulators.executeSeconds, base);
      accumulators.executeSeconds[base + OTHER] += other;
    }
    journey.openLedgers--;
    if (!journey.ended) {
      if (journey.state === EXECUTING || journey.state === LONG_RUNNING) {
        this.moveForLedger(journey, outcome === "memory" ? MEMORY : outcome === "error" ? ERROR : CANCELLED, time);
      }
    } else if (journey.openLedgers === 0) {
      this.retire(journey);
    }
  }

  /** @internal Called by TransferLedger.end. */
  transferEnded(transfer: Transfer, outcome: TransferOutcome, other: number, time: number): void {
    transfer.end = time;
    transfer.outcome = outcome;
    const accumulators = this.accumulators;
    const outcomeIndex = TRANSFER_OUTCOMES.indexOf(outcome);
    accumulators.gatherBytes[outcomeIndex] += transfer.bytes;
    accumulators.transfers[outcomeIndex] += 1;
    const lump = TRANSFER_LUMP[outcome];
    const wall = time - transfer.start;
    const records = transfer.activities;
    const lumpId = lump === undefined ? -1 : this.activityId(lump);
    if (lumpId !== -1) {
      accumulators.gatherSeconds[lumpId] += wall;
    } else {
      for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
        accumulators.gatherSeconds[records[record + ACTIVITY_ID]] += records[record + ACTIVITY_SELF_SECONDS];
      }
      accumulators.gatherSeconds[OTHER] += other;
    }
    const journeys = transfer.journeys;
    const share = journeys.length > 0 ? 1 / journeys.length : 0;
    const nextState = TRANSFER_NEXT_STATE[outcome];
    for (const journey of journeys) {
      journey.openLedgers--;
      if (journey.ended) {
        if (journey.openLedgers === 0) this.retire(journey);
        continue;
      }
      if (journey.state !== FLIGHT) continue;
      // Each key carried gets an even share of the transfer's activities, on its flight visit.
      const visit = journey.visitIndex;
      const target = journey.activityRecords();
      if (lumpId !== -1) {
        target.push(visit, lumpId, -1, transfer.start, time, 0, wall * share);
      } else {
        // Self times, so nested activities are not counted twice; the keys' shares add up to the
        // transfer's wall time.
        for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
          const seconds = records[record + ACTIVITY_SELF_SECONDS] * share;
          target.push(visit, records[record + ACTIVITY_ID], -1, transfer.start, time, 0, seconds);
        }
        if (other > 0) target.push(visit, OTHER, -1, transfer.start, time, 0, other * share);
      }
      this.moveForLedger(journey, nextState, time);
    }
    if (this.listener?.transferEnded !== undefined) {
      try {
        this.listener.transferEnded(transfer);
      } catch (error) {
        this.listenerFailed("transferEnded", error);
      }
    }
  }

  // ---- reading ------------------------------------------------------------------------------

  /** A live journey, or a recently finished one kept in the bounded ring. */
  journeyOf(key: Key): Journey | undefined {
    const id = typeof key === "string" || typeof key === "number" ? key : keyToText(key);
    if (id === undefined) return undefined;
    return this.live.get(id) ?? this.recentlyFinished(id);
  }

  /** The newest journey of `id` kept in the ring, scanned newest first. */
  private recentlyFinished(id: string | number): Journey | undefined {
    const retained = this.retained;
    const capacity = retained.length;
    for (let back = 1; back <= capacity; back++) {
      let slot = this.retainedNext - back;
      if (slot < 0) slot += capacity;
      const journey = retained[slot];
      // The ring fills in order: an empty slot means there is nothing older.
      if (journey === undefined) return undefined;
      if (journey.id === id) return journey;
    }
    return undefined;
  }

  stats(prefix: string, state: string): DurationStats {
    const prefixId = this.prefixes.find(prefix);
    const id = stateId(state);
    if (id === -1) throw new RangeError(`stats(): unknown state "${state}"`);
    const statistics = prefixId === -1 ? undefined : this.accumulators.durations[prefixId * STATE_COUNT + id];
    return (statistics ?? this.config.makeStatistics()).snapshot();
  }
}

/** Meters one execution of a key; `end(outcome)` ends the executing state. */
export class ExecutionLedger extends Ledger {
  constructor(
    private readonly recorder: Recorder,
    readonly journey: Journey,
    start: number,
  ) {
    super(recorder, journey.activityRecords(), start);
  }

  protected currentVisit(): number {
    return this.journey.visitIndex;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    const journey = this.journey;
    (journey.quantities ??= []).push(journey.visitIndex, activityId, unitId, value);
    const unit = this.recorder.quantityUnit(unitId);
    if (unit !== -1) this.recorder.accumulators.addExecuteQuantity(journey.prefixId * this.recorder.activities.limit + activityId, unit, value);
  }

  protected markDigest(record: number): void {
    (this.journey.digestRecords ??= []).push(record);
  }

  /** Ends the execution: "memory" (success), "error" or "cancelled". */
  end(outcome: ExecuteOutcome = "memory", at?: number): void {
    if (this.ended) {
      this.recorder.drop("ledger-ended", "end() called twice");
      return;
    }
    let checked = outcome;
    if (!EXECUTE_OUTCOMES.includes(checked)) {
      this.recorder.drop("invalid-outcome", `execute outcome "${String(outcome)}" reported as "error"`);
      checked = "error";
    }
    const time = this.recorder.now(at);
    const other = this.closeAll(time);
    this.ended = true;
    this.recorder.executeEnded(this.journey, checked, time - this.start, other, this, time);
  }

  /** @internal Adds each record's self seconds into `into[base + activityId]`. */
  addSelfTimes(into: Float64Array, base: number): void {
    const records = this.records;
    for (let record = this.firstRecord; record < records.length; record += ACTIVITY_FIELDS) {
      into[base + records[record + ACTIVITY_ID]] += records[record + ACTIVITY_SELF_SECONDS];
    }
  }
}

/** Meters one gather_dep transfer; `end(outcome)` moves its keys on. */
export class TransferLedger extends Ledger {
  constructor(
    private readonly recorder: Recorder,
    readonly transfer: Transfer,
    start: number,
  ) {
    super(recorder, transfer.activities, start);
  }

  protected currentVisit(): number {
    return -1;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    // Only what crossed the wire is the transfer's size: bytes spilled or deserialized on receipt are not.
    if (activityId === this.recorder.activityId(NETWORK_ACTIVITY) && this.recorder.units.name(unitId) === "bytes") this.transfer.bytes += value;
  }

  protected markDigest(record: number): void {
    (this.transfer.digestRecords ??= []).push(record);
  }

  /** Ends the transfer: "ok", "busy", "missing", "failed" or "cancelled". */
  end(outcome: TransferOutcome = "ok", at?: number): void {
    if (this.ended) {
      this.recorder.drop("ledger-ended", "end() called twice");
      return;
    }
    let checked = outcome;
    if (!TRANSFER_OUTCOMES.includes(checked)) {
      this.recorder.drop("invalid-outcome", `transfer outcome "${String(outcome)}" reported as "failed"`);
      checked = "failed";
    }
    const time = this.recorder.now(at);
    const other = this.closeAll(time);
    this.ended = true;
    this.recorder.transferEnded(this.transfer, checked, other, time);
  }
}

/**
 * Returned for a key that could not be recorded: runs the caller's work untouched, records nothing.
 * One shared instance, so an invalid key costs no allocation.
 */
export class NoLedger {
  meter<T>(_activity: string, work: () => T): T {
    return work();
  }
  digest(_activity: string, _value: number, _unit?: string): void {}
  run<T>(work: () => T): T {
    return work();
  }
  end(_outcome?: string, _at?: number): void {}
  get ended(): boolean {
    return false;
  }
}
