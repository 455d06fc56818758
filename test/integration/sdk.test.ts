/**
 * `taskjourney/sdk`: startTelemetry() configured from OTEL_* variables, exporting to an
 * in-process mockotlpserver, to OTLP JSON lines files, and to a Prometheus pull endpoint.
 */
import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { context, propagation, ProxyTracerProvider, trace } from "@opentelemetry/api";
import { startTelemetry, type StartTelemetryOptions, type Telemetry } from "../../src/sdk.js";
import { FakeClock } from "../helpers/clock.js";
import { workerDay } from "../otel/metric-producer.helpers.js";
import { startMockOtlp, type MockOtlp, type OtlpMetricsRequest, type OtlpTraceRequest } from "./mockotlp.js";
import { internalsOf } from "../../src/internal.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";

const execFileAsync = promisify(execFile);

/** The part of an OTLP JSON traces line the tests read. */
interface OtlpTraceRequestJson {
  resourceSpans: Array<{
    scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string }> }>;
  }>;
}
let server: MockOtlp;
const started: Telemetry[] = [];
const directories: string[] = [];

beforeAll(async () => {
  server = await startMockOtlp();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((telemetry) => telemetry.shutdown()));
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await server?.close();
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

let instances = 0;
function nextInstance(): string {
  return `tcp://10.0.0.7:${40000 + ++instances}`;
}

/**
 * startTelemetry reads process.env, as the OpenTelemetry SDK does: each test's environment is
 * the runner's without its OTEL_* variables, plus `env` (undone after the test).
 */
function useEnv(env: Record<string, string> = {}): void {
  for (const name of Object.keys(process.env)) if (name.startsWith("OTEL_")) vi.stubEnv(name, undefined);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
}

type StartOptions = Omit<StartTelemetryOptions, "role" | "instance"> &
  Partial<Pick<StartTelemetryOptions, "role" | "instance">> & { env?: Record<string, string> };

async function start({ env, ...options }: StartOptions): Promise<Telemetry> {
  useEnv(env);
  const telemetry = await startTelemetry({ role: "worker", instance: nextInstance(), ...options });
  started.push(telemetry);
  return telemetry;
}

const instanceOf = (request: {
  resourceMetrics?: OtlpMetricsRequest["resourceMetrics"];
  resourceSpans?: OtlpTraceRequest["resourceSpans"];
}) => (request.resourceMetrics ?? request.resourceSpans)?.[0]?.resource?.attributes?.["service.instance.id"];

function metricsOf(instance: string): OtlpMetricsRequest[] {
  return server.metrics.filter((request) => instanceOf(request) === instance);
}
function tracesOf(instance: string): OtlpTraceRequest[] {
  return server.traces.filter((request) => instanceOf(request) === instance);
}

/** The value of a sum's point with the given attributes, across a request's taskjourney metrics. */
function sumValue(request: OtlpMetricsRequest, name: string, attributes: Record<string, string>): number | undefined {
  for (const scope of request.resourceMetrics.flatMap((resource) => resource.scopeMetrics)) {
    for (const metric of scope.metrics) {
      if (metric.name !== name || metric.sum === undefined) continue;
      for (const point of metric.sum.dataPoints) {
        if (
          Object.entries(attributes).every(([key, value]) => point.attributes?.[key] === value) &&
          Object.keys(point.attributes ?? {}).length === Object.keys(attributes).length
        ) {
          return point.asDouble ?? Number(point.asInt ?? 0);
        }
      }
    }
  }
  return undefined;
}

describe.each([
  { protocol: "http/protobuf", contentType: "application/x-protobuf" },
  { protocol: "http/json", contentType: "application/json" },
] as const)(
  "with OTEL_EXPORTER_OTLP_ENDPOINT at mockotlpserver and OTEL_EXPORTER_OTLP_PROTOCOL=$protocol",
  ({ protocol, contentType }) => {
    it("sends spans and task metrics with the resource from the environment, role and instance", async () => {
      const clock = new FakeClock(0);
      const instance = nextInstance();
      const telemetry = await start({
        instance,
        journeys: { clock: clock.now, sampling: { ratio: 0 } },
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: server.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_SERVICE_NAME: "dask-cluster",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,service.name=ignored,team=a%2Cb",
        },
      });
      expect(telemetry.destinations).toEqual({
        traces: [{ kind: "otlp", protocol, url: `${server.url}/v1/traces` }],
        metrics: [{ kind: "otlp", protocol, url: `${server.url}/v1/metrics` }],
      });
      workerDay(telemetry.journeys, clock);
      telemetry.tracerProvider.getTracer("sdk-test").startSpan("probe").end();
      // Registered globally: the API's tracer is ours.
      trace.getTracer("sdk-test").startSpan("global-probe").end();
      await telemetry.shutdown();

      const traces = await server.waitFor(() => (tracesOf(instance).length > 0 ? tracesOf(instance) : undefined));
      const metrics = await server.waitFor(() => (metricsOf(instance).length > 0 ? metricsOf(instance) : undefined));
      for (const request of [...traces, ...metrics]) {
        const resource = ("resourceSpans" in request ? request.resourceSpans : request.resourceMetrics)[0].resource
          ?.attributes;
        expect(resource).toMatchObject({
          "service.name": "dask-cluster",
          "service.instance.id": instance,
          "taskjourney.role": "worker",
          "deployment.environment": "test",
          team: "a,b",
          "telemetry.sdk.language": "nodejs",
        });
      }
      const spanNames = traces.flatMap((request) =>
        request.resourceSpans.flatMap((resource) =>
          resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)),
        ),
      );
      expect(spanNames).toEqual(expect.arrayContaining(["probe", "global-probe"]));
      const journeyScopes = traces
        .flatMap((request) => request.resourceSpans.flatMap((resource) => resource.scopeSpans))
        .filter((scope) => scope.scope?.name === "taskjourney");
      expect(journeyScopes.flatMap((scope) => scope.spans).length).toBeGreaterThan(0);
      const last = metrics[metrics.length - 1];
      expect(sumValue(last, "task.state.time", { "task.prefix": "sum", "task.state": "waiting" })).toBe(4);
      expect(sumValue(last, "task.gather.size", { "transfer.outcome": "ok" })).toBe(3000);
      expect(sumValue(last, "taskjourney.dropped", { reason: "unknown-state" })).toBe(1);
      // Role and instance are resource attributes only.
      const metricAttributeKeys = new Set(
        last.resourceMetrics.flatMap((resource) =>
          resource.scopeMetrics.flatMap((scope) =>
            scope.metrics.flatMap((metric) =>
              [
                ...(metric.sum?.dataPoints ?? []),
                ...(metric.gauge?.dataPoints ?? []),
                ...(metric.exponentialHistogram?.dataPoints ?? []),
              ].flatMap((point) => Object.keys(point.attributes ?? {})),
            ),
          ),
        ),
      );
      expect([...metricAttributeKeys].sort()).toEqual([
        "reason",
        "task.activity",
        "task.prefix",
        "task.state",
        "transfer.outcome",
      ]);
      const kinds = new Set(
        last.resourceMetrics[0].scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.name)),
      );
      expect(kinds).toContain("task.state.duration");
      expect(
        server.requests
          .filter((request) => request.path === "/v1/traces" || request.path === "/v1/metrics")
          .map((request) => request.contentType),
      ).toContain(contentType);
    });
  },
);

describe("startTelemetry configuration", () => {
  it("defaults to http/protobuf, honours per-signal endpoints, OTEL_TRACES_EXPORTER=none and the export interval", async () => {
    const clock = new FakeClock(0);
    const instance = nextInstance();
    const telemetry = await start({
      instance,
      role: "scheduler",
      journeys: { clock: clock.now },
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${server.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${server.url}/v1/metrics`,
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRIC_EXPORT_INTERVAL: "100",
      },
    });
    expect(telemetry.destinations).toEqual({
      traces: [],
      metrics: [{ kind: "otlp", protocol: "http/protobuf", url: `${server.url}/v1/metrics` }],
    });
    telemetry.journeys.transition("x-1", "released", "waiting");
    clock.advance(2);
    telemetry.journeys.transition("x-1", "waiting", "processing");
    // A periodic export arrives before shutdown.
    const request = await server.waitFor(() => metricsOf(instance)[0], 5_000);
    expect(request.resourceMetrics[0].resource?.attributes).toMatchObject({
      "service.name": "taskjourney-scheduler",
      "taskjourney.role": "scheduler",
    });
    expect(sumValue(request, "task.state.time", { "task.prefix": "x", "task.state": "waiting" })).toBe(2);
    telemetry.tracerProvider.getTracer("sdk-test").startSpan("dropped").end();
    await telemetry.shutdown();
    expect(tracesOf(instance)).toEqual([]);
  });

  it("writes OTLP JSON lines files when no endpoint is configured and fileDirectory is given", async () => {
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-sdk-"));
    directories.push(directory);
    const clock = new FakeClock(0);
    const telemetry = await start({
      instance: "tcp://10.0.0.7:40001",
      fileDirectory: join(directory, "out"),
      journeys: { clock: clock.now },
      env: { OTEL_METRIC_EXPORT_INTERVAL: "50" },
    });
    const tracesPath = join(directory, "out", "traces-worker-tcp_10.0.0.7_40001.jsonl");
    const metricsPath = join(directory, "out", "metrics-worker-tcp_10.0.0.7_40001.jsonl");
    expect(telemetry.destinations).toEqual({
      traces: [{ kind: "file", path: tracesPath }],
      metrics: [{ kind: "file", path: metricsPath }],
    });
    workerDay(telemetry.journeys, clock);
    const span = telemetry.tracerProvider
      .getTracer("sdk-test")
      // Not ASCII: the file gets the serializer's UTF-8 bytes as they are.
      .startSpan("probe", { attributes: { "task.key": "sum-ü-名-1" } });
    span.end();
    await telemetry.forceFlush();
    expect((await readdir(join(directory, "out"))).sort()).toEqual([
      "metrics-worker-tcp_10.0.0.7_40001.jsonl",
      "traces-worker-tcp_10.0.0.7_40001.jsonl",
    ]);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await telemetry.shutdown();

    const lines = async (path: string) =>
      (await readFile(path, "utf8"))
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const spanLines = (await lines(tracesPath)) as unknown as Array<{
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
        scopeSpans: Array<{
          spans: Array<{
            name: string;
            traceId: string;
            spanId: string;
            startTimeUnixNano: string;
            attributes: unknown[];
          }>;
        }>;
      }>;
    }>;
    expect(spanLines.length).toBeGreaterThanOrEqual(1);
    const [firstSpans] = spanLines;
    expect(Object.keys(firstSpans)).toEqual(["resourceSpans"]);
    expect(firstSpans.resourceSpans[0].resource.attributes).toEqual(
      expect.arrayContaining([
        { key: "service.instance.id", value: { stringValue: "tcp://10.0.0.7:40001" } },
        { key: "taskjourney.role", value: { stringValue: "worker" } },
        { key: "service.name", value: { stringValue: "taskjourney-worker" } },
      ]),
    );
    const spans = spanLines.flatMap((line) =>
      line.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
    const probe = spans.find((span) => span.name === "probe")!;
    expect(probe).toMatchObject({
      name: "probe",
      attributes: [{ key: "task.key", value: { stringValue: "sum-ü-名-1" } }],
    });
    expect(probe.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(probe.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(probe.startTimeUnixNano).toMatch(/^\d{19}$/);
    // The journeys' span trees use the tracer provider made here: inc-1 failed, and failed journeys are kept.
    const scopes = spanLines.flatMap((line) =>
      line.resourceSpans.flatMap(
        (resource) => resource.scopeSpans as Array<{ scope?: { name?: string }; spans: unknown[] }>,
      ),
    );
    expect(
      scopes.filter((scope) => scope.scope?.name === "taskjourney").flatMap((scope) => scope.spans).length,
    ).toBeGreaterThan(0);

    const metricLines = (await lines(metricsPath)) as unknown as OtlpMetricsRequestJson[];
    // At least one periodic export plus the final one at shutdown.
    expect(metricLines.length).toBeGreaterThanOrEqual(2);
    for (const line of metricLines) expect(Object.keys(line)).toEqual(["resourceMetrics"]);
    const last = metricLines[metricLines.length - 1];
    const metric = last.resourceMetrics[0].scopeMetrics
      .find((scope) => scope.scope.name === "taskjourney")!
      .metrics.find((m) => m.name === "task.state.time")!;
    expect(metric.unit).toBe("s");
    expect(metric.sum.isMonotonic).toBe(true);
    expect(metric.sum.aggregationTemporality).toBe(2);
    expect(metric.sum.dataPoints).toContainEqual(
      expect.objectContaining({
        asDouble: 4,
        attributes: expect.arrayContaining([
          { key: "task.prefix", value: { stringValue: "sum" } },
          { key: "task.state", value: { stringValue: "waiting" } },
        ]),
      }),
    );
    const duration = last.resourceMetrics[0].scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((m) => m.name === "task.state.duration")!;
    expect(duration.exponentialHistogram.dataPoints.length).toBe(8);
  });

  it("a process started again appends to its files on a new line when the last one was cut off, so the report reads its requests and skips the broken one", async () => {
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-sdk-"));
    directories.push(directory);
    const out = join(directory, "out");
    await mkdir(out);
    const tracesPath = join(out, "traces-worker-w1.jsonl");
    // The process before was killed while writing its second request.
    const earlier = JSON.stringify({ resourceSpans: [] });
    await writeFile(tracesPath, `${earlier}\n{"resourceSpans":[{"resource":{"attri`);
    const telemetry = await start({ instance: "w1", fileDirectory: out, env: { OTEL_METRICS_EXPORTER: "none" } });
    telemetry.tracerProvider.getTracer("sdk-test").startSpan("after the restart").end();
    await telemetry.shutdown();
    const lines = (await readFile(tracesPath, "utf8")).split("\n");
    expect(lines[0]).toBe(earlier);
    expect(lines[1]).toBe('{"resourceSpans":[{"resource":{"attri');
    expect(JSON.parse(lines[2]).resourceSpans[0].scopeSpans[0].spans[0].name).toBe("after the restart");
    expect(lines.slice(3)).toEqual([""]);
    const read = readTelemetryFiles([out]);
    expect(read.spans.map((span) => span.name)).toEqual(["after the restart"]);
    expect(read.skipped).toEqual([
      expect.stringMatching(
        /traces-worker-w1\.jsonl: line 2 \(.+\) is a request cut off, as a process stopped while writing leaves one: skipped; the 2 others are read$/,
      ),
    ]);
  });

  it("its provider takes the ids inject() handed out for a journey not head-sampled: the task span has them if the journey is kept", async () => {
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-sdk-"));
    directories.push(directory);
    const clock = new FakeClock(0);
    const telemetry = await start({
      role: "scheduler",
      fileDirectory: join(directory, "out"),
      journeys: { clock: clock.now, sampling: { ratio: 0, keepErrors: true } },
    });
    const tracesPath = telemetry.destinations.traces.map((destination) =>
      "path" in destination ? destination.path : "",
    )[0];
    const carriers: Array<Record<string, string>> = [];
    for (const key of ["inc-1", "inc-2"]) {
      telemetry.journeys.transition(key, "released", "waiting");
      clock.advance(1);
      telemetry.journeys.transition(key, "waiting", "processing");
      const carrier: Record<string, string> = {};
      expect(telemetry.journeys.inject(key, carrier)).toBe(true);
      expect(carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      // The same ids every time for the same journey.
      const again: Record<string, string> = {};
      telemetry.journeys.inject(key, again);
      expect(again).toEqual(carrier);
      carriers.push(carrier);
    }
    // A span of the user's on the same provider, meanwhile: ids of its own.
    const probe = telemetry.tracerProvider.getTracer("sdk-test").startSpan("probe");
    probe.end();
    clock.advance(1);
    telemetry.journeys.transition("inc-1", "processing", "erred"); // failed: kept
    telemetry.journeys.transition("inc-2", "processing", "memory"); // not kept
    await telemetry.shutdown();
    const spans = (await readFile(tracesPath, "utf8"))
      .split("\n")
      .filter((line) => line !== "")
      .flatMap((line) =>
        (JSON.parse(line) as OtlpTraceRequestJson).resourceSpans.flatMap((resource) =>
          resource.scopeSpans.flatMap((scope) => scope.spans),
        ),
      );
    const task = spans.find((span) => span.name === "task inc")!;
    expect([task.traceId, task.spanId]).toEqual([
      carriers[0].traceparent.slice(3, 35),
      carriers[0].traceparent.slice(36, 52),
    ]);
    expect(spans.map((span) => span.name).sort()).toEqual(["probe", "processing", "task inc", "waiting"]);
    expect(spans.some((span) => span.spanId === carriers[1].traceparent.slice(36, 52))).toBe(false);
    expect(spans.find((span) => span.name === "probe")!.spanId).toBe(probe.spanContext().spanId);
    expect(carriers.map((carrier) => carrier.traceparent.slice(36, 52))).not.toContain(probe.spanContext().spanId);
  });

  it("prefers a configured endpoint over the file fallback", async () => {
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-sdk-"));
    directories.push(directory);
    const telemetry = await start({
      fileDirectory: directory,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: server.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    expect(telemetry.destinations.traces).toEqual([
      { kind: "otlp", protocol: "http/json", url: `${server.url}/v1/traces` },
    ]);
    expect(telemetry.destinations.metrics).toEqual([
      { kind: "otlp", protocol: "http/json", url: `${server.url}/v1/metrics` },
    ]);
    await telemetry.shutdown();
    expect(await readdir(directory)).toEqual([]);
  });

  it("serves Prometheus with explicit-bucket duration histograms, role and instance in target_info", async () => {
    const clock = new FakeClock(0);
    const telemetry = await start({
      instance: "tcp://10.0.0.7:40009",
      journeys: { clock: clock.now, explicitBuckets: [0.5, 1, 5] },
      exporters: { traces: "none", metrics: "none", prometheus: { host: "127.0.0.1", port: 0 } },
    });
    expect(telemetry.prometheusUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(telemetry.destinations).toEqual({
      traces: [],
      metrics: [{ kind: "prometheus", url: telemetry.prometheusUrl }],
    });
    workerDay(telemetry.journeys, clock);
    const response = await fetch(telemetry.prometheusUrl!);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/task_state_duration\w*_bucket\{[^}]*task_prefix="a",task_state="flight"[^}]*le="5"[^}]*\} 3/);
    expect(text).toMatch(
      /task_state_duration\w*_bucket\{[^}]*task_prefix="a",task_state="flight"[^}]*le="0\.5"[^}]*\} 1/,
    );
    expect(text).toMatch(/task_state_time\w*\{[^}]*task_prefix="sum",task_state="waiting"[^}]*\} 4/);
    expect(text).toMatch(/target_info\{[^}]*taskjourney_role="worker"/);
    expect(text).toMatch(/target_info\{[^}]*service_instance_id="tcp:\/\/10\.0\.0\.7:40009"/);
    expect((await fetch(telemetry.prometheusUrl!.replace("/metrics", "/other"))).status).toBe(404);
    await telemetry.shutdown();
    await expect(fetch(telemetry.prometheusUrl!)).rejects.toThrow();
  });

  it("the Prometheus endpoint holds at most 64 connections however many clients drip their headers, and serves scrapes once they are gone", async () => {
    const telemetry = await start({
      instance: nextInstance(),
      exporters: { traces: "none", metrics: "none", prometheus: { host: "127.0.0.1", port: 0 } },
    });
    const { port } = new URL(telemetry.prometheusUrl!);
    // 100 clients that send a request's headers a byte every 100 ms and never finish them.
    const sockets: Socket[] = [];
    const drips: Array<ReturnType<typeof setInterval>> = [];
    let closed = 0;
    for (let index = 0; index < 100; index++) {
      const socket = connect(Number(port), "127.0.0.1");
      socket.on("error", () => {});
      socket.on("close", () => closed++);
      const text = `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Drip: ${".".repeat(1000)}`;
      let at = 0;
      drips.push(setInterval(() => socket.destroyed || socket.write(text[at++ % text.length]), 100));
      sockets.push(socket);
    }
    try {
      // A bound for a loaded machine, not a timing claim: the server closes the excess as they come.
      for (let waited = 0; closed < 36 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(closed).toBe(36);
      // Before: every one of them held a connection (and a file descriptor) for up to a minute.
      expect(sockets.filter((socket) => !socket.destroyed)).toHaveLength(64);
    } finally {
      for (const drip of drips) clearInterval(drip);
      for (const socket of sockets) socket.destroy();
    }
    // Once they are gone, a scrape is served.
    for (let waited = 0; waited < 5_000; waited += 50) {
      // Bounded: a request may meet a connection the server is still closing.
      const response = await fetch(telemetry.prometheusUrl!, { signal: AbortSignal.timeout(1_000) }).catch(
        () => undefined,
      );
      if (response?.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await fetch(telemetry.prometheusUrl!, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
    expect(await telemetry.shutdown({ timeoutMillis: 5_000 })).toEqual({ completed: true });
  });

  it("shuts down once however often it is called, releases the globals, and stops the journeys", async () => {
    const clock = new FakeClock(0);
    const instance = nextInstance();
    const telemetry = await start({
      instance,
      journeys: { clock: clock.now },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: server.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    const global = trace.getTracerProvider() as ProxyTracerProvider;
    expect(global.getDelegate()).toBe(telemetry.tracerProvider);
    telemetry.journeys.transition("inc-1", "released", "waiting");
    const first = telemetry.shutdown();
    const second = telemetry.shutdown();
    expect(second).toBe(first);
    await Promise.all([first, second]);
    await telemetry.shutdown();
    await telemetry.forceFlush();
    const exports = metricsOf(instance).length;
    expect(exports).toBe(1);
    // The journeys are closed: nothing more is recorded.
    telemetry.journeys.transition("inc-2", "released", "waiting");
    expect(telemetry.journeys.stats("inc", "waiting").count).toBe(0);
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).not.toBe(telemetry.tracerProvider);

    // A new setup can register globally again.
    const next = await start({ env: { OTEL_TRACES_EXPORTER: "console", OTEL_METRICS_EXPORTER: "none" } });
    expect(next.destinations).toEqual({ traces: [{ kind: "console" }], metrics: [] });
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(next.tracerProvider);
    await next.shutdown();
  });

  it("leaves the globals alone with registerGlobal: false, and exports nothing with OTEL_SDK_DISABLED", async () => {
    const telemetry = await start({
      registerGlobal: false,
      env: { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: server.url },
    });
    expect(telemetry.destinations).toEqual({ traces: [], metrics: [] });
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).not.toBe(telemetry.tracerProvider);
    await telemetry.shutdown();
  });

  it("rejects bad configuration with a TypeError naming the option or variable", async () => {
    const bad: Array<[Partial<StartTelemetryOptions> & { env?: Record<string, string> }, RegExp]> = [
      [{ role: "client" as never }, /option "role"/],
      [{ instance: 7 as never }, /option "instance"/],
      [{ serviceName: "" }, /option "serviceName"/],
      [{ fileDirectory: 3 as never }, /option "fileDirectory"/],
      [{ registerGlobal: "yes" as never }, /option "registerGlobal"/],
      [{ exporters: { protocol: "grpc" as never } }, /option "exporters\.protocol"/],
      [{ exporters: { traces: "jaeger" as never } }, /option "exporters\.traces"/],
      [{ exporters: { metricExportIntervalMillis: 0 } }, /option "exporters\.metricExportIntervalMillis"/],
      [{ exporters: { endpoint: "not a url" } }, /option "exporters\.endpoint"/],
      [{ exporters: { prometheus: { port: 70000 } } }, /option "exporters\.prometheus\.port"/],
      [{ env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } }, /OTEL_EXPORTER_OTLP_PROTOCOL/],
      [{ env: { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "json" } }, /OTEL_EXPORTER_OTLP_METRICS_PROTOCOL/],
      [{ env: { OTEL_TRACES_EXPORTER: "jaeger" } }, /OTEL_TRACES_EXPORTER/],
      [{ env: { OTEL_METRICS_EXPORTER: "otlp,statsd" } }, /OTEL_METRICS_EXPORTER/],
      [{ env: { OTEL_METRIC_EXPORT_INTERVAL: "soon" } }, /OTEL_METRIC_EXPORT_INTERVAL/],
      [{ exporters: { timeoutMillis: -1 } }, /option "exporters\.timeoutMillis"/],
      [{ env: { OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "10s" } }, /OTEL_EXPORTER_OTLP_TRACES_TIMEOUT/],
      [{ env: { OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" } }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
      [{ journeys: { limits: { maxPrefixes: 0 } } }, /option "limits\.maxPrefixes"/],
      // The flat name of 0.1 (deprecated) is named by its path too.
      [{ journeys: { prefixLimit: 0 } }, /option "limits\.maxPrefixes"/],
      [{ fileDirectry: "/tmp/x" } as never, /unknown option "fileDirectry"; did you mean "fileDirectory"\?/],
    ];
    for (const [{ env, ...options }, message] of bad) {
      useEnv(env);
      await expect(
        startTelemetry({ role: "worker", instance: "w", ...options } as StartTelemetryOptions),
        message.source,
      ).rejects.toThrow(message);
      await expect(
        startTelemetry({ role: "worker", instance: "w", ...options } as StartTelemetryOptions),
      ).rejects.toBeInstanceOf(TypeError);
    }
    // The removed `env` option is refused, not silently ignored: its variables would not apply.
    useEnv();
    await expect(
      startTelemetry({ role: "worker", instance: "w", env: { OTEL_TRACES_EXPORTER: "none" } } as StartTelemetryOptions),
    ).rejects.toThrow(/option "env" must be absent: startTelemetry reads the OTEL_\* variables from process.env/);
    // Nothing was left registered by the failed attempts.
    const ok = await start({ env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" } });
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(ok.tracerProvider);
  });

  it("registers what NodeTracerProvider.register() did: AsyncLocalStorage context and W3C trace-context and baggage propagation", async () => {
    const telemetry = await start({ env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" } });
    const span = telemetry.tracerProvider.getTracer("sdk-test").startSpan("outer");
    const carrier: Record<string, string> = {};
    await context.with(trace.setSpan(context.active(), span), async () => {
      await new Promise((resolve) => setImmediate(resolve));
      // Still the span's context after an await: AsyncLocalStorage, not the no-op manager.
      expect(trace.getActiveSpan()).toBe(span);
      const baggage = propagation.createBaggage({ tenant: { value: "a" } });
      propagation.inject(propagation.setBaggage(context.active(), baggage), carrier);
    });
    span.end();
    expect(carrier.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    expect(carrier.baggage).toBe("tenant=a");
  });

  describe("the diag logger", () => {
    /** stdout and stderr of the probe process, without the API's own registration lines. */
    async function probe(logLevel: string | undefined, own = false): Promise<{ stdout: string[]; stderr: string[] }> {
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.OTEL_LOG_LEVEL;
      if (logLevel !== undefined) env.OTEL_LOG_LEVEL = logLevel;
      const { stdout, stderr } = await execFileAsync(
        process.execPath,
        ["--import", "tsx", join(import.meta.dirname, "fixtures/diag-probe.ts"), ...(own ? ["own"] : [])],
        { env },
      );
      const lines = (text: string) =>
        text.split("\n").filter((line) => line !== "" && !line.startsWith("@opentelemetry/api:"));
      return { stdout: lines(stdout), stderr: lines(stderr) };
    }

    it("is a console logger at WARN when OTEL_LOG_LEVEL is unset, removed at shutdown", async () => {
      expect(await probe(undefined)).toEqual({ stdout: [], stderr: ["probe: warn"] });
    });

    it("follows OTEL_LOG_LEVEL as the SDKs read it; an unknown level means INFO, with a warning", async () => {
      expect(await probe("debug")).toEqual({ stdout: ["probe: info", "probe: debug"], stderr: ["probe: warn"] });
      expect(await probe("NONE")).toEqual({ stdout: [], stderr: [] });
      expect(await probe("chatty")).toEqual({
        stdout: ["probe: info"],
        stderr: [
          "taskjourney: OTEL_LOG_LEVEL=chatty is not one of NONE, ERROR, WARN, INFO, DEBUG, VERBOSE, ALL; logging at INFO",
          "probe: warn",
        ],
      });
    });

    it("leaves a logger the application installed, before and after", async () => {
      expect(await probe("debug", true)).toEqual({
        stdout: ["own logger: probe: warn", "own logger: probe: info", "own logger: probe: after shutdown"],
        stderr: [],
      });
    });
  });

  it("reads OTEL_RESOURCE_ATTRIBUTES as the SDK's envDetector does: percent-decoded, all ignored when one entry is malformed", async () => {
    const good = await start({
      env: {
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
        OTEL_RESOURCE_ATTRIBUTES: " team = a%3Db , zone=eu-1",
      },
    });
    expect(good.resource.attributes).toMatchObject({ team: "a=b", zone: "eu-1", "service.name": "taskjourney-worker" });
    await good.shutdown();
    const bad = await start({
      env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none", OTEL_RESOURCE_ATTRIBUTES: "team=a,zone" },
    });
    expect(bad.resource.attributes.team).toBeUndefined();
    expect(bad.resource.attributes["taskjourney.role"]).toBe("worker");
    // Explicit options win over the environment.
    await bad.shutdown();
    const explicit = await start({
      serviceName: "mine",
      resourceAttributes: { team: "b" },
      env: {
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
        OTEL_SERVICE_NAME: "theirs",
        OTEL_RESOURCE_ATTRIBUTES: "team=a",
      },
    });
    expect(explicit.resource.attributes).toMatchObject({ "service.name": "mine", team: "b" });
  });

  it("passes undefined journeys options through as defaults", async () => {
    const telemetry = await start({
      journeys: { prefixLimit: undefined, temporality: undefined },
      env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" },
    });
    expect(internalsOf(telemetry.journeys)!.options.prefixLimit).toBe(100);
    expect(internalsOf(telemetry.journeys)!.options.temporality).toBe("cumulative");
  });

  it("follows OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta unless the journeys say otherwise", async () => {
    const env = {
      OTEL_TRACES_EXPORTER: "none",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta",
    };
    const delta = await start({ env });
    expect(internalsOf(delta.journeys)!.options.temporality).toBe("delta");
    await delta.shutdown();
    const cumulative = await start({ env, journeys: { temporality: "cumulative" } });
    expect(internalsOf(cumulative.journeys)!.options.temporality).toBe("cumulative");
  });
});

interface OtlpMetricsRequestJson {
  resourceMetrics: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeMetrics: Array<{
      scope: { name: string };
      metrics: Array<{
        name: string;
        unit: string;
        sum: {
          isMonotonic: boolean;
          aggregationTemporality: number;
          dataPoints: Array<{ asDouble?: number; attributes: unknown[] }>;
        };
        exponentialHistogram: { dataPoints: unknown[] };
      }>;
    }>;
  }>;
}
