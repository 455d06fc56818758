/**
 * The soak of issue 13: 10 million worker journeys over 1,000 prefixes through the whole pipeline
 * a deployment runs: the recorder; the metric producer, collected by a PeriodicExportingMetricReader
 * every second into a counting exporter (as a reader would, on its timer); and 1% of journeys as
 * span trees into a real BatchSpanProcessor with a counting exporter. Every tenth journey fetches a
 * dependency from a peer first (a fetch journey, a gather_dep ledger, waiting-time apportioning).
 * The loop yields to the event loop every 1,000 journeys so both timers fire. Heap and RSS are
 * read after a forced GC every million journeys: they must stay flat.
 *
 * Run: node --expose-gc --import tsx bench/soak.bench.ts
 *   TASKJOURNEY_BENCH_JOURNEYS=10000000   journeys to run (default 10 million)
 *   TASKJOURNEY_BENCH_SECONDS=900         stop early past this many seconds, reporting what ran
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  TracerProvider as BasicTracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { printSuite, report, table, type SuiteResult } from "./harness.js";
import { library, source } from "./lib.js";
import { noWork, prefixNames, workerJourney } from "./workload.js";

const { TaskJourneys } = library;

const TOTAL = Number(process.env.TASKJOURNEY_BENCH_JOURNEYS ?? 10_000_000);
const BUDGET_SECONDS = Number(process.env.TASKJOURNEY_BENCH_SECONDS ?? 900);
const PREFIXES = 1000;
const CHECKPOINT = 1_000_000;
const DEPENDENCY_EVERY = 10;
const YIELD_EVERY = 1000;

const gc = globalThis.gc;
if (typeof gc !== "function") {
  console.error("bench/soak.bench.ts needs --expose-gc: node --expose-gc --import tsx bench/soak.bench.ts");
  process.exit(2);
}

let spansExported = 0;
let spanBatches = 0;
const spanExporter: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    spansExported += spans.length;
    spanBatches++;
    done({ code: 0 });
  },
  shutdown: async () => {},
};
let metricExports = 0;
let dataPoints = 0;
const metricExporter: PushMetricExporter = {
  export(metrics: ResourceMetrics, done) {
    metricExports++;
    for (const scope of metrics.scopeMetrics)
      for (const metric of scope.metrics) dataPoints += metric.dataPoints.length;
    done({ code: 0 });
  },
  forceFlush: async () => {},
  shutdown: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

const tracerProvider = new BasicTracerProvider({
  spanProcessors: [
    new BatchSpanProcessor({
      exporter: spanExporter,
      maxQueueSize: 65_536,
      maxExportBatchSize: 4096,
      scheduledDelayMillis: 200,
    }),
  ],
});
const journeys = new TaskJourneys({
  role: "worker",
  instance: "tcp://10.0.0.7:40001",
  tracerProvider,
  sampling: { ratio: 0.01, keepSlowerThan: 0, keepErrors: false },
  limits: { maxPrefixes: PREFIXES },
});
const reader = new PeriodicExportingMetricReader({
  exporter: metricExporter,
  exportIntervalMillis: 1000,
  metricProducers: [journeys.metricProducer],
});
const meterProvider = new MeterProvider({ readers: [reader] });

const names = prefixNames(PREFIXES);
/** The 24 hex digits after a journey's own 8 make a 32-digit token, as Dask's are. */
const TAIL = "0f1e2d3c4b5a69788796a5b4";
const PEER = "tcp://10.0.0.8:40001";

function keyOf(i: number): string {
  return `${names[i % PREFIXES]}-${(0x10000000 + i).toString(16)}${TAIL}`;
}

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
  journeys: number;
  heapUsed: number;
  rss: number;
  seconds: number;
  spans: number;
  collections: number;
}

const MB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const readings: Reading[] = [];
const started = performance.now();
function read(done: number): Reading {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  const reading = {
    journeys: done,
    heapUsed: usage.heapUsed,
    rss: usage.rss,
    seconds: (performance.now() - started) / 1000,
    spans: spansExported,
    collections: metricExports,
  };
  readings.push(reading);
  console.log(
    `${String(done).padStart(9)} journeys  heap ${MB(reading.heapUsed).padStart(9)}  rss ${MB(reading.rss).padStart(9)}  ` +
      `${spansExported} spans in ${spanBatches} batches, ${metricExports} collections  ${reading.seconds.toFixed(1)} s`,
  );
  return reading;
}

read(0);
let done = 0;
let timedOut = false;
while (done < TOTAL) {
  const end = Math.min(TOTAL, done + CHECKPOINT);
  for (let i = done; i < end; i++) {
    if (i % DEPENDENCY_EVERY === 0) journeyWithFetchedDependency(keyOf(i), keyOf(TOTAL + i));
    else workerJourney(journeys, keyOf(i));
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToLoop();
  }
  done = end;
  read(done);
  if ((performance.now() - started) / 1000 > BUDGET_SECONDS && done < TOTAL) {
    timedOut = true;
    break;
  }
}
await tracerProvider.forceFlush();
await reader.forceFlush();
const last = read(done);
await meterProvider.shutdown();
await tracerProvider.shutdown();

const dropped = journeys.dropped();
const first = readings.find((reading) => reading.journeys === CHECKPOINT) ?? readings[0];
const after = readings.slice(readings.indexOf(first));
const heapMax = Math.max(...after.map((reading) => reading.heapUsed));
const rssMax = Math.max(...after.map((reading) => reading.rss));
console.log("");
console.log(
  table(
    ["journeys", "heapUsed", "rss", "spans exported", "collections", "seconds"],
    readings.map((reading) => [
      String(reading.journeys),
      MB(reading.heapUsed),
      MB(reading.rss),
      String(reading.spans),
      String(reading.collections),
      reading.seconds.toFixed(1),
    ]),
  ),
);

const result: SuiteResult = {
  suite: "soak",
  runtime: `node ${process.version} ${process.arch}, ${source}`,
  cases: [],
  ratios: [],
  notes: [
    `${done.toLocaleString("en-US")} journeys over ${PREFIXES} prefixes (1 in ${DEPENDENCY_EVERY} with a fetched dependency), 1% as span trees, metrics collected every second` +
      (timedOut ? `; stopped at the ${BUDGET_SECONDS} s budget before ${TOTAL.toLocaleString("en-US")}` : ""),
    `spans exported: ${spansExported} in ${spanBatches} batches; metric collections: ${metricExports} (${dataPoints} data points); dropped inputs: ${JSON.stringify(dropped)}`,
  ],
  facts: {
    journeys: done,
    "heap after 1 M": MB(first.heapUsed),
    "heap after": MB(last.heapUsed),
    "heap max after 1 M": MB(heapMax),
    "rss after 1 M": MB(first.rss),
    "rss after": MB(last.rss),
    "rss max after 1 M": MB(rssMax),
    "spans exported": spansExported,
    "metric collections": metricExports,
  },
};
printSuite(result);
report(result);
if (Object.keys(dropped).length > 0) {
  console.error("soak bench: inputs dropped; the workload is wrong");
  process.exitCode = 1;
}
