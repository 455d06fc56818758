import { describe, expect, it } from "vitest";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { VERSION } from "../../../src/index.js";
import { childOf, find, harness, ORIGIN, render, taskSpan, WORKER, type Harness } from "./helpers.js";

/** From ready: executing at `executeAt` for `executeFor` seconds, then memory. */
function computeTail({ journeys, clock }: Harness, key: string, executeAt: number, executeFor: number) {
  clock.set(executeAt);
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  clock.advance(executeFor);
  ledger.end("memory");
}

describe("span trees of worker journeys", () => {
  it("a plain compute journey: task span, one span per state, activities nested under executing", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-1", "released", "waiting");
    clock.set(102);
    journeys.transition("inc-1", "waiting", "ready");
    clock.set(103);
    journeys.transition("inc-1", "ready", "executing");
    // Live spans are not ended before the journey is.
    expect(exporter.getFinishedSpans()).toEqual([]);
    const ledger = journeys.execute("inc-1");
    ledger.meter("deserialize", () => clock.advance(0.25));
    ledger.meter("unspill", () => {
      clock.advance(0.25);
      ledger.meter("disk-read", () => clock.advance(0.5));
    });
    clock.set(105);
    ledger.digest("thread-cpu", 0.75);
    ledger.digest("thread-noncpu", 0.25);
    clock.set(105.5);
    ledger.end("memory");

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task inc [inc-1@worker] 100-105.5",
      "  waiting 100-102",
      "  ready 102-103",
      "  executing 103-105.5",
      "    deserialize 103-103.25",
      "    unspill 103.25-104",
      "      disk-read 103.5-104",
      "    run 104-105",
    ]);
    // No dependency was fetched: the whole wait is `dependencies`, as in explain().
    expect(find(spans, (span) => span.name === "waiting").attributes).toEqual({ "task.wait.dependencies": 2 });
    const task = find(spans, taskSpan("inc-1"));
    expect(task.attributes).toEqual({
      "task.key": "inc-1",
      "task.prefix": "inc",
      "task.group": "inc",
      "task.worker": WORKER,
      "task.role": "worker",
      "task.outcome": "memory",
    });
    expect(task.parentSpanContext).toBeUndefined();
    expect(task.status.code).toBe(SpanStatusCode.UNSET);
    expect(task.instrumentationScope).toMatchObject({ name: "taskjourney", version: VERSION });
    // Recorded times, exactly, on the epoch of timeOrigin.
    expect(task.startTime).toEqual([ORIGIN + 100, 0]);
    expect(task.endTime).toEqual([ORIGIN + 105, 500_000_000]);
    const run = find(spans, (span) => span.name === "run");
    expect(run.attributes).toEqual({ "thread.cpu_time": 0.75, "thread.noncpu_time": 0.25 });
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(spans.every((span) => span.kind === SpanKind.INTERNAL)).toBe(true);
  });

  it("a reducer with 3 dependencies fetched in 2 transfers from 2 peers", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1", "a-2", "a-3"]);
    for (const key of ["a-1", "a-2", "a-3"]) journeys.transition(key, "released", "fetch");
    clock.set(101);
    const first = journeys.gather("tcp://peer:1", ["a-1", "a-2"], 3000);
    const second = journeys.gather("tcp://peer:2", ["a-3"], 1000);
    first.meter("connect", () => clock.advance(0.5));
    second.meter("connect", () => clock.advance(0.5));
    first.meter("network", () => clock.advance(1));
    first.meter("deserialize", () => clock.advance(0.5));
    first.end("ok");
    second.meter("network", () => clock.advance(1));
    second.end("ok");
    journeys.transition("sum-1", "waiting", "ready");
    computeTail(h, "sum-1", 105, 1);

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task a [a-1@worker] 100-103.5",
      "  fetch 100-101",
      "  flight 101-103.5 → gather_dep [tcp://peer:1 ok]",
      "task a [a-2@worker] 100-103.5",
      "  fetch 100-101",
      "  flight 101-103.5 → gather_dep [tcp://peer:1 ok]",
      "task a [a-3@worker] 100-104.5",
      "  fetch 100-101",
      "  flight 101-104.5 → gather_dep [tcp://peer:2 ok]",
      "task sum [sum-1@worker] 100-106 → task a [a-1@worker], task a [a-2@worker], task a [a-3@worker]",
      "  waiting 100-104.5 → gather_dep [tcp://peer:1 ok], gather_dep [tcp://peer:2 ok]",
      "    gather_dep [tcp://peer:1 ok] CLIENT 101-103.5",
      "      connect 101-101.5",
      "      network 102-103",
      "      deserialize 103-103.5",
      "    gather_dep [tcp://peer:2 ok] CLIENT 101-104.5",
      "      connect 101.5-102",
      "      network 103.5-104.5",
      "  ready 104.5-105",
      "  executing 105-106",
    ]);
    const gather = find(
      spans,
      (span) => span.name === "gather_dep" && span.attributes["transfer.peer"] === "tcp://peer:1",
    );
    expect(gather.attributes).toEqual({
      "transfer.peer": "tcp://peer:1",
      "transfer.keys": ["a-1", "a-2"],
      "transfer.key_count": 2,
      "transfer.bytes": 3000,
      "transfer.outcome": "ok",
    });
    const task = find(spans, taskSpan("sum-1"));
    expect(task.attributes["task.dependencies"]).toBe(3);
    // The waiting span carries explain()'s apportioned breakdown of the wait.
    const waiting = childOf(spans, task, "waiting");
    const explained = journeys.explain("sum-1")!.children[0];
    expect(explained.name).toBe("waiting");
    const waitAttributes = Object.fromEntries(
      Object.entries(waiting.attributes).filter(([name]) => name.startsWith("task.wait.")),
    );
    expect(waitAttributes).toEqual(
      Object.fromEntries(explained.children.map((node) => [`task.wait.${node.name}`, node.seconds])),
    );
    expect(Object.values(waitAttributes).reduce<number>((sum, value) => sum + Number(value), 0)).toBeCloseTo(4.5, 9);
    expect(Object.keys(waitAttributes)).toEqual(
      expect.arrayContaining(["task.wait.network", "task.wait.connect", "task.wait.deserialize"]),
    );
    // The gather_deps are in the reducer's trace; the fetch journeys are traces of their own.
    expect(gather.spanContext().traceId).toBe(task.spanContext().traceId);
    expect(find(spans, taskSpan("a-1")).spanContext().traceId).not.toBe(task.spanContext().traceId);
  });

  it("one dependency serving two waiting dependents: parent under the first, links both ways", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    for (const key of ["x-1", "y-1"]) {
      journeys.transition(key, "released", "waiting");
      journeys.dependencies(key, ["a-1"]);
    }
    journeys.transition("a-1", "released", "fetch");
    clock.set(101);
    const transfer = journeys.gather("tcp://peer:1", ["a-1"], 500);
    transfer.meter("network", () => clock.advance(1));
    transfer.end("ok");
    journeys.transition("x-1", "waiting", "ready");
    journeys.transition("y-1", "waiting", "ready");
    computeTail(h, "x-1", 102.5, 1);
    computeTail(h, "y-1", 102.5, 1);

    expect(render(exporter.getFinishedSpans())).toEqual([
      "task a [a-1@worker] 100-102",
      "  fetch 100-101",
      "  flight 101-102 → gather_dep [tcp://peer:1 ok]",
      "task x [x-1@worker] 100-103.5 → task a [a-1@worker]",
      "  waiting 100-102 → gather_dep [tcp://peer:1 ok]",
      "    gather_dep [tcp://peer:1 ok] CLIENT 101-102 → task y [y-1@worker]",
      "      network 101-102",
      "  ready 102-102.5",
      "  executing 102.5-103.5",
      "task y [y-1@worker] 100-103.5 → task a [a-1@worker]",
      "  waiting 100-102 → gather_dep [tcp://peer:1 ok]",
      "  ready 102-102.5",
      "  executing 102.5-103.5",
    ]);
  });

  it("a failed transfer retried from another peer: both gather_deps under the waiting span, the failed one in error", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1"]);
    journeys.transition("a-1", "released", "fetch");
    clock.set(101);
    const failed = journeys.gather("tcp://peer:1", ["a-1"], 100);
    failed.meter("connect", () => clock.advance(0.5));
    failed.end("failed");
    clock.set(102);
    const retried = journeys.gather("tcp://peer:2", ["a-1"], 100);
    retried.meter("network", () => clock.advance(1));
    retried.end("ok");
    journeys.transition("sum-1", "waiting", "ready");
    computeTail(h, "sum-1", 103.5, 1);

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task a [a-1@worker] 100-103",
      "  fetch 100-101",
      "  flight 101-101.5 ERROR → gather_dep [tcp://peer:1 failed]",
      "  fetch 101.5-102",
      "  flight 102-103 → gather_dep [tcp://peer:2 ok]",
      "task sum [sum-1@worker] 100-104.5 → task a [a-1@worker]",
      "  waiting 100-103 → gather_dep [tcp://peer:1 failed], gather_dep [tcp://peer:2 ok]",
      "    gather_dep [tcp://peer:1 failed] CLIENT 101-101.5 ERROR",
      "      connect 101-101.5",
      "    gather_dep [tcp://peer:2 ok] CLIENT 102-103",
      "      network 102-103",
      "  ready 103-103.5",
      "  executing 103.5-104.5",
    ]);
    // A retried transfer does not fail the task.
    expect(find(spans, taskSpan("sum-1")).status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a task cancelled while executing: outcome cancelled, emitted at once with its ledger closed there, activities cut at the state's end", async () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-1", "released", "waiting");
    clock.set(101);
    journeys.transition("inc-1", "waiting", "ready");
    clock.set(102);
    journeys.transition("inc-1", "ready", "executing");
    const ledger = journeys.execute("inc-1");
    ledger.meter("deserialize", () => clock.advance(0.5));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reading = ledger.meter("disk-read", async () => {
      await gate;
    });
    clock.set(103);
    journeys.transition("inc-1", "executing", "cancelled");
    // The cancellation closed the ledger: the journey's spans are exported now, not when (if ever) the caller ends it.
    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task inc [inc-1@worker] 100-103",
      "  waiting 100-101",
      "  ready 101-102",
      "  executing 102-103",
      "    deserialize 102-102.5",
      "    disk-read 102.5-103",
    ]);
    const task = find(spans, taskSpan("inc-1"));
    expect(task.attributes["task.outcome"]).toBe("cancelled");
    expect(task.status.code).toBe(SpanStatusCode.UNSET);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });

    // The caller's own end, later, changes nothing and is not counted again.
    clock.set(104);
    release();
    await reading;
    clock.set(104.5);
    ledger.end("cancelled");
    expect(exporter.getFinishedSpans()).toHaveLength(6);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
  });

  it("a seceded task: executing then long-running, activities under the visit they were metered in", async () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("big-1", "released", "waiting");
    journeys.transition("big-1", "waiting", "ready");
    clock.set(101);
    journeys.transition("big-1", "ready", "executing");
    const ledger = journeys.execute("big-1");
    await ledger.meter("unspill", async () => {
      clock.set(101.5);
      journeys.transition("big-1", "executing", "long-running");
      // Opened inside unspill but in the next visit: a top-level span of long-running.
      await ledger.meter("disk-read", async () => {
        clock.advance(0.5);
      });
    });
    ledger.meter("seceded", () => clock.advance(1));
    ledger.end("memory");
    expect(render(exporter.getFinishedSpans())).toEqual([
      "task big [big-1@worker] 100-103",
      "  waiting 100-100",
      "  ready 100-101",
      "  executing 101-101.5",
      "    unspill 101-101.5",
      "  long-running 101.5-103",
      "    disk-read 101.5-102",
      "    seceded 102-103",
    ]);
  });

  it("a failed task: span status ERROR and task.outcome error", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-1", "released", "waiting");
    clock.set(101);
    journeys.transition("inc-1", "waiting", "ready");
    journeys.transition("inc-1", "ready", "executing");
    clock.set(102);
    journeys.execute("inc-1").end("error");
    const task = find(exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.status).toEqual({ code: SpanStatusCode.ERROR, message: "task ended in error" });
    expect(task.attributes["task.outcome"]).toBe("error");
    expect(childOf(exporter.getFinishedSpans(), task, "executing").endTime).toEqual([ORIGIN + 102, 0]);
  });
});

describe("span trees of scheduler journeys", () => {
  it("waiting → queued → processing → waiting → no-worker → processing → erred: one span per visit, ERROR status", () => {
    const h = harness({ role: "scheduler", instance: "tcp://scheduler:8786" });
    const { journeys, clock, exporter } = h;
    const steps: Array<[string, string, number]> = [
      ["released", "waiting", 100],
      ["waiting", "queued", 100.5],
      ["queued", "processing", 101],
      ["processing", "waiting", 102],
      ["waiting", "no-worker", 102.25],
      ["no-worker", "processing", 103],
      ["processing", "erred", 104],
    ];
    for (const [from, to, at] of steps) {
      clock.set(at);
      journeys.transition(["x-7f3a", 0], from as never, to as never);
    }
    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task x [('x-7f3a', 0)@scheduler] 100-104 ERROR",
      "  waiting 100-100.5",
      "  queued 100.5-101",
      "  processing 101-102",
      "  waiting 102-102.25",
      "  no-worker 102.25-103",
      "  processing 103-104",
    ]);
    expect(find(spans, taskSpan("('x-7f3a', 0)", "scheduler")).attributes).toEqual({
      "task.key": "('x-7f3a', 0)",
      "task.prefix": "x",
      "task.group": "x-7f3a",
      "task.role": "scheduler",
      "task.outcome": "erred",
    });
  });
  it("a dependency answered busy twice, then fetched in a gather listing it twice: each flight linked to its own transfer, once", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1"]);
    journeys.transition("a-1", "released", "fetch");
    for (const peer of ["tcp://peer:1", "tcp://peer:2"]) {
      clock.set(peer.endsWith("1") ? 101 : 103);
      const busy = journeys.gather(peer, ["a-1"]);
      clock.advance(1);
      busy.end("busy");
    }
    clock.set(105);
    const ledger = journeys.gather("tcp://peer:3", ["a-1", "a-1"], 10);
    ledger.meter("network", () => clock.advance(1));
    ledger.end("ok");
    journeys.transition("sum-1", "waiting", "ready");
    computeTail(h, "sum-1", 107, 1);

    expect(render(exporter.getFinishedSpans())).toEqual([
      "task a [a-1@worker] 100-106",
      "  fetch 100-101",
      "  flight 101-102 → gather_dep [tcp://peer:1 busy]",
      "  fetch 102-103",
      "  flight 103-104 → gather_dep [tcp://peer:2 busy]",
      "  fetch 104-105",
      "  flight 105-106 → gather_dep [tcp://peer:3 ok]",
      "task sum [sum-1@worker] 100-108 → task a [a-1@worker]",
      "  waiting 100-106 → gather_dep [tcp://peer:1 busy], gather_dep [tcp://peer:2 busy], gather_dep [tcp://peer:3 ok]",
      "    gather_dep [tcp://peer:1 busy] CLIENT 101-102",
      "    gather_dep [tcp://peer:2 busy] CLIENT 103-104",
      "    gather_dep [tcp://peer:3 ok] CLIENT 105-106",
      "      network 105-106",
      "  ready 106-107",
      "  executing 107-108",
    ]);
    const flights = journeys.explain("a-1")!.children.filter((child) => child.name === "flight");
    expect(flights.map((flight) => flight.outcome)).toEqual(["busy", "busy", undefined]);
  });
});
