/**
 * A scheduler's own state machine, end to end through TaskJourneys: its state names in the
 * metrics, the spans, stats() and explain(), its roles (waiting, executing, queued, terminal
 * outcomes) doing what Dask's do, with exact numbers from a fake clock.
 */
import { describe, expect, it } from "vitest";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { diag, SpanStatusCode } from "@opentelemetry/api";
import { defineMachine, formatBreakdown, InvalidTransition, TaskJourneys } from "../src/index.js";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { breakdownFromSpans, SpanIndex } from "../src/report/from-trace.js";
import { decodeOtlpJson } from "../src/report/otlp-json.js";
import { FakeClock } from "./helpers/clock.js";
import { captureDiag } from "./helpers/diag.js";

const JOBS = defineMachine({
  states: [
    "added",
    "waiting-children",
    "waiting",
    "prioritized",
    "delayed",
    "active",
    "completed",
    "failed",
    "removed",
  ],
  transitions: {
    added: ["waiting-children", "waiting", "prioritized"],
    "waiting-children": ["waiting", "removed"],
    waiting: ["active", "removed"],
    prioritized: ["active"],
    active: ["completed", "failed", "delayed", "removed"],
    delayed: ["waiting"],
  },
  terminal: { success: "completed", failure: "failed", cancelled: "removed" },
  initial: "added",
  waiting: "waiting-children",
  queued: ["waiting", "prioritized"],
  executing: "active",
  forgotten: ["completed", "failed", "removed"],
});

function setup(role: "worker" | "scheduler" = "scheduler", strict = false) {
  const clock = new FakeClock(100);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const journeys = new TaskJourneys({
    role,
    machine: JOBS,
    clock: clock.now,
    timeOrigin: 0,
    tracerProvider,
    strict,
    sampling: { ratio: 1, keepSlowerThan: 0 },
  });
  return { clock, exporter, journeys };
}

/** task.state.time by (prefix, state), and task.transitions by the same. */
function stateMetrics(journeys: TaskJourneys<"worker" | "scheduler", string>): {
  time: Record<string, number>;
  transitions: Record<string, number>;
} {
  const time: Record<string, number> = {};
  const transitions: Record<string, number> = {};
  for (const metric of journeys.metricProducer.produce([0, 0], [0, 0])) {
    const into =
      metric.descriptor.name === "task.state.time"
        ? time
        : metric.descriptor.name === "task.transitions"
          ? transitions
          : undefined;
    if (into === undefined) continue;
    for (const point of metric.dataPoints)
      into[`${point.attributes["task.prefix"]}/${point.attributes["task.state"]}`] = point.value as number;
  }
  return { time, transitions };
}

describe("a job queue's own machine, end to end", () => {
  it("records its states by their names: metrics, stats(), explain() and spans, retries and backoff in one journey", async () => {
    const { clock, exporter, journeys } = setup();
    journeys.describe(7, { prefix: "fetch" });
    journeys.transition(7, "added", "waiting", 100);
    journeys.queued(7, "rate-limit");
    journeys.transition(7, "waiting", "active", clock.set(101.5));
    journeys.transition(7, "active", "delayed", clock.set(102));
    journeys.transition(7, "delayed", "waiting", clock.set(106));
    journeys.transition(7, "waiting", "active", clock.set(106.25));
    journeys.transition(7, "active", "completed", clock.set(107.25));
    expect(journeys.dropped()).toEqual({});

    expect(stateMetrics(journeys)).toEqual({
      time: { "fetch/waiting": 1.75, "fetch/delayed": 4, "fetch/active": 1.5 },
      transitions: { "fetch/waiting": 2, "fetch/delayed": 1, "fetch/active": 2, "fetch/completed": 1 },
    });
    // stats() defaults to the executing state, active.
    expect(journeys.stats("fetch")).toMatchObject({ count: 2, mean: 0.75, min: 0.5, max: 1 });
    expect(journeys.stats("fetch", "delayed")).toMatchObject({ count: 1, mean: 4 });
    // @ts-expect-error a Dask state is not one of this machine's (and at run time an unknown-state drop)
    expect(journeys.stats("fetch", "processing").count).toBe(0);
    expect(journeys.dropped()).toEqual({ "unknown-state": 1 });

    const breakdown = journeys.explain(7)!;
    expect(breakdown.outcome).toBe("completed");
    expect(breakdown.seconds).toBe(7.25);
    expect(breakdown.children.map((node) => [node.name, node.seconds])).toEqual([
      ["waiting", 1.5],
      ["active", 0.5],
      ["delayed", 4],
      ["waiting", 0.25],
      ["active", 1],
    ]);
    // queued(): the first wait's time under its reason.
    expect(breakdown.children[0].children).toEqual([
      expect.objectContaining({ name: "queued (rate-limit)", seconds: 1.5 }),
    ]);
    // Its queue is named waiting, but it is not where the job waits for its children: no gather.
    expect(breakdown.waitingState).toBe("");
    // On a worker, a job that waited for its children: that state's activities are gathers, the
    // queue's (named waiting) are not, from explain() and from the trace alike.
    const worker = setup("worker");
    worker.journeys.transition("p-1", "added", "waiting-children", 100);
    worker.journeys.transition("p-1", "waiting-children", "waiting", worker.clock.set(101));
    worker.journeys.transition("p-1", "waiting", "active", worker.clock.set(102));
    worker.journeys.transition("p-1", "active", "completed", worker.clock.set(103));
    worker.journeys.transition("q-1", "added", "waiting", 100);
    worker.journeys.transition("q-1", "waiting", "active", worker.clock.set(104));
    worker.journeys.transition("q-1", "active", "completed", worker.clock.set(105));
    expect(worker.journeys.explain("p-1")!.waitingState).toBe("waiting-children");
    expect(worker.journeys.explain("q-1")!.waitingState).toBe("");
    await worker.journeys.shutdown();
    const request = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(worker.exporter.getFinishedSpans()));
    const index = new SpanIndex(decodeOtlpJson(request, "spans"));
    expect(breakdownFromSpans(index, "p-1")).toEqual(worker.journeys.explain("p-1"));
    expect(breakdownFromSpans(index, "q-1")!.waitingState).toBe("");

    await journeys.shutdown();
    const spans = exporter.getFinishedSpans();
    const task = spans.find((span) => span.name === "task fetch")!;
    expect(task.attributes["task.outcome"]).toBe("completed");
    expect(task.status.code).not.toBe(SpanStatusCode.ERROR);
    const states = spans
      .filter((span) => span.parentSpanContext?.spanId === task.spanContext().spanId)
      .map((span) => span.name);
    expect(states).toEqual(["waiting", "active", "delayed", "waiting", "active"]);
  });

  it("keepErrors keeps a journey with an attempt left as an error, not one cancelled with a reason", async () => {
    const exporter = new InMemorySpanExporter();
    const journeys = new TaskJourneys({
      role: "worker",
      machine: JOBS,
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
      sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: true },
    });
    journeys.transition("c-1", "added", "waiting-children");
    journeys.transition("c-1", "waiting-children", "removed", undefined, new Error("parent failed"));
    journeys.transition("r-1", "added", "waiting");
    journeys.transition("r-1", "waiting", "active");
    journeys.transition("r-1", "active", "delayed", undefined, new Error("timeout"));
    journeys.transition("r-1", "delayed", "waiting");
    journeys.transition("r-1", "waiting", "active");
    journeys.transition("r-1", "active", "completed");
    await journeys.shutdown();
    const tasks = exporter.getFinishedSpans().filter((span) => span.name.startsWith("task "));
    expect(tasks.map((span) => span.attributes["task.key"])).toEqual(["r-1"]);
  });

  it("a failure state ends the journey as an error: kept, status ERROR; the cancelled one does not", async () => {
    const { exporter, journeys } = setup();
    journeys.transition("a-1", "added", "prioritized", 100);
    journeys.transition("a-1", "prioritized", "active", 101);
    journeys.transition("a-1", "active", "failed", 102);
    journeys.transition("b-1", "added", "waiting-children", 100);
    journeys.transition("b-1", "waiting-children", "removed", 103);
    await journeys.shutdown();
    const tasks = exporter.getFinishedSpans().filter((span) => span.name.startsWith("task "));
    expect(tasks.map((span) => [span.name, span.attributes["task.outcome"], span.status.code])).toEqual([
      ["task a", "failed", SpanStatusCode.ERROR],
      ["task b", "removed", SpanStatusCode.UNSET],
    ]);
    expect(stateMetrics(journeys).time).toEqual({ "a/prioritized": 1, "a/active": 1, "b/waiting-children": 3 });
  });

  it("a move into a cancelled state with a reason names the attempt cancelled, not error, in explain(), the tree and the trace", async () => {
    const { exporter, journeys, clock } = setup("worker");
    journeys.transition("c-1", "added", "waiting-children", 100);
    journeys.transition("c-1", "waiting-children", "removed", clock.set(102), new Error("parent p-9 failed"));
    const explained = journeys.explain("c-1")!;
    expect(explained.outcome).toBe("removed");
    expect(explained.failed).toBeUndefined();
    expect(explained.children.map((node) => [node.name, node.outcome, node.error])).toEqual([
      ["waiting-children", "removed", "Error: parent p-9 failed"],
    ]);
    expect(formatBreakdown(explained)).toContain("removed: Error: parent p-9 failed");
    expect(formatBreakdown(explained)).not.toContain("error:");
    await journeys.shutdown();
    const spans = exporter.getFinishedSpans();
    const visit = spans.find((span) => span.name === "waiting-children")!;
    expect(visit.attributes["task.outcome"]).toBe("removed");
    expect(visit.status.code).not.toBe(SpanStatusCode.ERROR);
    const request = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
    expect(breakdownFromSpans(new SpanIndex(decodeOtlpJson(request, "spans")), "c-1")).toEqual(explained);
  });

  it("a move into the failure state can say why: the failed visit, the task span, explain() and the tree carry it", async () => {
    const { exporter, journeys } = setup();
    journeys.transition("a-1", "added", "waiting", 100);
    journeys.transition("a-1", "waiting", "active", 101);
    journeys.transition("a-1", "active", "failed", 103, "timeout after 2 s");
    journeys.transition("a-2", "added", "waiting", 100);
    journeys.transition("a-2", "waiting", "active", 101);
    journeys.transition("a-2", "active", "failed", 104, new RangeError("no such shard"));
    // A retried attempt says why too (active → delayed); a reason given with a success is counted, not recorded.
    journeys.transition("a-3", "added", "active", 100);
    journeys.transition("a-3", "active", "delayed", 101, "connection reset");
    journeys.transition("a-3", "delayed", "waiting", 102);
    journeys.transition("a-3", "waiting", "active", 103);
    journeys.transition("a-3", "active", "completed", 104, "not a failure");

    const explained = journeys.explain("a-1")!;
    expect(explained.children.map((node) => [node.name, node.seconds, node.outcome, node.error])).toEqual([
      ["waiting", 1, undefined, undefined],
      ["active", 2, "error", "Error: timeout after 2 s"],
    ]);
    expect(formatBreakdown(journeys.explain("a-2")!)).toContain("RangeError: no such shard");
    expect(journeys.explain("a-3")!.children.map((node) => [node.name, node.outcome, node.error])).toEqual([
      ["active", "error", "Error: connection reset"],
      ["delayed", undefined, undefined],
      ["waiting", undefined, undefined],
      ["active", undefined, undefined],
    ]);
    expect(journeys.explain("a-3")!.outcome).toBe("completed");
    await journeys.shutdown();

    const spans = exporter.getFinishedSpans();
    const task = (key: string) => spans.find((span) => span.name === "task a" && span.attributes["task.key"] === key)!;
    expect([task("a-1").status, task("a-2").status]).toEqual([
      { code: SpanStatusCode.ERROR, message: "timeout after 2 s" },
      { code: SpanStatusCode.ERROR, message: "no such shard" },
    ]);
    const active = spans.find(
      (span) => span.name === "active" && span.parentSpanContext?.spanId === task("a-2").spanContext().spanId,
    )!;
    expect(active.attributes).toMatchObject({ "task.outcome": "error", "task.error": "RangeError: no such shard" });
    expect(active.status.code).toBe(SpanStatusCode.ERROR);
    expect(active.events.map((event) => event.name)).toEqual(["exception"]);
    expect(task("a-3").status.code).toBe(SpanStatusCode.UNSET);
    const attempts = spans.filter(
      (span) => span.name === "active" && span.parentSpanContext?.spanId === task("a-3").spanContext().spanId,
    );
    expect(attempts.map((span) => [span.status.code, span.attributes["task.error"]])).toEqual([
      [SpanStatusCode.ERROR, "Error: connection reset"],
      [SpanStatusCode.UNSET, undefined],
    ]);
    expect(journeys.dropped()).toEqual({ "invalid-outcome": 1 });
  });

  it("the execute ledger moves to the executing state and ends in success, failure or the cancelled state", () => {
    const { clock, journeys } = setup("worker");
    const ledger = journeys.execute("a-1");
    clock.advance(2);
    ledger.end();
    journeys.execute("a-2").end("error", new Error("boom"));
    journeys.execute("a-3").end("cancelled");
    expect(journeys.explain("a-1")!.children.map((node) => [node.name, node.seconds])).toEqual([["active", 2]]);
    expect([
      journeys.explain("a-1")!.outcome,
      journeys.explain("a-2")!.outcome,
      journeys.explain("a-3")!.outcome,
    ]).toEqual(["completed", "failed", "removed"]);
    // The tree's first line says a failure state by the machine's own name (not Dask's).
    expect(formatBreakdown(journeys.explain("a-2")!).split("\n")[0]).toMatch(/^a-2 spent .* \(ended in failed\)$/);
    expect(formatBreakdown(journeys.explain("a-1")!).split("\n")[0]).not.toContain("ended in");
    expect(journeys.stats("a")).toMatchObject({ count: 3, min: 0, max: 2 });
    // No transfer state: gather() records nothing, and says so.
    journeys.gather("peer", ["a-4"]).end();
    expect(journeys.dropped()).toEqual({ "no-ledger-state": 1 });
    expect(journeys.explain("a-4")).toBeUndefined();
  });

  it("end() takes the machine's own states: a success, a failure, the cancelled one, and a retry the journey goes on from", async () => {
    const { clock, exporter, journeys } = setup("scheduler");
    const executeSeconds = () => {
      const seconds: Record<string, number> = {};
      for (const metric of journeys.metricProducer.produce([0, 0], [0, 0]))
        if (metric.descriptor.name === "task.execute.time")
          for (const point of metric.dataPoints)
            seconds[point.attributes["task.activity"] as string] = point.value as number;
      return seconds;
    };
    journeys.execute("ok-1").end("completed");
    journeys.execute("gone-1").end("removed");
    journeys.execute("bad-1").end("failed", new Error("no"));
    expect(["ok-1", "gone-1", "bad-1"].map((key) => journeys.explain(key)!.outcome)).toEqual([
      "completed",
      "removed",
      "failed",
    ]);
    // Three attempts in one journey: two fail into the backoff, the third succeeds. The queue's own
    // report of each move the ledger made is harmless, and its error gives a reason the ledger lacked.
    journeys.transition("job-1", "added", "waiting");
    for (const attempt of [1, 2, 3]) {
      clock.advance(1);
      journeys.transition("job-1", "waiting", "active");
      const run = journeys.execute("job-1");
      run.meter("compute", () => clock.advance(attempt));
      if (attempt === 1) run.end("delayed", new Error("flaky 1"));
      if (attempt === 2) run.end("delayed");
      if (attempt === 3) run.end("completed");
      journeys.transition(
        "job-1",
        "active",
        attempt === 3 ? "completed" : "delayed",
        undefined,
        attempt === 2 ? "flaky 2" : undefined,
      );
      if (attempt < 3) {
        clock.advance(0.5);
        journeys.transition("job-1", "delayed", "waiting");
      }
    }
    expect(journeys.dropped()).toEqual({});
    const explained = journeys.explain("job-1")!;
    expect(explained.outcome).toBe("completed");
    expect(explained.children.map((node) => [node.name, node.seconds, node.outcome, node.error])).toEqual([
      ["waiting", 1, undefined, undefined],
      ["active", 1, "error", "Error: flaky 1"],
      ["delayed", 0.5, undefined, undefined],
      ["waiting", 1, undefined, undefined],
      ["active", 2, "error", "Error: flaky 2"],
      ["delayed", 0.5, undefined, undefined],
      ["waiting", 1, undefined, undefined],
      ["active", 3, undefined, undefined],
    ]);
    // Like Dask, an attempt that did not succeed counts its whole time under `failed`.
    // (Of every execution here: the one-liners above took no time.)
    expect(executeSeconds()).toEqual({ failed: 3, compute: 3 });
    // Its span tree says the same: each failed attempt's state span is an ERROR with its reason.
    await journeys.shutdown();
    const spans = exporter.getFinishedSpans();
    const trace = spans.find((span) => span.attributes["task.key"] === "job-1")!.spanContext().traceId;
    const actives = spans.filter(
      (span) =>
        span.spanContext().traceId === trace && span.name === "active" && span.attributes["task.outcome"] === "error",
    );
    expect(actives.map((span) => [span.attributes["task.error"], span.status.code])).toEqual([
      ["Error: flaky 1", SpanStatusCode.ERROR],
      ["Error: flaky 2", SpanStatusCode.ERROR],
    ]);
  });

  it("end() with a name that is no outcome, or a state the executing one does not move to, is counted; a failure only with an error", () => {
    const { journeys } = setup("scheduler");
    journeys.execute("a-1").end("waiting" as never);
    journeys.execute("a-2").end("active" as never);
    journeys.execute("a-3").end("nonsense" as never);
    journeys.execute("a-4").end("nonsense" as never, new Error("it broke"));
    expect(journeys.dropped()).toEqual({ "invalid-outcome": 4 });
    expect(["a-1", "a-2", "a-3", "a-4"].map((key) => journeys.explain(key)!.outcome)).toEqual([
      "completed",
      "completed",
      "completed",
      "failed",
    ]);
  });

  it("a move out of the executing state after a ledger ended the journey says how to keep it going", () => {
    const messages = captureDiag();
    try {
      const { journeys } = setup("scheduler");
      journeys.execute("a-1").end("error", new Error("boom"));
      journeys.transition("a-1", "active", "delayed");
      expect(journeys.dropped()).toEqual({ "stale-transition": 1 });
      expect(messages.join("\n")).toContain("active → delayed of a key whose journey ended in failed: ignored");
      expect(messages.join("\n")).toContain(
        `end the ledger with the state the key goes to, end("delayed", error), or return "delayed" from instrument()'s outcome mapper`,
      );
    } finally {
      diag.disable();
    }
  });

  it("checks moves against its own table; Dask's names are unknown states here", () => {
    const { journeys } = setup();
    journeys.transition("a-1", "added", "waiting", 100);
    journeys.transition("a-1", "waiting", "delayed", 101);
    journeys.transition("a-1", "waiting" as never, "memory" as never, 102);
    journeys.transition("a-2", "waiting", "active", 102);
    expect(journeys.dropped()).toEqual({ "impossible-transition": 1, "unknown-state": 1, "unknown-key": 1 });
    const strict = setup("scheduler", true).journeys;
    expect(() => strict.transition("a-1", "waiting", "active")).toThrow(InvalidTransition);
  });

  it("describe() ends at each of its forgotten states", () => {
    const { journeys } = setup();
    journeys.describe("job-1", { prefix: "fetch" });
    journeys.transition("job-1", "added", "waiting", 100);
    journeys.transition("job-1", "waiting", "active", 101);
    expect(journeys.explain("job-1")!.prefix).toBe("fetch");
    journeys.transition("job-1", "active", "failed", 102);
    journeys.transition("job-1", "added", "waiting", 103);
    expect(journeys.explain("job-1")!.prefix).toBe("job");
  });
});
