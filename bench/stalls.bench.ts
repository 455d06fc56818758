/**
 * What leaving `processStalls` on costs a task. The hot path never touches it, so a synchronous
 * microbenchmark would show nothing: its cost is the probe timer's ticks (every 20 ms), the GC
 * observer's callbacks and the delay histogram, paid between tasks. So each sample is a stretch of
 * worker journeys in chunks, with the event loop turned between chunks (timers and observers run
 * there), timed in process CPU time; stalls on and stalls off alternate, sample by sample, so
 * machine noise lands on both alike. The difference per journey is the cost of leaving it on.
 *
 * Run: node --expose-gc --import tsx bench/stalls.bench.ts
 */
import { setImmediate as turn } from "node:timers/promises";
import type { TaskJourneys as TaskJourneysType } from "../src/index.js";
import { formatNs, report, table, type CaseResult } from "./harness.js";
import { library } from "./lib.js";
import { keyPool, prefixNames, workerJourney } from "./workload.js";

const { TaskJourneys } = library;

const KEYS = keyPool(1 << 14, prefixNames(100), 1);
const MASK = KEYS.length - 1;
/** Journeys per chunk, and chunks per sample: the loop turns 50 times a sample, as a busy worker's does. */
const CHUNK = 200;
const CHUNKS = 50;
const SAMPLES = Number(process.env.TASKJOURNEY_BENCH_SAMPLES ?? 40);
const SAMPLING_OFF = { ratio: 0, keepSlowerThan: 0, keepErrors: false };

function journeysWith(processStalls: boolean): TaskJourneysType {
  return new TaskJourneys({ role: "worker", sampling: SAMPLING_OFF, processStalls });
}

let next = 0;
/** One sample: CHUNKS × CHUNK journeys, the loop turned after each chunk; CPU nanoseconds per journey. */
async function sample(journeys: TaskJourneysType): Promise<number> {
  const before = process.cpuUsage();
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    for (let i = 0; i < CHUNK; i++) workerJourney(journeys, KEYS[next++ & MASK]);
    await turn();
  }
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / (CHUNKS * CHUNK);
}

function summary(name: string, perOp: number[]): CaseResult {
  const sorted = [...perOp].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    name,
    p25: at(0.25),
    median: at(0.5),
    p75: at(0.75),
    p99: at(0.99),
    mean: perOp.reduce((a, b) => a + b, 0) / perOp.length,
    samples: perOp.length,
  };
}

const off = journeysWith(false);
const on = journeysWith(true);
// Warm both up (JIT, interned prefixes) untimed.
for (let i = 0; i < 4; i++) {
  await sample(off);
  await sample(on);
}
const offSamples: number[] = [];
const onSamples: number[] = [];
for (let i = 0; i < SAMPLES; i++) {
  offSamples.push(await sample(off));
  onSamples.push(await sample(on));
}
await off.shutdown();
await on.shutdown();

/** CPU microseconds per second of an idle process, with a watcher started or not: the probe's own cost. */
async function idleCpu(watch: boolean): Promise<number> {
  const journeys = journeysWith(watch);
  const before = process.cpuUsage();
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const used = process.cpuUsage(before);
  await journeys.shutdown();
  return (used.user + used.system) / ((performance.now() - start) / 1000);
}
// After the journeys above the process is still compiling and collecting for a while: settle,
// then alternate, and keep the lower of two readings each.
await new Promise((resolve) => setTimeout(resolve, 1500));
const idleReadings = { off: [] as number[], on: [] as number[] };
for (let round = 0; round < 2; round++) {
  idleReadings.off.push(await idleCpu(false));
  idleReadings.on.push(await idleCpu(true));
}
const idleOff = Math.min(...idleReadings.off);
const idleOn = Math.min(...idleReadings.on);

const cases = [summary("journey, processStalls off", offSamples), summary("journey, processStalls on", onSamples)];
const added = cases[1].median - cases[0].median;
console.log(
  table(
    ["case (process CPU per journey)", "p25", "median", "p75"],
    cases.map((result) => [result.name, formatNs(result.p25), formatNs(result.median), formatNs(result.p75)]),
  ),
);
const notes = [
  `added per journey by leaving processStalls on (median on − median off): ${formatNs(added)}`,
  `idle process (no journey live: the probe ticks once a second): ${idleOff.toFixed(0)} µs CPU per second off, ${idleOn.toFixed(0)} µs on`,
  `${CHUNKS} loop turns of ${CHUNK} journeys per sample, ${SAMPLES} samples each, alternating`,
];
for (const note of notes) console.log(note);
report({
  suite: "stalls",
  runtime: process.version,
  cases,
  ratios: [{ name: "stalls on / off", value: cases[1].median / cases[0].median }],
  notes,
  facts: {
    "added ns per journey": Math.round(added),
    "idle CPU µs/s off": Math.round(idleOff),
    "idle CPU µs/s on": Math.round(idleOn),
  },
});
