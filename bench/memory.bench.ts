/**
 * Memory under a long run: 10 million worker journeys over 1,000 prefixes (prefixLimit 1000),
 * every tenth with a dependency fetched from a peer first (dependencies(), a fetch journey and a
 * gather_dep ledger, so waiting-time apportioning runs too). Heap and RSS are read after a forced
 * GC before the run, after a warm-up that has seen every prefix, every million journeys, and at
 * the end: memory must stay O(tasks in flight + prefixes), flat however many journeys pass.
 *
 * Run: node --expose-gc --import tsx bench/memory.bench.ts
 *   TASKJOURNEY_BENCH_JOURNEYS=10000000   journeys to run (default 10 million)
 *   TASKJOURNEY_BENCH_SECONDS=180         stop early past this many seconds, reporting what ran
 */
import { printSuite, report, table, type SuiteResult } from "./harness.js";
import { library, source } from "./lib.js";
import { noWork, prefixNames, workerJourney } from "./workload.js";

const { TaskJourneys } = library;

const TOTAL = Number(process.env.TASKJOURNEY_BENCH_JOURNEYS ?? 10_000_000);
const BUDGET_SECONDS = Number(process.env.TASKJOURNEY_BENCH_SECONDS ?? 180);
const PREFIXES = 1000;
const WARM_UP = 100_000;
const CHECKPOINT = 1_000_000;
const DEPENDENCY_EVERY = 10;

const gc = globalThis.gc;
if (typeof gc !== "function") {
  console.error("bench/memory.bench.ts needs --expose-gc: node --expose-gc --import tsx bench/memory.bench.ts");
  process.exit(2);
}

const names = prefixNames(PREFIXES);
/** The 24 hex digits after a journey's own 8 make a 32-digit token, as Dask's are. */
const TAIL = "0f1e2d3c4b5a69788796a5b4";
const PEER = "tcp://10.0.0.8:40001";

const journeys = new TaskJourneys({ role: "worker", sampling: { ratio: 0 }, limits: { maxPrefixes: PREFIXES } });

/** Key i, built on the fly (10 million keys would not fit in memory up front): "<prefix>-<32 hex>". */
function keyOf(i: number): string {
  return `${names[i % PREFIXES]}-${(0x10000000 + i).toString(16)}${TAIL}`;
}

/** A compute journey whose one dependency is fetched from a peer while it waits. */
function journeyWithFetchedDependency(key: string, dependency: string): void {
  journeys.dependencies(key, [dependency]);
  journeys.transition(key, "released", "waiting");
  journeys.transition(dependency, "released", "fetch");
  const transfer = journeys.gather(PEER, [dependency], { bytes: 65_536 });
  transfer.meter("network", noWork);
  transfer.meter("deserialize", noWork);
  transfer.end("ok");
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  ledger.meter("thread-cpu", noWork);
  ledger.end("memory");
  journeys.transition(key, "executing", "memory");
}

interface Reading {
  at: string;
  journeys: number;
  heapUsed: number;
  rss: number;
  seconds: number;
}

const readings: Reading[] = [];
const started = performance.now();
function read(at: string, done: number): Reading {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  const reading = {
    at,
    journeys: done,
    heapUsed: usage.heapUsed,
    rss: usage.rss,
    seconds: (performance.now() - started) / 1000,
  };
  readings.push(reading);
  return reading;
}

const MB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

read("before (recorder built, no journey yet)", 0);
let done = 0;
let fetched = 0;
let timedOut = false;
let runSeconds = 0;
const runStarted = performance.now();
while (done < TOTAL) {
  const end = Math.min(TOTAL, done < WARM_UP ? WARM_UP : done + CHECKPOINT - (done % CHECKPOINT));
  const t0 = performance.now();
  for (let i = done; i < end; i++) {
    if (i % DEPENDENCY_EVERY === 0) {
      journeyWithFetchedDependency(keyOf(i), keyOf(TOTAL + i));
      fetched++;
    } else {
      workerJourney(journeys, keyOf(i));
    }
  }
  runSeconds += (performance.now() - t0) / 1000;
  done = end;
  const reading = read(
    done === WARM_UP ? "after warm-up (every prefix seen)" : `after ${(done / 1e6).toFixed(0)} M`,
    done,
  );
  console.log(
    `${String(done).padStart(9)} journeys  heap ${MB(reading.heapUsed).padStart(9)}  rss ${MB(reading.rss).padStart(9)}  ${reading.seconds.toFixed(1)} s`,
  );
  if ((performance.now() - runStarted) / 1000 > BUDGET_SECONDS && done < TOTAL) {
    timedOut = true;
    break;
  }
}
const last = readings[readings.length - 1];
last.at = "after the run";

// Journeys still in flight, from the task.active gauge: the recorder itself is not public.
const activeMetric = journeys.metricProducer
  .produce([0, 0], [0, 0])
  .find((metric) => metric.descriptor.name === "task.active");
const inFlight = (activeMetric?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
const dropped = journeys.dropped();
const before = readings[0];
const warm = readings.find((reading) => reading.journeys === WARM_UP) ?? readings[1] ?? before;
const firstMillion = readings.find((reading) => reading.journeys === CHECKPOINT);
const nsPerJourney = (runSeconds * 1e9) / done;

console.log("");
console.log(
  table(
    ["reading (after forced GC)", "journeys", "heapUsed", "rss"],
    readings.map((reading) => [reading.at, String(reading.journeys), MB(reading.heapUsed), MB(reading.rss)]),
  ),
);

const result: SuiteResult = {
  suite: "memory",
  runtime: `node ${process.version} ${process.arch}, ${source}`,
  cases: [
    {
      name: `journey in the long run (mean; keys built on the fly; 1 in ${DEPENDENCY_EVERY} fetches a dependency)`,
      p25: nsPerJourney,
      median: nsPerJourney,
      p75: nsPerJourney,
      p99: nsPerJourney,
      mean: nsPerJourney,
      samples: 1,
    },
  ],
  ratios: [],
  notes: [
    `${done.toLocaleString("en-US")} journeys (${fetched.toLocaleString("en-US")} of them with a fetched dependency, so ${(done + fetched).toLocaleString("en-US")} journeys in all) over ${PREFIXES} prefixes in ${runSeconds.toFixed(1)} s: ${Math.round(done / runSeconds).toLocaleString("en-US")} journeys/s` +
      (timedOut ? `; stopped at the ${BUDGET_SECONDS} s budget before ${TOTAL.toLocaleString("en-US")}` : ""),
    `left in flight: ${inFlight} live journeys; dropped inputs: ${JSON.stringify(dropped)}`,
  ],
  facts: {
    journeys: done,
    "heap before": MB(before.heapUsed),
    "heap after warm-up": MB(warm.heapUsed),
    "heap after": MB(last.heapUsed),
    "heap growth after warm-up": MB(last.heapUsed - warm.heapUsed),
    ...(firstMillion === undefined || firstMillion === last
      ? {}
      : { "heap growth after the first 1 M": MB(last.heapUsed - firstMillion.heapUsed) }),
    "heap max (any reading after warm-up)": MB(Math.max(...readings.slice(1).map((reading) => reading.heapUsed))),
    "rss before": MB(before.rss),
    "rss after warm-up": MB(warm.rss),
    "rss after": MB(last.rss),
    "rss growth after warm-up": MB(last.rss - warm.rss),
    "rss max (any reading after warm-up)": MB(Math.max(...readings.slice(1).map((reading) => reading.rss))),
  },
};
printSuite(result);
report(result);
if (inFlight !== 0 || Object.keys(dropped).length > 0) {
  console.error("memory bench: journeys were left in flight or inputs dropped; the workload is wrong");
  process.exitCode = 1;
}
