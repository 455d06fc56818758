/**
 * taskjourney/sdk against an OTLP endpoint that fails: refused, never answering, 500, 429 with
 * Retry-After, connection reset, slow, down then up (fault-server.ts, on loopback). The host
 * keeps recording throughout and never sees a throw; each failed export is counted by signal and
 * error type and warned once per kind with its endpoint; once the endpoint is back, every total
 * is right and the failures are in the metrics. Exports are driven by forceFlush() with a 500 ms
 * export timeout, so every test ends by itself within a few seconds.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { diag, DiagLogLevel, type DiagLogger } from "@opentelemetry/api";
import { startTelemetry, type ExportErrorCount, type Telemetry } from "../../src/sdk.js";
import type { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { refusedUrl, spanCount, startFaultServer, sumPoint, type FaultServer } from "./fault-server.js";

const EXPORT_TIMEOUT = 500;
const JOURNEYS_PER_ROUND = 50;
/** A sanity bound on the event loop's delay, generous for a loaded machine: no timing claim. */
const MAX_LOOP_DELAY = 2_000;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Logged {
  warn: string[];
  error: string[];
}

/** A diag logger of the test's own (so startTelemetry installs none), keeping warnings and errors. */
function captureDiag(): Logged {
  const logged: Logged = { warn: [], error: [] };
  const text = (message: string, args: unknown[]) =>
    [message, ...args.map((arg) => (arg instanceof Error ? arg.message : String(arg)))].join(" ");
  const logger: DiagLogger = {
    error: (message, ...args) => logged.error.push(text(message, args)),
    warn: (message, ...args) => logged.warn.push(text(message, args)),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  cleanups.push(() => diag.disable());
  return logged;
}

let instances = 0;

async function telemetryTo(
  endpoint: string,
  clock: FakeClock,
  timeoutMillis = EXPORT_TIMEOUT,
  protocol: "http/json" | "http/protobuf" = "http/json",
): Promise<Telemetry> {
  const telemetry = await startTelemetry({
    role: "worker",
    instance: `tcp://127.0.0.1:${41000 + ++instances}`,
    registerGlobal: false,
    journeys: { runtime: { clock: clock.now }, sampling: { ratio: 1 } },
    exporters: { endpoint, protocol, timeoutMillis, metricExportIntervalMillis: 3_600_000 },
  });
  cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
  return telemetry;
}

/**
 * Failures in a fixed order, traces before metrics: the two signals flush at once, so which of
 * them fails first (the order exportErrors() keeps) is up to the network or the file system.
 */
function tracesFirst(failures: ExportErrorCount[]): ExportErrorCount[] {
  const rank = (failure: ExportErrorCount) => (failure.signal === "traces" ? 0 : 1);
  return [...failures].sort((a, b) => rank(a) - rank(b));
}

/** The warnings in the same order: the one about traces first. */
function tracesFirstWarnings(warnings: string[]): string[] {
  const rank = (message: string) => (message.includes("exporting traces") ? 0 : 1);
  return [...warnings].sort((a, b) => rank(a) - rank(b));
}

/** One round of work: JOURNEYS_PER_ROUND tasks released → waiting → ready → executing → memory, 4 transitions each. */
function round(journeys: TaskJourneys, clock: FakeClock, index: number): number {
  for (let task = 0; task < JOURNEYS_PER_ROUND; task++) {
    const key = `inc-${index}-${task}`;
    journeys.transition(key, "released", "waiting");
    clock.advance(0.25);
    journeys.transition(key, "waiting", "ready");
    clock.advance(0.25);
    journeys.transition(key, "ready", "executing");
    clock.advance(0.5);
    journeys.transition(key, "executing", "memory");
  }
  return 4 * JOURNEYS_PER_ROUND;
}

/**
 * Flushes while the host goes on recording (one more round once the flush is under way: with the
 * round before, fewer spans than the BatchSpanProcessor's batch of 512, so that no export starts
 * outside the flushes), and measures the event loop's delay meanwhile. Returns the transitions
 * made during the flush.
 */
async function flushUnderLoad(
  telemetry: Telemetry,
  clock: FakeClock,
  index: number,
): Promise<{ recorded: number; maxDelayMillis: number; completed: boolean }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let recorded = 0;
  let flushing = true;
  let batch = 0;
  const load = new Promise<void>((resolve) => {
    const step = () => {
      if (!flushing || batch === 1) return resolve();
      recorded += round(telemetry.journeys, clock, index * 1000 + ++batch);
      setImmediate(step);
    };
    setImmediate(step);
  });
  const { completed } = await telemetry.forceFlush({ timeoutMillis: 10_000 });
  flushing = false;
  await load;
  delay.disable();
  return { recorded, maxDelayMillis: delay.max / 1e6, completed };
}

const ENDPOINT_MODES = [
  { fault: "refused", errorType: "ECONNREFUSED" },
  { fault: "black-hole", errorType: "timeout" },
  { fault: "500", errorType: "500" },
  { fault: "reset", errorType: "ECONNRESET" },
] as const;

const ENDPOINT_MATRIX = ENDPOINT_MODES.flatMap((mode) =>
  (["http/json", "http/protobuf"] as const).map((protocol) => ({ ...mode, protocol })),
);

describe("exporting to an endpoint that fails", () => {
  it.each(ENDPOINT_MATRIX)(
    "$fault, $protocol: the host records on, every failed export is counted as $errorType and warned once per signal",
    async ({ fault, errorType, protocol }) => {
      const logged = captureDiag();
      let server: FaultServer | undefined;
      let endpoint: string;
      if (fault === "refused") {
        endpoint = await refusedUrl();
      } else {
        server = await startFaultServer(fault);
        cleanups.push(() => server!.close());
        endpoint = server.url;
      }
      const clock = new FakeClock(0);
      const telemetry = await telemetryTo(endpoint, clock, EXPORT_TIMEOUT, protocol);
      let transitions = 0;
      for (let flush = 1; flush <= 3; flush++) {
        transitions += round(telemetry.journeys, clock, flush);
        const { recorded, maxDelayMillis, completed } = await flushUnderLoad(telemetry, clock, flush);
        transitions += recorded;
        expect(completed).toBe(true);
        // A sanity bound, not a timing claim: nothing in an export may hold the loop for long.
        expect(maxDelayMillis).toBeLessThan(MAX_LOOP_DELAY);
      }
      // What the last round left in the span queue.
      expect((await telemetry.forceFlush()).completed).toBe(true);

      // Every transition recorded, none dropped, while each export failed.
      expect(telemetry.journeys.dropped()).toEqual({});
      const stats = telemetry.journeys.stats("inc", "executing");
      expect(stats.count).toBe(transitions / 4);

      const failures = tracesFirst(telemetry.exportErrors());
      expect(
        failures.map(({ signal, destination, errorType: type }) => ({ signal, destination, errorType: type })),
      ).toEqual([
        { signal: "traces", destination: `${endpoint}/v1/traces`, errorType },
        { signal: "metrics", destination: `${endpoint}/v1/metrics`, errorType },
      ]);
      const [traces, metrics] = failures;
      // Each journey is a task span and one span per state it passed through: as many as its transitions.
      expect(traces.items).toBe(transitions);
      expect(metrics.exports).toBe(4);
      expect(metrics.items).toBeGreaterThan(0);

      // Told once per kind, with the endpoint, the error type and what was lost; the SDK's own
      // per-batch errors are not passed on.
      expect(logged.warn).toHaveLength(2);
      const [tracesWarning, metricsWarning] = tracesFirstWarnings(logged.warn);
      expect(tracesWarning).toContain(`exporting traces to ${endpoint}/v1/traces failed`);
      expect(tracesWarning).toContain(`error.type="${errorType}"`);
      expect(metricsWarning).toContain(`exporting metrics to ${endpoint}/v1/metrics failed`);
      expect(logged.error).toEqual([]);
      if (server !== undefined) expect(server.requests.length).toBeGreaterThanOrEqual(traces.exports + metrics.exports);
    },
  );

  it("429 with Retry-After: the exporter retries as told within its timeout, then the export is counted as retryable", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("429");
    cleanups.push(() => server.close());
    const clock = new FakeClock(0);
    // 2.5 s: room for one retry after the 1 s Retry-After (two when the answers come fast).
    const telemetry = await telemetryTo(server.url, clock, 2_500);
    round(telemetry.journeys, clock, 1);
    const { completed, maxDelayMillis } = await flushUnderLoad(telemetry, clock, 1);
    expect(completed).toBe(true);
    expect(maxDelayMillis).toBeLessThan(MAX_LOOP_DELAY);
    const failures = tracesFirst(telemetry.exportErrors());
    expect(failures.map((failure) => [failure.signal, failure.errorType, failure.exports])).toEqual([
      ["traces", "retryable", 1],
      ["metrics", "retryable", 1],
    ]);
    // Retried, as often as Retry-After leaves room for within the timeout: once or twice.
    for (const path of ["/v1/traces", "/v1/metrics"]) {
      const attempts = server.requests.filter((request) => request.path === path).length;
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(attempts).toBeLessThanOrEqual(3);
    }
    expect(logged.warn).toHaveLength(2);
    expect(logged.warn.every((message) => message.includes("answered 429, 502, 503 or 504"))).toBe(true);
  });

  it("slow: answers within the timeout are no failures", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("slow");
    cleanups.push(() => server.close());
    const clock = new FakeClock(0);
    const telemetry = await telemetryTo(server.url, clock, 2_000);
    round(telemetry.journeys, clock, 1);
    const { completed } = await flushUnderLoad(telemetry, clock, 1);
    expect(completed).toBe(true);
    expect(telemetry.exportErrors()).toEqual([]);
    expect(logged.warn).toEqual([]);
    expect(server.accepted.some((request) => request.path === "/v1/traces" && spanCount(request.body) > 0)).toBe(true);
  });

  it("down then up: what the outage lost is counted, and once the endpoint is back every total is right and the failures are in the metrics", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("ok");
    cleanups.push(() => server.close());
    const clock = new FakeClock(0);
    const telemetry = await telemetryTo(server.url, clock);
    const spansOf = () =>
      server.accepted
        .filter((request) => request.path === "/v1/traces")
        .reduce((sum, request) => sum + spanCount(request.body), 0);

    // Up: one round arrives whole.
    let transitions = round(telemetry.journeys, clock, 1);
    expect((await telemetry.forceFlush()).completed).toBe(true);
    const spansPerRound = spansOf();
    expect(spansPerRound).toBe(JOURNEYS_PER_ROUND * 4);

    // Down for two rounds.
    server.mode = "500";
    for (const index of [2, 3]) {
      transitions += round(telemetry.journeys, clock, index);
      expect((await telemetry.forceFlush()).completed).toBe(true);
    }
    expect(spansOf()).toBe(spansPerRound);
    const lost = tracesFirst(telemetry.exportErrors());
    expect(lost.map((failure) => [failure.signal, failure.errorType, failure.exports])).toEqual([
      ["traces", "500", 2],
      ["metrics", "500", 2],
    ]);
    expect(lost[0].items).toBe(2 * spansPerRound);

    // Up again.
    server.mode = "ok";
    transitions += round(telemetry.journeys, clock, 4);
    expect((await telemetry.forceFlush()).completed).toBe(true);
    expect(spansOf()).toBe(2 * spansPerRound);
    const metrics = server.accepted.filter((request) => request.path === "/v1/metrics");
    const last = metrics[metrics.length - 1].body;
    // Cumulative totals cover the outage: every transition and every second is in them.
    expect(sumPoint(last, "task.transitions", { "task.prefix": "inc", "task.state": "memory" })).toBe(transitions / 4);
    expect(sumPoint(last, "task.state.time", { "task.prefix": "inc", "task.state": "executing" })).toBe(
      (transitions / 4) * 0.5,
    );
    expect(sumPoint(last, "task.state.time", { "task.prefix": "inc", "task.state": "waiting" })).toBe(
      (transitions / 4) * 0.25,
    );
    // And what was lost, by signal and error type.
    expect(sumPoint(last, "taskjourney.export.errors", { signal: "traces", "error.type": "500" })).toBe(
      2 * spansPerRound,
    );
    expect(sumPoint(last, "taskjourney.export.errors", { signal: "metrics", "error.type": "500" })).toBe(lost[1].items);
    expect(logged.warn).toHaveLength(2);
    expect(logged.error).toEqual([]);
  });

  it("http/protobuf: a 500 is counted and told alike", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("500");
    cleanups.push(() => server.close());
    const clock = new FakeClock(0);
    const telemetry = await telemetryTo(server.url, clock, EXPORT_TIMEOUT, "http/protobuf");
    round(telemetry.journeys, clock, 1);
    expect(await telemetry.forceFlush()).toEqual({ completed: true });
    expect(
      tracesFirst(telemetry.exportErrors()).map((failure) => [failure.signal, failure.errorType, failure.items > 0]),
    ).toEqual([
      ["traces", "500", true],
      ["metrics", "500", true],
    ]);
    expect(tracesFirst(telemetry.exportErrors())[0].items).toBe(JOURNEYS_PER_ROUND * 4);
    expect(logged.warn).toHaveLength(2);
  });

  it("OTLP JSON lines files: a write that fails is counted by its error code", async () => {
    const logged = captureDiag();
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-faults-"));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const clock = new FakeClock(0);
    const telemetry = await startTelemetry({
      role: "worker",
      instance: "files",
      registerGlobal: false,
      fileDirectory: directory,
      journeys: { runtime: { clock: clock.now }, sampling: { ratio: 1 } },
      exporters: { metricExportIntervalMillis: 3_600_000 },
    });
    cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
    // Directories where the files should be: every append fails with EISDIR.
    for (const destination of [...telemetry.destinations.traces, ...telemetry.destinations.metrics]) {
      if (destination.kind === "file") await mkdir(destination.path);
    }
    round(telemetry.journeys, clock, 1);
    expect(await telemetry.forceFlush()).toEqual({ completed: true });
    const failures = tracesFirst(telemetry.exportErrors());
    expect(failures.map((failure) => [failure.signal, failure.errorType])).toEqual([
      ["traces", "EISDIR"],
      ["metrics", "EISDIR"],
    ]);
    expect(failures[0].destination).toBe(join(directory, "traces-worker-files.jsonl"));
    expect(failures[0].items).toBe(JOURNEYS_PER_ROUND * 4);
    expect(logged.warn).toHaveLength(2);
    const tracesWarning = `exporting traces to ${join(directory, "traces-worker-files.jsonl")} failed`;
    expect(logged.warn.filter((message) => message.includes(tracesWarning))).toHaveLength(1);
  });

  it.skipIf(process.platform === "win32")(
    "OTLP JSON lines files: a named pipe with no reader at a file's path fails each export at once (ENXIO) instead of blocking it, and shutdown completes",
    async () => {
      const logged = captureDiag();
      const directory = await mkdtemp(join(tmpdir(), "taskjourney-fifo-"));
      cleanups.push(() => rm(directory, { recursive: true, force: true }));
      const traces = join(directory, "traces-worker-fifo.jsonl");
      execFileSync("mkfifo", [traces]);
      const clock = new FakeClock(0);
      const telemetry = await startTelemetry({
        role: "worker",
        instance: "fifo",
        registerGlobal: false,
        fileDirectory: directory,
        journeys: { runtime: { clock: clock.now }, sampling: { ratio: 1 } },
        exporters: { metricExportIntervalMillis: 3_600_000 },
      });
      cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
      for (let flush = 1; flush <= 2; flush++) {
        round(telemetry.journeys, clock, flush);
        // Before: the open() of the pipe blocked until a reader came, and this waited its whole deadline.
        expect(await telemetry.forceFlush({ timeoutMillis: 10_000 })).toEqual({ completed: true });
      }
      expect(telemetry.exportErrors()).toEqual([
        { signal: "traces", destination: traces, errorType: "ENXIO", items: 2 * JOURNEYS_PER_ROUND * 4, exports: 2 },
      ]);
      expect(logged.warn).toHaveLength(1);
      expect(logged.warn[0]).toContain("a named pipe (FIFO) there with no process reading it");
      // The metrics file beside it is written as usual.
      expect(readFileSync(join(directory, "metrics-worker-fifo.jsonl"), "utf8").split("\n").length).toBeGreaterThan(2);
      expect(await telemetry.shutdown({ timeoutMillis: 10_000 })).toEqual({ completed: true });
    },
  );

  it("OTEL_EXPORTER_OTLP_TIMEOUT (from the environment) bounds each export", async () => {
    captureDiag();
    const server = await startFaultServer("black-hole");
    cleanups.push(() => server.close());
    const variables = {
      OTEL_EXPORTER_OTLP_ENDPOINT: server.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TIMEOUT: "300",
      OTEL_METRIC_EXPORT_INTERVAL: "3600000",
    };
    for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
    cleanups.push(() => {
      vi.unstubAllEnvs();
    });
    const clock = new FakeClock(0);
    const telemetry = await startTelemetry({
      role: "worker",
      instance: `tcp://127.0.0.1:${41000 + ++instances}`,
      registerGlobal: false,
      journeys: { runtime: { clock: clock.now }, sampling: { ratio: 1 } },
    });
    cleanups.push(() => telemetry.shutdown({ timeoutMillis: 5_000 }));
    round(telemetry.journeys, clock, 1);
    // The exporters' own default (10 s) would outlast this deadline.
    expect(await telemetry.forceFlush({ timeoutMillis: 5_000 })).toEqual({ completed: true });
    expect(tracesFirst(telemetry.exportErrors()).map((failure) => [failure.signal, failure.errorType])).toEqual([
      ["traces", "timeout"],
      ["metrics", "timeout"],
    ]);
  });

  it("shutdown with an endpoint that never answers stops waiting at its deadline and counts what was under way", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("black-hole");
    cleanups.push(() => server.close());
    const clock = new FakeClock(0);
    // An export timeout far beyond the deadline: the deadline decides.
    const telemetry = await telemetryTo(server.url, clock, 60_000);
    round(telemetry.journeys, clock, 1);
    const result = await telemetry.shutdown({ timeoutMillis: 300 });
    expect(result).toEqual({ completed: false });
    const failures = tracesFirst(telemetry.exportErrors());
    expect(failures.map((failure) => [failure.signal, failure.errorType])).toEqual([
      ["traces", "shutdown_deadline"],
      ["metrics", "shutdown_deadline"],
    ]);
    expect(failures[0].items).toBe(JOURNEYS_PER_ROUND * 4);
    expect(logged.warn[0]).toContain(
      `telemetry shutdown stopped waiting after 300 ms for the exports to ${server.url}/v1/traces, ${server.url}/v1/metrics`,
    );
    // Idempotent: the second call is the first one's result.
    await expect(telemetry.shutdown()).resolves.toEqual({ completed: false });
  });
});

describe("a full span queue", () => {
  it("spans the batch span processor drops on its full queue (OTEL_BSP_MAX_QUEUE_SIZE) are counted as queue_full, told once, and in the metrics", async () => {
    const logged = captureDiag();
    const server = await startFaultServer("ok");
    cleanups.push(() => server.close());
    // A queue of 100 spans, exported in batches of 100 and never on the timer: the first 100 spans
    // go out in one export, the next 100 wait in the queue, and the rest find it full.
    const variables = {
      OTEL_BSP_MAX_QUEUE_SIZE: "100",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100",
      OTEL_BSP_SCHEDULE_DELAY: "3600000",
    };
    for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
    cleanups.push(() => {
      vi.unstubAllEnvs();
    });
    const clock = new FakeClock(0);
    const telemetry = await telemetryTo(server.url, clock);
    // Two rounds of 200 spans in one go: the first export cannot have answered in between.
    const transitions = round(telemetry.journeys, clock, 1) + round(telemetry.journeys, clock, 2);
    expect(transitions).toBe(400);
    expect((await telemetry.forceFlush()).completed).toBe(true);

    const exported = server.accepted
      .filter((request) => request.path === "/v1/traces")
      .reduce((sum, request) => sum + spanCount(request.body), 0);
    expect(exported).toBe(200);
    expect(telemetry.exportErrors()).toEqual([
      { signal: "traces", destination: `${server.url}/v1/traces`, errorType: "queue_full", items: 200, exports: 0 },
    ]);
    const queueWarnings = logged.warn.filter((line) => line.startsWith("taskjourney:"));
    expect(queueWarnings).toHaveLength(1);
    expect(queueWarnings[0]).toContain("queue was full (maxQueueSize, OTEL_BSP_MAX_QUEUE_SIZE)");
    expect(queueWarnings[0]).toContain('error.type="queue_full"');
    // And in the metrics, beside the spans' transitions, every one of which was recorded.
    const metrics = server.accepted.filter((request) => request.path === "/v1/metrics");
    const last = metrics[metrics.length - 1].body;
    expect(sumPoint(last, "taskjourney.export.errors", { signal: "traces", "error.type": "queue_full" })).toBe(200);
    expect(sumPoint(last, "task.transitions", { "task.prefix": "inc", "task.state": "memory" })).toBe(100);

    // Spans that find room again after the drops: the processor underneath says nothing of its own
    // ("Dropped 200 spans because maxQueueSize reached"), the drops being told once, above.
    round(telemetry.journeys, clock, 3);
    expect((await telemetry.forceFlush()).completed).toBe(true);
    expect(logged.warn.filter((line) => !line.startsWith("taskjourney:"))).toEqual([]);
    expect(logged.warn.filter((line) => line.startsWith("taskjourney:"))).toHaveLength(1);
  });

  it("an OTEL_BSP_* variable that is not a positive integer is a configuration error naming it", async () => {
    vi.stubEnv("OTEL_BSP_MAX_QUEUE_SIZE", "lots");
    cleanups.push(() => {
      vi.unstubAllEnvs();
    });
    await expect(
      startTelemetry({
        role: "worker",
        instance: "w",
        registerGlobal: false,
        exporters: { traces: "none", metrics: "none" },
      }),
    ).rejects.toThrow(/OTEL_BSP_MAX_QUEUE_SIZE.*positive integer \(spans\)/);
  });
});

/**
 * A process of its own that exports to `url` with taskjourney's own diag logger (the console, the
 * application having none), flushing `flushes` times; resolves its stderr.
 */
function exportingProcess(
  url: string,
  protocol: string,
  flushes: number,
): Promise<{ code: number | null; stderr: string }> {
  const sdk = pathToFileURL(fileURLToPath(new URL("../../src/sdk.ts", import.meta.url))).href;
  const script = `
    const { startTelemetry } = await import(${JSON.stringify(sdk)});
    const telemetry = await startTelemetry({
      role: "worker", instance: "garbage", registerGlobal: false, journeys: { sampling: { ratio: 1 } },
      exporters: { endpoint: ${JSON.stringify(url)}, protocol: ${JSON.stringify(protocol)}, timeoutMillis: 2000, metricExportIntervalMillis: 3600000 },
    });
    for (let flush = 0; flush < ${flushes}; flush++) {
      telemetry.journeys.transition("k" + flush, "released", "waiting");
      telemetry.journeys.transition("k" + flush, "waiting", "memory");
      await telemetry.forceFlush();
    }
    const result = await telemetry.shutdown();
    if (!result.completed || telemetry.exportErrors().length > 0) process.exit(2);
  `;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_")) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the exporting process did not end:\n${stderr}`));
    }, 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("an endpoint whose 200 answers are not OTLP responses", () => {
  it.each(["http/json", "http/protobuf"] as const)(
    "%s: nothing is lost, and the exporters' warning about the answer is told once, not at every export",
    async (protocol) => {
      const server = await startFaultServer("garbage-200");
      cleanups.push(() => server.close());
      const flushes = 5;
      const { code, stderr } = await exportingProcess(server.url, protocol, flushes);
      // Completed, and a 200 is a success: nothing counted (exit code 2 otherwise).
      expect(code, stderr).toBe(0);
      // Every flush exported both signals (the shutdown once more).
      expect(server.requests.filter((request) => request.path === "/v1/traces").length).toBeGreaterThanOrEqual(flushes);
      expect(server.requests.filter((request) => request.path === "/v1/metrics").length).toBeGreaterThanOrEqual(
        flushes,
      );
      // The exporters warn at each export; told once per distinct warning (one per signal at most).
      const told =
        stderr.match(/could not deserialize response|Failed to parse (trace|metrics) export response/g) ?? [];
      expect(told.length, stderr).toBeGreaterThanOrEqual(1);
      expect(told.length, stderr).toBeLessThanOrEqual(2);
    },
  );
});
