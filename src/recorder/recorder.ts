import { keySplitUncached, type Key } from "../model/keys.js";
import { looksLikeId } from "../model/prefix-check.js";
import { cutName, MAX_NAME_LENGTH } from "../model/names.js";
import { keyId } from "./key-id.js";
import { PRESETS, type Role } from "../model/states.js";
import { STATE_STRIDE, type Machine } from "../model/machine.js";
import { OTHER_ACTIVITY, QUANTITY_UNITS, QUEUED_ACTIVITY } from "../model/activities.js";
import { DurationStatistics, type DurationStats } from "../model/statistics/index.js";
import { Accumulators, stateCell } from "./accumulators.js";
import { OTHER, SEED_ACTIVITIES } from "./activity-ids.js";
import { Dependencies } from "./dependencies.js";
import { RetainedJourneys } from "./retained.js";
import { RetainedServes } from "./retained-serves.js";
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
import { show } from "../model/show.js";
import { failureDetail } from "./failure-detail.js";
import { failureText } from "../model/breakdown.js";
import type { StallRing } from "../model/stalls.js";
import { Serve, ServeLedger, ServeTotals } from "./serve-ledger.js";

/** Keys described by describe() and not yet forgotten, kept at most. */
export const DESCRIBED_LIMIT = 100_000;

/** What describe() tells of a key: its prefix and group, for every later journey until it is forgotten. */
export interface KeyDescription {
  prefix?: string;
  group?: string;
}

const ACTIVITY_CACHE_MASK = 31;
/** Slots of the state-name cache (stateOf), by name length. */
const STATE_CACHE_MASK = 31;

export interface RecorderConfig {
  role: Role;
  /** The state machine, compiled; default the role's Dask preset. */
  machine?: Machine;
  instance: string;
  clock: () => number;
  /** A good reading the clock gave already (journeys.ts checks one at construction); else the recorder takes its own. */
  clockReading?: number;
  prefixLimit: number;
  activityLimit: number;
  retainedJourneys: number;
  /** Journeys live at once at most; the oldest is evicted for a new one past it. Default DEFAULT_MAX_LIVE_JOURNEYS. */
  maxLiveJourneys?: number;
  /** Approximate bytes the retained journeys may hold: 8 a number of their records, 40 a journey (retained.ts). */
  retainedJourneyBytes?: number;
  maxKeyLength: number;
  strict: boolean;
  /** Head sampling per key id, or undefined when no journey is ever sampled at its start. */
  sampler: ((id: string | number) => boolean) | undefined;
  makeStatistics: () => DurationStatistics;
  /** Where the first failure of each kind is told (see failures.ts): `diag.warn` in journeys.ts. */
  tell: (message: string) => void;
  /** False: ledgers are ambient only synchronously, without AsyncLocalStorage (see ambient.ts). Default true. */
  asyncContext?: boolean;
  /** Seconds a given time may lie from the clock; further is a `clock-skew` drop. Default: a day. */
  maxClockSkew?: number;
  /** The prefix of a key nothing described; default Dask's key_split. */
  keyPrefix?: (key: Key) => string;
}

/**
 * The default of `maxLiveJourneys`. A live journey holds about 250 B (a key left in waiting; 410 B
 * executing; bench/live-memory.bench.ts), so a million hold some 0.25–0.4 GB: a ceiling no worker
 * reaches (its tasks in flight are thousands), and for a scheduler given a million-task graph at
 * once a tenth of what Dask's own task states take. Reached, in practice, only by keys that never
 * reach a terminal state: the leak it bounds.
 */
export const DEFAULT_MAX_LIVE_JOURNEYS = 1_000_000;

/** The default of `maxClockSkew`: a day, in seconds. */
export const DEFAULT_MAX_CLOCK_SKEW = 86_400;

/**
 * The hot path: a pure state machine from transitions and ledger events to journeys and
 * accumulators. It knows nothing of OpenTelemetry; finished journeys go to `listener`.
 */
export class Recorder implements LedgerHost {
  readonly role: Role;
  readonly instance: string;
  /**
   * The clock, guarded: a reading that is not a finite, non-negative number (or a clock that
   * throws) is an `invalid-clock` drop and the last good reading stands in for it.
   */
  readonly clock: () => number;
  /**
   * The last good clock reading: what a bad one is replaced by, and what given times are held against.
   * Declared as a double (NaN until the constructor's first reading): a field that starts
   * undefined is tagged for good, and every reading stored into it was then a fresh boxed number
   * and a write barrier into this long-lived object, ~80 instructions a reading, 11 a journey.
   */
  private lastClock = Number.NaN;
  /** The caller's clock, unguarded: read only through tick(). */
  private readonly rawClock: () => number;
  readonly maxClockSkew: number;
  readonly prefixes: Interner;
  readonly activities: Interner;
  readonly units = new Interner(16, "other", ["seconds", "bytes", "count"]);
  readonly accumulators: Accumulators;
  listener: RecorderListener | undefined = undefined;
  /** Journeys in flight, by key id. Changed only through addLive() and removeLive(). */
  readonly live = new Map<string | number, Journey>();
  /** Called when a journey becomes live while none was (journeys.ts: the stall probe's wake()). */
  onFirstLive: (() => void) | undefined = undefined;
  /**
   * The same journeys as a list in the order they began (through Journey.older / newer): the
   * oldest is evicted past maxLiveJourneys in O(1). Not the Map's own order: a Map iterator made
   * for each eviction skips every deleted entry before the first live one, and one kept between
   * evictions keeps every table the Map outgrew alive until its next step.
   */
  private oldestLive: Journey | undefined = undefined;
  private newestLive: Journey | undefined = undefined;
  private readonly maxLive: number;
  /** See liveJourney(). */
  private recentId: string | number | undefined = undefined;
  private recentJourney: Journey | undefined = undefined;
  /** Which journeys wait for which, and the apportioning of their waiting time. */
  private readonly deps: Dependencies;
  /** Finished journeys for explain(), written into one typed array: bounded by count and by size. */
  private readonly retained: RetainedJourneys;
  /** The state machine: every state name, role and allowed move, decided at construction. */
  readonly machine: Machine;
  private readonly table: Uint8Array;
  private readonly member: Uint8Array;
  /** 1 for the machine's terminal states. */
  private readonly isTerminal: Uint8Array;
  /** Counts, tells and (strict) throws every failure: the one failure path. */
  readonly failures: Failures;
  private readonly config: RecorderConfig;
  private transferIds = 0;
  /** queued() reasons to their `queued (<reason>)` activity ids, so a reason's name is built once. */
  private readonly queueReasons = new Map<string, number>();
  private readonly activityCacheNames = new Array<string>(ACTIVITY_CACHE_MASK + 1).fill("");
  private readonly activityCacheIds = new Int32Array(ACTIVITY_CACHE_MASK + 1);
  /**
   * State names this recorder resolved, by length (-1: an empty slot): transition() is given the
   * same few literals over and over, and Machine.id(), which does not fit into transition()'s
   * inlining, cost ~100 instructions a name against one comparison here.
   */
  private readonly stateCacheNames = new Array<string>(STATE_CACHE_MASK + 1).fill("");
  private readonly stateCacheIds = new Int32Array(STATE_CACHE_MASK + 1).fill(-1);
  readonly noLedger: NoLedger;
  readonly asyncContext: boolean;
  /**
   * The process's recent stalls (GC pauses, event-loop stalls), when watched: read by explain()
   * and the span bridge to place them in a journey's visits, never written on the hot path.
   */
  stalls: StallRing | undefined = undefined;
  /** What the get_data requests served to peers took (serve()), for task.serve.*. */
  readonly serveTotals: ServeTotals;
  /** Recently ended serves for explain(), kept as the finished journeys are. */
  private readonly served: RetainedServes;
  private serveIds = 0;
  /** describe()d keys by id, until forgotten; at most DESCRIBED_LIMIT. */
  private readonly described = new Map<string | number, KeyDescription>();
  /**
   * The prefix of a journey the very next call may begin (an instrument() `prefix` extractor):
   * set just before that call and cleared after, so no per-key memory is kept for it.
   */
  prefixHint: string | undefined = undefined;

  constructor(config: RecorderConfig) {
    this.config = config;
    this.asyncContext = config.asyncContext !== false;
    this.maxLive = config.maxLiveJourneys ?? DEFAULT_MAX_LIVE_JOURNEYS;
    this.role = config.role;
    this.instance = config.instance;
    this.rawClock = config.clock;
    this.maxClockSkew = config.maxClockSkew ?? DEFAULT_MAX_CLOCK_SKEW;
    this.lastClock = 0;
    this.clock = () => {
      this.tick();
      return this.lastClock;
    };
    this.prefixes = new Interner(config.prefixLimit, "other");
    this.activities = new Interner(
      Math.max(config.activityLimit, SEED_ACTIVITIES.length),
      OTHER_ACTIVITY,
      SEED_ACTIVITIES,
    );
    const machine = config.machine ?? PRESETS[config.role];
    this.machine = machine;
    this.accumulators = new Accumulators(
      this.prefixes.capacity,
      STATE_STRIDE,
      this.activities.limit,
      config.makeStatistics,
    );
    this.failures = new Failures({
      tell: config.tell,
      strict: config.strict,
      counts: this.accumulators.dropped,
      stateNames: machine.names,
    });
    // Read once the failure path exists: a clock that fails here is counted like any later reading.
    if (typeof config.clockReading === "number" && config.clockReading >= 0 && config.clockReading < Infinity)
      this.lastClock = config.clockReading;
    else this.clock();
    this.deps = new Dependencies(this.live, this.accumulators, machine);
    this.table = machine.table;
    this.member = machine.member;
    this.isTerminal = machine.terminal;
    this.noLedger = new NoLedger();
    this.retained = new RetainedJourneys(config.retainedJourneys, config.retainedJourneyBytes ?? Infinity);
    this.served = new RetainedServes(config.retainedJourneys, config.retainedJourneyBytes ?? Infinity);
    this.serveTotals = new ServeTotals(this.activities.limit);
  }

  // ---- time, ids, drops -------------------------------------------------------------------

  /**
   * Reads the clock into `lastReading` (a bad reading, or a clock that throws, is an
   * `invalid-clock` drop and the last good reading stands). It returns nothing, and the hot path
   * reads the time from the field: a double returned by a call V8 does not inline (transition()
   * and begin() are too big to inline the clock) is a fresh 16 B HeapNumber, and the clock was
   * read some 14 times a worker journey (bench/guard: 229 + 97 B of 1,410 a journey were those).
   * The field is a double already, written in place.
   */
  tick(): void {
    // The good reading is stored within the try: a value carried out of a try block is kept
    // tagged, a fresh HeapNumber per reading again.
    let bad: unknown;
    try {
      const reading = this.rawClock();
      if (typeof reading === "number" && reading >= 0 && reading < Infinity) {
        this.lastClock = reading;
        return;
      }
      bad = reading;
    } catch {
      bad = Number.NaN;
    }
    this.drop("invalid-clock", `the clock read ${show(bad)}; its last good reading ${this.lastClock} is used`);
  }

  /** The clock's last good reading: what tick() read. */
  get lastReading(): number {
    return this.lastClock;
  }

  /**
   * A time given by the caller, checked, or the clock's now. Checking costs comparisons only: a
   * time is held against the last clock reading, and the clock is read again only when that
   * reading is too far away (it may be old), so a scheduler's own earlier timestamps stay fine.
   */
  now(at?: unknown): number {
    if (at === undefined) {
      this.tick();
      return this.lastClock;
    }
    // Any finite time within maxClockSkew of the clock: one before the clock's 0 is a journey
    // backdated by the scheduler's own record (a job created before this process started).
    if (typeof at === "number" && at - at === 0) {
      const skew = this.maxClockSkew;
      const distance = at - this.lastClock;
      if (distance <= skew && distance >= -skew) return at;
      const now = this.clock();
      if (at - now <= skew && now - at <= skew) return at;
      this.drop(
        "clock-skew",
        `time ${at} is ${Math.abs(at - now)} s from the clock's ${now} (limits.maxClockSkew ${skew}); the clock's is used`,
      );
      return now;
    }
    this.drop("invalid-time", `time ${show(at)} replaced by the clock`);
    return this.clock();
  }

  /**
   * Activity names arrive as the same few literals over and over ("deserialize", "thread-cpu"):
   * a small direct-mapped cache by length and first character answers them without hashing.
   */
  activityId(name: string): number {
    // An empty name would also hit the cache's empty slots (id 0, other) silently: counted instead.
    if (typeof name !== "string" || name.length === 0) {
      this.drop(
        "invalid-name",
        `an activity name that is ${show(name)}, not a non-empty string; recorded as "${OTHER_ACTIVITY}"`,
      );
      return OTHER;
    }
    if (name.length > MAX_NAME_LENGTH) name = this.cut("activity name", name);
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
  drop(reason: DropReason, detail: string, journey?: Journey, kind?: string): void {
    this.failures.input(reason, detail, journey, kind);
  }

  /** The role's state names, for a message saying what would be right (cold paths only). */
  validStates(): string {
    return `the ${this.role}'s states are ${this.machine.states.map((name) => `"${name}"`).join(", ")}`;
  }

  /** The key's id in maps; undefined (and counted) for values that are not keys. */
  idOf(key: unknown): string | number | undefined {
    // Most keys are strings: checked here first, without the call.
    if (typeof key === "string" && key.length <= this.config.maxKeyLength) return key;
    let id: string | number | undefined;
    if (typeof key === "string") id = key;
    else {
      try {
        id = keyId(key);
      } catch {
        // A Proxy or an array whose elements cannot be read: not a key anyone could look up.
        id = undefined;
      }
    }
    if (id === undefined) {
      this.drop("invalid-key", `${show(key)} is not a key`);
      return undefined;
    }
    if (typeof id === "string" && id.length > this.config.maxKeyLength) {
      this.drop("key-too-long", `a key of ${id.length} characters (limits.maxKeyLength ${this.config.maxKeyLength})`);
      return undefined;
    }
    return id;
  }

  /** A state name's id, or -1 (dropped, told once per name, naming `key` when given). */
  private stateOf(name: string, key?: unknown): number {
    if (typeof name === "string") {
      const slot = name.length & STATE_CACHE_MASK;
      if (this.stateCacheNames[slot] === name) {
        const cached = this.stateCacheIds[slot];
        if (cached !== -1) return cached;
      }
    }
    const id = this.machine.id(name);
    if (id !== -1 && this.member[id] === 1) {
      // Only a state of this role's machine is kept: anything else is dropped on every call.
      const slot = name.length & STATE_CACHE_MASK;
      this.stateCacheNames[slot] = name;
      this.stateCacheIds[slot] = id;
      return id;
    }
    this.badState(name, id, key);
    return -1;
  }

  /**
   * A state name that is not one of this role's, dropped and told once per name. Out of
   * stateOf(), which transition() calls twice a move: its message building is cold, and kept out
   * of the small function V8 inlines there.
   */
  private badState(name: string, id: number, key: unknown): void {
    const call = key === undefined ? "" : `transition(${show(key)}, …): `;
    const reason = id === -1 ? "unknown-state" : "wrong-role-state";
    this.drop(
      reason,
      id === -1
        ? `${call}unknown state ${show(name)}; ${this.validStates()}`
        : `${call}state "${name}" is not a ${this.role} state; ${this.validStates()}`,
      undefined,
      // Each name told once: the first misspelt state would otherwise hide every other.
      `${reason} ${typeof name === "string" ? name.slice(0, 64) : typeof name}`,
    );
  }

  // ---- transitions --------------------------------------------------------------------------

  transition(key: Key, from: string, to: string, at?: number, error?: unknown): void {
    // A time passed in is checked first; the clock is read only once the call records something
    // (a key ending without a journey here, the most common call after a journey, records nothing).
    const given = at === undefined ? Number.NaN : this.now(at);
    const fromId = this.stateOf(from, key);
    if (fromId === -1) return;
    const toId = this.stateOf(to, key);
    if (toId === -1) return;
    const id = this.idOf(key);
    if (id === undefined) return;
    if (this.described.size !== 0 && this.machine.forgets[toId] === 1) this.described.delete(id);
    const journey = this.liveJourney(id);
    if (journey === undefined) {
      // A key that ends without a journey here (memory → released, released → forgotten) is normal.
      const isTerminal = this.isTerminal;
      const fromLive = isTerminal[fromId] !== 1 && fromId !== this.machine.initial;
      if (isTerminal[toId] === 1) {
        // The end told again (after the ledger's end() made it, or re-delivered) is harmless; a
        // different end for a journey that ended is a late event of it.
        if (fromLive) this.endedOtherwise(id, fromId, toId);
        return;
      }
      // A journey begins from the machine's initial state or a terminal one (Dask's released is both).
      if (fromLive && this.withoutJourney(id, fromId, toId)) return;
      // NaN: begin() reads the clock itself, so no reading crosses a call boxed (see tick()).
      this.begin(key, id, toId, given);
      return;
    }
    if (toId === journey.state && fromId !== toId && !journey.movedByLedger) {
      // The same move told again (a scheduler's retried or re-delivered event): repairing it from
      // where the key is would split one visit into two of the same state.
      const names = this.machine.names;
      this.drop(
        "duplicate-transition",
        `${names[fromId]} → ${names[toId]} of a key already in ${names[toId]} (told twice?); ignored`,
        journey,
      );
      return;
    }
    if (error !== undefined) {
      // The caller's report of a move an execute ledger's end() made (active → delayed): the
      // attempt is the visit before, and the ledger's own error, when it had one, stands.
      if (journey.movedByLedger && journey.state === toId && fromId !== toId) {
        const left = journey.visitIndex - 1;
        if (left >= 0 && journey.visitState(left) === fromId) journey.explainAttempt(failureDetail(error), left);
      } else this.attemptFailed(journey, fromId, toId, error);
    }
    this.move(journey, fromId, toId, given);
  }

  /**
   * A move out of a live state of a key with no live journey. When the key's last journey ended
   * here, among the retained ones, the move is stale (a late or repeated event of that journey): it
   * is dropped, and true returned, so that no journey begins that nothing would ever end and that
   * would stand in explain() for the one that ended. Else the journey begins at `to` (instrumenting
   * a scheduler already running), counted as unknown-key.
   */
  private withoutJourney(id: string | number, fromId: number, toId: number): boolean {
    const names = this.machine.names;
    const move = `${names[fromId]} → ${names[toId]}`;
    const hint =
      this.machine.running[fromId] === 1
        ? ` (if an execute ledger's end() ended it: end the ledger with the state the key goes to, end("${names[toId]}", error), or return "${names[toId]}" from instrument()'s outcome mapper)`
        : "";
    const ended = this.retained.endedIn(id);
    if (ended !== -1) {
      this.drop(
        "stale-transition",
        `${move} of a key whose journey ended in ${names[ended]}: ignored; a new journey begins only from ` +
          `${this.machine.initial === -1 ? "" : `${names[this.machine.initial]} or `}a terminal state${hint}`,
      );
      return true;
    }
    this.drop("unknown-key", `${move} of a key with no journey; a journey starts at ${names[toId]}${hint}`);
    return false;
  }

  /** A move into an end of a key whose retained journey ended in another: stale, counted. */
  private endedOtherwise(id: string | number, fromId: number, toId: number): void {
    // The journey that just ended is the ring's newest: found at once in the usual case.
    const ended = this.retained.endedIn(id);
    if (ended === -1 || ended === toId) return;
    const names = this.machine.names;
    this.drop(
      "stale-transition",
      `${names[fromId]} → ${names[toId]} of a key whose journey ended in ${names[ended]}: ignored`,
    );
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
    const newest = this.newestLive;
    journey.older = newest;
    if (newest === undefined) {
      this.oldestLive = journey;
      // The first live journey after none: the stall probe goes back to its full rate now, not at
      // its next idle tick (up to a second later, missing the stalls of that second's tasks).
      this.onFirstLive?.();
    } else newest.newer = journey;
    this.newestLive = journey;
  }

  /** The live journey that began first (begin order, as eviction takes them), or undefined. */
  oldestLiveJourney(): Journey | undefined {
    return this.oldestLive;
  }

  private removeLive(journey: Journey): void {
    // Only if it is the live one: a finished journey is never removed in place of its successor.
    if (this.recentJourney !== journey && this.live.get(journey.id) !== journey) return;
    this.live.delete(journey.id);
    this.recentId = journey.id;
    this.recentJourney = undefined;
    const older = journey.older;
    const newer = journey.newer;
    if (older === undefined) this.oldestLive = newer;
    else older.newer = newer;
    if (newer === undefined) this.newestLive = older;
    else newer.older = older;
    // A retained journey must not keep its former neighbours alive.
    journey.older = undefined;
    journey.newer = undefined;
  }

  /**
   * Past maxLiveJourneys, the journey that began first is abandoned to make room: it ends where
   * it is, its current visit counted as abandoned, not finished (it has no end), its open ledgers closed, its
   * spans ended and marked abandoned (the listener's journeyAbandoned); counted and told once.
   */
  private evictOldest(time: number): void {
    const journey = this.oldestLive!;
    this.failures.fault(
      "live-journeys-limit",
      `more than limits.maxLiveJourneys (${this.maxLive}) journeys live at once: the oldest are abandoned to make room (their spans end marked taskjourney.abandoned). ` +
        "Keys that never reach a terminal state (memory, released, forgotten, …) hold their journeys until they do; else raise limits.maxLiveJourneys.",
    );
    const start = journey.stateStart;
    const end = time > start ? time : start;
    journey.more().abandonedAt = end;
    journey.ended = true;
    this.accumulators.abandon(stateCell(journey.prefixId, journey.state));
    if (journey.openLedgers !== 0) this.closeLedgers(journey, end, -1);
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    const listener = this.listener;
    if (listener?.journeyAbandoned !== undefined) this.notify("journeyAbandoned", listener.journeyAbandoned, journey);
  }

  /**
   * A journey ended (`terminal`, a state id) or was evicted (-1) at `time` with ledgers still
   * open: each execution ledger on it closes there (settled under the outcome the terminal state
   * implies, or not at all when evicted), and each transfer carrying it closes once every key it
   * carried ended, else goes on without this key. A closed ledger is counted when its journey
   * ended; an eviction is counted once for all of it.
   */
  private closeLedgers(journey: Journey, time: number, terminal: number): void {
    const outcome = terminal === -1 ? undefined : this.machine.executeOutcome(terminal);
    for (let ledger = journey.execution; ledger !== undefined; ledger = journey.execution) {
      if (outcome !== undefined) this.ledgerClosed("execute()", terminal);
      ledger.closeEarly(time, outcome);
    }
    const transfers = journey.transfers;
    if (transfers !== undefined) {
      for (const transfer of transfers) {
        const ledger = transfer.ledger;
        if (ledger === undefined || --transfer.liveKeys > 0) continue;
        if (outcome !== undefined) this.ledgerClosed("gather()", terminal);
        ledger.closeEarly(time, outcome !== undefined);
      }
    }
    journey.openLedgers = 0;
  }

  /**
   * Why the attempt the journey is leaving failed, as the scheduler knows it (a job's failedReason,
   * on active → delayed for a retry or active → failed for good): the visit left is marked as a
   * failed attempt, as an execution's error marks its own; a move into a failure state gives the
   * journey its failure too, unless an execution recorded one. With a move into a success state
   * the reason contradicts the move: counted, not recorded.
   */
  private attemptFailed(journey: Journey, fromId: number, toId: number, error: unknown): void {
    if (this.machine.succeeded[toId] === 1) {
      const names = this.machine.names;
      this.drop(
        "invalid-outcome",
        `an error given with ${names[fromId]} → ${names[toId]}, a success; not recorded`,
        journey,
      );
      return;
    }
    const reason = failureDetail(error);
    const machine = this.machine;
    // A move into a failure state, or on to another attempt, is an error; into another end (a job
    // cancelled because its parent failed), that end says what became of the attempt.
    const ends = this.isTerminal[toId] === 1 && machine.failed[toId] !== 1;
    journey.addReason(reason, journey.visitIndex, ends ? machine.names[toId] : undefined);
    if (machine.failed[toId] === 1 && journey.failure === undefined) journey.failure = reason;
  }

  private ledgerClosed(ledger: string, terminal: number): void {
    this.failures.fault(
      "ledger-open-at-end",
      `a key reached ${this.machine.names[terminal]} while its ${ledger} ledger was still open: the ledger is closed there, and its own end() later does nothing. ` +
        "End a ledger before the key's terminal transition (end() makes it).",
    );
  }

  /** `time` NaN: now (read here, see tick()). */
  private begin(key: Key, id: string | number, state: number, time: number): Journey {
    if (time !== time) {
      this.tick();
      time = this.lastClock;
    }
    const description = this.described.size !== 0 ? this.described.get(id) : undefined;
    const prefix = description?.prefix ?? this.prefixHint ?? this.prefixOf(key, id);
    const prefixId = this.internPrefix(prefix);
    const kind: JourneyKindId =
      this.role === "scheduler"
        ? SCHEDULER_JOURNEY
        : this.machine.fetching[state] === 1
          ? FETCH_JOURNEY
          : COMPUTE_JOURNEY;
    const sampler = this.config.sampler;
    const sampled = sampler !== undefined && sampler(id);
    if (this.live.size >= this.maxLive) this.evictOldest(time);
    const journey = new Journey(key, id, prefixId, kind, time, sampled, state);
    // The interned copy, when there is one: a prefix sliced from the key is a string of its own per journey.
    journey.prefixName = prefixId !== this.prefixes.limit ? this.prefixes.names[prefixId] : prefix;
    if (description?.group !== undefined) journey.group = description.group;
    this.addLive(id, journey);
    const deps = this.deps;
    if (state === this.machine.transfer && deps.dependentsOf.size > 0) deps.enteredFlight(journey);
    this.accumulators.transitions[stateCell(prefixId, state)] += 1;
    if (deps.pending.size > 0) deps.begun(journey);
    if (sampled) {
      const listener = this.listener;
      if (listener?.journeyStarted !== undefined) this.notify("journeyStarted", listener.journeyStarted, journey);
    }
    return journey;
  }

  /** The prefix of a key nothing described: the keyPrefix option's, or Dask's key_split. */
  private prefixOf(key: Key, id: string | number): string {
    const keyPrefix = this.config.keyPrefix;
    // Once per journey, and a journey's key is new: the memo of keySplit would only churn.
    if (keyPrefix === undefined) return safeKeySplit(key, id);
    let prefix: unknown;
    let threw = false;
    try {
      prefix = keyPrefix(key);
    } catch (error) {
      prefix = error;
      threw = true;
    }
    if (!threw && typeof prefix === "string" && prefix.length > 0) return prefix;
    // Told once for a throw and once for a value: the first of one would hide the other.
    this.failures.fault(
      "key-prefix-error",
      `dropped input (key-prefix-error): the keyPrefix option ${
        threw ? `threw ${thrownText(prefix)}` : `returned ${show(prefix)}, not a non-empty string`
      } for the key ${show(key)}; key_split is used.`,
      threw ? "key-prefix-error threw" : "key-prefix-error returned",
    );
    return safeKeySplit(key, id);
  }

  /**
   * A prefix's id. A prefix seen for the first time is checked, off the hot path of known ones:
   * one that looks like an id, or one past prefixLimit, is counted and told once, with what to do.
   */
  private internPrefix(prefix: string): number {
    if (prefix.length > MAX_NAME_LENGTH) prefix = this.cut("task prefix", prefix);
    const prefixes = this.prefixes;
    const known = prefixes.names.length;
    const folded = prefixes.overflowed;
    const id = prefixes.id(prefix);
    if (prefixes.names.length === known && prefixes.overflowed === folded) return id;
    if (looksLikeId(prefix)) {
      this.failures.fault(
        "prefix-looks-like-id",
        `task prefix "${prefix.slice(0, 64)}" looks like an id: keys like it are their own prefix, one metric series each. ` +
          "Give keys their family name with journeys.describe(key, { prefix }), the keyPrefix option or an instrument() prefix extractor.",
      );
    }
    if (id === prefixes.limit) {
      const few = prefixes.names
        .slice(0, 3)
        .concat(prefix.slice(0, 64))
        .map((name) => `"${name}"`);
      this.failures.fault(
        "prefix-limit",
        `more than limits.maxPrefixes (${prefixes.limit}) distinct task prefixes (${few.join(", ")}, …): further ones fold into "other". ` +
          "If these are ids, give keys their family name with journeys.describe(key, { prefix }), the keyPrefix option or an instrument() prefix extractor; else raise limits.maxPrefixes.",
      );
    }
    return id;
  }

  /** A name past MAX_NAME_LENGTH, cut to it: counted, and told once. */
  private cut(what: string, name: string): string {
    const cut = cutName(name);
    this.failures.fault(
      "name-too-long",
      `a ${what} of ${name.length} characters ("${name.slice(0, 64)}…"): names are cut to ${MAX_NAME_LENGTH} characters, as metric attributes.`,
    );
    return cut;
  }

  /** See TaskJourneys.describe. */
  describe(key: Key, description: KeyDescription): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const given = description as { prefix?: unknown; group?: unknown } | null;
    let prefix: unknown;
    let group: unknown;
    try {
      // Read once: a getter or a Proxy trap could answer differently, or throw.
      prefix = given?.prefix;
      group = given?.group;
    } catch {
      this.drop("invalid-description", "describe() given a description whose prefix or group could not be read");
      return;
    }
    if (
      given === null ||
      typeof given !== "object" ||
      (prefix !== undefined && (typeof prefix !== "string" || prefix.length === 0)) ||
      (group !== undefined && (typeof group !== "string" || group.length === 0))
    ) {
      this.drop("invalid-description", "describe() takes { prefix?, group? } of non-empty strings");
      return;
    }
    if (!this.described.has(id) && this.described.size >= DESCRIBED_LIMIT) {
      this.failures.fault(
        "describe-overflow",
        `dropped input (describe-overflow): describe() of more than ${DESCRIBED_LIMIT} keys not yet forgotten.`,
      );
      return;
    }
    // A copy: the caller's object may change afterwards.
    this.described.set(id, { prefix: prefix as string | undefined, group: group as string | undefined });
  }

  /** `time` NaN: now (read here, see tick()). */
  private move(journey: Journey, fromId: number, toId: number, time: number): void {
    const current = journey.state;
    const movedByLedger = journey.movedByLedger;
    // Written only when set: the flag's setter (a read-modify-write of the journey's flags) was
    // not inlined here, ~25 instructions a move for nothing most of the time.
    if (movedByLedger) journey.movedByLedger = false;
    if (current !== fromId) {
      // Already there because a ledger moved it (execute() to executing, gather() to flight,
      // end() onwards) before the caller reported the same transition itself.
      if (current === toId && movedByLedger) return;
    }
    // The clock is read only past that repeat, which records nothing (one reading a worker journey).
    if (time !== time) {
      this.tick();
      time = this.lastClock;
    }
    if (current !== fromId) {
      const names = this.machine.names;
      this.drop(
        "state-mismatch",
        `${names[fromId]} → ${names[toId]} but the key is in ${names[current]}; repaired from ${names[current]}`,
        journey,
      );
    } else if (this.table[fromId * STATE_STRIDE + toId] !== 1) {
      const names = this.machine.names;
      this.drop(
        "impossible-transition",
        `${names[fromId]} → ${names[toId]} is not a transition of the ${this.role}'s machine`,
        journey,
      );
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
    const machine = this.machine;
    if (current === machine.waiting) this.deps.apportion(journey, time);
    else if (machine.queued[current] === 1) this.leaveQueue(journey, time);
    // From fetch as usual, or straight from missing/released when the caller's gather() is first.
    if (toId === machine.transfer && this.deps.dependentsOf.size > 0) this.deps.enteredFlight(journey);

    if (this.isTerminal[toId] === 1) {
      this.finish(journey, toId, time);
      return;
    }
    journey.visits.push(toId, time);
    journey.state = toId;
    if (journey.sampled) {
      const listener = this.listener;
      if (listener?.stateEntered !== undefined) this.notify("stateEntered", listener.stateEntered, journey);
    }
  }

  /** A move a ledger makes on the caller's behalf; the caller may still report it, harmlessly. */
  private moveForLedger(journey: Journey, toId: number, time: number): void {
    this.move(journey, journey.state, toId, time);
    journey.movedByLedger = true;
  }

  private finish(journey: Journey, toId: number, time: number): void {
    // Ended first, so a transfer closed here (its last key) does not move this key on.
    journey.ended = true;
    if (journey.openLedgers !== 0) this.closeLedgers(journey, time, toId);
    journey.visits.push(toId, time);
    journey.state = toId;
    journey.outcomeState = toId;
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    this.retire(journey);
  }

  /** Hands a finished journey out and keeps it for explain(). */
  private retire(journey: Journey): void {
    const listener = this.listener;
    if (listener?.journeyEnded !== undefined) this.notify("journeyEnded", listener.journeyEnded, journey);
    this.retained.add(journey);
  }

  /**
   * The one guarded listener call: a listener that throws (a failing exporter bridge) is counted
   * and told once, never the host's failure, strict or not.
   */
  private notify<T>(event: string, handler: (subject: T) => void, subject: T): void {
    try {
      handler.call(this.listener, subject);
    } catch (error) {
      this.failures.fault(
        "listener-error",
        `dropped input (listener-error): ${event}: ${error instanceof Error ? error.message : String(error)}.`,
      );
    }
  }

  // ---- dependencies (dependencies.ts keeps them) ---------------------------------------------

  dependencies(key: Key, dependencies: readonly Key[]): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const count = arrayLength(dependencies);
    if (count < 0) {
      this.drop("invalid-key", `dependencies() takes an array of keys, not ${unlisted(dependencies, count)}`);
      return;
    }
    const ids: Array<string | number> = [];
    for (let index = 0; index < count; index++) {
      const dependencyId = this.idOf(element(dependencies, index));
      if (dependencyId !== undefined) ids.push(dependencyId);
    }
    if (!this.deps.tell(id, ids)) {
      this.drop("dependencies-overflow", "over 100000 keys told dependencies() before their journey began");
    }
  }

  // ---- the fetch queue ------------------------------------------------------------------------

  private leaveQueue(journey: Journey, time: number): void {
    if (journey.queueReason !== -1) {
      const start = journey.stateStart;
      addActivity(journey.activityRecords(), journey.visitIndex, journey.queueReason, start, time, time - start);
      journey.queueReason = -1;
    }
  }

  /** Why the key sits in a queued state (`fetch`: e.g. "local-saturated"): its queue time is reported under it. */
  queued(key: Key, reason: string): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const journey = this.live.get(id);
    if (journey === undefined || this.machine.queued[journey.state] !== 1) return;
    if (typeof reason !== "string") {
      this.drop("invalid-name", `queued() given a reason that is ${show(reason)}, not a string`);
      return;
    }
    let activity = this.queueReasons.get(reason);
    if (activity === undefined) {
      activity = this.activityId(`${QUEUED_ACTIVITY} (${reason})`);
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
    const machine = this.machine;
    if (machine.executing === -1) {
      this.drop("no-ledger-state", `execute() with a state machine that has no executing state`);
      return this.noLedger;
    }
    let journey = this.liveJourney(id);
    if (journey === undefined) journey = this.begin(key, id, machine.executing, time);
    else if (machine.running[journey.state] !== 1) this.moveForLedger(journey, machine.executing, time);
    if (journey.ended) return this.noLedger;
    journey.openLedgers++;
    return new ExecutionLedger(this, journey, time);
  }

  gather(peer: string, keys: readonly Key[], bytes?: number, at?: number): TransferLedger | NoLedger {
    const time = this.now(at);
    const count = arrayLength(keys);
    if (count < 0) {
      this.drop("invalid-key", `gather() takes an array of keys, not ${unlisted(keys, count)}`);
      return this.noLedger;
    }
    if (typeof peer !== "string") {
      this.drop("invalid-name", `gather() given a peer that is ${show(peer)}, not a string; recorded as ""`);
      peer = "";
    }
    const flight = this.machine.transfer;
    if (flight === -1) {
      this.drop("no-ledger-state", `gather() with a state machine that has no transfer state`);
      return this.noLedger;
    }
    let nbytes = 0;
    if (bytes !== undefined) {
      if (typeof bytes === "number" && bytes >= 0 && bytes <= Number.MAX_SAFE_INTEGER) nbytes = bytes;
      else this.drop("invalid-value", `gather() bytes ${show(bytes)}`);
    }
    const journeys: Journey[] = [];
    for (let index = 0; index < count; index++) {
      const key = element(keys, index) as Key;
      const id = this.idOf(key);
      if (id === undefined) continue;
      let journey = this.liveJourney(id);
      if (journey === undefined) journey = this.begin(key, id, flight, time);
      else if (journey.state !== flight) this.moveForLedger(journey, flight, time);
      if (!journey.ended) {
        journeys.push(journey);
        journey.openLedgers++;
      }
    }
    const transfer = new Transfer(++this.transferIds, peer, journeys, nbytes, time);
    for (const journey of journeys) {
      // Evicted by a later key of this same call (maxLiveJourneys smaller than the transfer).
      if (journey.ended) {
        transfer.liveKeys--;
        continue;
      }
      (journey.transfers ??= []).push(transfer);
      (journey.transferVisits ??= []).push(journey.visitIndex);
    }
    const listener = this.listener;
    if (listener?.transferStarted !== undefined) this.notify("transferStarted", listener.transferStarted, transfer);
    return new TransferLedger(this, transfer, time);
  }

  /** An execution ledger ended (it settled its own seconds): its journey moves on. */
  executionEnded(journey: Journey, nextState: number, time: number): void {
    // Never for an ended journey: its end closed its ledgers (closeLedgers), and they are quiet since.
    journey.openLedgers--;
    if (this.machine.running[journey.state] === 1) this.moveForLedger(journey, nextState, time);
  }

  /** A transfer ledger ended (it settled its own bytes and seconds): each key carried takes its share and moves on. */
  transferEnded(transfer: Transfer, nextState: number, lumpId: number, other: number, time: number): void {
    const journeys = transfer.journeys;
    const share = journeys.length > 0 ? 1 / journeys.length : 0;
    for (const journey of journeys) {
      // A key that ended (or was evicted) while in this transfer was let go then (closeLedgers).
      if (journey.ended) continue;
      journey.openLedgers--;
      if (journey.state !== this.machine.transfer) continue;
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
    const count = arrayLength(keys);
    if (count < 0) {
      this.drop("invalid-key", `serve() takes an array of keys, not ${unlisted(keys, count)}`);
      return this.noLedger;
    }
    if (typeof peer !== "string") {
      this.drop("invalid-name", `serve() given a peer that is ${show(peer)}, not a string; recorded as ""`);
      peer = "";
    }
    const ids: Array<string | number> = [];
    for (let index = 0; index < count; index++) {
      const id = this.idOf(element(keys, index) as Key);
      if (id !== undefined) ids.push(id);
    }
    const serve = new Serve(++this.serveIds, peer, ids, time);
    return new ServeLedger(this, serve, this.serveTotals, (ended) => this.serveEnded(ended));
  }

  private serveEnded(serve: Serve): void {
    this.served.add(serve);
    const listener = this.listener;
    if (listener?.serveEnded !== undefined) this.notify("serveEnded", listener.serveEnded, serve);
  }

  /** The recently ended serves of `key`, oldest first. */
  servesOf(key: Key): Serve[] {
    const id = keyId(key);
    return id === undefined ? [] : this.served.of(id);
  }

  // ---- reading ------------------------------------------------------------------------------

  /** A live journey, or a recently finished one kept in the bounded ring. */
  journeyOf(key: Key): Journey | undefined {
    let id: string | number | undefined;
    try {
      id = keyId(key);
    } catch {
      id = undefined;
    }
    if (id === undefined) return undefined;
    return this.live.get(id) ?? this.retained.find(id);
  }

  /** A cell's duration statistics; an unknown state is an `unknown-state` drop with empty statistics. */
  stats(prefix: string, state: string): DurationStats {
    const prefixId = typeof prefix === "string" ? this.prefixes.find(prefix) : -1;
    const id = this.machine.id(state);
    if (id === -1)
      this.drop(
        "unknown-state",
        `stats() of unknown state ${show(state)}; ${this.validStates()}`,
        undefined,
        `unknown-state stats() ${typeof state === "string" ? state.slice(0, 64) : typeof state}`,
      );
    const statistics = prefixId === -1 || id === -1 ? undefined : this.accumulators.durations[stateCell(prefixId, id)];
    return (statistics ?? this.config.makeStatistics()).snapshot();
  }
}

/** arrayLength(): not an array. */
const NOT_AN_ARRAY = -1;
/** arrayLength(): an array (or a Proxy of one) that could not be read. */
const UNREADABLE_ARRAY = -2;

/**
 * The length of an array of keys, or NOT_AN_ARRAY, or UNREADABLE_ARRAY when asking throws: a
 * revoked Proxy throws even from Array.isArray(), one whose traps throw from reading `length`.
 */
function arrayLength(value: unknown): number {
  try {
    if (!Array.isArray(value)) return NOT_AN_ARRAY;
    const length = (value as readonly unknown[]).length;
    return typeof length === "number" && length >= 0 && length <= 0xffffffff ? length : UNREADABLE_ARRAY;
  } catch {
    return UNREADABLE_ARRAY;
  }
}

/** What a drop says of a list of keys arrayLength() refused. */
function unlisted(value: unknown, count: number): string {
  return count === UNREADABLE_ARRAY ? "an array (or Proxy) that could not be read" : show(value);
}

/** An element of an array, or undefined (not a key) when reading it throws. */
function element(array: readonly unknown[], index: number): unknown {
  try {
    return array[index];
  } catch {
    return undefined;
  }
}

/** A key's prefix; for a key that cannot be read again (a hostile Proxy), the prefix of its map id. */
function safeKeySplit(key: Key, id: string | number): string {
  if (typeof key === "string") return keySplitUncached(key);
  try {
    return keySplitUncached(key);
  } catch {
    return keySplitUncached(typeof id === "string" ? id : String(id));
  }
}

/** What the user's code threw, as explain() words a failure ("TypeError: no"); never throws. */
function thrownText(error: unknown): string {
  const detail = failureDetail(error);
  return failureText(detail.type, detail.message);
}
