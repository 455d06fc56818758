/**
 * The span overhead benchmark (issue 3), side by side in one process: the full journey of
 * core.bench.ts (released → waiting → ready → executing → memory, an execute ledger metering three
 * activities, a fresh key from the prebuilt pool each time) emitting spans through a real SDK:
 *
 *   taskjourney, 1% sampling     sampling { ratio: 0.01, keepSlowerThan: 0, keepErrors: true }
 *   taskjourney, 100% sampling   sampling { ratio: 1, keepSlowerThan: 0, keepErrors: true }
 *   plain OpenTelemetry          the journey the plain way: a root span `task <prefix>`, one live
 *                                child span per state visit (started at entry, ended at exit) with
 *                                task.key and task.prefix, one child span per metered activity
 * and, for information, taskjourney with sampling off (ratio 0: no spans at all).
 *
 * Every case has a provider of its own, of one kind: a BasicTracerProvider (default sampler:
 * parent-based always-on) with a BatchSpanProcessor and a no-op exporter that counts what it is
 * given. The processor's queue never drops: maxQueueSize (and the export batch size) is larger
 * than anything one sample ends, and after every sample the processor is flushed outside the
 * timing; the exporter's count is checked against what the journeys must have emitted (counted
 * beforehand, per key, with a counting span processor), so the spans really went through.
 *
 * Cases are `manual`: one sample is a batch of journeys, timed, then an untimed flush. So the
 * cost per journey is amortized over the batch: 1% sampling is a mix of unsampled journeys and,
 * about one in a hundred, a whole span tree.
 *
 * Every taskjourney recorder also holds 1,000 other journeys in flight, as a busy worker does.
 *
 * Run: node --expose-gc --import tsx bench/spans.bench.ts [--cpu-time] [--interleaved] [--verbose]
 */
import type { Context } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import type { TaskJourneys as TaskJourneysType, TaskJourneysOptions } from "../src/index.js";
import { clockNs, runSuite } from "./harness.js";
import { library, source } from "./lib.js";
import { keyPool, prefixNames, workerJourney } from "./workload.js";
import { plainSpansJourney } from "./plain-otel.js";

const { TaskJourneys } = library;
type TaskJourneys = TaskJourneysType;
type Sampling = NonNullable<TaskJourneysOptions["sampling"]>;

const PREFIXES = 100;
/** Distinct keys cycled through: a journey's key was last used 65,535 journeys ago. */
const KEY_POOL = 1 << 16;
const mask = KEY_POOL - 1;
/** Journeys kept in flight in every recorder, as on a busy worker. */
const IN_FLIGHT = 1000;
/** Journeys per sample at 1% sampling (or none): about 41 sampled trees per sample. */
const BATCH_SAMPLED_FEW = 4096;
/** Journeys per sample when every journey emits a tree. */
const BATCH_SAMPLED_ALL = 1024;
/** Larger than anything one sample ends (1,024 journeys × 7 spans), so the queue never drops. */
const MAX_QUEUE = 1 << 20;

const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const inFlightKeys = keyPool(IN_FLIGHT, names, 3);

const ONE_PERCENT: Sampling = { ratio: 0.01, keepSlowerThan: 0, keepErrors: true };
const ALL: Sampling = { ratio: 1, keepSlowerThan: 0, keepErrors: true };
const OFF: Sampling = { ratio: 0, keepSlowerThan: 0, keepErrors: true };

// ---- the SDK, one of a kind per case ------------------------------------------------------------

interface Pipeline {
  provider: BasicTracerProvider;
  processor: BatchSpanProcessor;
  /** Spans handed to the exporter so far. */
  exported: () => number;
  /** Exports everything queued, synchronously (the no-op exporter answers at once). */
  drain: () => void;
}

function pipeline(): Pipeline {
  let exported = 0;
  const exporter: SpanExporter = {
    export(spans, cb) {
      exported += spans.length;
      cb({ code: 0 });
    },
    shutdown: async () => {},
  };
  const processor = new BatchSpanProcessor({
    exporter: exporter,
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: MAX_QUEUE,
  });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  return {
    provider,
    processor,
    exported: () => exported,
    // forceFlush() hands every queued batch to the exporter before it returns its promise (the
    // export runs in the promise's executor); the promise itself is not awaited, as the harness's
    // samples are synchronous. Errors would surface as an exported count short of the expected.
    drain: () => void processor.forceFlush().catch(() => {}),
  };
}

/** A span processor that only counts ended spans: to learn, untimed, what each journey emits. */
function countingProvider(): { provider: BasicTracerProvider; ended: () => number } {
  let ended = 0;
  const counter: SpanProcessor = {
    onStart: (_span: Span, _context: Context) => {},
    onEnd: (_span: ReadableSpan) => {
      ended++;
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  return { provider: new BasicTracerProvider({ spanProcessors: [counter] }), ended: () => ended };
}

function makeJourneys(sampling: Sampling, provider: BasicTracerProvider, withInFlight = true): TaskJourneys {
  const journeys = new TaskJourneys({
    role: "worker",
    sampling,
    limits: { maxPrefixes: PREFIXES },
    tracerProvider: provider,
  });
  if (withInFlight) for (const key of inFlightKeys) journeys.transition(key, "released", "waiting");
  return journeys;
}

// ---- plain OpenTelemetry ------------------------------------------------------------------------

// ---- spans per key, counted before timing -------------------------------------------------------

/** Spans one journey of each pool key emits with `sampling` (or the plain way: `undefined`). */
function spansPerKey(sampling: Sampling | undefined): Uint8Array {
  const { provider, ended } = countingProvider();
  const perKey = new Uint8Array(KEY_POOL);
  if (sampling === undefined) {
    const tracer = provider.getTracer("bench-plain-otel");
    for (let i = 0; i < KEY_POOL; i++) {
      const before = ended();
      plainSpansJourney(tracer, keys[i]);
      perKey[i] = ended() - before;
    }
  } else {
    const journeys = makeJourneys(sampling, provider, false);
    for (let i = 0; i < KEY_POOL; i++) {
      const before = ended();
      workerJourney(journeys, keys[i]);
      perKey[i] = ended() - before;
    }
    const dropped = Object.entries(journeys.dropped());
    if (dropped.length > 0) throw new Error(`the probe journeys drop input: ${JSON.stringify(dropped)}`);
  }
  return perKey;
}

// ---- the cases ----------------------------------------------------------------------------------

interface SpanCase {
  name: string;
  batch: number;
  pipeline: Pipeline;
  perKey: Uint8Array;
  journey: (key: string) => void;
  next: number;
  journeys: number;
  /** Spans the journeys run so far must have emitted. */
  expected: number;
  recorder?: TaskJourneys;
}

function taskjourneyCase(name: string, sampling: Sampling, batch: number): SpanCase {
  const p = pipeline();
  const journeys = makeJourneys(sampling, p.provider);
  const c: SpanCase = {
    name,
    batch,
    pipeline: p,
    perKey: spansPerKey(sampling),
    journey: (key) => workerJourney(journeys, key),
    next: 0,
    journeys: 0,
    expected: 0,
    recorder: journeys,
  };
  return c;
}

function plainCase(name: string, batch: number): SpanCase {
  const p = pipeline();
  const tracer = p.provider.getTracer("bench-plain-otel");
  return {
    name,
    batch,
    pipeline: p,
    perKey: spansPerKey(undefined),
    journey: (key) => plainSpansJourney(tracer, key),
    next: 0,
    journeys: 0,
    expected: 0,
  };
}

/** One sample: `batch` journeys on fresh keys, timed; then, untimed, the bookkeeping and a flush. */
function sample(c: SpanCase): number {
  const first = c.next;
  const batch = c.batch;
  const journey = c.journey;
  const t0 = clockNs();
  for (let i = 0; i < batch; i++) journey(keys[(first + i) & mask]);
  const elapsed = clockNs() - t0;
  for (let i = 0; i < batch; i++) c.expected += c.perKey[(first + i) & mask];
  c.next = (first + batch) & mask;
  c.journeys += batch;
  c.pipeline.drain();
  return elapsed;
}

const TJ_1 = "full journey, taskjourney, 1% sampling";
const TJ_100 = "full journey, taskjourney, 100% sampling";
const PLAIN = "full journey, plain OTel (a live span per state)";
const TJ_OFF = "full journey, taskjourney, sampling off (reference)";

const spanCases = [
  taskjourneyCase(TJ_1, ONE_PERCENT, BATCH_SAMPLED_FEW),
  taskjourneyCase(TJ_100, ALL, BATCH_SAMPLED_ALL),
  plainCase(PLAIN, BATCH_SAMPLED_ALL),
  taskjourneyCase(TJ_OFF, OFF, BATCH_SAMPLED_FEW),
];

// ---- sanity, untimed ----------------------------------------------------------------------------

const perJourneyTree = (c: SpanCase): number => Math.max(...c.perKey);
const sampledKeys = (c: SpanCase): number => c.perKey.reduce((n, spans) => n + (spans > 0 ? 1 : 0), 0);
for (const c of spanCases) {
  const trees = sampledKeys(c);
  const wanted =
    c.name === TJ_1 ? [0.005 * KEY_POOL, 0.015 * KEY_POOL] : c.name === TJ_OFF ? [0, 0] : [KEY_POOL, KEY_POOL];
  if (trees < wanted[0] || trees > wanted[1])
    throw new Error(`${c.name}: ${trees} of ${KEY_POOL} keys emit spans; expected ${wanted.join("–")}`);
}
// The plain journey and a sampled taskjourney journey both emit at least root + 3 states + 3 activities.
if (perJourneyTree(spanCases[1]) < 7 || perJourneyTree(spanCases[2]) < 7) {
  throw new Error(
    `span trees too small: taskjourney ${perJourneyTree(spanCases[1])}, plain ${perJourneyTree(spanCases[2])}`,
  );
}

// ---- run ----------------------------------------------------------------------------------------

const perJourney = (c: SpanCase): string =>
  c.journeys === 0 ? "n/a" : (c.pipeline.exported() / c.journeys).toFixed(4);
const facts: Record<string, string | number> = {};
// Getters: the harness prints and reports the facts after the last sample (and its flush).
for (const c of spanCases) {
  Object.defineProperty(facts, `spans/journey, ${c.name}`, { enumerable: true, get: () => perJourney(c) });
  Object.defineProperty(facts, `spans exported / expected, ${c.name}`, {
    enumerable: true,
    get: () => `${c.pipeline.exported()} / ${c.expected} (${c.journeys} journeys)`,
  });
}

await runSuite({
  name: "spans",
  cases: [
    { name: TJ_1, manual: () => sample(spanCases[0]), ops: BATCH_SAMPLED_FEW, maxNs: 1_500 },
    { name: TJ_100, manual: () => sample(spanCases[1]), ops: BATCH_SAMPLED_ALL },
    { name: PLAIN, manual: () => sample(spanCases[2]), ops: BATCH_SAMPLED_ALL },
    { name: TJ_OFF, manual: () => sample(spanCases[3]), ops: BATCH_SAMPLED_FEW },
  ],
  ratios: [
    { name: "taskjourney 100% / plain OTel", numerator: TJ_100, denominator: PLAIN, max: 1 },
    { name: "taskjourney 1% / plain OTel", numerator: TJ_1, denominator: PLAIN },
    { name: "taskjourney 1% / sampling off", numerator: TJ_1, denominator: TJ_OFF },
  ],
  notes: [
    `package: ${source}; every case: BasicTracerProvider + BatchSpanProcessor (maxQueueSize ${MAX_QUEUE}) + a no-op exporter, flushed untimed after each sample`,
    `sampling: keepSlowerThan 0, keepErrors true; ${IN_FLIGHT} other journeys in flight in each taskjourney recorder; ${sampledKeys(spanCases[0])} of ${KEY_POOL} keys head-sampled at 1%`,
    `span tree per sampled journey: taskjourney ${perJourneyTree(spanCases[1])} spans, plain OTel ${perJourneyTree(spanCases[2])} spans`,
    `samples: ${BATCH_SAMPLED_FEW} journeys (1%, off) or ${BATCH_SAMPLED_ALL} (100%, plain) on fresh keys from ${KEY_POOL} "<prefix>-<32 hex>" keys over ${PREFIXES} prefixes`,
  ],
  facts,
});

// Every span the journeys emitted must have reached the exporter: nothing dropped, nothing lost.
for (const c of spanCases) {
  c.pipeline.drain();
  if (c.pipeline.exported() !== c.expected) {
    console.error(`error: ${c.name}: ${c.pipeline.exported()} spans exported, ${c.expected} expected`);
    process.exitCode = 1;
  }
  const dropped = Object.entries(c.recorder?.dropped() ?? {});
  if (dropped.length > 0) {
    console.error(`warning: ${c.name}: the journeys dropped input: ${JSON.stringify(dropped)}`);
    process.exitCode = 1;
  }
}
for (const c of spanCases) await c.pipeline.provider.shutdown();
