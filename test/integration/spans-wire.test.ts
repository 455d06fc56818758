/**
 * Span trees over the wire: two TaskJourneys (a scheduler and a worker, one process each in real
 * life) → BatchSpanProcessor → OTLP/HTTP trace exporters (protobuf for the scheduler, JSON for
 * the worker) → @elastic/mockotlpserver, which decodes the requests with the OTLP protos. Checks
 * what a Collector or Jaeger would receive: parents across services, span kinds, links, status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { TracerProvider as BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { startMockOtlp, type MockOtlp, type OtlpSpan } from "./mockotlp.js";

const ORIGIN = 1_700_000_000;

interface WireSpan extends OtlpSpan {
  service: string;
  kind: string;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: string | number };
  startTimeUnixNano: string | number;
}

let server: MockOtlp;
beforeAll(async () => {
  server = await startMockOtlp();
});
afterAll(async () => {
  await server?.close();
});

function received(): WireSpan[] {
  const spans: WireSpan[] = [];
  for (const request of server.traces) {
    for (const resourceSpans of request.resourceSpans) {
      const service = String(resourceSpans.resource?.attributes?.["service.name"]);
      for (const scopeSpans of resourceSpans.scopeSpans) {
        for (const span of scopeSpans.spans) spans.push({ ...(span as WireSpan), service });
      }
    }
  }
  return spans.filter((span) => span.service.startsWith("wire-spans"));
}

function only(spans: WireSpan[], predicate: (span: WireSpan) => boolean): WireSpan {
  const found = spans.filter(predicate);
  if (found.length !== 1)
    throw new Error(`expected one span, found ${found.length}: ${found.map((span) => span.name).join(", ")}`);
  return found[0];
}

describe("span trees over OTLP", () => {
  it("keep parents across services, span kinds, links and status as decoded by a real OTLP receiver", async () => {
    const clock = new FakeClock(100);
    const providers = [
      { name: "wire-spans-scheduler", exporter: new ProtoTraceExporter({ url: `${server.url}/v1/traces` }) },
      { name: "wire-spans-worker", exporter: new JsonTraceExporter({ url: `${server.url}/v1/traces` }) },
    ].map(
      ({ name, exporter }) =>
        new BasicTracerProvider({
          resource: resourceFromAttributes({ "service.name": name }),
          spanProcessors: [new BatchSpanProcessor({ exporter: exporter, scheduledDelayMillis: 60_000 })],
        }),
    );
    const common = { clock: clock.now, timeOrigin: ORIGIN, sampling: { ratio: 1, keepSlowerThan: 0 } };
    const scheduler = new TaskJourneys({
      ...common,
      role: "scheduler",
      instance: "tcp://scheduler:8786",
      tracerProvider: providers[0],
    });
    const worker = new TaskJourneys({
      ...common,
      role: "worker",
      instance: "tcp://10.0.0.7:40001",
      tracerProvider: providers[1],
    });

    scheduler.transition("sum-1", "released", "waiting");
    scheduler.transition("sum-1", "waiting", "processing");
    const message: Record<string, string> = {};
    expect(scheduler.inject("sum-1", message)).toBe(true);

    worker.parent("sum-1", message);
    worker.transition("sum-1", "released", "waiting");
    worker.dependencies("sum-1", ["a-1", "a-2"]);
    worker.transition("mean-1", "released", "waiting");
    worker.dependencies("mean-1", ["a-2"]);
    worker.transition("a-1", "released", "fetch");
    worker.transition("a-2", "released", "fetch");
    clock.set(101);
    const failed = worker.gather("tcp://peer:1", ["a-1"], 10);
    failed.meter("connect", () => clock.advance(0.5));
    failed.end("failed");
    const first = worker.gather("tcp://peer:2", ["a-1"], 10);
    first.meter("network", () => clock.advance(0.5));
    first.end("ok");
    const second = worker.gather("tcp://peer:3", ["a-2"], 10);
    second.meter("network", () => clock.advance(0.5));
    second.end("ok");
    for (const key of ["sum-1", "mean-1"]) {
      worker.transition(key, "waiting", "ready");
      worker.transition(key, "ready", "executing");
      clock.advance(0.25);
      worker.execute(key).end("memory");
    }
    clock.set(104);
    scheduler.transition("sum-1", "processing", "memory");
    // shutdown() flushes the batch processors; the providers stay the test's to shut down.
    await Promise.all([scheduler.shutdown(), worker.shutdown()]);

    // scheduler: task, waiting, processing; worker: sum-1 and mean-1 (task + 3 states each),
    // 3 gather_deps with one activity each, fetch journeys a-1 (task + 4 visits) and a-2 (task + 2).
    const expected = 3 + 2 * 4 + 3 * 2 + 5 + 3;
    const spans = await server.waitFor(() => {
      const all = received();
      return all.length >= expected ? all : undefined;
    }, 15_000);
    await Promise.all(providers.map((provider) => provider.shutdown()));
    expect(spans).toHaveLength(expected);

    const processing = only(spans, (span) => span.name === "processing");
    const schedulerTask = only(spans, (span) => span.name === "task sum" && span.service === "wire-spans-scheduler");
    const workerTask = only(spans, (span) => span.name === "task sum" && span.service === "wire-spans-worker");
    // The worker nests under the scheduler's task span, linked to the processing span it was sent in.
    expect(workerTask.parentSpanId).toBe(schedulerTask.spanId);
    expect(workerTask.traceId).toBe(schedulerTask.traceId);
    // It links, too, to its dependencies' journeys on this worker (their fetches), in their own traces.
    const fetched = (key: string) =>
      only(spans, (span) => span.name === "task a" && span.attributes?.["task.key"] === key);
    expect(workerTask.links!.map((link) => link.spanId)).toEqual([
      processing.spanId,
      fetched("a-1").spanId,
      fetched("a-2").spanId,
    ]);
    expect(workerTask.links![1].traceId).toBe(fetched("a-1").traceId);
    expect(processing.parentSpanId).toBe(schedulerTask.spanId);
    expect(message.traceparent).toBe(`00-${schedulerTask.traceId}-${schedulerTask.spanId}-01`);
    // Our member: the state span it was sent in, and when the scheduler's task span started (so the
    // worker's spans never start before it, whatever the clocks: docs/spans.md).
    expect(message.tracestate).toBe(
      `taskjourney=${processing.spanId},taskjourney-start=${String(schedulerTask.startTimeUnixNano).slice(0, -9)}:0`,
    );
    expect(String(workerTask.startTimeUnixNano)).toBe(`${ORIGIN + 100}000000000`);

    const gathers = spans.filter((span) => span.name === "gather_dep");
    expect(gathers.map((span) => span.kind)).toEqual(["SPAN_KIND_CLIENT", "SPAN_KIND_CLIENT", "SPAN_KIND_CLIENT"]);
    expect(spans.filter((span) => span.name !== "gather_dep").every((span) => span.kind === "SPAN_KIND_INTERNAL")).toBe(
      true,
    );
    const byPeer = (peer: string) => only(gathers, (span) => span.attributes?.["transfer.peer"] === peer);
    expect(byPeer("tcp://peer:1").status?.code).toBe("STATUS_CODE_ERROR");
    expect(byPeer("tcp://peer:1").attributes).toMatchObject({
      "transfer.outcome": "failed",
      "transfer.keys": ["a-1"],
      "transfer.key_count": 1,
    });

    const waiting = only(spans, (span) => span.name === "waiting" && span.parentSpanId === workerTask.spanId);
    for (const gather of gathers) {
      expect(gather.parentSpanId).toBe(waiting.spanId);
      expect(gather.traceId).toBe(workerTask.traceId);
    }
    expect(new Set(waiting.links!.map((link) => link.spanId))).toEqual(new Set(gathers.map((span) => span.spanId)));
    expect(waiting.links!.every((link) => link.traceId === workerTask.traceId)).toBe(true);

    // a-2 served mean-1 too: its gather_dep links to mean-1's journey, mean-1's waiting links back.
    const mean = only(spans, (span) => span.name === "task mean");
    expect(mean.links!.map((link) => link.spanId)).toEqual([fetched("a-2").spanId]);
    expect(byPeer("tcp://peer:3").links).toEqual([
      expect.objectContaining({ traceId: mean.traceId, spanId: mean.spanId }),
    ]);
    const meanWaiting = only(spans, (span) => span.name === "waiting" && span.parentSpanId === mean.spanId);
    expect(meanWaiting.links!.map((link) => link.spanId)).toEqual([byPeer("tcp://peer:3").spanId]);
  });
});
