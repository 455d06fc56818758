/**
 * Shared workload for the benchmarks: realistic task keys, generated before any timing so that
 * key building is never measured, and the journeys the benchmarks replay.
 */

/** The calls a worker journey makes: TaskJourneys (src/journeys.ts), or the lower bound's MinimalRecorder (lower-bound.ts). */
export interface JourneyRecorder {
  transition(key: string, from: string, to: string): void;
  execute(key: string): { meter(activity: string, fn: () => unknown): unknown; end(outcome?: "memory"): void };
}

/** Dask-like function names; further prefixes get a letters-only suffix ("getitem-ab"). */
const BASE_NAMES = [
  "inc",
  "add",
  "sum",
  "getitem",
  "rechunk-merge",
  "rechunk-split",
  "array",
  "mean_chunk",
  "mean_combine",
  "transpose",
  "concatenate",
  "read-parquet",
  "from-delayed",
  "finalize",
  "store-map",
  "shuffle-transfer",
  "shuffle-barrier",
  "assign",
  "operation",
  "truediv",
];

function letters(n: number): string {
  let out = "";
  do {
    out = String.fromCharCode(0x61 + (n % 26)) + out;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return out;
}

/** `count` distinct prefixes: the base names, then "name-<letters>" (a name word, not a token). */
export function prefixNames(count: number): string[] {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const base = BASE_NAMES[i % BASE_NAMES.length];
    const round = Math.floor(i / BASE_NAMES.length);
    names.push(round === 0 ? base : `${base}-${letters(round - 1)}`);
  }
  return names;
}

/** A small deterministic PRNG (mulberry32), so every run replays the same keys. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = "0123456789abcdef";

/** A 32-hex-digit token like Dask's tokenize(); its first digit is a decimal digit so it is never a name word. */
export function token(next: () => number): string {
  let out = HEX[Math.floor(next() * 10)];
  for (let i = 1; i < 32; i++) out += HEX[Math.floor(next() * 16)];
  return out;
}

/**
 * `count` distinct keys "<prefix>-<32 hex>", spread round-robin over `prefixes` names. Each key
 * is a flat (non-rope) string, as if it had arrived in a message.
 */
export function keyPool(count: number, prefixes: readonly string[], seed = 1): string[] {
  const next = random(seed);
  const keys: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) keys[i] = flat(`${prefixes[i % prefixes.length]}-${token(next)}`);
  return keys;
}

/** Flattens a concatenated string, so a key costs what a key read from a buffer would. */
export function flat(text: string): string {
  return Buffer.from(text, "latin1").toString("latin1");
}

/** The work inside each metered activity: nothing, so only the metering is measured. */
export const noWork = (): number => 0;

/** The three activities metered in each execution. */
export const ACTIVITIES = ["deserialize", "thread-cpu", "serialize"] as const;

/**
 * One full worker compute journey of `key` as an instrumented worker reports it: released →
 * waiting → ready → executing, an execute ledger with three metered activities, its end in
 * memory, and the worker's own executing → memory transition (already applied by the ledger's
 * end, so recorded as a no-op).
 */
export function workerJourney(journeys: JourneyRecorder, key: string): void {
  journeys.transition(key, "released", "waiting");
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  ledger.meter("deserialize", noWork);
  ledger.meter("thread-cpu", noWork);
  ledger.meter("serialize", noWork);
  ledger.end("memory");
  journeys.transition(key, "executing", "memory");
}

/** Counts the clock reads of one call of `work` by swapping a counting clock in. */
export function countingClock(base: () => number): { clock: () => number; reads: () => number } {
  let reads = 0;
  return {
    clock: () => {
      reads++;
      return base();
    },
    reads: () => reads,
  };
}
