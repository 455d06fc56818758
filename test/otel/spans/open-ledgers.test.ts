import { describe, expect, it } from "vitest";
import { SpanStatusCode } from "@opentelemetry/api";
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  TracerProvider as BasicTracerProvider,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../../src/index.js";
import { internalsOf } from "../../../src/internal.js";
import { keyHashUnit } from "../../../src/model/sampling.js";
import { FakeClock } from "../../helpers/clock.js";
import { childOf, find, harness, ORIGIN, render, taskSpan, type Harness } from "./helpers.js";

/** Seconds the accumulators hold for `activity` of `prefix`'s executions (task.execute.time). */
function executeSeconds({ journeys }: Harness, prefix: string, activity: string): number {
  const recorder = internalsOf(journeys)!.recorder;
  const accumulators = recorder.accumulators;
  return accumulators.executeSeconds[
    accumulators.activityCell(recorder.prefixes.find(prefix), recorder.activityId(activity))
  ];
}

describe("a journey that ends with a ledger still open closes it", () => {
  it("an execute() never ended, then executing → memory: settled as memory at that transition, spans exported, counted once", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-1", "released", "waiting");
    clock.set(101);
    journeys.transition("inc-1", "waiting", "ready");
    journeys.transition("inc-1", "ready", "executing");
    const ledger = journeys.execute("inc-1");
    ledger.meter("deserialize", () => clock.advance(0.25));
    clock.set(102);
    journeys.transition("inc-1", "executing", "memory");

    expect(render(exporter.getFinishedSpans())).toEqual([
      "task inc [inc-1@worker] 100-102",
      "  waiting 100-101",
      "  ready 101-101",
      "  executing 101-102",
      "    deserialize 101-101.25",
    ]);
    expect(find(exporter.getFinishedSpans(), taskSpan("inc-1")).attributes["task.outcome"]).toBe("memory");
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
    // Settled as a successful execution: its activities and the rest as other.
    expect(executeSeconds(h, "inc", "deserialize")).toBe(0.25);
    expect(executeSeconds(h, "inc", "other")).toBe(0.75);
    expect(journeys.explain("inc-1")!.children.map((node) => [node.name, node.seconds])).toEqual([
      ["waiting", 1],
      ["ready", 0],
      ["executing", 1],
    ]);

    // The caller's late meter() and end() run and do nothing more, uncounted.
    expect(ledger.meter("disk-read", () => 7)).toBe(7);
    ledger.end("memory");
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
    expect(executeSeconds(h, "inc", "other")).toBe(0.75);
    expect(exporter.getFinishedSpans()).toHaveLength(5);
  });

  it("executing → error by transition: the open execution is settled as one error lump, the visit marked failed", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("bad-1", "released", "executing");
    journeys.execute("bad-1").meter("deserialize", () => clock.advance(0.5));
    clock.set(102);
    journeys.transition("bad-1", "executing", "error");

    const spans = exporter.getFinishedSpans();
    const task = find(spans, taskSpan("bad-1"));
    expect(task.attributes["task.outcome"]).toBe("error");
    expect(task.status.code).toBe(SpanStatusCode.ERROR);
    expect(childOf(spans, task, "executing").attributes["task.outcome"]).toBe("error");
    expect(executeSeconds(h, "bad", "failed")).toBe(2);
    expect(executeSeconds(h, "bad", "deserialize")).toBe(0);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
  });

  it("two execute() ledgers open on one journey both close at its end", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-2", "released", "executing");
    const first = journeys.execute("inc-2");
    const second = journeys.execute("inc-2");
    clock.set(101);
    journeys.transition("inc-2", "executing", "released");
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 2 });
    expect(executeSeconds(h, "inc", "cancelled")).toBe(2);
    first.end("memory");
    second.end("memory");
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 2 });
    expect(render(exporter.getFinishedSpans())).toEqual(["task inc [inc-2@worker] 100-101", "  executing 100-101"]);
  });

  it("a gather() never ended whose only key is cancelled: the transfer closes as cancelled and its gather_dep span is exported", () => {
    const h = harness();
    const { journeys, clock, exporter } = h;
    journeys.transition("x-1", "released", "fetch");
    const transfer = journeys.gather("tcp://peer:1", ["x-1"], 4096);
    transfer.meter("network", () => clock.advance(0.5));
    clock.set(101);
    journeys.transition("x-1", "flight", "cancelled");

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task x [x-1@worker] 100-101",
      "  fetch 100-100",
      "  flight 100-101 → gather_dep [tcp://peer:1 cancelled]",
      "    gather_dep [tcp://peer:1 cancelled] CLIENT 100-101",
      "      network 100-100.5",
    ]);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
    // Settled as a cancelled transfer: one lump of its wall time.
    const accumulators = internalsOf(journeys)!.recorder.accumulators;
    expect(Array.from(accumulators.transfers)).toEqual([0, 0, 0, 0, 1]);
    transfer.end("ok");
    expect(Array.from(accumulators.transfers)).toEqual([0, 0, 0, 0, 1]);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 1 });
  });

  it("a gather() of two keys, one cancelled: the transfer goes on, uncounted, and its end moves the other key on", () => {
    const { journeys, clock, exporter } = harness();
    journeys.transition("x-1", "released", "fetch");
    journeys.transition("x-2", "released", "fetch");
    const transfer = journeys.gather("tcp://peer:1", ["x-1", "x-2"], 4096);
    clock.set(101);
    journeys.transition("x-1", "flight", "cancelled");
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(["fetch", "flight", "task x"]);
    clock.set(102);
    transfer.end("ok");
    expect(journeys.dropped()).toEqual({});
    const spans = exporter.getFinishedSpans();
    expect(find(spans, taskSpan("x-2")).attributes["task.outcome"]).toBe("memory");
    expect(find(spans, (span) => span.name === "gather_dep").attributes["transfer.outcome"]).toBe("ok");
  });

  it("10,000 journeys whose execute() is never ended, at ratio 0.1: every sampled one's spans reach a BatchSpanProcessor's exporter", async () => {
    const clock = new FakeClock(100);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 100_000, maxExportBatchSize: 512 })],
    });
    const journeys = new TaskJourneys({
      role: "worker",
      clock: clock.now,
      timeOrigin: ORIGIN,
      tracerProvider: provider,
      sampling: { ratio: 0.1, keepSlowerThan: 0, keepErrors: false },
    });
    let sampled = 0;
    for (let i = 0; i < 10_000; i++) {
      const key = `inc-${i}`;
      if (keyHashUnit(key) < 0.1) sampled++;
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      journeys.execute(key).meter("deserialize", () => clock.advance(0.001));
      journeys.transition(key, "executing", "memory");
    }
    await provider.forceFlush();
    const tasks = exporter.getFinishedSpans().filter((span) => span.name === "task inc");
    expect(sampled).toBeGreaterThan(900);
    expect(tasks).toHaveLength(sampled);
    // Each: task, waiting, ready, executing and its deserialize span.
    expect(exporter.getFinishedSpans()).toHaveLength(5 * sampled);
    expect(journeys.dropped()).toEqual({ "ledger-open-at-end": 10_000 });
    expect(internalsOf(journeys)!.recorder.live.size).toBe(0);
    await provider.shutdown();
  });
});
