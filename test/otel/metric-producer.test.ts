import { afterEach, describe, expect, it } from "vitest";
import { ValueType } from "@opentelemetry/api";
import {
  AggregationTemporality,
  AggregationType,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";
import {
  DATA_POINT_EXPONENTIAL_HISTOGRAM,
  DATA_POINT_GAUGE,
  DATA_POINT_HISTOGRAM,
  DATA_POINT_SUM,
  TEMPORALITY_CUMULATIVE,
  TEMPORALITY_DELTA,
} from "../../src/otel/metric-producer.js";
import { FakeClock } from "../helpers/clock.js";
import {
  A,
  byName,
  NEVER,
  PA,
  pipeline,
  points,
  S,
  taskScope,
  values,
  worker,
  WORKER_DAY,
  workerDay,
  type Pipeline,
} from "./metric-producer.helpers.js";
import { internalsOf } from "../../src/internal.js";

const open: Pipeline[] = [];
function track(p: Pipeline): Pipeline {
  open.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.shutdown()));
});

/** An exponential histogram with one value's bucket, at scale 20. */
function single(offset: number, value: number) {
  return {
    count: 1,
    sum: value,
    min: value,
    max: value,
    scale: 20,
    zeroCount: 0,
    positive: { offset, bucketCounts: [1] },
    negative: { offset: 0, bucketCounts: [] },
  };
}

function buckets(length: number, set: Record<number, number>): number[] {
  const counts = new Array<number>(length).fill(0);
  for (const [index, count] of Object.entries(set)) counts[Number(index)] = count;
  return counts;
}

describe("the local enum constants", () => {
  it("equal the SDK's DataPointType and AggregationTemporality", () => {
    expect(DATA_POINT_HISTOGRAM).toBe(DataPointType.HISTOGRAM);
    expect(DATA_POINT_EXPONENTIAL_HISTOGRAM).toBe(DataPointType.EXPONENTIAL_HISTOGRAM);
    expect(DATA_POINT_GAUGE).toBe(DataPointType.GAUGE);
    expect(DATA_POINT_SUM).toBe(DataPointType.SUM);
    expect(TEMPORALITY_DELTA).toBe(AggregationTemporality.DELTA);
    expect(TEMPORALITY_CUMULATIVE).toBe(AggregationTemporality.CUMULATIVE);
  });
});

describe("journeys.metricProducer through a MeterProvider's PeriodicExportingMetricReader", () => {
  it("exports every metric of the README's metrics table with its unit, kind and exact values (cumulative by default)", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const p = track(pipeline([journeys.metricProducer]));
    workerDay(journeys, clock);
    const exported = await p.collect();
    const metrics = byName(exported);

    // Names, units, value types, kinds, temporality, monotonicity.
    const shape = Object.fromEntries(
      [...metrics].map(([name, metric]) => [
        name,
        {
          unit: metric.descriptor.unit,
          valueType: metric.descriptor.valueType,
          type: metric.dataPointType,
          temporality: metric.aggregationTemporality,
          monotonic: "isMonotonic" in metric ? metric.isMonotonic : undefined,
        },
      ]),
    );
    const C = AggregationTemporality.CUMULATIVE;
    expect(shape).toEqual({
      "task.state.time": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.state.duration": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.EXPONENTIAL_HISTOGRAM,
        temporality: C,
        monotonic: undefined,
      },
      "task.execute.time": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.gather.time": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.wait.time": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.gather.size": {
        unit: "By",
        valueType: ValueType.INT,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.execute.size": {
        unit: "By",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.execute.count": {
        unit: "{count}",
        valueType: ValueType.DOUBLE,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.transitions": {
        unit: "{transition}",
        valueType: ValueType.INT,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
      "task.active": {
        unit: "{task}",
        valueType: ValueType.INT,
        type: DataPointType.GAUGE,
        temporality: C,
        monotonic: undefined,
      },
      "task.active.oldest": {
        unit: "s",
        valueType: ValueType.DOUBLE,
        type: DataPointType.GAUGE,
        temporality: C,
        monotonic: undefined,
      },
      "taskjourney.dropped": {
        unit: "{item}",
        valueType: ValueType.INT,
        type: DataPointType.SUM,
        temporality: C,
        monotonic: true,
      },
    });
    for (const metric of metrics.values()) expect(metric.descriptor.description.length).toBeGreaterThan(10);

    expect(values(metrics.get("task.state.time"))).toEqual(WORKER_DAY.stateTime);
    expect(values(metrics.get("task.execute.time"))).toEqual(WORKER_DAY.executeTime);
    expect(values(metrics.get("task.gather.time"))).toEqual(WORKER_DAY.gatherTime);
    expect(values(metrics.get("task.wait.time"))).toEqual(WORKER_DAY.waitTime);
    expect(values(metrics.get("task.gather.size"))).toEqual(WORKER_DAY.gatherSize);
    expect(values(metrics.get("task.execute.size"))).toEqual(WORKER_DAY.executeSize);
    expect(values(metrics.get("task.execute.count"))).toEqual(WORKER_DAY.executeCount);
    expect(values(metrics.get("task.transitions"))).toEqual(WORKER_DAY.transitions);
    expect(values(metrics.get("task.active"))).toEqual(WORKER_DAY.active);
    expect(values(metrics.get("task.active.oldest"))).toEqual(WORKER_DAY.oldest);
    expect(values(metrics.get("taskjourney.dropped"))).toEqual(WORKER_DAY.dropped);

    // Exponential histograms, bucket by bucket. At scale 20 a power of two 2^k is the upper
    // bound of bucket (k << 20) - 1; 1.5 * 2^k falls in bucket (k << 20) + 613377.
    const durations = Object.fromEntries(
      [...points<ExponentialHistogram>(metrics.get("task.state.duration"))].map(([key, point]) => [key, point.value]),
    );
    expect(durations).toEqual({
      [S("sum", "waiting")]: single(2097151, 4),
      [S("sum", "ready")]: single(-1, 1),
      [S("sum", "executing")]: single(1048575, 2),
      [S("inc", "waiting")]: { ...single(-2097153, 0.25), count: 2, zeroCount: 1, min: 0 },
      [S("inc", "ready")]: { ...single(-1048577, 0.5), count: 2, zeroCount: 1, min: 0 },
      [S("inc", "executing")]: single(-1048576 + 613377, 0.75),
      // 0.5, 1, 1: 2^s buckets lie between 0.5 and 1, so s = 8 is the largest scale within the
      // default 512 buckets.
      [S("a", "fetch")]: {
        count: 3,
        sum: 2.5,
        min: 0.5,
        max: 1,
        scale: 8,
        zeroCount: 0,
        positive: { offset: -257, bucketCounts: buckets(257, { 0: 1, 256: 2 }) },
        negative: { offset: 0, bucketCounts: [] },
      },
      // 3, 3, 0.25: at scale 7, 0.25 is in bucket -257 and 3 in bucket 128 + floor(128 log2 1.5) = 202.
      [S("a", "flight")]: {
        count: 3,
        sum: 6.25,
        min: 0.25,
        max: 3,
        scale: 7,
        zeroCount: 0,
        positive: { offset: -257, bucketCounts: buckets(460, { 0: 1, 459: 2 }) },
        negative: { offset: 0, bucketCounts: [] },
      },
    });

    // Role and instance are resource attributes, never metric attributes; the SDK's resource is kept.
    const allowed = new Set(["task.prefix", "task.state", "task.activity", "transfer.outcome", "reason"]);
    for (const metric of metrics.values()) {
      for (const point of metric.dataPoints as DataPoint<unknown>[]) {
        for (const key of Object.keys(point.attributes)) expect(allowed).toContain(key);
      }
    }
    expect(exported.resource.attributes["service.name"]).toBe("metric-producer-test");
    expect(taskScope(exported).scope).toEqual({ name: "taskjourney", version: expect.any(String) });
  });

  it("stays cumulative across collections: same start time, running totals", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const p = track(pipeline([journeys.metricProducer]));
    journeys.transition("inc-1", "released", "waiting");
    clock.advance(1);
    journeys.transition("inc-1", "waiting", "ready");
    const first = byName(await p.collect());
    journeys.transition("inc-2", "released", "waiting");
    clock.advance(2);
    journeys.transition("inc-2", "waiting", "ready");
    const second = byName(await p.collect());

    expect(values(first.get("task.state.time"))).toEqual({ [S("inc", "waiting")]: 1 });
    expect(values(second.get("task.state.time"))).toEqual({ [S("inc", "waiting")]: 3 });
    expect(values(second.get("task.transitions"))).toEqual({ [S("inc", "waiting")]: 2, [S("inc", "ready")]: 2 });
    expect(values(second.get("task.active"))).toEqual({ [S("inc", "waiting")]: 0, [S("inc", "ready")]: 2 });
    const [firstPoint] = first.get("task.state.time")!.dataPoints;
    const [secondPoint] = second.get("task.state.time")!.dataPoints;
    expect(secondPoint.startTime).toEqual(firstPoint.startTime);
    expect(compareHr(secondPoint.endTime, firstPoint.endTime)).toBeGreaterThanOrEqual(0);
    expect(compareHr(firstPoint.endTime, firstPoint.startTime)).toBeGreaterThanOrEqual(0);
    const [histogram] = second.get("task.state.duration")!.dataPoints as DataPoint<ExponentialHistogram>[];
    expect(histogram.value).toMatchObject({ count: 2, sum: 3, min: 1, max: 2, scale: expect.any(Number) });
    expect(histogram.value.positive.bucketCounts.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it("forwards as a MetricProducer does: collect() takes the SDK's options (a forwarding producer type-checks)", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("inc-1", "released", "waiting");
    clock.advance(1);
    journeys.transition("inc-1", "waiting", "ready");
    const forwarding: MetricProducer = { collect: (options) => journeys.metricProducer.collect(options) };
    const p = track(pipeline([forwarding]));
    expect(values(byName(await p.collect()).get("task.state.time"))).toEqual({ [S("inc", "waiting")]: 1 });
  });

  it("histogramMaxSize bounds the buckets: with 160 the same visits land at lower scales", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { histogramMaxSize: 160 });
    const p = track(pipeline([journeys.metricProducer]));
    workerDay(journeys, clock);
    const durations = Object.fromEntries(
      [...points<ExponentialHistogram>(byName(await p.collect()).get("task.state.duration"))].map(([key, point]) => [
        key,
        point.value,
      ]),
    );
    // 0.5, 1, 1 fit 160 buckets at scale 7 (0.5 in bucket -129, 1 in -1).
    expect(durations[S("a", "fetch")]).toEqual({
      count: 3,
      sum: 2.5,
      min: 0.5,
      max: 1,
      scale: 7,
      zeroCount: 0,
      positive: { offset: -129, bucketCounts: buckets(129, { 0: 1, 128: 2 }) },
      negative: { offset: 0, bucketCounts: [] },
    });
    // 3, 3, 0.25 at scale 5: 0.25 in bucket -65, 3 in 32 + floor(32 log2 1.5) = 50.
    expect(durations[S("a", "flight")]).toEqual({
      count: 3,
      sum: 6.25,
      min: 0.25,
      max: 3,
      scale: 5,
      zeroCount: 0,
      positive: { offset: -65, bucketCounts: buckets(116, { 0: 1, 115: 2 }) },
      negative: { offset: 0, bucketCounts: [] },
    });
    for (const histogram of Object.values(durations))
      expect(histogram.positive.bucketCounts.length).toBeLessThanOrEqual(160);
    // A single value keeps the highest scale whatever the size.
    expect(durations[S("sum", "waiting")]).toEqual(single(2097151, 4));
  });

  it("executeTimeByPrefix adds task.prefix to task.execute.time and its sizes and counts, and only there", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { executeTimeByPrefix: true });
    const p = track(pipeline([journeys.metricProducer]));
    workerDay(journeys, clock);
    const metrics = byName(await p.collect());
    expect(values(metrics.get("task.execute.time"))).toEqual({
      [PA("sum", "deserialize")]: 0.25,
      [PA("sum", "thread-cpu")]: 1.5,
      [PA("sum", "other")]: 0.25,
      [PA("inc", "failed")]: 0.75,
    });
    expect(values(metrics.get("task.execute.size"))).toEqual({
      [PA("sum", "disk-read")]: 65536,
      [PA("inc", "disk-write")]: 1024,
    });
    expect(values(metrics.get("task.execute.count"))).toEqual({ [PA("sum", "disk-read")]: 2 });
    expect(values(metrics.get("task.gather.time"))).toEqual({
      [A("connect")]: 0.5,
      [A("network")]: 2,
      [A("deserialize")]: 0.5,
      [A("busy")]: 0.25,
    });
  });

  it("with histogram: explicit exports task.state.duration as explicit-bucket histograms", async () => {
    const clock = new FakeClock(0);
    const boundaries = [0.1, 0.5, 1, 2.5, 5];
    const journeys = worker(clock, { histogram: "explicit", explicitBuckets: boundaries });
    const p = track(pipeline([journeys.metricProducer]));
    workerDay(journeys, clock);
    const metrics = byName(await p.collect());
    const metric = metrics.get("task.state.duration")!;
    expect(metric.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(metric.descriptor.unit).toBe("s");
    expect(metric.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    const histograms = Object.fromEntries([...points<Histogram>(metric)].map(([key, point]) => [key, point.value]));
    const h = (counts: number[], count: number, sum: number, min: number, max: number) => ({
      buckets: { boundaries, counts },
      count,
      sum,
      min,
      max,
    });
    // Buckets are upper-inclusive: (-inf, 0.1], (0.1, 0.5], (0.5, 1], (1, 2.5], (2.5, 5], (5, +inf).
    expect(histograms).toEqual({
      [S("a", "fetch")]: h([0, 1, 2, 0, 0, 0], 3, 2.5, 0.5, 1),
      [S("a", "flight")]: h([0, 1, 0, 0, 2, 0], 3, 6.25, 0.25, 3),
      [S("sum", "waiting")]: h([0, 0, 0, 0, 1, 0], 1, 4, 4, 4),
      [S("sum", "ready")]: h([0, 0, 1, 0, 0, 0], 1, 1, 1, 1),
      [S("sum", "executing")]: h([0, 0, 0, 1, 0, 0], 1, 2, 2, 2),
      [S("inc", "waiting")]: h([1, 1, 0, 0, 0, 0], 2, 0.25, 0, 0.25),
      [S("inc", "ready")]: h([1, 1, 0, 0, 0, 0], 2, 0.5, 0, 0.5),
      [S("inc", "executing")]: h([0, 0, 1, 0, 0, 0], 1, 0.75, 0.75, 0.75),
    });
    // The explicit option changes only the duration histogram.
    expect(values(metrics.get("task.state.time"))[S("a", "flight")]).toBe(6.25);
  });

  it("puts values in explicit buckets away from boundaries exactly, and beyond the last boundary in +Inf", async () => {
    const boundaries = [0.01, 0.1, 1, 10];
    const journeys = worker(new FakeClock(0), { histogram: "explicit", explicitBuckets: boundaries });
    const p = track(pipeline([journeys.metricProducer]));
    const durations = [0.003, 0.007, 0.03, 0.09, 0.2, 0.7, 0.95, 3, 9, 42, 1234];
    durations.forEach((d, i) => {
      journeys.transition(`f-${i}`, "released", "waiting", 0);
      journeys.transition(`f-${i}`, "waiting", "ready", d);
    });
    const [point] = byName(await p.collect()).get("task.state.duration")!.dataPoints as DataPoint<Histogram>[];
    expect(point.value.buckets).toEqual({ boundaries, counts: [2, 2, 3, 2, 2] });
    expect(point.value.count).toBe(11);
    expect(point.value.sum).toBeCloseTo(
      durations.reduce((a, b) => a + b, 0),
      9,
    );
    expect([point.value.min, point.value.max]).toEqual([0.003, 1234]);
  });

  it.each([{ maxSize: undefined }, { maxSize: 160 }, { maxSize: 20 }] as Array<{ maxSize: number | undefined }>)(
    "places values in the same exponential buckets, at the same scale, as the SDK's own aggregation (histogramMaxSize $maxSize)",
    async ({ maxSize }) => {
      // Durations from 1 ms to 100 s (pseudo-random, deterministic), zeros included.
      let seed = 12345;
      const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
      const durations = [0, 0, 1, 2, 0.5, ...Array.from({ length: 300 }, () => 10 ** (-3 + 5 * random()))];

      const journeys = worker(new FakeClock(0), maxSize === undefined ? {} : { histogramMaxSize: maxSize });
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      const reader = new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: NEVER,
        metricProducers: [journeys.metricProducer],
      });
      const provider = new MeterProvider({
        readers: [reader],
        views: [
          {
            instrumentName: "probe",
            aggregation: {
              type: AggregationType.EXPONENTIAL_HISTOGRAM,
              options: { maxSize: internalsOf(journeys)!.options.histogramMaxSize },
            },
          },
        ],
      });
      const probe = provider.getMeter("probe").createHistogram("probe", { unit: "s" });
      durations.forEach((d, i) => {
        journeys.transition(`f-${i}`, "released", "waiting", 0);
        journeys.transition(`f-${i}`, "waiting", "ready", d);
        probe.record(d);
      });
      await reader.forceFlush();
      const [exported] = exporter.getMetrics();
      const sdk = exported.scopeMetrics.find((scope) => scope.scope.name === "probe")!.metrics[0].dataPoints[0]
        .value as ExponentialHistogram;
      const ours = byName(exported).get("task.state.duration")!.dataPoints[0].value as ExponentialHistogram;
      expect(ours.scale).toBeLessThan(20);
      expect(ours.count).toBe(durations.length);
      expect(ours.zeroCount).toBe(2);
      expect({ ...ours, sum: 0 }).toEqual({ ...sdk, sum: 0 });
      expect(ours.sum).toBeCloseTo(sdk.sum!, 9);
      await provider.shutdown();
    },
  );

  it('folds prefixes beyond prefixLimit into "other", so the series count stays bounded', async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { prefixLimit: 3 });
    const p = track(pipeline([journeys.metricProducer]));
    const run = (count: number, from: number) => {
      for (let i = from; i < from + count; i++) {
        const key = `fn${i}-1`;
        journeys.transition(key, "released", "waiting");
        clock.advance(0.5);
        journeys.transition(key, "waiting", "ready");
        journeys.transition(key, "ready", "executing");
        const ledger = journeys.execute(key);
        ledger.meter("thread-cpu", () => clock.advance(0.25));
        ledger.end("memory");
      }
    };
    const seriesCounts = (metrics: Map<string, MetricData>) =>
      Object.fromEntries([...metrics].map(([name, metric]) => [name, metric.dataPoints.length]));

    run(10, 0);
    const first = byName(await p.collect());
    expect(values(first.get("task.transitions"))).toEqual({
      ...Object.fromEntries(
        ["fn0", "fn1", "fn2"].flatMap((prefix) =>
          ["waiting", "ready", "executing", "memory"].map((state) => [S(prefix, state), 1]),
        ),
      ),
      ...Object.fromEntries(["waiting", "ready", "executing", "memory"].map((state) => [S("other", state), 7])),
    });
    expect(values(first.get("task.state.time"))[S("other", "waiting")]).toBe(3.5);
    expect(values(first.get("task.wait.time"))).toEqual({
      [PA("fn0", "dependencies")]: 0.5,
      [PA("fn1", "dependencies")]: 0.5,
      [PA("fn2", "dependencies")]: 0.5,
      [PA("other", "dependencies")]: 3.5,
    });
    const [other] = [...points<ExponentialHistogram>(first.get("task.state.duration"))].filter(
      ([key]) => key === S("other", "executing"),
    );
    expect(other[1].value).toMatchObject({ count: 7, sum: 1.75 });

    run(200, 10);
    const second = byName(await p.collect());
    expect(seriesCounts(second)).toEqual(seriesCounts(first));
    expect(
      new Set([...points(second.get("task.state.time")).values()].map((point) => point.attributes["task.prefix"])),
    ).toEqual(new Set(["fn0", "fn1", "fn2", "other"]));
    expect(values(second.get("task.transitions"))[S("other", "memory")]).toBe(207);
  });
});

function compareHr(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

describe("journeys.createMetricProducer()", () => {
  it("makes a producer of its own for another reader, from the journeys' options with those given overriding", async () => {
    const clock = new FakeClock(0);
    const boundaries = [0.1, 0.5, 1, 2.5, 5];
    const journeys = worker(clock, { explicitBuckets: boundaries });
    const explicit = track(pipeline([journeys.createMetricProducer({ histogram: "explicit" })]));
    const exponential = track(pipeline([journeys.metricProducer]));
    workerDay(journeys, clock);
    const [fromExplicit, fromExponential] = [byName(await explicit.collect()), byName(await exponential.collect())];
    expect(fromExponential.get("task.state.duration")!.dataPointType).toBe(DataPointType.EXPONENTIAL_HISTOGRAM);
    const duration = fromExplicit.get("task.state.duration")!;
    expect(duration.dataPointType).toBe(DataPointType.HISTOGRAM);
    // The journeys' explicitBuckets, not given again.
    expect(points<Histogram>(duration).get(S("sum", "waiting"))!.value).toEqual({
      buckets: { boundaries, counts: [0, 0, 0, 0, 1, 0] },
      count: 1,
      sum: 4,
      min: 4,
      max: 4,
    });
    expect(values(fromExplicit.get("task.state.time"))).toEqual(values(fromExponential.get("task.state.time")));
  });

  it("throws a TypeError naming a bad option, as the constructor does", () => {
    const journeys = worker(new FakeClock(0));
    expect(() => journeys.createMetricProducer({ temporality: "weekly" as never })).toThrow(
      /option "temporality" must be "cumulative" or "delta"/,
    );
    expect(() => journeys.createMetricProducer({ histogram: "linear" as never })).toThrow(/option "histogram"/);
    expect(() => journeys.createMetricProducer({ explicitBuckets: [2, 1] })).toThrow(TypeError);
    expect(() => journeys.createMetricProducer(null as never)).toThrow(/option "options" must be an object/);
  });
});
