import { afterEach, describe, expect, it } from "vitest";
import {
  AggregationTemporality,
  DataPointType,
  type DataPoint,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
} from "@opentelemetry/sdk-metrics";
import type { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { byName, pipeline, points, series, values, worker, type Pipeline } from "./metric-producer.helpers.js";

const open: Pipeline[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.shutdown()));
});

const S = (prefix: string, state: string) => series({ "task.prefix": prefix, "task.state": state });
const A = (activity: string) => series({ "task.activity": activity });
const O = (outcome: string) => series({ "transfer.outcome": outcome });
const R = (reason: string) => series({ reason });
const TINY = 2 ** -10;

/** Runs one compute journey: waiting `wait` s, ready 0 s, executing `run` s of thread-cpu. */
function compute(journeys: TaskJourneys, clock: FakeClock, key: string, wait: number, run: number): void {
  journeys.transition(key, "released", "waiting");
  clock.advance(wait);
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  ledger.meter("thread-cpu", () => clock.advance(run));
  ledger.end("memory");
}

function fetch(
  journeys: TaskJourneys,
  clock: FakeClock,
  key: string,
  bytes: number,
  network: number,
  outcome: "ok" | "busy",
): void {
  journeys.transition(key, "released", "fetch");
  const ledger = journeys.gather("tcp://10.0.0.8:40001", [key], bytes);
  ledger.meter("network", () => clock.advance(network));
  ledger.end(outcome);
}

function histogramsOf<T>(metric: MetricData | undefined): Record<string, T> {
  return Object.fromEntries([...points<T>(metric)].map(([key, point]) => [key, point.value]));
}

describe("temporality: delta", () => {
  it("reports only the increments since the previous collection, histogram buckets included", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { temporality: "delta" });
    const p = pipeline([journeys.metricProducer], AggregationTemporality.DELTA);
    open.push(p);

    // Phase 1: executing visits of 1 s and 1.5 s; a transfer ok, a transfer busy; a bad key.
    compute(journeys, clock, "inc-1", 1, 1);
    compute(journeys, clock, "inc-2", 0.5, 1.5);
    fetch(journeys, clock, "a-1", 1000, 0.5, "ok");
    fetch(journeys, clock, "a-2", 64, 0.25, "busy");
    journeys.transition(null as never, "released", "waiting");
    const first = byName(await p.collect());

    // Phase 2: one tiny executing visit forces a downscale of the cumulative histogram.
    compute(journeys, clock, "inc-3", 0.5, TINY);
    fetch(journeys, clock, "a-3", 250, 0.25, "ok");
    journeys.transition("x-9", "bogus" as never, "waiting"); // not a state: counted, not compiled
    const second = byName(await p.collect());

    // Phase 3: nothing happens.
    const third = byName(await p.collect());

    for (const metrics of [first, second, third]) {
      for (const metric of metrics.values()) {
        const expected =
          metric.dataPointType === DataPointType.GAUGE
            ? AggregationTemporality.CUMULATIVE
            : AggregationTemporality.DELTA;
        expect(metric.aggregationTemporality, metric.descriptor.name).toBe(expected);
      }
    }

    // The first collection holds everything so far.
    expect(values(first.get("task.state.time"))).toEqual({
      [S("inc", "waiting")]: 1.5,
      [S("inc", "ready")]: 0,
      [S("inc", "executing")]: 2.5,
      [S("a", "fetch")]: 0,
      [S("a", "flight")]: 0.75,
    });
    expect(values(first.get("task.gather.size"))).toEqual({ [O("ok")]: 1000, [O("busy")]: 64 });
    expect(values(first.get("taskjourney.dropped"))).toEqual({ [R("invalid-key")]: 1 });
    // 1 and 1.5 at scale 9 (the largest within the default 512 buckets): buckets -1 and
    // floor(512 log2 1.5) = 299.
    expect(histogramsOf<ExponentialHistogram>(first.get("task.state.duration"))[S("inc", "executing")]).toEqual({
      count: 2,
      sum: 2.5,
      min: 1,
      max: 1.5,
      scale: 9,
      zeroCount: 0,
      positive: { offset: -1, bucketCounts: [1, ...new Array(299).fill(0), 1] },
      negative: { offset: 0, bucketCounts: [] },
    });

    // The second only the increments; unchanged series report 0.
    expect(values(second.get("task.state.time"))).toEqual({
      [S("inc", "waiting")]: 0.5,
      [S("inc", "ready")]: 0,
      [S("inc", "executing")]: TINY,
      [S("a", "fetch")]: 0,
      [S("a", "flight")]: 0.25,
    });
    expect(values(second.get("task.execute.time"))).toEqual({ [A("thread-cpu")]: TINY });
    expect(values(second.get("task.gather.time"))).toEqual({ [A("network")]: 0.25, [A("busy")]: 0 });
    expect(values(second.get("task.gather.size"))).toEqual({ [O("ok")]: 250, [O("busy")]: 0 });
    expect(values(second.get("task.wait.time"))).toEqual({
      [series({ "task.prefix": "inc", "task.activity": "dependencies" })]: 0.5,
    });
    expect(values(second.get("task.transitions"))).toEqual({
      [S("inc", "waiting")]: 1,
      [S("inc", "ready")]: 1,
      [S("inc", "executing")]: 1,
      [S("inc", "memory")]: 1,
      [S("a", "fetch")]: 1,
      [S("a", "flight")]: 1,
      [S("a", "memory")]: 1,
    });
    expect(values(second.get("taskjourney.dropped"))).toEqual({ [R("invalid-key")]: 0, [R("unknown-state")]: 1 });
    // The gauge is a current value, not an increment: a-2 went back to fetch after "busy".
    expect(values(second.get("task.active"))).toEqual({
      [S("inc", "waiting")]: 0,
      [S("inc", "ready")]: 0,
      [S("inc", "executing")]: 0,
      [S("a", "fetch")]: 1,
      [S("a", "flight")]: 0,
    });
    // With 2^-10 the cumulative histogram downscaled to 5 (2^-10 in bucket -321, 1 in -1, 1.5 in
    // 18); the delta is at that scale, with the previous counts subtracted bucket by bucket.
    // Min and max of an interval are unknown, so they are left out.
    const delta = histogramsOf<ExponentialHistogram>(second.get("task.state.duration"));
    expect(delta[S("inc", "executing")]).toEqual({
      count: 1,
      sum: TINY,
      scale: 5,
      zeroCount: 0,
      positive: { offset: -321, bucketCounts: [1, ...new Array(339).fill(0)] },
      negative: { offset: 0, bucketCounts: [] },
    });
    expect(delta[S("inc", "waiting")]).toMatchObject({ count: 1, sum: 0.5, zeroCount: 0 });
    expect(delta[S("inc", "ready")]).toMatchObject({ count: 1, sum: 0, zeroCount: 1 });
    expect(delta[S("a", "fetch")]).toMatchObject({ count: 1, sum: 0, zeroCount: 1 });

    // Each interval starts where the previous one ended.
    const end = (metrics: Map<string, MetricData>) => metrics.get("task.state.time")!.dataPoints[0].endTime;
    for (const metric of second.values()) {
      if (metric.dataPointType === DataPointType.GAUGE) continue;
      for (const point of metric.dataPoints as DataPoint<unknown>[]) expect(point.startTime).toEqual(end(first));
    }
    for (const metric of third.values()) {
      if (metric.dataPointType === DataPointType.GAUGE) continue;
      for (const point of metric.dataPoints as DataPoint<unknown>[]) expect(point.startTime).toEqual(end(second));
    }

    // Nothing new: every sum is 0, every histogram empty.
    for (const name of [
      "task.state.time",
      "task.execute.time",
      "task.gather.time",
      "task.wait.time",
      "task.gather.size",
      "task.transitions",
      "taskjourney.dropped",
    ]) {
      for (const value of Object.values(values(third.get(name)))) expect(value, name).toBe(0);
    }
    for (const histogram of Object.values(histogramsOf<ExponentialHistogram>(third.get("task.state.duration")))) {
      expect(histogram.count).toBe(0);
      expect(histogram.sum).toBe(0);
      expect(histogram.zeroCount).toBe(0);
      expect(histogram.positive.bucketCounts.every((count) => count === 0)).toBe(true);
    }
  });

  it("gives explicit-bucket deltas too", async () => {
    const clock = new FakeClock(0);
    const boundaries = [0.5, 1, 2];
    const journeys = worker(clock, { temporality: "delta", histogram: "explicit", explicitBuckets: boundaries });
    const p = pipeline([journeys.metricProducer], AggregationTemporality.DELTA);
    open.push(p);
    compute(journeys, clock, "inc-1", 0, 1);
    compute(journeys, clock, "inc-2", 0, 1.5);
    const first = histogramsOf<Histogram>(byName(await p.collect()).get("task.state.duration"));
    compute(journeys, clock, "inc-3", 0, TINY);
    compute(journeys, clock, "inc-4", 0, 3);
    const second = histogramsOf<Histogram>(byName(await p.collect()).get("task.state.duration"));
    expect(first[S("inc", "executing")]).toEqual({
      buckets: { boundaries, counts: [0, 1, 1, 0] },
      count: 2,
      sum: 2.5,
      min: 1,
      max: 1.5,
    });
    expect(second[S("inc", "executing")]).toEqual({
      buckets: { boundaries, counts: [1, 0, 0, 1] },
      count: 2,
      sum: 3 + TINY,
      min: undefined,
      max: undefined,
    });
    expect(second[S("inc", "waiting")]).toEqual({
      buckets: { boundaries, counts: [2, 0, 0, 0] },
      count: 2,
      sum: 0,
      min: undefined,
      max: undefined,
    });
  });

  it("keeps the delta state per producer: a second producer of the same recorder has its own intervals", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { temporality: "delta" });
    const cumulative = journeys.createMetricProducer({ temporality: "cumulative" });
    const deltaPipeline = pipeline([journeys.metricProducer], AggregationTemporality.DELTA);
    const cumulativePipeline = pipeline([cumulative]);
    open.push(deltaPipeline, cumulativePipeline);
    const waited = async (p: Pipeline) => values(byName(await p.collect()).get("task.state.time"))[S("inc", "waiting")];
    compute(journeys, clock, "inc-1", 1, 1);
    expect([await waited(deltaPipeline), await waited(cumulativePipeline)]).toEqual([1, 1]);
    compute(journeys, clock, "inc-2", 2, 1);
    expect(await waited(deltaPipeline)).toBe(2);
    compute(journeys, clock, "inc-3", 4, 1);
    expect([await waited(deltaPipeline), await waited(cumulativePipeline)]).toEqual([4, 7]);
    expect(await waited(deltaPipeline)).toBe(0);
  });
});
