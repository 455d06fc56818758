import { keySplitUncached, type Key } from "../model/keys.js";
import { keyId } from "./key-id.js";
import {
  ALL_STATES,
  STATE_COUNT,
  stateId,
  stateMembership,
  terminalMask,
  transitionTable,
  type Role,
} from "../model/states.js";
import { OTHER_ACTIVITY, QUANTITY_UNITS, QUEUED_ACTIVITY } from "../model/activities.js";
import { DurationStatistics, type DurationStats } from "../model/statistics/index.js";
import { Accumulators, stateCell } from "./accumulators.js";
import { OTHER, SEED_ACTIVITIES } from "./activity-ids.js";
import { Dependencies } from "./dependencies.js";
import { Interner } from "./interner.js";
import {
  addActivity,
  COMPUTE_JOURNEY,
  FETCH_JOURNEY,
  Journey,
  SCHEDULER_JOURNEY,
  Transfer,
  type JourneyKindId,
} from "./journey.js";
import type { LedgerHost } from "./ledger.js";
import { ExecutionLedger } from "./execution-ledger.js";
import { addTransferShare, TransferLedger } from "./transfer-ledger.js";
import { NoLedger } from "./no-ledger.js";
import type { RecorderListener } from "./listener.js";
import type { DropReason } from "./drop-reasons.js";
import { Failures } from "./failures.js";
import type { StallRing } from "../model/stalls.js";
import { Serve, ServeLedger, ServeTotals } from "./serve-ledger.js";

const RELEASED = stateId("released");
const WAITING = stateId("waiting");
const FETCH = stateId("fetch");
const FLIGHT = stateId("flight");
const MISSING = stateId("missing");
const EXECUTING = stateId("executing");
const LONG_RUNNING = stateId("long-running");

const IS_TERMINAL = terminalMask();

const ACTIVITY_CACHE_MASK = 31;

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
  /** Where the first failure of each kind is told (see failures.ts): `diag.warn` in journeys.ts. */
  tell: (message: string) => void;
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
  /** Which journeys wait for which, and the apportioning of their waiting time. */
  private readonly deps: Dependencies;
  private readonly retained: Array<Journey | undefined>;
  private retainedNext = 0;
  private readonly table: Uint8Array;
  private readonly member: Uint8Array;
  /** Counts, tells and (strict) throws every failure: the one failure path. */
  readonly failures: Failures;
  private readonly config: RecorderConfig;
  private transferIds = 0;
  /** queued() reasons to their `queued (<reason>)` activity ids, so a reason's name is built once. */
  private readonly queueReasons = new Map<string, number>();
  private readonly activityCacheNames = new Array<string>(ACTIVITY_CACHE_MASK + 1).fill("");
  private readonly activityCacheIds = new Int32Array(ACTIVITY_CACHE_MASK + 1);
  readonly noLedger: NoLedger;
  readonly asyncContext: boolean;
  /**
   * The process's recent stalls (GC pauses, event-loop stalls), when watched: read by explain()
   * and the span bridge to place them in a journey's visits, never written on the hot path.
   */
  stalls: StallRing | undefined = undefined;
  /** What the get_data requests served to peers took (serve()), for task.serve.*. */
  readonly serveTotals: ServeTotals;
  /** Recently ended serves, a ring like the retained journeys, for explain(). */
  private readonly served: Array<Serve | undefined>;
  private servedNext = 0;
  private serveIds = 0;

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
    this.failures = new Failures({ tell: config.tell, strict: config.strict, counts: this.accumulators.dropped });
    this.deps = new Dependencies(this.live, this.accumulators);
    this.retained = new Array<Journey | undefined>(config.retainedJourneys).fill(undefined);
    this.table = transitionTable(config.role);
    this.member = stateMembership(config.role);
    this.noLedger = new NoLedger();
    this.serveTotals = new ServeTotals(this.activities.limit);
    this.served = new Array<Serve | undefined>(config.retainedJourneys).fill(undefined);
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

  /** Bad input: counted, told once, thrown when strict (failures.ts). */
  drop(reason: DropReason, detail: string, journey?: Journey): void {
    this.failures.input(reason, detail, journey);
  }

  /** The key's id in maps; undefined (and counted) for values that are not keys. */
  idOf(key: unknown): string | number | undefined {
    const id = keyId(key);
    if (id === undefined) {
      this.drop("invalid-key", `a ${key === null ? "null" : typeof key} is not a key`);
      return undefined;
    }
    if (typeof id === "string" && id.length > this.config.maxKeyLength) {
      this.drop("key-too-long", `a key of ${id.length} characters (maxKeyLength ${this.config.maxKeyLength})`);
      return undefined;
    }
    return id;
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
    const deps = this.deps;
    if (state === FLIGHT && deps.dependentsOf.size > 0) deps.enteredFlight(journey);
    this.accumulators.transitions[stateCell(prefixId, state)] += 1;
    if (deps.pending.size > 0) deps.begun(journey);
    const listener = this.listener;
    if (sampled && listener?.journeyStarted !== undefined) this.notify("journeyStarted", listener.journeyStarted, journey);
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
    const prefixId = journey.prefixId;
    accumulators.visit(stateCell(prefixId, current), time - stateStart);
    accumulators.transitions[stateCell(prefixId, toId)] += 1;
    if (current === WAITING) this.deps.apportion(journey, time);
    else if (current === FETCH) this.leaveFetch(journey, time);
    // From fetch as usual, or straight from missing/released when the caller's gather() is first.
    if (toId === FLIGHT && this.deps.dependentsOf.size > 0) this.deps.enteredFlight(journey);

    if (IS_TERMINAL[toId] === 1) {
      this.finish(journey, toId, time);
      return;
    }
    journey.visits.push(toId, time);
    journey.state = toId;
    const listener = this.listener;
    if (journey.sampled && listener?.stateEntered !== undefined) this.notify("stateEntered", listener.stateEntered, journey);
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
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    if (journey.openLedgers === 0) this.retire(journey);
  }

  /** Hands a finished journey out and keeps it for explain(). */
  private retire(journey: Journey): void {
    const listener = this.listener;
    if (listener?.journeyEnded !== undefined) this.notify("journeyEnded", listener.journeyEnded, journey);
    const capacity = this.retained.length;
    if (capacity === 0) return;
    // No index by key: explain() scans the ring, so retiring a journey stays one store.
    this.retained[this.retainedNext] = journey;
    this.retainedNext = this.retainedNext + 1 === capacity ? 0 : this.retainedNext + 1;
  }

  /**
   * The one guarded listener call: a listener that throws (a failing exporter bridge) is counted
   * and told once, never the host's failure, strict or not.
   */
  private notify<T>(event: string, handler: (subject: T) => void, subject: T): void {
    try {
      handler.call(this.listener, subject);
    } catch (error) {
      this.failures.fault("listener-error", `dropped input (listener-error): ${event}: ${error instanceof Error ? error.message : String(error)}.`);
    }
  }

  // ---- dependencies (dependencies.ts keeps them) ---------------------------------------------

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
    if (!this.deps.tell(id, ids)) {
      this.drop("dependencies-overflow", "over 100000 keys told dependencies() before their journey began");
    }
  }

  // ---- the fetch queue ------------------------------------------------------------------------

  private leaveFetch(journey: Journey, time: number): void {
    if (journey.queueReason !== -1) {
      const start = journey.stateStart;
      addActivity(journey.activityRecords(), journey.visitIndex, journey.queueReason, start, time, time - start);
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
    const listener = this.listener;
    if (listener?.transferStarted !== undefined) this.notify("transferStarted", listener.transferStarted, transfer);
    return new TransferLedger(this, transfer, time);
  }

  /** An execution ledger ended (it settled its own seconds): its journey moves on. */
  executionEnded(journey: Journey, nextState: number, time: number): void {
    journey.openLedgers--;
    if (!journey.ended) {
      if (journey.state === EXECUTING || journey.state === LONG_RUNNING) this.moveForLedger(journey, nextState, time);
    } else if (journey.openLedgers === 0) {
      this.retire(journey);
    }
  }

  /** A transfer ledger ended (it settled its own bytes and seconds): each key carried takes its share and moves on. */
  transferEnded(transfer: Transfer, nextState: number, lumpId: number, other: number, time: number): void {
    const journeys = transfer.journeys;
    const share = journeys.length > 0 ? 1 / journeys.length : 0;
    for (const journey of journeys) {
      journey.openLedgers--;
      if (journey.ended) {
        if (journey.openLedgers === 0) this.retire(journey);
        continue;
      }
      if (journey.state !== FLIGHT) continue;
      // Each key carried gets an even share of the transfer's activities, on its flight visit.
      addTransferShare(journey.activityRecords(), journey.visitIndex, transfer, lumpId, other, share);
      this.moveForLedger(journey, nextState, time);
    }
    const listener = this.listener;
    if (listener?.transferEnded !== undefined) this.notify("transferEnded", listener.transferEnded, transfer);
  }

  // ---- serving peers (serve-ledger.ts) ---------------------------------------------------------

  /**
   * Opens the ledger of one get_data request `peer` made of this worker for `keys`. The keys'
   * journeys are not moved: serving data a worker holds is not a state of it.
   */
  serve(peer: string, keys: readonly Key[], at?: number): ServeLedger | NoLedger {
    const time = this.now(at);
    if (!Array.isArray(keys)) {
      this.drop("invalid-key", "serve() takes an array of keys");
      return this.noLedger;
    }
    const ids: Array<string | number> = [];
    for (const key of keys) {
      const id = this.idOf(key);
      if (id !== undefined) ids.push(id);
    }
    const serve = new Serve(++this.serveIds, String(peer), ids, time);
    return new ServeLedger(this, serve, this.serveTotals, (ended) => this.serveEnded(ended));
  }

  private serveEnded(serve: Serve): void {
    const capacity = this.served.length;
    if (capacity > 0) {
      this.served[this.servedNext] = serve;
      this.servedNext = this.servedNext + 1 === capacity ? 0 : this.servedNext + 1;
    }
    const listener = this.listener;
    if (listener?.serveEnded !== undefined) this.notify("serveEnded", listener.serveEnded, serve);
  }

  /** The recently ended serves of `key`, oldest first. */
  servesOf(key: Key): Serve[] {
    const id = keyId(key);
    const found: Serve[] = [];
    if (id === undefined) return found;
    const capacity = this.served.length;
    for (let back = capacity; back >= 1; back--) {
      let slot = this.servedNext - back;
      if (slot < 0) slot += capacity;
      const serve = this.served[slot];
      if (serve !== undefined && serve.keyIds.includes(id)) found.push(serve);
    }
    return found;
  }

  // ---- reading ------------------------------------------------------------------------------

  /** A live journey, or a recently finished one kept in the bounded ring. */
  journeyOf(key: Key): Journey | undefined {
    const id = keyId(key);
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
    const statistics = prefixId === -1 ? undefined : this.accumulators.durations[stateCell(prefixId, id)];
    return (statistics ?? this.config.makeStatistics()).snapshot();
  }
}
