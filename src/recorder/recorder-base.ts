import { keyId } from "./key-id.js";
import { MAX_CLOCK_SECONDS } from "./recorder-config.js";
import { PRESETS, type Role } from "../model/states.js";
import { STATE_STRIDE, type Machine } from "../model/machine.js";
import { OTHER_ACTIVITY } from "../model/activities.js";
import { Accumulators } from "./accumulators.js";
import { SEED_ACTIVITIES } from "./activity-ids.js";
import { Dependencies } from "./dependencies.js";
import { RetainedJourneys } from "./retained.js";
import { RetainedServes } from "./retained-serves.js";
import { Interner } from "./interner.js";
import type { Journey } from "./journey.js";
import { NoLedger } from "./no-ledger.js";
import type { RecorderListener } from "./listener.js";
import type { DropReason } from "./drop-reasons.js";
import { Failures } from "./failures.js";
import { show } from "../model/show.js";
import type { StallRing } from "../model/stalls.js";
import { ServeTotals } from "./serve-ledger.js";
import { Computations } from "./computations.js";
import {
  DEFAULT_MAX_CLOCK_SKEW,
  DEFAULT_MAX_COMPUTATIONS,
  DEFAULT_MAX_LIVE_JOURNEYS,
  type KeyDescription,
  type RecorderConfig,
} from "./recorder-config.js";

export const ACTIVITY_CACHE_MASK = 31;
/** Slots of the state-name cache (stateOf), by name length. */
export const STATE_CACHE_MASK = 31;
/**
 * Slots of the key-prefix cache (keyPrefixId), 512 pairs (two ways): 100 prefixes, the guard's,
 * in 512 single slots collided in ~9 slots, whose keys then went the whole way each time.
 */
export const PREFIX_CACHE_MASK = 1023;

/**
 * The recorder's footing (the Recorder is built up in layers, one job a file, all one object:
 * recorder-base.ts its state, clock, key ids and failure path; naming.ts the names of states,
 * activities and prefixes; live-journeys.ts the journeys and their transitions; recorder.ts the
 * ledgers and the reading). Its fields are all declared here, in one place and one order, so the
 * object's shape is what it was as one class; the layers are prototypes, which cost the hot path
 * nothing once V8's inline caches know them.
 */
export abstract class RecorderBase {
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
  protected lastClock = Number.NaN;
  /** The caller's clock, unguarded: read only through tick(). */
  protected readonly rawClock: () => number;
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
  protected oldestLive: Journey | undefined = undefined;
  protected newestLive: Journey | undefined = undefined;
  protected readonly maxLive: number;
  /** See liveJourney(). */
  protected recentId: string | number | undefined = undefined;
  protected recentJourney: Journey | undefined = undefined;
  /** Which journeys wait for which, and the apportioning of their waiting time. */
  protected readonly deps: Dependencies;
  /** Finished journeys for explain(), written into one typed array: bounded by count and by size. */
  protected readonly retained: RetainedJourneys;
  /** The state machine: every state name, role and allowed move, decided at construction. */
  readonly machine: Machine;
  protected readonly table: Uint8Array;
  protected readonly member: Uint8Array;
  /** 1 for the machine's terminal states. */
  protected readonly isTerminal: Uint8Array;
  /** Counts, tells and (strict) throws every failure: the one failure path. */
  readonly failures: Failures;
  protected readonly config: RecorderConfig;
  protected transferIds = 0;
  /** queued() reasons to their `queued (<reason>)` activity ids, so a reason's name is built once. */
  protected readonly queueReasons = new Map<string, number>();
  protected readonly activityCacheNames = new Array<string>(ACTIVITY_CACHE_MASK + 1).fill("");
  protected readonly activityCacheIds = new Int32Array(ACTIVITY_CACHE_MASK + 1);
  /**
   * State names this recorder resolved, by length (-1: an empty slot): transition() is given the
   * same few literals over and over, and Machine.id(), which does not fit into transition()'s
   * inlining, cost ~100 instructions a name against one comparison here.
   */
  protected readonly stateCacheNames = new Array<string>(STATE_CACHE_MASK + 1).fill("");
  protected readonly stateCacheIds = new Int32Array(STATE_CACHE_MASK + 1).fill(-1);
  /** Prefix ids by a hash of a key's prefix (keyPrefixId), -1: an empty slot. */
  protected readonly prefixCacheIds = new Int32Array(PREFIX_CACHE_MASK + 1).fill(-1);
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
  protected readonly served: RetainedServes;
  protected serveIds = 0;
  /** describe()d keys by id, until forgotten; at most DESCRIBED_LIMIT. */
  protected readonly described = new Map<string | number, KeyDescription>();
  /**
   * The prefix of a journey the very next call may begin (an instrument() `prefix` extractor):
   * set just before that call and cleared after, so no per-key memory is kept for it.
   */
  prefixHint: string | undefined = undefined;
  /** The computation of a journey the very next call may begin (transition()'s `computation`): as prefixHint. */
  computationHint: string | undefined = undefined;
  /** The computations journeys were begun under, bounded (computations.ts). */
  readonly computations: Computations;

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
    this.computations = new Computations(
      config.maxComputations ?? DEFAULT_MAX_COMPUTATIONS,
      machine.names.length,
      (name, limit) =>
        this.failures.fault(
          "computation-limit",
          `more than limits.maxComputations (${limit}) computations kept, all still live, at "${name.slice(0, 64)}": its journeys count under the computation "other". ` +
            "Computations are retired once finished (no live journey left); raise limits.maxComputations for more submissions in flight at once.",
        ),
    );
  }

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
      if (typeof reading === "number" && reading >= 0 && reading <= MAX_CLOCK_SECONDS) {
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

  /**
   * The one guarded listener call: a listener that throws (a failing exporter bridge) is counted
   * and told once, never the host's failure, strict or not.
   */
  protected notify<T>(event: string, handler: (subject: T) => void, subject: T): void {
    try {
      handler.call(this.listener, subject);
    } catch (error) {
      this.failures.fault(
        "listener-error",
        `dropped input (listener-error): ${event}: ${error instanceof Error ? error.message : String(error)}.`,
      );
    }
  }
}
