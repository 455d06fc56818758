import { afterEach, describe, expect, it } from "vitest";
import { context, ROOT_CONTEXT, trace, TraceFlags, createTraceState } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  extractSpanContext,
  formatTime,
  formatTraceparent,
  parseTraceparent,
  timeOf,
  withoutOurState,
} from "../../src/otel/propagation.js";
import { CountingTracerProvider, find, harness, ORIGIN, render, taskSpan, WORKER } from "./spans/helpers.js";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";
import { SpanIds } from "../../src/otel/span-ids.js";
import { FakeClock } from "../helpers/clock.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("W3C traceparent", () => {
  it("parses and formats version 00", () => {
    const parsed = parseTraceparent(`00-${TRACE}-${SPAN}-01`, "vendor=value");
    expect(parsed).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(parsed!.traceState!.get("vendor")).toBe("value");
    expect(formatTraceparent(parsed!)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 0 })).toBe(`00-${TRACE}-${SPAN}-00`);
  });

  it("accepts later versions with extra fields, rejects malformed headers", () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-extra`)?.spanId).toBe(SPAN);
    for (const bad of [
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}`,
      `00_${TRACE}-${SPAN}-01`,
      "",
    ]) {
      expect(parseTraceparent(bad), bad).toBeUndefined();
    }
    expect(extractSpanContext({})).toBeUndefined();
    expect(extractSpanContext(null)).toBeUndefined();
    expect(extractSpanContext({ traceparent: [`00-${TRACE}-${SPAN}-00`] })?.traceFlags).toBe(0);
  });
});

describe("our time members (taskjourney-end, taskjourney-start)", () => {
  const withState = (tracestate: string) => parseTraceparent(`00-${TRACE}-${SPAN}-01`, tracestate)!;

  it("reads what it writes; undefined without one; null (never a throw) for one that is not one", () => {
    expect(formatTime([1_712_345_700, 125_640_000])).toBe("1712345700:125640000");
    for (const member of ["taskjourney-end", "taskjourney-start"]) {
      const other = member === "taskjourney-end" ? "taskjourney-start" : "taskjourney-end";
      expect(timeOf(withState(`${member}=1712345700:125640000,other=1`), member)).toEqual([1_712_345_700, 125_640_000]);
      expect(timeOf(withState(`${other}=1712345700:125640000,other=1`), member)).toBeUndefined();
      expect(timeOf(withState("other=1"), member)).toBeUndefined();
      expect(timeOf(parseTraceparent(`00-${TRACE}-${SPAN}-01`)!, member)).toBeUndefined();
      // (An empty value is no member at all: W3C's grammar, and the API's parser drops it.)
      for (const bad of ["x", "1:", ":1", "1:2:3", "1.5:0", "-1:0", "1:1000000000", "99999999999999999:0", "1e9:0"])
        expect(timeOf(withState(`${member}=${bad},other=1`), member), bad).toBeNull();
    }
  });

  it("withoutOurState() drops our members (state, hand-off, start, end), keeps the others, and gives the same object when there are none", () => {
    const ours = withState(
      "taskjourney-end=1:2,taskjourney=00f067aa0ba902b7,taskjourney-start=1:0,taskjourney-handoff=1:0:2:0:x,other=1",
    );
    expect(withoutOurState(ours).traceState?.serialize()).toBe("other=1");
    expect(withoutOurState(ours).spanId).toBe(SPAN);
    const theirs = withState("other=1");
    expect(withoutOurState(theirs)).toBe(theirs);
  });
});

describe("context propagation between TaskJourneys instances", () => {
  it("scheduler → worker: the worker journey nests under the scheduler's task span, linked to its processing span, one trace", () => {
    const exporter = new InMemorySpanExporter();
    // The worker's ratio is 0: the sampled trace flags of the compute-task message decide.
    const scheduler = harness({ role: "scheduler", instance: "tcp://scheduler:8786" }, exporter);
    const worker = harness({ sampling: { ratio: 0 } }, exporter, scheduler.clock);
    const clock = scheduler.clock;

    scheduler.journeys.transition("inc-1", "released", "waiting");
    clock.set(100.5);
    scheduler.journeys.transition("inc-1", "waiting", "processing");
    const message: Record<string, string> = {};
    expect(scheduler.journeys.inject("inc-1", message)).toBe(true);
    expect(message.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    // The state span it was made in, and when the task span started (the journey began at 100).
    expect(message.tracestate).toMatch(/^taskjourney=[0-9a-f]{16},taskjourney-start=1700000100:0$/);

    clock.set(101);
    expect(worker.journeys.parent("inc-1", message)).toBe(true);
    worker.journeys.transition("inc-1", "released", "waiting");
    worker.journeys.transition("inc-1", "waiting", "ready");
    clock.set(101.5);
    worker.journeys.transition("inc-1", "ready", "executing");
    // On a worker, inject() names the task span (live here), for the data it will serve.
    const live: Record<string, string> = {};
    expect(worker.journeys.inject("inc-1", live)).toBe(true);
    clock.set(102.5);
    worker.journeys.execute("inc-1").end("memory");
    clock.set(103);
    scheduler.journeys.transition("inc-1", "processing", "memory");

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task inc [inc-1@scheduler] 100-103",
      "  waiting 100-100.5",
      "  processing 100.5-103",
      "  task inc [inc-1@worker] 101-102.5 → processing",
      "    waiting 101-101",
      "    ready 101-101.5",
      "    executing 101.5-102.5",
    ]);
    const workerTask = find(spans, taskSpan("inc-1", "worker"));
    expect(live.traceparent).toBe(`00-${workerTask.spanContext().traceId}-${workerTask.spanContext().spanId}-01`);
    expect(workerTask.parentSpanContext).toMatchObject({ isRemote: true, spanId: message.traceparent.slice(36, 52) });
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(
      new Set([message.traceparent.slice(3, 35)]),
    );
    const schedulerTask = find(spans, taskSpan("inc-1", "scheduler"));
    expect(schedulerTask.attributes["task.worker"]).toBeUndefined();
    // The task span covers the worker's journey (the state span the carrier was made in need
    // not): the worker nests under it and links to the processing span.
    expect(workerTask.parentSpanContext?.spanId).toBe(schedulerTask.spanContext().spanId);
    const processing = spans.find((span) => span.name === "processing")!;
    expect(workerTask.links.map((link) => link.context.spanId)).toEqual([processing.spanContext().spanId]);
    expect(message.tracestate).toBe(`taskjourney=${processing.spanContext().spanId},taskjourney-start=1700000100:0`);
    // Our tracestate members do not travel on to the worker's own spans and carriers.
    expect(workerTask.spanContext().traceState?.get("taskjourney")).toBeUndefined();
    expect(workerTask.spanContext().traceState?.get("taskjourney-start")).toBeUndefined();
    // The worker's own carrier names its own state span: executing, when it was made.
    const executing = spans.find((span) => span.name === "executing")!;
    expect(live.tracestate).toBe(`taskjourney=${executing.spanContext().spanId},taskjourney-start=1700000101:0`);
  });

  it("an unsampled journey hands out ids flagged not sampled; an unsampled context neither parents nor samples a journey not kept", () => {
    const scheduler = harness({ role: "scheduler", sampling: { ratio: 0, keepErrors: false } });
    scheduler.journeys.transition("inc-1", "released", "waiting");
    scheduler.journeys.transition("inc-1", "waiting", "processing");
    const message: Record<string, string> = {};
    expect(scheduler.journeys.inject("inc-1", message)).toBe(true);
    expect(message.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(message.tracestate).toBeUndefined();

    const worker = harness({ sampling: { ratio: 0, keepErrors: false } });
    expect(worker.journeys.parent("inc-1", message)).toBe(true);
    expect(worker.journeys.parent("inc-2", { traceparent: "garbage" })).toBe(false);
    worker.journeys.transition("inc-1", "released", "waiting");
    worker.journeys.transition("inc-1", "waiting", "ready");
    worker.journeys.execute("inc-1").end("error");
    scheduler.journeys.transition("inc-1", "processing", "erred");
    // Neither journey was kept: the span inject() started for the ids is never ended or exported.
    expect(worker.counting.starts).toBe(0);
    expect(scheduler.counting.starts).toBe(1);
    expect(scheduler.exporter.getFinishedSpans()).toEqual([]);
    expect(worker.exporter.getFinishedSpans()).toEqual([]);
    // After an unkept journey there is nothing to name.
    expect(scheduler.journeys.inject("inc-1", {})).toBe(false);
  });

  it("with ids chosen by taskjourney, an unsampled journey starts no span for inject(); kept, its task span has the ids and links to a context that came late", () => {
    const ids = new SpanIds();
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
      idGenerator: ids,
    });
    const counting = new CountingTracerProvider(provider);
    const clock = new FakeClock(100);
    const worker = new TaskJourneys({
      role: "worker",
      instance: WORKER,
      clock: clock.now,
      timeOrigin: ORIGIN,
      tracerProvider: counting,
      sampling: { ratio: 0, keepErrors: true },
    });
    internalsOf(worker)!.spans.useIds(ids);
    worker.transition("inc-1", "released", "waiting");
    const carrier: Record<string, string> = {};
    expect(worker.inject("inc-1", carrier)).toBe(true);
    expect(carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(counting.starts).toBe(0);
    expect(worker.parent("inc-1", { traceparent: `00-${TRACE}-${SPAN}-01` })).toBe(false);
    worker.transition("inc-1", "waiting", "ready");
    worker.execute("inc-1").end("error");
    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task inc [inc-1@worker] 100-100 ERROR → external 00f067aa0ba902b7",
      "  executing 100-100 ERROR",
      "  ready 100-100",
      "  waiting 100-100",
    ]);
    const task = find(spans, taskSpan("inc-1"));
    expect(`00-${task.spanContext().traceId}-${task.spanContext().spanId}-00`).toBe(carrier.traceparent);
    expect(task.links.map((link) => link.context.spanId)).toEqual([SPAN]);
  });

  it("a context arriving after the journey began is linked, not parented", () => {
    const worker = harness();
    worker.journeys.transition("inc-1", "released", "waiting");
    expect(worker.journeys.parent("inc-1", { traceparent: `00-${TRACE}-${SPAN}-01` })).toBe(false);
    worker.journeys.transition("inc-1", "waiting", "ready");
    worker.journeys.transition("inc-1", "ready", "executing");
    worker.journeys.execute("inc-1").end("memory");
    const task = find(worker.exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.parentSpanContext).toBeUndefined();
    expect(task.links.map((link) => link.context.spanId)).toEqual([SPAN]);
  });

  it("extract() gives a Context that parent() accepts as well as a carrier", () => {
    const worker = harness({ sampling: { ratio: 0 } });
    const extracted = worker.journeys.extract({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "a=b" })!;
    expect(trace.getSpanContext(extracted)).toMatchObject({ traceId: TRACE, spanId: SPAN, isRemote: true });
    expect(worker.journeys.extract({})).toBeUndefined();
    expect(worker.journeys.parent("inc-1", extracted)).toBe(true);
    worker.journeys.transition("inc-1", "released", "waiting");
    worker.journeys.transition("inc-1", "waiting", "ready");
    worker.journeys.transition("inc-1", "ready", "executing");
    worker.journeys.execute("inc-1").end("memory");
    const task = find(worker.exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.spanContext().traceId).toBe(TRACE);
    expect(task.parentSpanContext?.spanId).toBe(SPAN);
    expect(task.spanContext().traceState?.get("a")).toBe("b");
  });

  it("producer → consumer: data carries the producer journey's context, the consumer's task spans link to it", () => {
    const exporter = new InMemorySpanExporter();
    const producer = harness({ instance: "tcp://10.0.0.8:40001" }, exporter);
    const consumer = harness({}, exporter, producer.clock);
    const clock = producer.clock;

    producer.journeys.transition("x-1", "released", "waiting");
    producer.journeys.transition("x-1", "waiting", "ready");
    producer.journeys.transition("x-1", "ready", "executing");
    clock.set(101);
    producer.journeys.execute("x-1").end("memory");

    consumer.journeys.transition("sum-1", "released", "waiting");
    consumer.journeys.dependencies("sum-1", ["x-1"]);
    consumer.journeys.transition("x-1", "released", "fetch");
    clock.set(102);
    const transfer = consumer.journeys.gather("tcp://10.0.0.8:40001", ["x-1"], 100);
    // The producer answers get_data after x-1's journey ended: its recent task span travels.
    const response: Record<string, string> = {};
    expect(producer.journeys.inject("x-1", response)).toBe(true);
    expect(consumer.journeys.linkFrom("x-1", response)).toBe(true);
    clock.set(103);
    transfer.end("ok");
    consumer.journeys.transition("sum-1", "waiting", "ready");
    consumer.journeys.transition("sum-1", "ready", "executing");
    clock.set(104);
    consumer.journeys.execute("sum-1").end("memory");

    const spans = exporter.getFinishedSpans();
    const produced = find(
      spans,
      (span) => span.name === "task x" && span.attributes["task.worker"] === "tcp://10.0.0.8:40001",
    );
    expect(response.traceparent).toBe(`00-${produced.spanContext().traceId}-${produced.spanContext().spanId}-01`);
    // When the producer's span ended (for a result going back); the links made from it do not keep it.
    expect(response.tracestate).toBe(`taskjourney-end=${produced.endTime[0]}:${produced.endTime[1]}`);
    const reducer = find(spans, taskSpan("sum-1"));
    expect(reducer.links.map((link) => link.context.spanId)).toEqual([produced.spanContext().spanId]);
    expect(reducer.links.map((link) => link.context.traceState?.serialize() ?? "")).toEqual([""]);
    const fetched = find(
      spans,
      (span) => span.name === "task x" && span.attributes["task.worker"] !== "tcp://10.0.0.8:40001",
    );
    expect(fetched.links.map((link) => link.context.spanId)).toEqual([produced.spanContext().spanId]);
    expect(reducer.spanContext().traceId).not.toBe(produced.spanContext().traceId);
  });

  describe("submissions under an active client span", () => {
    let manager: AsyncLocalStorageContextManager | undefined;
    afterEach(() => {
      manager?.disable();
      context.disable();
    });

    it("a scheduler journey started under a client span links to it, and is not its child", () => {
      manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
      const scheduler = harness({ role: "scheduler" });
      const client = scheduler.provider.getTracer("client").startSpan("submit graph", {}, ROOT_CONTEXT);
      context.with(trace.setSpan(ROOT_CONTEXT, client), () => {
        scheduler.journeys.transition("inc-1", "released", "waiting");
      });
      scheduler.journeys.transition("inc-2", "released", "waiting");
      client.end();
      for (const key of ["inc-1", "inc-2"]) {
        scheduler.journeys.transition(key, "waiting", "processing");
        scheduler.journeys.transition(key, "processing", "memory");
      }
      const spans = scheduler.exporter.getFinishedSpans();
      const linked = find(spans, taskSpan("inc-1", "scheduler"));
      expect(linked.parentSpanContext).toBeUndefined();
      expect(linked.links.map((link) => link.context.spanId)).toEqual([client.spanContext().spanId]);
      expect(linked.spanContext().traceId).not.toBe(client.spanContext().traceId);
      expect(find(spans, taskSpan("inc-2", "scheduler")).links).toEqual([]);
    });

    it("a worker journey, parented from the scheduler, keeps tracestate and ignores the active span", () => {
      manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
      const worker = harness();
      const active = worker.provider.getTracer("user").startSpan("handler", {}, ROOT_CONTEXT);
      const parent = { ...{ traceparent: `00-${TRACE}-${SPAN}-01` }, tracestate: createTraceState("k=v").serialize() };
      worker.journeys.parent("inc-1", parent);
      context.with(trace.setSpan(ROOT_CONTEXT, active), () =>
        worker.journeys.transition("inc-1", "released", "waiting"),
      );
      context.with(trace.setSpan(ROOT_CONTEXT, active), () =>
        worker.journeys.transition("inc-2", "released", "waiting"),
      );
      active.end();
      for (const key of ["inc-1", "inc-2"]) {
        worker.journeys.transition(key, "waiting", "ready");
        worker.journeys.transition(key, "ready", "executing");
        worker.journeys.execute(key).end("memory");
      }
      const spans = worker.exporter.getFinishedSpans();
      expect(find(spans, taskSpan("inc-1")).parentSpanContext?.spanId).toBe(SPAN);
      expect(find(spans, taskSpan("inc-1")).spanContext().traceState?.get("k")).toBe("v");
      // Not nested under whatever span happened to be active, not linked either (worker role).
      expect(find(spans, taskSpan("inc-2")).parentSpanContext).toBeUndefined();
      expect(find(spans, taskSpan("inc-2")).links).toEqual([]);
    });
  });
});
