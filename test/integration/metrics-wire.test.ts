/**
 * The task metrics over the wire: journeys.metricProducer → PeriodicExportingMetricReader →
 * OTLP/HTTP exporter (protobuf and JSON) → @elastic/mockotlpserver, which decodes the requests
 * with the OTLP protos. What a Collector would receive, checked field by field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import type { TaskJourneys } from "../../src/index.js";
import type { TaskJourneysOptions } from "../../src/types.js";
import { FakeClock } from "../helpers/clock.js";
import { attributeKey, NEVER, S, worker, WORKER_DAY, workerDay } from "../otel/metric-producer.helpers.js";
import { num, startMockOtlp, type MockOtlp, type Num, type OtlpMetric, type OtlpMetricsRequest } from "./mockotlp.js";

const PROTOCOLS = [
  { protocol: "http/protobuf", contentType: "application/x-protobuf", Exporter: ProtoMetricExporter },
  { protocol: "http/json", contentType: "application/json", Exporter: JsonMetricExporter },
] as const;

// OTLP's AggregationTemporality enum, as on the wire.
const DELTA = 1;
const CUMULATIVE = 2;

let server: MockOtlp;
beforeAll(async () => {
  server = await startMockOtlp();
});
afterAll(async () => {
  await server?.close();
});

let instances = 0;

/** A worker whose metrics go to the mock server; `instance` tells its requests apart. */
function exporting(Exporter: (typeof PROTOCOLS)[number]["Exporter"], options: TaskJourneysOptions = {}) {
  const instance = `wire-${++instances}`;
  const clock = new FakeClock(0);
  const journeys = worker(clock, options);
  const exporter = new Exporter({ url: `${server.url}/v1/metrics` });
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: NEVER,
    metricProducers: [journeys.metricProducer],
  });
  const provider = new MeterProvider({
    readers: [reader],
    resource: resourceFromAttributes({
      "service.name": "taskjourney-wire",
      "service.instance.id": instance,
      "taskjourney.role": "worker",
    }),
  });
  let exports = 0;
  return {
    journeys: journeys as TaskJourneys,
    clock,
    /** Exports once and returns what the server decoded of that request. */
    async export(): Promise<OtlpMetricsRequest> {
      await reader.forceFlush();
      exports++;
      const mine = () =>
        server.metrics.filter(
          (request) => request.resourceMetrics[0]?.resource?.attributes?.["service.instance.id"] === instance,
        );
      return server.waitFor(() => (mine().length >= exports ? mine()[exports - 1] : undefined));
    },
    shutdown: () => provider.shutdown(),
  };
}

function temporality(value: number | string | undefined): number {
  if (value === "AGGREGATION_TEMPORALITY_DELTA") return DELTA;
  if (value === "AGGREGATION_TEMPORALITY_CUMULATIVE") return CUMULATIVE;
  return num(value as Num);
}

/** One decoded metric in a form to compare: kind, unit, temporality and points by attribute set. */
function simplify(metric: OtlpMetric) {
  const key = (attributes: Record<string, unknown> | undefined) =>
    attributeKey((attributes ?? {}) as Record<string, string>);
  if (metric.sum !== undefined) {
    return {
      kind: "sum",
      unit: metric.unit,
      temporality: temporality(metric.sum.aggregationTemporality),
      monotonic: metric.sum.isMonotonic === true,
      points: Object.fromEntries(metric.sum.dataPoints.map((p) => [key(p.attributes), p.asDouble ?? num(p.asInt)])),
    };
  }
  if (metric.gauge !== undefined) {
    return {
      kind: "gauge",
      unit: metric.unit,
      points: Object.fromEntries(metric.gauge.dataPoints.map((p) => [key(p.attributes), p.asDouble ?? num(p.asInt)])),
    };
  }
  if (metric.exponentialHistogram !== undefined) {
    return {
      kind: "exponentialHistogram",
      unit: metric.unit,
      temporality: temporality(metric.exponentialHistogram.aggregationTemporality),
      points: Object.fromEntries(
        metric.exponentialHistogram.dataPoints.map((p) => [
          key(p.attributes),
          {
            count: num(p.count),
            sum: p.sum ?? 0,
            min: p.min,
            max: p.max,
            scale: p.scale ?? 0,
            zeroCount: num(p.zeroCount),
            offset: p.positive?.offset ?? 0,
            bucketCounts: (p.positive?.bucketCounts ?? []).map(num),
            negative: (p.negative?.bucketCounts ?? []).length,
          },
        ]),
      ),
    };
  }
  if (metric.histogram !== undefined) {
    return {
      kind: "histogram",
      unit: metric.unit,
      temporality: temporality(metric.histogram.aggregationTemporality),
      points: Object.fromEntries(
        metric.histogram.dataPoints.map((p) => [
          key(p.attributes),
          {
            count: num(p.count),
            sum: p.sum ?? 0,
            min: p.min,
            max: p.max,
            explicitBounds: p.explicitBounds ?? [],
            bucketCounts: (p.bucketCounts ?? []).map(num),
          },
        ]),
      ),
    };
  }
  throw new Error(`metric ${metric.name} has no data`);
}

function decode(request: OtlpMetricsRequest) {
  expect(request.resourceMetrics).toHaveLength(1);
  const [resourceMetrics] = request.resourceMetrics;
  const scopes = resourceMetrics.scopeMetrics.filter((scope) => scope.scope?.name === "taskjourney");
  expect(scopes).toHaveLength(1);
  return {
    resource: resourceMetrics.resource?.attributes ?? {},
    scope: scopes[0].scope,
    metrics: Object.fromEntries(scopes[0].metrics.map((metric) => [metric.name, simplify(metric)])),
  };
}

const one = (offset: number, value: number) => ({
  count: 1,
  sum: value,
  min: value,
  max: value,
  scale: 20,
  zeroCount: 0,
  offset,
  bucketCounts: [1],
  negative: 0,
});
const counts = (length: number, set: Record<number, number>) => Array.from({ length }, (_, i) => set[i] ?? 0);

describe.each(PROTOCOLS)("OTLP/HTTP $protocol to mockotlpserver", ({ contentType, Exporter }) => {
  it("carries every task metric with its name, unit, attributes, sums and exponential buckets", async () => {
    const worker = exporting(Exporter);
    workerDay(worker.journeys, worker.clock);
    const request = await worker.export();
    await worker.shutdown();
    expect(server.requests.some((r) => r.path === "/v1/metrics" && r.contentType === contentType)).toBe(true);

    const { resource, scope, metrics } = decode(request);
    expect(resource).toMatchObject({
      "service.name": "taskjourney-wire",
      "taskjourney.role": "worker",
      "service.instance.id": expect.stringMatching(/^wire-/),
    });
    expect(scope).toMatchObject({ name: "taskjourney", version: expect.any(String) });
    expect(Object.keys(metrics).sort()).toEqual([
      "task.active",
      "task.active.oldest",
      "task.execute.count",
      "task.execute.size",
      "task.execute.time",
      "task.gather.size",
      "task.gather.time",
      "task.state.duration",
      "task.state.time",
      "task.transitions",
      "task.wait.time",
      "taskjourney.dropped",
    ]);

    const sum = (unit: string, points: Record<string, number>) => ({
      kind: "sum",
      unit,
      temporality: CUMULATIVE,
      monotonic: true,
      points,
    });
    expect(metrics["task.state.time"]).toEqual(sum("s", WORKER_DAY.stateTime));
    expect(metrics["task.execute.time"]).toEqual(sum("s", WORKER_DAY.executeTime));
    expect(metrics["task.gather.time"]).toEqual(sum("s", WORKER_DAY.gatherTime));
    expect(metrics["task.wait.time"]).toEqual(sum("s", WORKER_DAY.waitTime));
    expect(metrics["task.gather.size"]).toEqual(sum("By", WORKER_DAY.gatherSize));
    expect(metrics["task.execute.size"]).toEqual(sum("By", WORKER_DAY.executeSize));
    expect(metrics["task.execute.count"]).toEqual(sum("{count}", WORKER_DAY.executeCount));
    expect(metrics["task.transitions"]).toEqual(sum("{transition}", WORKER_DAY.transitions));
    expect(metrics["task.active"]).toEqual({ kind: "gauge", unit: "{task}", points: WORKER_DAY.active });
    expect(metrics["taskjourney.dropped"]).toEqual(sum("{item}", WORKER_DAY.dropped));
    expect(metrics["task.state.duration"]).toEqual({
      kind: "exponentialHistogram",
      unit: "s",
      temporality: CUMULATIVE,
      points: {
        [S("sum", "waiting")]: one(2097151, 4),
        [S("sum", "ready")]: one(-1, 1),
        [S("sum", "executing")]: one(1048575, 2),
        [S("inc", "waiting")]: { ...one(-2097153, 0.25), count: 2, zeroCount: 1, min: 0 },
        [S("inc", "ready")]: { ...one(-1048577, 0.5), count: 2, zeroCount: 1, min: 0 },
        [S("inc", "executing")]: one(-435199, 0.75),
        // Downscaled to fit the default 512 buckets (see test/otel/metric-producer.test.ts).
        [S("a", "fetch")]: {
          count: 3,
          sum: 2.5,
          min: 0.5,
          max: 1,
          scale: 8,
          zeroCount: 0,
          offset: -257,
          bucketCounts: counts(257, { 0: 1, 256: 2 }),
          negative: 0,
        },
        [S("a", "flight")]: {
          count: 3,
          sum: 6.25,
          min: 0.25,
          max: 3,
          scale: 7,
          zeroCount: 0,
          offset: -257,
          bucketCounts: counts(460, { 0: 1, 459: 2 }),
          negative: 0,
        },
      },
    });
  });

  it("carries delta temporality: the second request holds the increments, histogram bucket deltas included", async () => {
    const worker = exporting(Exporter, { metrics: { temporality: "delta" } });
    const { journeys, clock } = worker;
    const compute = (key: string, run: number) => {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      const ledger = journeys.execute(key);
      ledger.meter("thread-cpu", () => clock.advance(run));
      ledger.end("memory");
    };
    compute("inc-1", 1);
    compute("inc-2", 1.5);
    const first = decode(await worker.export()).metrics;
    compute("inc-3", 2 ** -10);
    const second = decode(await worker.export()).metrics;
    await worker.shutdown();

    expect(first["task.state.time"]).toMatchObject({
      temporality: DELTA,
      monotonic: true,
      points: { [S("inc", "executing")]: 2.5 },
    });
    expect(second["task.state.time"]).toMatchObject({
      temporality: DELTA,
      monotonic: true,
      points: { [S("inc", "executing")]: 2 ** -10 },
    });
    expect(second["task.transitions"]).toMatchObject({ temporality: DELTA, points: { [S("inc", "memory")]: 1 } });
    expect(second["task.active"]).toMatchObject({ kind: "gauge", points: { [S("inc", "executing")]: 0 } });
    expect(first["task.state.duration"]).toMatchObject({
      temporality: DELTA,
      points: {
        [S("inc", "executing")]: {
          count: 2,
          sum: 2.5,
          min: 1,
          max: 1.5,
          scale: 9,
          zeroCount: 0,
          offset: -1,
          bucketCounts: counts(301, { 0: 1, 300: 1 }),
        },
      },
    });
    const delta = (second["task.state.duration"] as { points: Record<string, Record<string, unknown>> }).points[
      S("inc", "executing")
    ];
    expect(delta).toMatchObject({
      count: 1,
      sum: 2 ** -10,
      scale: 5,
      zeroCount: 0,
      offset: -321,
      bucketCounts: counts(340, { 0: 1 }),
    });
    expect(delta.min).toBeUndefined();
    expect(delta.max).toBeUndefined();
    expect(
      (second["task.state.duration"] as { points: Record<string, unknown> }).points[S("inc", "ready")],
    ).toMatchObject({ count: 1, zeroCount: 1, sum: 0 });
  });

  it("carries explicit-bucket histograms when asked to", async () => {
    const boundaries = [0.1, 0.5, 1, 2.5, 5];
    const worker = exporting(Exporter, { metrics: { histogram: "explicit", explicitBuckets: boundaries } });
    workerDay(worker.journeys, worker.clock);
    const { metrics } = decode(await worker.export());
    await worker.shutdown();
    expect(metrics["task.state.duration"]).toMatchObject({
      kind: "histogram",
      unit: "s",
      temporality: CUMULATIVE,
      points: {
        [S("a", "fetch")]: {
          count: 3,
          sum: 2.5,
          min: 0.5,
          max: 1,
          explicitBounds: boundaries,
          bucketCounts: [0, 1, 2, 0, 0, 0],
        },
        [S("a", "flight")]: {
          count: 3,
          sum: 6.25,
          min: 0.25,
          max: 3,
          explicitBounds: boundaries,
          bucketCounts: [0, 1, 0, 0, 2, 0],
        },
        [S("inc", "waiting")]: {
          count: 2,
          sum: 0.25,
          min: 0,
          max: 0.25,
          explicitBounds: boundaries,
          bucketCounts: [1, 1, 0, 0, 0, 0],
        },
      },
    });
  });
});
