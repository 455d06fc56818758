import { afterEach, describe, expect, it } from "vitest";
import { AggregationTemporality, DataPointType } from "@opentelemetry/sdk-metrics";
import { FakeClock } from "../helpers/clock.js";
import {
  byName,
  pipeline,
  S,
  values,
  worker,
  WORKER_DAY,
  workerDay,
  type Pipeline,
} from "./metric-producer.helpers.js";

const open: Pipeline[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.shutdown()));
});

describe("the meterProvider option: observable instruments for readers without metricProducers", () => {
  it("exports the sums and the gauge, not the duration histogram, through a plain MeterProvider and reader", async () => {
    const p = pipeline([]);
    open.push(p);
    const clock = new FakeClock(0);
    const journeys = worker(clock, { meterProvider: p.provider });
    workerDay(journeys, clock);
    const metrics = byName(await p.collect());

    expect(
      Object.fromEntries([...metrics].map(([name, metric]) => [name, [metric.descriptor.unit, metric.dataPointType]])),
    ).toEqual({
      "task.state.time": ["s", DataPointType.SUM],
      "task.execute.time": ["s", DataPointType.SUM],
      "task.gather.time": ["s", DataPointType.SUM],
      "task.wait.time": ["s", DataPointType.SUM],
      "task.gather.size": ["By", DataPointType.SUM],
      "task.execute.size": ["By", DataPointType.SUM],
      "task.execute.count": ["{count}", DataPointType.SUM],
      "task.transitions": ["{transition}", DataPointType.SUM],
      "task.active": ["{task}", DataPointType.GAUGE],
      "task.active.oldest": ["s", DataPointType.GAUGE],
      "taskjourney.dropped": ["{item}", DataPointType.SUM],
    });
    for (const metric of metrics.values()) {
      if (metric.dataPointType === DataPointType.SUM) {
        expect(metric.isMonotonic, metric.descriptor.name).toBe(true);
        expect(metric.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
      }
    }
    expect(values(metrics.get("task.state.time"))).toEqual(WORKER_DAY.stateTime);
    expect(values(metrics.get("task.gather.size"))).toEqual(WORKER_DAY.gatherSize);
    expect(values(metrics.get("task.execute.size"))).toEqual(WORKER_DAY.executeSize);
    expect(values(metrics.get("task.active"))[S("inc", "executing")]).toBe(1);
    expect(values(metrics.get("taskjourney.dropped"))).toEqual(WORKER_DAY.dropped);

    // Observations are cumulative; the SDK keeps the start time and the running totals.
    clock.advance(1);
    journeys.transition("inc-2", "executing", "long-running");
    const again = byName(await p.collect());
    // inc-2 executed from 8.5 s to 10.25 s.
    expect(values(again.get("task.state.time"))[S("inc", "executing")]).toBe(2.5);
    expect(values(again.get("task.transitions"))[S("inc", "long-running")]).toBe(1);
  });

  it("with a delta reader the SDK turns the cumulative observations into increments", async () => {
    const p = pipeline([], AggregationTemporality.DELTA);
    open.push(p);
    const clock = new FakeClock(0);
    // The journeys' own temporality option does not matter here: observations are cumulative.
    const journeys = worker(clock, { meterProvider: p.provider, temporality: "delta" });
    journeys.transition("inc-1", "released", "waiting");
    clock.advance(1);
    journeys.transition("inc-1", "waiting", "ready");
    expect(values(byName(await p.collect()).get("task.state.time"))).toEqual({ [S("inc", "waiting")]: 1 });
    journeys.transition("inc-2", "released", "waiting");
    clock.advance(2);
    journeys.transition("inc-2", "waiting", "ready");
    expect(values(byName(await p.collect()).get("task.state.time"))).toEqual({ [S("inc", "waiting")]: 2 });
  });

  it("stops observing at journeys.shutdown()", async () => {
    // A delta reader shows it: a series observed no more reports nothing.
    const p = pipeline([], AggregationTemporality.DELTA);
    open.push(p);
    const clock = new FakeClock(0);
    const journeys = worker(clock, { meterProvider: p.provider });
    journeys.transition("inc-1", "released", "waiting");
    expect(values(byName(await p.collect()).get("task.active"))).toEqual({ [S("inc", "waiting")]: 1 });
    await journeys.shutdown();
    const { resourceMetrics } = await p.reader.collect();
    const points = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .flatMap((metric) => metric.dataPoints as unknown[]);
    expect(points).toEqual([]);
  });
});
