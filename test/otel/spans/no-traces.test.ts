import { afterEach, describe, expect, it } from "vitest";
import { ProxyTracerProvider, trace } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys, type TaskJourneysOptions } from "../../../src/index.js";
import { internalsOf } from "../../../src/internal.js";
import { FakeClock } from "../../helpers/clock.js";
import { CountingTracerProvider } from "./helpers.js";

const SAMPLED = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };

/** Journeys every one of which would be a span tree (ratio 1, failures kept): compute, fetch, failed. */
function record(options: TaskJourneysOptions): TaskJourneys {
  const clock = new FakeClock(1);
  const journeys = new TaskJourneys({
    clock: clock.now,
    sampling: { ratio: 1, keepSlowerThan: 0.5, keepErrors: true },
    ...options,
  });
  for (let i = 0; i < 20; i++) {
    journeys.transition(`f-${i}`, "released", "fetch");
    journeys.gather("tcp://peer", [`f-${i}`]).end("ok");
    journeys.transition(`x-${i}`, "released", "waiting");
    journeys.transition(`x-${i}`, "waiting", "ready");
    const ledger = journeys.execute(`x-${i}`);
    ledger.meter("deserialize", () => clock.advance(0.1));
    clock.advance(i * 0.01);
    ledger.end(i % 3 === 0 ? "error" : "memory", new Error("boom"));
  }
  return journeys;
}

afterEach(() => trace.disable());

describe("no work for nothing: no spans when they would go nowhere", () => {
  it("traces: false starts no span, samples no journey, and propagates nothing", async () => {
    const exporter = new InMemorySpanExporter();
    const counting = new CountingTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    const journeys = record({ tracerProvider: counting, traces: false });
    expect(journeys.parent("y-1", SAMPLED)).toBe(false);
    journeys.transition("y-1", "released", "waiting");
    expect(internalsOf(journeys)!.recorder.live.get("y-1")?.sampled).toBe(false);
    expect(journeys.inject("x-1", {})).toBe(false);
    expect(journeys.linkFrom("x-1", SAMPLED)).toBe(false);
    await journeys.shutdown();
    expect(counting.starts).toBe(0);
    expect(exporter.getFinishedSpans()).toEqual([]);
    // The metrics and explain() are all there.
    expect(journeys.stats("x", "executing").count).toBe(20);
    expect(journeys.explain("x-4")?.outcome).toBe("memory");
    expect(journeys.explain("x-3")?.outcome).toBe("error");
  });

  it("the global provider with no SDK registered, or the API's no-op provider, makes no spans", async () => {
    trace.disable();
    for (const options of [
      {},
      { tracerProvider: new ProxyTracerProvider() },
      { tracerProvider: new ProxyTracerProvider().getDelegate() },
    ]) {
      const journeys = record(options);
      expect(journeys.parent("y-1", SAMPLED)).toBe(false);
      journeys.transition("y-1", "released", "waiting");
      expect(internalsOf(journeys)!.recorder.live.get("y-1")?.sampled).toBe(false);
      await journeys.shutdown();
    }
  });

  it("journeys made before an SDK registers behind the global provider (NodeSDK's order) trace from its registration on", async () => {
    trace.disable();
    const clock = new FakeClock(1);
    const journeys = new TaskJourneys({
      clock: clock.now,
      sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
    });
    const run = (key: string) => {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.execute(key).end("memory");
    };
    run("before-1");
    expect(journeys.inject("before-1", {})).toBe(false);
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
    run("after-1");
    const carrier: Record<string, string> = {};
    expect(journeys.inject("after-1", carrier)).toBe(true);
    await journeys.shutdown();
    const tasks = exporter
      .getFinishedSpans()
      .filter((span) => span.name === "task before" || span.name === "task after");
    expect(tasks.map((span) => span.attributes["task.key"])).toEqual(["after-1"]);
    expect(carrier.traceparent).toContain(tasks[0].spanContext().traceId);
  });

  it("a registered SDK provider, through the global proxy, still gets its spans", async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
    const journeys = record({});
    await journeys.shutdown();
    expect(exporter.getFinishedSpans().filter((span) => span.name === "task x")).toHaveLength(20);
  });
});
