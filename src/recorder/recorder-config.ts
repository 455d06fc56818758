/**
 * What a Recorder is made with (journeys.ts resolves the options into it), and the defaults of the
 * limits it holds.
 */
import type { Key } from "../model/keys.js";
import type { Role } from "../model/states.js";
import type { Machine } from "../model/machine.js";
import type { DurationStatistics } from "../model/statistics/index.js";

/** Keys described by describe() and not yet forgotten, kept at most. */
export const DESCRIBED_LIMIT = 100_000;

/** What describe() tells of a key: its prefix and group, for every later journey until it is forgotten. */
export interface KeyDescription {
  prefix?: string;
  group?: string;
}

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
  /** Computations kept at once (live and recently finished), `limits.maxComputations`. Default DEFAULT_MAX_COMPUTATIONS. */
  maxComputations?: number;
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

/**
 * The default of `maxComputations`: a scheduler's live submissions and the recently finished ones,
 * each a few metric series per state (task.computation.*).
 */
export const DEFAULT_MAX_COMPUTATIONS = 100;

/** The default of `maxClockSkew`: a day, in seconds. */
export const DEFAULT_MAX_CLOCK_SKEW = 86_400;

/**
 * The largest clock reading taken, in seconds (about 31,700 years: epoch seconds today are
 * 1.8e9). A finite reading beyond it (Number.MAX_VALUE) summed into a state's time gave Infinity
 * in task.state.time (the hostile-input property found it); bounded here, no total can overflow.
 */
export const MAX_CLOCK_SECONDS = 1e12;
