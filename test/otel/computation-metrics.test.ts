import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { byName, pipeline, values } from "./metric-producer.helpers.js";
import { harness } from "./spans/helpers.js";

afterEach(() => diag.disable());

function scheduler(clock: FakeClock, temporality: "cumulative" | "delta" = "cumulative", maxComputations = 100) {
  return new TaskJourneys({
    role: "scheduler",
    runtime: { clock: clock.now },
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
    limits: { maxComputations },
    metrics: { temporality },
  });
}

describe("task.computation.* metrics", () => {
  it("exports task-seconds by state, tasks ended by state, live tasks and wall seconds by computation; the per-prefix metrics have no computation", async () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock);
    const metrics = pipeline([journeys.metricProducer]);
    journeys.transition("inc-1", "released", "waiting", { computation: "graph-1" });
    journeys.transition("inc-2", "released", "waiting", { computation: "graph-1" });
    clock.advance(1);
    journeys.transition("inc-1", "waiting", "processing");
    clock.advance(2);
    journeys.transition("inc-1", "processing", "memory");
    journeys.transition("inc-2", "waiting", "processing");
    clock.advance(0.5);
    journeys.transition("inc-2", "processing", "erred", { error: "boom" });
    journeys.transition("dec-1", "released", "waiting", { computation: "graph-2" });
    clock.advance(4);
    const exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.time"))).toEqual({
      "task.computation=graph-1,task.state=waiting": 4,
      "task.computation=graph-1,task.state=processing": 2.5,
    });
    expect(values(exported.get("task.computation.tasks"))).toEqual({
      "task.computation=graph-1,task.state=memory": 1,
      "task.computation=graph-1,task.state=erred": 1,
    });
    expect(values(exported.get("task.computation.active"))).toEqual({
      "task.computation=graph-1": 0,
      "task.computation=graph-2": 1,
    });
    expect(values(exported.get("task.computation.wall"))).toEqual({
      "task.computation=graph-1": 3.5,
      "task.computation=graph-2": 4,
    });
    for (const name of ["task.state.time", "task.transitions", "task.active"])
      for (const point of exported.get(name)!.dataPoints)
        expect(Object.keys(point.attributes).sort()).toEqual(["task.prefix", "task.state"]);
    await metrics.shutdown();
  });

  it("a retired computation's series end; delta reports what changed since the last collection", async () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, "delta", 1);
    const metrics = pipeline([journeys.metricProducer], AggregationTemporality.DELTA);
    journeys.transition("a-1", "released", "waiting", { computation: "c1" });
    clock.advance(1);
    journeys.transition("a-1", "waiting", "processing");
    let exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.time"))).toEqual({ "task.computation=c1,task.state=waiting": 1 });
    clock.advance(2);
    journeys.transition("a-1", "processing", "memory");
    exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.time"))).toEqual({
      "task.computation=c1,task.state=waiting": 0,
      "task.computation=c1,task.state=processing": 2,
    });
    expect(values(exported.get("task.computation.tasks"))).toEqual({ "task.computation=c1,task.state=memory": 1 });
    // c1 finished: c2 retires it.
    journeys.transition("b-1", "released", "waiting", { computation: "c2" });
    exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.active"))).toEqual({ "task.computation=c2": 1 });
    expect(exported.has("task.computation.time")).toBe(false);
    await metrics.shutdown();
  });

  it("the task span of a journey begun under a computation carries task.computation", async () => {
    const { journeys, exporter } = harness({ role: "scheduler" });
    journeys.transition("x-1", "released", "waiting", { computation: "flow-9" });
    journeys.transition("x-1", "waiting", "processing");
    journeys.transition("x-1", "processing", "memory");
    journeys.transition("y-1", "released", "waiting");
    journeys.transition("y-1", "waiting", "processing");
    journeys.transition("y-1", "processing", "memory");
    const tasks = exporter.getFinishedSpans().filter((span) => span.name.startsWith("task "));
    expect(tasks.map((span) => [span.attributes["task.key"], span.attributes["task.computation"]])).toEqual([
      ["x-1", "flow-9"],
      ["y-1", undefined],
    ]);
    // Only the task span: its state spans do not repeat it.
    for (const span of exporter.getFinishedSpans().filter((span) => !span.name.startsWith("task ")))
      expect(span.attributes["task.computation"]).toBeUndefined();
    await journeys.shutdown();
  });
});
