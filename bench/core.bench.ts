/**
 * The core overhead benchmark, side by side in one process (sampling off unless a case says so):
 *
 *   clock read            one read of the journeys' clock (DEFAULT_OPTIONS.runtime.clock: performance.now() / 1000)
 *   transition()          one steady-state transition of a live fetch journey: fetch → flight and
 *                         flight → fetch (a busy retry), alternating, over 1,024 live journeys
 *   full journey          released → waiting → ready → executing → memory with an execute ledger
 *                         metering three activities; a fresh key each time
 *   clock floor           the journey's clock reads alone (counted, not assumed)
 *   plain OTel journey    the same journey the plain OpenTelemetry way: histogram.record(seconds,
 *                         {task.prefix, task.state}) per state visit and counter.add(seconds,
 *                         {task.activity}) per activity, on a MeterProvider with a reader attached
 * and, for information: the journey with tail sampling on, journeys interleaved in lockstep (no two
 * consecutive calls for one key), a transition of a key that has no journey, and the lower bound:
 * the same journey and transition() by MinimalRecorder (lower-bound.ts), the least a recorder of this
 * call shape can do (a Map of live journeys, a prefix, the same DurationStatistics; no checks).
 *
 * Every recorder also holds 1,000 other journeys in flight, as a busy worker does.
 *
 * Run: node --expose-gc --import tsx bench/core.bench.ts [--cpu-time] [--verbose]
 */
import type { TaskJourneys as TaskJourneysType, TaskJourneysOptions } from "../src/index.js";
import { ProxyTracerProvider } from "@opentelemetry/api";
import { clockNs, do_not_optimize, runSuite } from "./harness.js";
import { library, source } from "./lib.js";
import { ACTIVITIES, countingClock, keyPool, noWork, prefixNames, workerJourney } from "./workload.js";
import { plainMetrics, plainMetricsJourney } from "./plain-otel.js";
import { MinimalRecorder } from "./lower-bound.js";
// Not in the package entry (an internal): the default clock, from its source.
import { DEFAULT_OPTIONS } from "../src/journeys.js";

const { TaskJourneys, keySplit } = library;
type TaskJourneys = TaskJourneysType;

const PREFIXES = 100;
/** Distinct keys cycled through: a journey's key was last used 65,535 journeys ago. */
const KEY_POOL = 1 << 16;
/** Journeys kept in flight in every recorder, as on a busy worker. */
const IN_FLIGHT = 1000;
const LIVE_FETCH_JOURNEYS = 1024;
/** Round trips (fetch → flight → fetch) a live journey makes before it is ended and restarted, untimed. */
const ROUND_TRIPS = 16;
/** Journeys advanced in lockstep by the interleaved case. */
const LOCKSTEP = 16;

const clock = DEFAULT_OPTIONS.runtime.clock;
const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const mask = KEY_POOL - 1;
const inFlightKeys = keyPool(IN_FLIGHT, names, 3);

/** Sampling off: no head sampling and no tail sampling, so recording alone is measured (spans.bench.ts measures spans). */
const SAMPLING_OFF = { ratio: 0, keepSlowerThan: 0, keepErrors: false };

function makeJourneys(
  options: Pick<TaskJourneysOptions, "sampling" | "tracerProvider"> & { clock?: () => number } = {},
): TaskJourneys {
  const journeys = new TaskJourneys({
    role: "worker",
    tracerProvider: options.tracerProvider,
    sampling: options.sampling ?? SAMPLING_OFF,
    limits: { maxPrefixes: PREFIXES },
    runtime: { clock: options.clock ?? clock },
  });
  for (const key of inFlightKeys) journeys.transition(key, "released", "waiting");
  return journeys;
}

// ---- the journey's clock reads, counted ---------------------------------------------------------

const counted = countingClock(clock);
const probe = makeJourneys({ clock: counted.clock });
const readsBefore = counted.reads();
workerJourney(probe, "inc-0123456789abcdef0123456789abcdef");
const CLOCK_READS = counted.reads() - readsBefore;

// ---- taskjourney --------------------------------------------------------------------------------

const journeys = makeJourneys();
let next = 0;
function fullJourney(): void {
  workerJourney(journeys, keys[next++ & mask]);
}

// Default sampling but no head sampling: tail sampling (keep journeys slower than their prefix's
// p99) records every journey's duration once more; kept journeys go to the global (no-op) tracer.
// (A provider handing out the no-op tracer, but not the no-op provider itself, which would turn
// spans and so tail sampling off altogether.)
const noopTracer = new ProxyTracerProvider().getTracer("bench");
const tailJourneys = makeJourneys({ sampling: { ratio: 0 }, tracerProvider: { getTracer: () => noopTracer } });
let tailNext = 0;
function tailSampledJourney(): void {
  workerJourney(tailJourneys, keys[tailNext++ & mask]);
}

// LOCKSTEP journeys advanced state by state, so no two consecutive calls concern one key.
const lockstepJourneys = makeJourneys();
const lockstepLedgers: Array<ReturnType<TaskJourneys["execute"]>> = [];
let lockstepNext = 0;
function interleavedJourneys(): void {
  const first = lockstepNext;
  lockstepNext += LOCKSTEP;
  const j = lockstepJourneys;
  for (let i = 0; i < LOCKSTEP; i++) j.transition(keys[(first + i) & mask], "released", "waiting");
  for (let i = 0; i < LOCKSTEP; i++) j.transition(keys[(first + i) & mask], "waiting", "ready");
  for (let i = 0; i < LOCKSTEP; i++) j.transition(keys[(first + i) & mask], "ready", "executing");
  for (let i = 0; i < LOCKSTEP; i++) lockstepLedgers[i] = j.execute(keys[(first + i) & mask]);
  for (const activity of ACTIVITIES) for (let i = 0; i < LOCKSTEP; i++) lockstepLedgers[i].meter(activity, noWork);
  for (let i = 0; i < LOCKSTEP; i++) lockstepLedgers[i].end("memory");
  for (let i = 0; i < LOCKSTEP; i++) j.transition(keys[(first + i) & mask], "executing", "memory");
}

// A transition of a key without a journey (memory → released, released → forgotten): the cheapest call.
const noJourneys = makeJourneys();
let noJourneyNext = 0;
function noJourneyTransition(): void {
  noJourneys.transition(keys[noJourneyNext++ & mask], "memory", "released");
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

/** One sample: every live fetch journey makes one transition (fetch → flight, or back). */
function transitions(): number {
  const from = (phase & 1) === 0 ? "fetch" : "flight";
  const to = (phase & 1) === 0 ? "flight" : "fetch";
  const t0 = clockNs();
  for (let i = 0; i < LIVE_FETCH_JOURNEYS; i++) fetchJourneys.transition(fetchKeys[i], from, to);
  const elapsed = clockNs() - t0;
  if (++phase === 2 * ROUND_TRIPS) {
    // Untimed: end the journeys (their visit lists stay short, as real retries are few) and start anew.
    phase = 0;
    endFetchJourneys();
    startFetchJourneys();
  }
  return elapsed;
}

// ---- the lower bound: the same journey and transitions by MinimalRecorder -------------------------

function makeMinimal(): MinimalRecorder {
  const minimal = new MinimalRecorder(clock);
  for (const key of inFlightKeys) minimal.transition(key, "released", "waiting");
  return minimal;
}
const minimalJourneys = makeMinimal();
let minimalNext = 0;
function minimalJourney(): void {
  workerJourney(minimalJourneys, keys[minimalNext++ & mask]);
}
const minimalFetchJourneys = makeMinimal();
let minimalPhase = 0;
/**
 * transitions() again, for the lower bound. Not one function taking the recorder: its call site
 * would see two receiver types, and each case must be timed with a monomorphic call, as a
 * scheduler makes it. The lower bound keeps no visit list, so it never needs the restart.
 */
function minimalTransitions(): number {
  const from = (minimalPhase & 1) === 0 ? "fetch" : "flight";
  const to = (minimalPhase & 1) === 0 ? "flight" : "fetch";
  const t0 = clockNs();
  for (let i = 0; i < LIVE_FETCH_JOURNEYS; i++) minimalFetchJourneys.transition(fetchKeys[i], from, to);
  const elapsed = clockNs() - t0;
  if (++minimalPhase === 2 * ROUND_TRIPS) minimalPhase = 0;
  return elapsed;
}
for (const key of fetchKeys) minimalFetchJourneys.transition(key, "released", "fetch");

// ---- the clock floor ----------------------------------------------------------------------------

function clockFloor(): number {
  let sum = 0;
  for (let i = 0; i < CLOCK_READS; i++) sum += clock();
  return sum;
}

// ---- plain OpenTelemetry ------------------------------------------------------------------------

const { meterProvider, reader, stateDuration, executeTime } = plainMetrics();
const plainOtelJourneyWith = (now: () => number): ((key: string) => void) =>
  plainMetricsJourney({ stateDuration, executeTime }, now, CLOCK_READS);
const plainOtelJourney = plainOtelJourneyWith(clock);
let otelNext = 0;
function plainOtel(): void {
  plainOtelJourney(keys[otelNext++ & mask]);
}

// ---- sanity, untimed ----------------------------------------------------------------------------

// The plain OpenTelemetry journey must read the clock as often as taskjourney's.
const otelCounted = countingClock(clock);
plainOtelJourneyWith(otelCounted.clock)(keys[1]);
if (otelCounted.reads() !== CLOCK_READS) {
  console.warn(
    `bench: taskjourney's journey reads the clock ${CLOCK_READS} times, the plain OpenTelemetry one ${otelCounted.reads()}`,
  );
}
// The SDK must really aggregate (a reader is attached): collect once and look.
plainOtelJourney(keys[0]);
const collected = await reader.collect();
if (collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).length < 2) {
  throw new Error("plain OpenTelemetry case: the reader collected nothing; the comparison would be void");
}
// The lower bound must read the clock as often, and record.
const minimalCounted = countingClock(clock);
const minimalProbe = new MinimalRecorder(minimalCounted.clock);
workerJourney(minimalProbe, keys[2]);
if (minimalCounted.reads() !== CLOCK_READS) {
  console.warn(
    `bench: taskjourney's journey reads the clock ${CLOCK_READS} times, the lower bound's ${minimalCounted.reads()}`,
  );
}
if (minimalProbe.statistics(keySplit(keys[2]), "executing")?.count !== 1)
  throw new Error("the lower bound recorded nothing");
// And taskjourney must really record: a journey shows in the statistics, nothing is dropped.
fullJourney();
if (journeys.stats(keySplit(keys[0]), "executing").count < 1) throw new Error("the taskjourney case recorded nothing");
const everyRecorder = [probe, journeys, tailJourneys, lockstepJourneys, noJourneys, fetchJourneys];
const dropsBefore = everyRecorder.flatMap((j) => Object.entries(j.dropped()));
if (dropsBefore.length > 0) throw new Error(`the benchmark's journeys drop input: ${JSON.stringify(dropsBefore)}`);

// ---- run ----------------------------------------------------------------------------------------

const CLOCK = "clock read";
const TRANSITION = "transition() (live fetch journey, fetch⇄flight)";
const JOURNEY = "full journey (taskjourney)";
const FLOOR = `clock floor (${CLOCK_READS} clock reads)`;
const OTEL = "full journey (plain OpenTelemetry)";
const TAIL = "full journey, tail sampling on (p99, no-op tracer)";
const INTERLEAVED = `full journey, ${LOCKSTEP} interleaved in lockstep`;
const NO_JOURNEY = "transition() of a key with no journey";
const MINIMAL_TRANSITION = "lower bound: transition() (MinimalRecorder)";
const MINIMAL_JOURNEY = "lower bound: full journey (MinimalRecorder)";

await runSuite({
  name: "core",
  cases: [
    { name: CLOCK, fn: () => do_not_optimize(clock()) },
    { name: TRANSITION, manual: transitions, ops: LIVE_FETCH_JOURNEYS, maxNs: 150 },
    { name: JOURNEY, fn: fullJourney, maxNs: 1_000 },
    { name: FLOOR, fn: () => do_not_optimize(clockFloor()) },
    { name: OTEL, fn: plainOtel },
    { name: TAIL, fn: tailSampledJourney },
    { name: INTERLEAVED, fn: interleavedJourneys, ops: LOCKSTEP },
    { name: NO_JOURNEY, fn: noJourneyTransition },
    { name: MINIMAL_TRANSITION, manual: minimalTransitions, ops: LIVE_FETCH_JOURNEYS },
    { name: MINIMAL_JOURNEY, fn: minimalJourney },
  ],
  ratios: [
    { name: "full journey / clock floor", numerator: JOURNEY, denominator: FLOOR, max: 1.5 },
    { name: "plain OTel journey / taskjourney journey", numerator: OTEL, denominator: JOURNEY, min: 5 },
    { name: "interleaved journey / clock floor", numerator: INTERLEAVED, denominator: FLOOR },
    { name: "plain OTel journey / interleaved journey", numerator: OTEL, denominator: INTERLEAVED },
    { name: "lower bound journey / clock floor", numerator: MINIMAL_JOURNEY, denominator: FLOOR },
    { name: "taskjourney journey / lower bound journey", numerator: JOURNEY, denominator: MINIMAL_JOURNEY },
    {
      name: "taskjourney transition() / lower bound transition()",
      numerator: TRANSITION,
      denominator: MINIMAL_TRANSITION,
    },
  ],
  notes: [
    `package: ${source}; sampling off (ratio 0, keepSlowerThan 0) unless the case says otherwise; ${IN_FLIGHT} other journeys in flight in each recorder`,
    `keys: ${KEY_POOL} distinct "<prefix>-<32 hex>" keys over ${PREFIXES} prefixes, built before timing; a fresh key per journey`,
    `journey: ${CLOCK_READS} clock reads; transition(): ${LIVE_FETCH_JOURNEYS} live fetch journeys, fetch → flight / flight → fetch, restarted (untimed) every ${ROUND_TRIPS} round trips`,
  ],
});

const drops = everyRecorder.flatMap((j) => Object.entries(j.dropped()));
if (drops.length > 0) {
  console.error(`warning: the benchmark's journeys dropped input: ${JSON.stringify(drops)}`);
  process.exitCode = 1;
}
await meterProvider.shutdown();
