import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { byName, pipeline, values } from "./metric-producer.helpers.js";
import { harness } from "./spans/helpers.js";
import { captureDiag } from "../helpers/diag.js";

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

  it("a computation finished and retired between two collections is still exported once, with its final totals", async () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, "cumulative", 1);
    const metrics = pipeline([journeys.metricProducer]);
    journeys.transition("a-1", "released", "waiting", { computation: "c1" });
    clock.advance(1);
    journeys.transition("a-1", "waiting", "processing");
    clock.advance(2);
    journeys.transition("a-1", "processing", "memory");
    // c1 finished: c2 retires it before any collection.
    journeys.transition("b-1", "released", "waiting", { computation: "c2" });
    clock.advance(0.5);
    expect(journeys.computations().map(({ name }) => name)).toEqual(["c2"]);
    let exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.time"))).toEqual({
      "task.computation=c1,task.state=waiting": 1,
      "task.computation=c1,task.state=processing": 2,
    });
    expect(values(exported.get("task.computation.tasks"))).toEqual({ "task.computation=c1,task.state=memory": 1 });
    expect(values(exported.get("task.computation.active"))).toEqual({
      "task.computation=c2": 1,
      "task.computation=c1": 0,
    });
    expect(values(exported.get("task.computation.wall"))).toEqual({
      "task.computation=c2": 0.5,
      "task.computation=c1": 3,
    });
    expect(exported.has("taskjourney.dropped")).toBe(false);
    // Once: the next collection has c2 only.
    exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.active"))).toEqual({ "task.computation=c2": 1 });
    expect(journeys.dropped()).toEqual({});
    await metrics.shutdown();
  });

  it("more retired between two collections than limits.maxComputations: the ones gone are counted computation-unexported, told once", async () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, "cumulative", 1);
    const metrics = pipeline([journeys.metricProducer]);
    /** Runs one task of `name` to memory in 1 s. */
    const run = (name: string, key: string) => {
      journeys.transition(key, "released", "waiting", { computation: name });
      clock.advance(1);
      journeys.transition(key, "waiting", "memory");
    };
    run("c1", "a-1");
    run("c2", "b-1"); // retires c1
    run("c3", "c-1"); // retires c2: c1 is gone from the ring of 1
    let exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.active"))).toEqual({
      "task.computation=c3": 0,
      "task.computation=c2": 0,
    });
    expect(values(exported.get("taskjourney.dropped"))).toEqual({
      "reason=computation-unexported": 1,
    });
    run("c4", "d-1");
    run("c5", "e-1");
    run("c6", "f-1");
    run("c7", "g-1"); // retired since: c3, c4, c5, c6; the ring holds c6
    exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.active"))).toEqual({
      "task.computation=c7": 0,
      "task.computation=c6": 0,
    });
    expect(journeys.dropped()).toEqual({ "computation-unexported": 4 });
    const told = messages.filter((message) => message.includes("computation-unexported"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(
      "1 computation(s) finished and retired between two metric collections were never exported",
    );
    expect(told[0]).toContain("Raise limits.maxComputations above the computations one collection interval sees");
    await metrics.shutdown();
  });

  it("a retired computation whose name is begun again before a collection is counted, not exported as a second series of the name", async () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, "cumulative", 2);
    const metrics = pipeline([journeys.metricProducer]);
    journeys.transition("a-1", "released", "waiting", { computation: "c1" });
    journeys.transition("b-1", "released", "waiting", { computation: "c2" });
    clock.advance(1);
    journeys.transition("a-1", "waiting", "memory"); // c1 finished
    journeys.transition("c-1", "released", "waiting", { computation: "c3" }); // retires c1
    journeys.transition("b-1", "waiting", "memory"); // c2 finished
    clock.advance(1);
    journeys.transition("d-1", "released", "waiting", { computation: "c1" }); // retires c2; c1 again
    const exported = byName(await metrics.collect());
    expect(values(exported.get("task.computation.active"))).toEqual({
      "task.computation=c3": 1,
      "task.computation=c1": 1,
      "task.computation=c2": 0,
    });
    expect(values(exported.get("task.computation.tasks"))).toEqual({ "task.computation=c2,task.state=memory": 1 });
    expect(journeys.dropped()).toEqual({ "computation-unexported": 1 });
    expect(messages.filter((message) => message.includes("same name was begun again"))).toHaveLength(1);
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
