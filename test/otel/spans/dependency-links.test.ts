/**
 * An in-process DAG (a job queue, a thread pool's scheduler): the dependent's task span links to
 * the task spans of its dependencies' journeys here, with no carrier involved (a user trial's
 * scheduler got none from dependencies() before).
 */
import { describe, expect, it } from "vitest";
import { defineMachine, type TaskJourneys } from "../../../src/index.js";
import { find, harness, render, taskSpan } from "./helpers.js";

const JOBS = defineMachine({
  states: ["new", "pending", "running", "done", "failed", "cancelled"],
  transitions: { new: ["pending"], pending: ["running", "cancelled"], running: ["done", "failed"] },
  terminal: { success: "done", failure: "failed", cancelled: "cancelled" },
  initial: "new",
  waiting: "pending",
  executing: "running",
});

function dag(ratio: number) {
  const h = harness({ role: "scheduler", machine: JOBS, sampling: { ratio, keepSlowerThan: 0, keepErrors: true } });
  const journeys = h.journeys as unknown as TaskJourneys<"scheduler", (typeof JOBS.states)[number]>;
  const run = (key: string, parents: string[], at: number) => {
    h.clock.set(at);
    journeys.transition(key, "new", "pending");
    if (parents.length > 0) journeys.dependencies(key, parents);
    h.clock.set(at + 1);
    journeys.transition(key, "pending", "running");
    h.clock.set(at + 2);
    journeys.execute(key).end("done");
  };
  return { h, journeys, run };
}

describe("links between dependents and dependencies in one process", () => {
  it("a child job's task span links to each parent's, in their own traces", () => {
    const { h, run } = dag(1);
    run("load-1", [], 100);
    run("load-2", [], 100);
    run("merge-1", ["load-1", "load-2"], 110);
    const spans = h.exporter.getFinishedSpans();
    expect(render(spans).filter((line) => line.startsWith("task merge"))).toEqual([
      "task merge [merge-1@scheduler] 110-112 → task load [load-1@scheduler], task load [load-2@scheduler]",
    ]);
    const merge = find(spans, taskSpan("merge-1", "scheduler"));
    const parents = ["load-1", "load-2"].map((key) => find(spans, taskSpan(key, "scheduler")).spanContext());
    expect(merge.links.map((link) => link.context)).toEqual(parents);
    expect(merge.spanContext().traceId).not.toBe(parents[0].traceId);
  });

  it("links only to dependencies whose span trees exist: none for a parent not sampled", () => {
    const { h, run } = dag(0);
    run("load-1", [], 100);
    // Kept at its end (it failed): its parent made no spans, so there is nothing to link to.
    const journeys = h.journeys as unknown as TaskJourneys<"scheduler", (typeof JOBS.states)[number]>;
    h.clock.set(110);
    journeys.transition("merge-1", "new", "pending");
    journeys.dependencies("merge-1", ["load-1"]);
    journeys.transition("merge-1", "pending", "running");
    journeys.execute("merge-1").end("failed", new Error("bad input"));
    const spans = h.exporter.getFinishedSpans();
    expect(spans.some((span) => span.name === "task load")).toBe(false);
    expect(find(spans, taskSpan("merge-1", "scheduler")).links).toEqual([]);
  });

  it("a child cancelled while a parent still waits links to that parent's open task span, emitted later", () => {
    const { h, journeys, run } = dag(1);
    run("load-1", [], 100);
    h.clock.set(101);
    journeys.transition("load-2", "new", "pending"); // still waiting when its child is cancelled
    journeys.transition("merge-1", "new", "pending");
    journeys.dependencies("merge-1", ["load-1", "load-2"]);
    h.clock.set(105);
    journeys.transition("merge-1", "pending", "cancelled");
    h.clock.set(106);
    journeys.transition("load-2", "pending", "cancelled");
    const spans = h.exporter.getFinishedSpans();
    const merge = find(spans, taskSpan("merge-1", "scheduler"));
    const parents = ["load-1", "load-2"].map((key) => find(spans, taskSpan(key, "scheduler")).spanContext());
    expect(merge.links.map((link) => link.context)).toEqual(parents);
    expect(merge.attributes["task.dependencies"]).toBe(2);
  });

  it("a producer told by linkFrom() stands for the dependency: one link, not two", () => {
    const { h, journeys, run } = dag(1);
    run("load-1", [], 100);
    const carrier: Record<string, string> = {};
    expect(journeys.inject("load-1", carrier)).toBe(true);
    journeys.linkFrom("load-1", carrier);
    run("merge-1", ["load-1"], 110);
    const merge = find(h.exporter.getFinishedSpans(), taskSpan("merge-1", "scheduler"));
    expect(merge.links).toHaveLength(1);
  });
});
