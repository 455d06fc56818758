/**
 * The core overhead benchmark, side by side in one process:
 *
 *   clock read            one read of the journeys' clock (performance.now() / 1000)
 *   transition()          one steady-state transition of a live fetch journey: fetch → flight and
 *                         flight → fetch (a busy retry), alternating, over 1,024 live journeys
 *   full journey          released → waiting → ready → executing → memory with an execute ledger
 *                         metering three activities; a fresh key each time (sampling off)
 *   clock floor           the journey's clock reads alone (counted, not assumed)
 *   plain OTel journey    the same journey the plain OpenTelemetry way: histogram.record(seconds,
 *                         {task.prefix, task.state}) per state visit and counter.add(seconds,
 *                         {task.activity}) per activity, on a MeterProvider with a reader attached
 *
 * Run: node --expose-gc --import tsx bench/core.bench.ts [--verbose]
 */
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import type { TaskJourneys as TaskJourneysType } from "../src/index.js";
import { clockNs, do_not_optimize, runSuite } from "./harness.js";
import { library, source } from "./lib.js";
import { ACTIVITIES, countingClock, keyPool, noWork, prefixNames, workerJourney } from "./workload.js";

const { DEFAULT_OPTIONS, TaskJourneys, keySplit } = library;
type TaskJourneys = TaskJourneysType;

const PREFIXES = 100;
/** Larger than keySplit's memo (4,096 keys), so each journey's begin sees a key it has not memoized. */
const KEY_POOL = 1 << 16;
const LIVE_FETCH_JOURNEYS = 1024;
/** Round trips (fetch → flight → fetch) a live journey makes before it is ended and restarted, untimed. */
const ROUND_TRIPS = 16;

const clock = DEFAULT_OPTIONS.clock;
const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const mask = KEY_POOL - 1;

/** Sampling off: no head sampling and no tail sampling, so only recording is measured (spans.bench.ts measures spans). */
const SAMPLING_OFF = { ratio: 0, keepSlowerThan: 0, keepErrors: false };

function makeJourneys(options: { clock?: () => number; sampling?: typeof SAMPLING_OFF | { ratio: number } } = {}): TaskJourneys {
  return new TaskJourneys({
    role: "worker",
    sampling: options.sampling ?? SAMPLING_OFF,
    prefixLimit: PREFIXES,
    clock: options.clock ?? clock,
  });
}

// ---- the journey's clock reads, counted -------------------------------------------------------

const counted = countingClock(clock);
{
  const probe = makeJourneys({ clock: counted.clock });
  const before = counted.reads();
  workerJourney(probe, "inc-0123456789abcdef0123456789abcdef");
  var CLOCK_READS = counted.reads() - before; // eslint-disable-line no-var
  if (probe.dropped() && Object.keys(probe.dropped()).length > 0) {
    throw new Error(`the benchmark journey drops input: ${JSON.stringify(probe.dropped())}`);
  }
}

// ---- taskjourney --------------------------------------------------------------------------------

const journeys = makeJourneys();
let next = 0;

function fullJourney(): void {
  workerJourney(journeys, keys[next++ & mask]);
}

// The defaults but head sampling: tail sampling (keep journeys slower than their prefix's p99)
// records every journey's duration once more; kept journeys go to the global (no-op) tracer.
const tailJourneys = makeJourneys({ sampling: { ratio: 0 } });
let tailNext = 0;
function tailSampledJourney(): void {
  workerJourney(tailJourneys, keys[tailNext++ & mask]);
}

// A transition of a key without a journey (memory → released, released → forgotten): the cheapest call.
let noJourneyNext = 0;
function noJourneyTransition(): void {
  journeys.transition(keys[noJourneyNext++ & mask], "memory", "released");
}

// Live fetch journeys for the transition() case, on keys of their own.
const fetchJourneys = makeJourneys();
const fetchKeys = keyPool(LIVE_FETCH_JOURNEYS, names, 2);
let phase = 0;
function startFetchJourneys(): void {
  for (const key of fetchKeys) fetchJourneys.transition(key, "released", "fetch");
}
function endFetchJourneys(): void {
  for (const key of fetchKeys) fetchJourneys.transition(key, "fetch", "released");
}
startFetchJourneys();

/** One sample: every live fetch journey makes one transition (fetch → flight or back). */
function transitions(): number {
  const from = (phase & 1) === 0 ? "fetch" : "flight";
  const to = (phase & 1) === 0 ? "flight" : "fetch";
  const t0 = clockNs();
  for (let i = 0; i < LIVE_FETCH_JOURNEYS; i++) fetchJourneys.transition(fetchKeys[i], from, to);
  const elapsed = clockNs() - t0;
  if (++phase === 2 * ROUND_TRIPS) {
    // Untimed: end the journeys (bounded visit lists, as real retries are few) and start anew.
    phase = 0;
    endFetchJourneys();
    startFetchJourneys();
  }
  return elapsed;
}

// ---- the clock floor -------------------------------------------------------------------------

function clockFloor(): number {
  let sum = 0;
  for (let i = 0; i < CLOCK_READS; i++) sum += clock();
  return sum;
}

// ---- plain OpenTelemetry ---------------------------------------------------------------------

/** A reader that collects on demand and never exports: attached, so the SDK really aggregates. */
class HoldingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}
const reader = new HoldingReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const meter = meterProvider.getMeter("bench-plain-otel");
const stateDuration = meter.createHistogram("task.state.duration", { unit: "s" });
const executeTime = meter.createCounter("task.execute.time", { unit: "s" });

/** The same journey, plain OpenTelemetry: a record per state visit, an add per activity, the same clock reads. */
function plainOtelJourney(key: string): void {
  const prefix = keySplit(key);
  const waiting = clock(); // released → waiting
  const ready = clock(); // waiting → ready
  stateDuration.record(ready - waiting, { "task.prefix": prefix, "task.state": "waiting" });
  const executing = clock(); // ready → executing
  stateDuration.record(executing - ready, { "task.prefix": prefix, "task.state": "ready" });
  clock(); // the execute ledger opens
  for (const activity of ACTIVITIES) {
    const start = clock();
    noWork();
    executeTime.add(clock() - start, { "task.activity": activity });
  }
  const memory = clock(); // the ledger ends
  stateDuration.record(memory - executing, { "task.prefix": prefix, "task.state": "executing" });
  clock(); // the worker's own executing → memory transition
}
let otelNext = 0;
function plainOtel(): void {
  plainOtelJourney(keys[otelNext++ & mask]);
}

// ---- sanity, untimed ---------------------------------------------------------------------------

{
  // The SDK must really aggregate (a reader is attached): collect once and look.
  plainOtelJourney(keys[0]);
  const collected = await reader.collect();
  const points = collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).length;
  if (points < 2) throw new Error("plain OpenTelemetry case: the reader collected nothing; the comparison would be void");
  // And taskjourney must really record: a journey shows in the statistics.
  fullJourney();
  const recorded = journeys.stats(keySplit(keys[0]), "executing").count;
  if (recorded < 1) throw new Error("taskjourney case recorded nothing");
  if (Object.keys(journeys.dropped()).length > 0) throw new Error(`drops: ${JSON.stringify(journeys.dropped())}`);
}

const CLOCK = "clock read";
const TRANSITION = "transition() (live fetch journey, fetch⇄flight)";
const JOURNEY = "full journey (taskjourney)";
const FLOOR = `clock floor (${CLOCK_READS} clock reads)`;
const OTEL = "full journey (plain OpenTelemetry)";
const TAIL = "full journey, tail sampling on (p99, no-op tracer)";
const NO_JOURNEY = "transition() of a key with no journey";

const result = await runSuite({
  name: "core",
  cases: [
    { name: CLOCK, fn: () => do_not_optimize(clock()) },
    { name: TRANSITION, manual: transitions, ops: LIVE_FETCH_JOURNEYS, maxNs: 150 },
    { name: JOURNEY, fn: fullJourney, maxNs: 1_000 },
    { name: FLOOR, fn: () => do_not_optimize(clockFloor()) },
    { name: OTEL, fn: plainOtel },
    { name: TAIL, fn: tailSampledJourney },
    { name: NO_JOURNEY, fn: noJourneyTransition },
  ],
  ratios: [
    { name: "full journey / clock floor", numerator: JOURNEY, denominator: FLOOR, max: 1.5 },
    { name: "plain OTel journey / taskjourney journey", numerator: OTEL, denominator: JOURNEY, min: 5 },
    { name: "full journey / clock read", numerator: JOURNEY, denominator: CLOCK },
  ],
  notes: [
    `package: ${source}; sampling off (ratio 0, keepSlowerThan 0) unless the case says otherwise`,
    `keys: ${KEY_POOL} distinct "<prefix>-<32 hex>" keys over ${PREFIXES} prefixes, built before timing; a fresh key per journey`,
    `journey: ${CLOCK_READS} clock reads; transition(): ${LIVE_FETCH_JOURNEYS} live fetch journeys, fetch → flight / flight → fetch, restarted (untimed) every ${ROUND_TRIPS} round trips`,
  ],
});

// Keep the recorders reachable to the end, and make sure the journeys did not drop input.
const drops = { ...journeys.dropped(), ...fetchJourneys.dropped(), ...tailJourneys.dropped() };
if (Object.keys(drops).length > 0) {
  console.error(`warning: the benchmark's journeys dropped input: ${JSON.stringify(drops)}`);
  process.exitCode = 1;
}
void result;
await meterProvider.shutdown();
