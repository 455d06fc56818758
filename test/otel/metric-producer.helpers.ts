/**
 * Shared by the metric producer tests: a real MeterProvider with a PeriodicExportingMetricReader
 * and an InMemoryMetricExporter, and readers of the exported data keyed by attribute set.
 */
import type { Attributes } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type MetricData,
  type MetricProducer,
  type ResourceMetrics,
  type ScopeMetrics,
} from "@opentelemetry/sdk-metrics";
import { TaskJourneys } from "../../src/index.js";
import type { DeprecatedFlatOptions, MetricOptions, TaskJourneysOptions } from "../../src/types.js";
import { FakeClock } from "../helpers/clock.js";

/** Never fires during a test: collections happen only through forceFlush(). */
export const NEVER = 2 ** 31 - 1;

export interface Pipeline {
  provider: MeterProvider;
  reader: PeriodicExportingMetricReader;
  exporter: InMemoryMetricExporter;
  /** Collects and exports once; returns what this collection exported. */
  collect(): Promise<ResourceMetrics>;
  shutdown(): Promise<void>;
}

export function pipeline(
  producers: MetricProducer[],
  temporality = AggregationTemporality.CUMULATIVE,
  resourceAttributes: Attributes = { "service.name": "metric-producer-test" },
): Pipeline {
  const exporter = new InMemoryMetricExporter(temporality);
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: NEVER,
    metricProducers: producers,
  });
  const provider = new MeterProvider({ readers: [reader], resource: resourceFromAttributes(resourceAttributes) });
  return {
    provider,
    reader,
    exporter,
    async collect() {
      const before = exporter.getMetrics().length;
      await reader.forceFlush();
      const exported = exporter.getMetrics();
      if (exported.length !== before + 1) throw new Error(`expected one export, got ${exported.length - before}`);
      return exported[exported.length - 1];
    },
    shutdown: () => provider.shutdown(),
  };
}

/** A worker on `clock`; the metric options may be given flat here, for short tests. */
export function worker(
  clock: FakeClock,
  options: TaskJourneysOptions & MetricOptions & DeprecatedFlatOptions = {},
): TaskJourneys {
  const { temporality, histogram, explicitBuckets, histogramMaxSize, executeTimeByPrefix, ...rest } = options;
  return new TaskJourneys({
    role: "worker",
    instance: "tcp://10.0.0.7:40001",
    runtime: { clock: clock.now },
    sampling: { ratio: 0 },
    ...rest,
    metrics: { temporality, histogram, explicitBuckets, histogramMaxSize, executeTimeByPrefix, ...rest.metrics },
  });
}

export function taskScope(resourceMetrics: ResourceMetrics): ScopeMetrics {
  const scopes = resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === "taskjourney");
  if (scopes.length !== 1) throw new Error(`expected one taskjourney scope, got ${scopes.length}`);
  return scopes[0];
}

/** The taskjourney metrics of one export, by name; throws on a duplicated name. */
export function byName(resourceMetrics: ResourceMetrics): Map<string, MetricData> {
  const metrics = new Map<string, MetricData>();
  for (const metric of taskScope(resourceMetrics).metrics) {
    if (metrics.has(metric.descriptor.name)) throw new Error(`metric ${metric.descriptor.name} exported twice`);
    metrics.set(metric.descriptor.name, metric);
  }
  return metrics;
}

/** A canonical text of an attribute set: "k=v,k=v" with keys sorted. */
export function attributeKey(attributes: Attributes): string {
  return Object.keys(attributes)
    .sort()
    .map((key) => `${key}=${String(attributes[key])}`)
    .join(",");
}

/** The data points of a metric by attribute set; throws on two points with one attribute set. */
export function points<T>(metric: MetricData | undefined): Map<string, DataPoint<T>> {
  if (metric === undefined) throw new Error("metric missing");
  const byAttributes = new Map<string, DataPoint<T>>();
  for (const point of metric.dataPoints as DataPoint<T>[]) {
    const key = attributeKey(point.attributes);
    if (byAttributes.has(key)) throw new Error(`${metric.descriptor.name}: two points with attributes ${key}`);
    byAttributes.set(key, point);
  }
  return byAttributes;
}

/** A sum's or gauge's values by attribute set, as a plain object for toEqual. */
export function values(metric: MetricData | undefined): Record<string, number> {
  return Object.fromEntries([...points<number>(metric)].map(([key, point]) => [key, point.value]));
}

/**
 * One worker's recorded day, with every metric of the README's metrics table non-empty, in binary
 * fractions of a second so sums are exact. Times in the comments are the fake clock's.
 */
export function workerDay(journeys: TaskJourneys, clock: FakeClock): void {
  // t=0: sum-1 waits for a-1 and a-2, which sit in fetch.
  journeys.transition("sum-1", "released", "waiting");
  journeys.dependencies("sum-1", ["a-1", "a-2"]);
  journeys.transition("a-1", "released", "fetch");
  journeys.transition("a-2", "released", "fetch");
  // t=1..4: one transfer carries both: connect 0.5, network 2, deserialize 0.5.
  clock.advance(1);
  const transfer = journeys.gather("tcp://10.0.0.8:40001", ["a-1", "a-2"], 3000);
  transfer.meter("connect", () => clock.advance(0.5));
  transfer.meter("network", () => clock.advance(2));
  transfer.meter("deserialize", () => clock.advance(0.5));
  transfer.end("ok");
  // t=4: sum-1 waited 4 s; ready 1 s; executes 2 s (deserialize 0.25, thread-cpu 1.5, other 0.25).
  journeys.transition("sum-1", "waiting", "ready");
  clock.advance(1);
  journeys.transition("sum-1", "ready", "executing");
  const sum = journeys.execute("sum-1");
  sum.meter("deserialize", () => clock.advance(0.25));
  sum.meter("thread-cpu", () => clock.advance(1.5));
  // Quantities digested on the way: 64 KiB read from two spill files.
  sum.digest("disk-read", 65536, "bytes");
  sum.digest("disk-read", 2, "count");
  clock.advance(0.25);
  sum.end("memory");
  // t=7: inc-1 waits 0 s, is ready 0.5 s, fails after 0.75 s of executing (lumped as "failed").
  journeys.transition("inc-1", "released", "waiting");
  journeys.transition("inc-1", "waiting", "ready");
  clock.advance(0.5);
  journeys.transition("inc-1", "ready", "executing");
  const inc = journeys.execute("inc-1");
  inc.meter("thread-cpu", () => clock.advance(0.5));
  // Bytes written count whatever the outcome: unlike its time, a failed execution's bytes are not lumped.
  inc.digest("disk-write", 1024, "bytes");
  clock.advance(0.25);
  inc.end("error");
  // t=8.25: inc-2 waits 0.25 s, is ready 0 s and is still executing at collection.
  journeys.transition("inc-2", "released", "waiting");
  clock.advance(0.25);
  journeys.transition("inc-2", "waiting", "ready");
  journeys.transition("inc-2", "ready", "executing");
  // t=8.5: a-3 sits in fetch 0.5 s; its transfer gets "busy" after 0.25 s and it goes back to fetch.
  journeys.transition("a-3", "released", "fetch");
  clock.advance(0.5);
  const busy = journeys.gather("tcp://10.0.0.9:40001", ["a-3"], 500);
  busy.meter("network", () => clock.advance(0.25));
  busy.end("busy");
  // Bad input: counted, never thrown.
  journeys.transition("x-9", "bogus" as never, "waiting"); // not a state: counted, not compiled
  journeys.transition(null as never, "released", "waiting");
  journeys.transition("s-9", "released", "processing");
}

/** Attribute keys of workerDay's series, for readability of the expectations. */
export const series = (attributes: Record<string, string>): string => attributeKey(attributes);
export const S = (prefix: string, state: string): string => series({ "task.prefix": prefix, "task.state": state });
export const A = (activity: string): string => series({ "task.activity": activity });
export const PA = (prefix: string, activity: string): string =>
  series({ "task.prefix": prefix, "task.activity": activity });

/**
 * What workerDay must produce, per series, whichever way it is exported (metric producer,
 * observable instruments, OTLP on the wire): the numbers follow from the comments in workerDay.
 */
export const WORKER_DAY = {
  stateTime: {
    [S("a", "fetch")]: 2.5,
    [S("a", "flight")]: 6.25,
    [S("sum", "waiting")]: 4,
    [S("sum", "ready")]: 1,
    [S("sum", "executing")]: 2,
    [S("inc", "waiting")]: 0.25,
    [S("inc", "ready")]: 0.5,
    [S("inc", "executing")]: 0.75,
  },
  executeTime: {
    [A("deserialize")]: 0.25,
    [A("thread-cpu")]: 1.5,
    [A("other")]: 0.25,
    // inc-1 failed: its 0.75 s are lumped, its thread-cpu is not useful work.
    [A("failed")]: 0.75,
  },
  gatherTime: {
    [A("connect")]: 0.5,
    [A("network")]: 2,
    [A("deserialize")]: 0.5,
    [A("busy")]: 0.25,
  },
  waitTime: {
    [PA("sum", "queued")]: 1,
    [PA("sum", "connect")]: 0.5,
    [PA("sum", "network")]: 2,
    [PA("sum", "deserialize")]: 0.5,
    [PA("inc", "dependencies")]: 0.25,
  },
  gatherSize: {
    [series({ "transfer.outcome": "ok" })]: 3000,
    [series({ "transfer.outcome": "busy" })]: 500,
  },
  executeSize: {
    [A("disk-read")]: 65536,
    [A("disk-write")]: 1024,
  },
  executeCount: {
    [A("disk-read")]: 2,
  },
  transitions: {
    [S("a", "fetch")]: 4,
    [S("a", "flight")]: 3,
    [S("a", "memory")]: 2,
    [S("sum", "waiting")]: 1,
    [S("sum", "ready")]: 1,
    [S("sum", "executing")]: 1,
    [S("sum", "memory")]: 1,
    [S("inc", "waiting")]: 2,
    [S("inc", "ready")]: 2,
    [S("inc", "executing")]: 2,
    [S("inc", "error")]: 1,
  },
  active: {
    [S("a", "fetch")]: 1,
    [S("a", "flight")]: 0,
    [S("sum", "waiting")]: 0,
    [S("sum", "ready")]: 0,
    [S("sum", "executing")]: 0,
    [S("inc", "waiting")]: 0,
    [S("inc", "ready")]: 0,
    [S("inc", "executing")]: 1,
  },
  // At t=9.25 the oldest live journey is inc-2, begun at t=8.25.
  oldest: { [series({})]: 1 },
  dropped: {
    [series({ reason: "unknown-state" })]: 1,
    [series({ reason: "invalid-key" })]: 1,
    [series({ reason: "wrong-role-state" })]: 1,
  },
} as const;
