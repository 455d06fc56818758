/**
 * What a journey costs when it does not have the caches to itself, as in a worker whose tasks move
 * megabytes between two journeys (their data, spill files, messages): the core benchmark's worker
 * journey, and the lower bound's (lower-bound.ts), each timed alone between walks of a buffer of
 * 0 B, 256 KiB, 2 MiB and 8 MiB (one write per 64-byte line, so every line of it is brought in and
 * dirtied). A loop of journeys, as in core.bench.ts, keeps the recorder's working set in L1 and L2;
 * this shows how far from that a cluster is, and why its per-task cost is several times the
 * microbenchmark's (bench/README.md's history in git, "The per-task cost in the cluster").
 *
 * Each figure is the median over samples of 200 journeys of (time around the journey) − (time
 * around nothing, after the same walk): the clock pair's own cost, measured under the same traffic,
 * is taken out. The walk itself is never timed.
 *
 * Run: node --expose-gc --import tsx bench/cache.bench.ts [--verbose]
 */
import { library, source } from "./lib.js";
import { keyPool, prefixNames, workerJourney, type JourneyRecorder } from "./workload.js";
import { MinimalRecorder } from "./lower-bound.js";
import { DEFAULT_OPTIONS } from "../src/journeys.js";

const { TaskJourneys } = library;
const clock = DEFAULT_OPTIONS.runtime.clock;
const PREFIXES = 100;
const KEY_POOL = 1 << 16;
const IN_FLIGHT = 1000;
const PER_SAMPLE = 200;
const SAMPLES = Number(process.env.TASKJOURNEY_BENCH_SAMPLES ?? 25);
const SIZES = [0, 256 << 10, 2 << 20, 8 << 20];
const verbose = process.argv.includes("--verbose");

const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const inFlight = keyPool(IN_FLIGHT, names, 3);

function withInFlight<R extends JourneyRecorder>(recorder: R): R {
  for (const key of inFlight) recorder.transition(key, "released", "waiting");
  return recorder;
}

const recorders: Record<string, JourneyRecorder> = {
  taskjourney: withInFlight(
    new TaskJourneys({
      role: "worker",
      sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
      limits: { maxPrefixes: PREFIXES },
      clock,
    }),
  ),
  "lower bound": withInFlight(new MinimalRecorder(clock)),
};

const buffer = new Float64Array((8 << 20) / 8);
/** Writes one double in every 64-byte line of the buffer's first `bytes`. */
function walk(bytes: number): void {
  for (let i = 0, n = bytes / 8; i < n; i += 8) buffer[i] += 1;
}

const now = (): number => performance.now();
let next = 0;

/** The median over SAMPLES of the µs a journey takes after a walk of `bytes`, less an empty pair's. */
function measure(recorder: JourneyRecorder, bytes: number): number {
  const perJourney: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    let journey = 0;
    let empty = 0;
    for (let i = 0; i < PER_SAMPLE; i++) {
      walk(bytes);
      const t0 = now();
      workerJourney(recorder, keys[next++ & (KEY_POOL - 1)]);
      const t1 = now();
      journey += t1 - t0;
      walk(bytes);
      const t2 = now();
      const t3 = now();
      empty += t3 - t2;
    }
    perJourney.push(((journey - empty) / PER_SAMPLE) * 1000);
  }
  perJourney.sort((a, b) => a - b);
  if (verbose) console.log(`  ${bytes} B: ${perJourney.map((us) => us.toFixed(2)).join(" ")}`);
  return perJourney[perJourney.length >> 1];
}

// Warm-up: every recorder and walk size compiled before anything is timed.
for (const recorder of Object.values(recorders)) for (const bytes of SIZES) measure(recorder, bytes);
(globalThis as { gc?: () => void }).gc?.();

const label = (bytes: number): string =>
  bytes === 0 ? "none" : bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`;
const results: Record<string, number[]> = {};
for (const [name, recorder] of Object.entries(recorders)) {
  results[name] = SIZES.map((bytes) => measure(recorder, bytes));
}

console.log(
  `a worker journey between walks of a buffer (${source}; µs, median of ${SAMPLES} samples of ${PER_SAMPLE})`,
);
console.log(`| memory walked between journeys | ${Object.keys(recorders).join(" | ")} | ratio |`);
console.log(
  `|---|${Object.keys(recorders)
    .map(() => "---|")
    .join("")}---|`,
);
SIZES.forEach((bytes, index) => {
  const [ours, bound] = Object.values(results).map((row) => row[index]);
  console.log(`| ${label(bytes)} | ${ours.toFixed(2)} | ${bound.toFixed(2)} | ${(ours / bound).toFixed(2)}× |`);
});
