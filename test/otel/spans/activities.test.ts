import { describe, expect, it } from "vitest";
import { ROOT_CONTEXT, trace, type Context } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../../src/index.js";
import { FakeClock } from "../../helpers/clock.js";
import { childOf, find, harness, ORIGIN, render, taskSpan } from "./helpers.js";

/**
 * Activity spans are emitted at the journey's end from the recorder's flat records; these pin what
 * the nesting, the caps under an activity and the digests inside one make of them, and the order
 * in which they end (children before their parent, so an exporter sees no orphan).
 */
describe("activity spans", () => {
  it("caps children under an activity, counted on it; a capped activity's children go with it; nested digests become attributes", () => {
    const h = harness({ maxChildrenPerSpan: 3 });
    const { journeys, clock, exporter } = h;
    journeys.transition("inc-1", "released", "waiting");
    clock.set(101);
    journeys.transition("inc-1", "waiting", "ready");
    clock.set(102);
    journeys.transition("inc-1", "ready", "executing");
    const ledger = journeys.execute("inc-1");
    ledger.meter("unspill", () => {
      ledger.meter("disk-read", () => clock.advance(0.25));
      ledger.digest("thread-cpu", 0.125);
      ledger.meter("deserialize", () => clock.advance(0.25));
      ledger.meter("serialize", () => clock.advance(0.25));
      // The fourth child of unspill: capped away, and its own child with it.
      ledger.meter("disk-write", () => {
        ledger.meter("serialize", () => clock.advance(0.25));
      });
      ledger.digest("thread-noncpu", 0.0625);
    });
    ledger.meter("spill", () => clock.advance(0.25));
    ledger.meter("network", () => clock.advance(0.25));
    // The fourth child of executing: capped away too.
    ledger.meter("connect", () => clock.advance(0.25));
    clock.set(104);
    ledger.end("memory");

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task inc [inc-1@worker] 100-104",
      "  waiting 100-101",
      "  ready 101-102",
      "  executing 102-104",
      "    unspill 102-103",
      "      disk-read 102-102.25",
      "      deserialize 102.25-102.5",
      "      serialize 102.5-102.75",
      "    spill 103-103.25",
      "    network 103.25-103.5",
    ]);
    const executing = find(spans, (span) => span.name === "executing");
    const unspill = childOf(spans, executing, "unspill");
    expect(executing.attributes).toEqual({ "taskjourney.children_dropped": 1 });
    expect(unspill.attributes).toEqual({
      "taskjourney.children_dropped": 1,
      "thread.cpu_time": 0.125,
      "thread.noncpu_time": 0.0625,
    });
    expect(unspill.endTime).toEqual([ORIGIN + 103, 0]);
    // Children end before their parents: the exporter receives each span after its descendants.
    const order = spans.map((span) => span.name);
    expect(order.indexOf("disk-read")).toBeLessThan(order.indexOf("unspill"));
    expect(order.indexOf("deserialize")).toBeLessThan(order.indexOf("unspill"));
    expect(order.indexOf("serialize")).toBeLessThan(order.indexOf("unspill"));
    expect(order.indexOf("unspill")).toBeLessThan(order.indexOf("executing"));
    expect(order.indexOf("executing")).toBeLessThan(order.indexOf(find(spans, taskSpan("inc-1")).name));
  });

  it("a journey ended from a span processor while activity spans are being emitted keeps both trees whole", () => {
    const exporter = new InMemorySpanExporter();
    const clock = new FakeClock(100);
    let nested = false;
    // Ends another journey, with activities of its own, in the middle of the first one's.
    const meddler: SpanProcessor = {
      onStart(span: Span, _parent: Context) {
        if (nested || span.name !== "disk-read") return;
        nested = true;
        const other = journeys.execute("sum-1");
        other.meter("deserialize", () => clock.advance(0.125));
        other.meter("serialize", () => clock.advance(0.125));
        other.end("memory");
      },
      onEnd: (_span: ReadableSpan) => {},
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const provider = new BasicTracerProvider({
      spanProcessors: [meddler, new SimpleSpanProcessor({ exporter: exporter })],
    });
    const journeys = new TaskJourneys({
      role: "worker",
      clock: clock.now,
      timeOrigin: ORIGIN,
      tracerProvider: provider,
      sampling: { ratio: 1 },
    });
    for (const key of ["inc-1", "sum-1"]) {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
    }
    clock.set(101);
    const ledger = journeys.execute("inc-1");
    ledger.meter("unspill", () => {
      ledger.meter("disk-read", () => clock.advance(0.25));
      ledger.meter("deserialize", () => clock.advance(0.25));
    });
    ledger.meter("serialize", () => clock.advance(0.25));
    clock.set(102);
    ledger.end("memory");

    const spans = exporter.getFinishedSpans();
    const tree = (key: string) =>
      render(spans.filter((span) => span.spanContext().traceId === find(spans, taskSpan(key)).spanContext().traceId));
    expect(tree("inc-1")).toEqual([
      "task inc [inc-1@worker] 100-102",
      "  ready 100-100",
      "  waiting 100-100",
      "  executing 100-102",
      "    unspill 101-101.5",
      "      disk-read 101-101.25",
      "      deserialize 101.25-101.5",
      "    serialize 101.5-101.75",
    ]);
    expect(tree("sum-1")).toEqual([
      "task sum [sum-1@worker] 100-102.25",
      "  ready 100-100",
      "  waiting 100-100",
      "  executing 100-102.25",
      "    deserialize 102-102.125",
      "    serialize 102.125-102.25",
    ]);
  });

  it("digests in a ledger ended at an earlier `at` keep their seconds on the span, as explain() has them (execute with `at` too)", () => {
    // The clock reads 110 when the digests are taken; the queue's own times end the execution at
    // 103. The digests' intervals (ending at 110) lie past the state's end: clamped, they lasted
    // 0 s, and the spans said thread.cpu_time 0 where explain() had 0.5.
    for (const executeAt of [false, true]) {
      const { journeys, clock, exporter } = harness();
      clock.set(110);
      journeys.transition("inc-1", "released", "waiting", { at: 100 });
      journeys.transition("inc-1", "waiting", "ready", { at: 101 });
      if (!executeAt) journeys.transition("inc-1", "ready", "executing", { at: 102 });
      const ledger = journeys.execute("inc-1", { at: 102 });
      ledger.digest("thread-cpu", 0.5);
      ledger.digest("thread-noncpu", 0.125);
      ledger.meter("work", () => ledger.digest("thread-cpu", 0.25));
      ledger.end("memory", { at: 103 });
      const spans = exporter.getFinishedSpans();
      expect(render(spans)).toEqual([
        "task inc [inc-1@worker] 100-103",
        "  waiting 100-101",
        "  ready 101-102",
        "  executing 102-103",
        // Within the state: ending at its end, lasting the digests' sum.
        "    run 102.375-103",
        "    work 103-103",
      ]);
      const attributes = (name: string) => find(spans, (span) => span.name === name).attributes;
      expect(attributes("run")["thread.cpu_time"]).toBe(0.5);
      expect(attributes("run")["thread.noncpu_time"]).toBe(0.125);
      expect(attributes("work")["thread.cpu_time"]).toBe(0.25);
      const executing = journeys.explain("inc-1")!.children.find((state) => state.name === "executing")!;
      const seconds = (name: string) => executing.children.find((activity) => activity.name === name)?.seconds;
      expect(seconds("thread-cpu")).toBe(0.5);
      expect(seconds("thread-noncpu")).toBe(0.125);
    }
  });

  it("a span processor that writes to a parent context it is given gets a context holding the parent span", () => {
    const exporter = new InMemorySpanExporter();
    const written: Array<string | undefined> = [];
    const key = Symbol("test key");
    const writer: SpanProcessor = {
      onStart(span: Span, parent: Context) {
        if (span.name !== "executing") return;
        const context = parent.setValue(key, "value");
        written.push(
          context.getValue(key) as string,
          (trace.getSpan(context) as unknown as ReadableSpan | undefined)?.name,
        );
        written.push(trace.getSpan(parent.deleteValue(key)) === trace.getSpan(parent) ? "same span" : "other span");
        written.push(
          parent.getValue(key) === undefined && ROOT_CONTEXT.getValue(key) === undefined ? "unchanged" : "changed",
        );
      },
      onEnd: (_span: ReadableSpan) => {},
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const provider = new BasicTracerProvider({
      spanProcessors: [writer, new SimpleSpanProcessor({ exporter: exporter })],
    });
    const journeys = new TaskJourneys({ role: "worker", tracerProvider: provider, sampling: { ratio: 1 } });
    journeys.transition("inc-1", "released", "waiting");
    journeys.transition("inc-1", "waiting", "ready");
    journeys.transition("inc-1", "ready", "executing");
    journeys.transition("inc-1", "executing", "memory");
    expect(written).toEqual(["value", "task inc", "same span", "unchanged"]);
  });
});
