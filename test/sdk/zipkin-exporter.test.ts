/**
 * Spans to Zipkin (src/sdk/zipkin-exporter.ts) through startTelemetry, against a loopback server
 * (test/integration/fault-server.ts): the Zipkin JSON v2 a journey becomes, exact to the
 * microsecond under a fake clock; the OTEL_TRACES_EXPORTER=zipkin / OTEL_EXPORTER_ZIPKIN_*
 * configuration and its errors; and a Zipkin that fails, never answers or answers without end,
 * counted by error type with the request's socket closed at the export timeout.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { diag, DiagLogLevel, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { startTelemetry, type Telemetry } from "../../src/sdk.js";
import { toZipkinSpan, type ZipkinSpan } from "../../src/sdk/zipkin-exporter.js";
import { FakeClock } from "../helpers/clock.js";
import { startFaultServer, type FaultServer } from "../integration/fault-server.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.unstubAllEnvs();
});

/** Warnings kept by a diag logger of the test's own (startTelemetry then installs none). */
function captureWarnings(): string[] {
  const warnings: string[] = [];
  diag.setLogger(
    {
      error: (message) => warnings.push(message),
      warn: (message) => warnings.push(message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  cleanups.push(() => diag.disable());
  return warnings;
}

async function server(mode: Parameters<typeof startFaultServer>[0] = "ok"): Promise<FaultServer> {
  const started = await startFaultServer(mode, { dripMillis: 20 });
  cleanups.push(() => started.close());
  return started;
}

async function zipkinTelemetry(url: string, clock: FakeClock, timeoutMillis?: number): Promise<Telemetry> {
  const telemetry = await startTelemetry({
    role: "worker",
    instance: "tcp://127.0.0.1:40001",
    serviceName: "zipkin-test",
    registerGlobal: false,
    journeys: { clock: clock.now, sampling: { ratio: 1 } },
    exporters: {
      traces: "zipkin",
      metrics: "none",
      zipkinEndpoint: url,
      ...(timeoutMillis === undefined ? {} : { timeoutMillis }),
    },
  });
  cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
  return telemetry;
}

/** One task through a worker: waiting 0.25 s, ready 0.5 s, executing 1.25 s, then in memory. */
function oneTask(telemetry: Telemetry, clock: FakeClock, key: string): void {
  const { journeys } = telemetry;
  journeys.transition(key, "released", "waiting");
  clock.advance(0.25);
  journeys.transition(key, "waiting", "ready");
  clock.advance(0.5);
  journeys.transition(key, "ready", "executing");
  clock.advance(1.25);
  journeys.transition(key, "executing", "memory");
}

describe("spans to Zipkin", () => {
  it("a journey becomes Zipkin JSON v2: one trace, the task's span over its state spans, times exact in µs", async () => {
    const zipkin = await server();
    const url = `${zipkin.url}/api/v2/spans`;
    const clock = new FakeClock(1_700_000_000);
    const telemetry = await zipkinTelemetry(url, clock);
    expect(telemetry.destinations.traces).toEqual([{ kind: "zipkin", url }]);
    oneTask(telemetry, clock, "inc-1");
    await telemetry.journeys.shutdown();
    expect((await telemetry.forceFlush({ timeoutMillis: 10_000 })).completed).toBe(true);

    expect(zipkin.requests.map((request) => request.path)).toEqual(["/api/v2/spans"]);
    const spans = zipkin.accepted.flatMap((request) => request.body as ZipkinSpan[]);
    const byName = new Map(spans.map((span) => [span.name, span]));
    expect([...byName.keys()].sort()).toEqual(["executing", "ready", "task inc", "waiting"]);
    const task = byName.get("task inc")!;
    expect(task.parentId).toBeUndefined();
    expect(task.kind).toBeUndefined();
    expect(task.duration).toBe(2_000_000);
    expect(task.localEndpoint).toEqual({ serviceName: "zipkin-test" });
    expect(task.tags).toMatchObject({
      "task.key": "inc-1",
      "task.prefix": "inc",
      "taskjourney.role": "worker",
      "service.instance.id": "tcp://127.0.0.1:40001",
      "otel.scope.name": "taskjourney",
    });
    const states: Array<[string, number, number]> = [
      ["waiting", 0, 250_000],
      ["ready", 250_000, 500_000],
      ["executing", 750_000, 1_250_000],
    ];
    for (const [name, offset, duration] of states) {
      const span = byName.get(name)!;
      expect(span.traceId, name).toBe(task.traceId);
      expect(span.parentId, name).toBe(task.id);
      expect(span.timestamp, name).toBe(task.timestamp + offset);
      expect(span.duration, name).toBe(duration);
    }
    expect(telemetry.exportErrors()).toEqual([]);
  });

  it("OTEL_TRACES_EXPORTER=zipkin posts to OTEL_EXPORTER_ZIPKIN_ENDPOINT, else to the specification's default", async () => {
    const zipkin = await server();
    vi.stubEnv("OTEL_TRACES_EXPORTER", "zipkin");
    vi.stubEnv("OTEL_METRICS_EXPORTER", "none");
    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_ENDPOINT", `${zipkin.url}/api/v2/spans`);
    const start = () => startTelemetry({ role: "scheduler", instance: "s", registerGlobal: false });
    const telemetry = await start();
    cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
    expect(telemetry.destinations.traces).toEqual([{ kind: "zipkin", url: `${zipkin.url}/api/v2/spans` }]);

    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_ENDPOINT", "");
    const byDefault = await start();
    await byDefault.shutdown({ timeoutMillis: 5_000 });
    expect(byDefault.destinations.traces).toEqual([{ kind: "zipkin", url: "http://localhost:9411/api/v2/spans" }]);

    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_ENDPOINT", "localhost:9411");
    await expect(start()).rejects.toThrow(/OTEL_EXPORTER_ZIPKIN_ENDPOINT.*http\(s\) URL.*localhost:9411/);
    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_ENDPOINT", "");
    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_TIMEOUT", "soon");
    await expect(start()).rejects.toThrow(/OTEL_EXPORTER_ZIPKIN_TIMEOUT.*positive integer.*soon/);
    vi.stubEnv("OTEL_EXPORTER_ZIPKIN_TIMEOUT", "");
    vi.stubEnv("OTEL_METRICS_EXPORTER", "zipkin");
    await expect(start()).rejects.toThrow(/OTEL_METRICS_EXPORTER.*otlp, console, prometheus, none/);
  });

  it("a Zipkin that fails, never answers or answers without end: counted by error type, the socket closed at the timeout", async () => {
    const warnings = captureWarnings();
    const clock = new FakeClock(1_700_000_000);
    for (const [mode, errorType] of [
      ["500", "500"],
      ["black-hole", "timeout"],
      ["drip-body", "timeout"],
    ] as const) {
      const zipkin = await server(mode);
      const url = `${zipkin.url}/api/v2/spans`;
      const telemetry = await zipkinTelemetry(url, clock, 300);
      oneTask(telemetry, clock, `${mode}-1`);
      await telemetry.journeys.shutdown();
      await telemetry.forceFlush({ timeoutMillis: 10_000 });
      expect(telemetry.exportErrors(), mode).toEqual([
        { signal: "traces", destination: url, errorType, items: 4, exports: 1 },
      ]);
      expect(
        warnings.some((warning) => warning.includes(url)),
        `a warning names ${url}`,
      ).toBe(true);
      // A request not answered in whole is cut off at the timeout: its connection is not held open.
      if (errorType === "timeout")
        await vi.waitFor(() => expect(zipkin.openSockets(), mode).toBe(0), { timeout: 5_000 });
      // Nor is a kept-alive one once the telemetry is shut down.
      expect((await telemetry.shutdown({ timeoutMillis: 5_000 })).completed).toBe(true);
      await vi.waitFor(() => expect(zipkin.openSockets(), mode).toBe(0), { timeout: 5_000 });
    }
  });

  it("status, kind, events and array attributes map as the specification says", () => {
    const start: [number, number] = [1_700_000_000, 123_456_789];
    const span = {
      name: "gather_dep",
      kind: SpanKind.CLIENT,
      spanContext: () => ({ traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 }),
      parentSpanContext: { traceId: "a".repeat(32), spanId: "c".repeat(16), traceFlags: 1 },
      startTime: start,
      endTime: [1_700_000_001, 0],
      duration: [0, 200],
      status: { code: SpanStatusCode.ERROR, message: "worker died" },
      attributes: { keys: ["x-1", "y-2"], bytes: 42, ok: false },
      links: [],
      events: [
        { name: "retry", time: [1_700_000_000, 500_000_000] },
        { name: "lost", time: [1_700_000_000, 600_000_000], attributes: { peer: "w2" } },
      ],
      resource: { attributes: { "service.name": "svc" } },
      instrumentationScope: { name: "taskjourney", version: "0.1.0" },
      droppedAttributesCount: 0,
      droppedEventsCount: 2,
      droppedLinksCount: 0,
      ended: true,
    } as unknown as Parameters<typeof toZipkinSpan>[0];
    expect(toZipkinSpan(span)).toEqual({
      traceId: "a".repeat(32),
      id: "b".repeat(16),
      parentId: "c".repeat(16),
      name: "gather_dep",
      kind: "CLIENT",
      timestamp: 1_700_000_000_123_457,
      // 200 ns: shown as 1 µs, since Zipkin reads a duration of 0 as none.
      duration: 1,
      localEndpoint: { serviceName: "svc" },
      tags: {
        "service.name": "svc",
        keys: '["x-1","y-2"]',
        bytes: "42",
        ok: "false",
        "otel.scope.name": "taskjourney",
        "otel.scope.version": "0.1.0",
        "otel.status_code": "ERROR",
        error: "worker died",
        "otel.dropped_events_count": "2",
      },
      annotations: [
        { timestamp: 1_700_000_000_500_000, value: "retry" },
        { timestamp: 1_700_000_000_600_000, value: '{"lost":{"peer":"w2"}}' },
      ],
    });
  });
});
