/**
 * OpenTelemetry for one cluster process (scheduler or worker), through taskjourney's one-call
 * SDK setup: with OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal variables) set, OTLP to that
 * endpoint as the OTEL_* variables say; otherwise OTLP JSON lines files in `<out>/otlp/`
 * (`traces-<role>-<instance>.jsonl`, `metrics-<role>-<instance>.jsonl`), one export request per
 * line as the Collector's file exporter writes them.
 */
import path from "node:path";
import type { TaskJourneys, TaskJourneysOptions } from "../../src/index.js";
import type { Destination, ExportErrorCount } from "../../src/sdk.js";
import { partOff } from "./parts.js";
import { sdk } from "./taskjourney.js";

export interface TelemetryOptions {
  role: "scheduler" | "worker";
  /** The process's address, e.g. tcp://127.0.0.1:40001. */
  instance: string;
  /** Where OTLP JSON files go when no endpoint is configured (in its otlp/ subdirectory). */
  outDir: string;
  /** Head-sampling ratio of task journeys into traces; "off" for no traces at all (not even slow or failed journeys). */
  traceRatio: number | "off";
  /** More TaskJourneys options, over the ones here (the benchmarks' variants: `retainedJourneys: 0`, …). */
  journeys?: Partial<TaskJourneysOptions>;
}

/**
 * How long a process waits for its last exports at shutdown. With a dead or silent endpoint
 * (whose exports retry up to OTEL_EXPORTER_OTLP_TIMEOUT, 10 s by default) the demo still ends a
 * few seconds after its work; a healthy local endpoint takes well under a second.
 */
export const FLUSH_DEADLINE_MS = 3_000;
const EXPORT_TIMEOUT_MS = 2_000;

export interface Telemetry {
  journeys: TaskJourneys;
  /** Where spans and metrics go, for the user. */
  destination: string;
  /** Flushes and exports everything, then stops; waits at most FLUSH_DEADLINE_MS. Resolves whether every export finished in time. */
  shutdown(): Promise<{ completed: boolean }>;
  /** Export failures so far (they are also warned on stderr as they happen). */
  exportErrors(): ExportErrorCount[];
}

/** The endpoint OTLP exporters will use, if any is configured. */
export function otlpEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return (
    env.OTEL_EXPORTER_OTLP_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ||
    undefined
  );
}

function describe(destinations: readonly Destination[]): string {
  return destinations
    .map((destination) =>
      "path" in destination
        ? path.dirname(destination.path)
        : "url" in destination
          ? destination.url
          : destination.kind,
    )
    .join(", ");
}

export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  const telemetry = await sdk.startTelemetry({
    role: options.role,
    instance: options.instance,
    serviceName: process.env.OTEL_SERVICE_NAME ?? "taskjourney-cluster",
    journeys: {
      // No AsyncLocalStorage, on any runtime (npm run bench -- ambient --node=20,24,26): worker.ts
      // takes the ledger before each await and re-enters it with ledger.run() after, so spills and
      // transfers are still charged to their execution, and that is 1.3–1.5× cheaper per execution
      // than the ambient lookup on Node 24 and 26. On Node 20 AsyncLocalStorage would also put
      // promise hooks on every promise in the process (piscina's, the sockets'): each await 3–7×
      // slower, 0.6–0.9 µs more. (On Node 24 and later, built on AsyncContextFrame, it costs an
      // await nothing measurable, so the library's default stays on for applications.)
      runtime: { asyncContext: false },
      sampling: {
        ratio: options.traceRatio === "off" ? 0 : options.traceRatio,
        // No traces at all: neither head-sampled nor kept at their end.
        ...(options.traceRatio === "off" ? { ratio: 0, keepSlowerThan: 0, keepErrors: false } : {}),
      },
      // No traces at all also means no span bridge: with nothing ever sampled, it would still listen
      // to every transition and hand out trace ids for every task's carriers (inject() returns
      // true), which the other side parses: 13–17 µs of CPU a task in the cluster's tiny-task
      // workload (bench/README.md, issue 34). With traces: false, inject() writes nothing.
      ...(options.traceRatio === "off" ? { traces: false } : {}),
      // Benchmark switch (parts.ts): the stall probe left out.
      ...(partOff("stalls") ? { processStalls: false } : {}),
      // Benchmark switch (parts.ts): no span bridge.
      ...(partOff("span-bridge") ? { traces: false } : {}),
      // Benchmark switch (parts.ts): no ended journeys kept for explain().
      ...(partOff("retained") ? { retainedJourneys: 0 } : {}),
      ...options.journeys,
    },
    fileDirectory: path.join(options.outDir, "otlp"),
    exporters: {
      // Benchmark switch (parts.ts): no metric reader and no span export at all.
      ...(partOff("export") ? { traces: "none" as const, metrics: "none" as const } : {}),
      // Every 10 s unless OTEL_METRIC_EXPORT_INTERVAL says otherwise.
      ...(process.env.OTEL_METRIC_EXPORT_INTERVAL === undefined ? { metricExportIntervalMillis: 10_000 } : {}),
      // An export (retries included) gives up within the flush deadline unless
      // OTEL_EXPORTER_OTLP_TIMEOUT says otherwise, so that a dead endpoint's last exports fail with
      // their own error (ECONNREFUSED, timeout) rather than being cut off by the deadline.
      ...(process.env.OTEL_EXPORTER_OTLP_TIMEOUT === undefined ? { timeoutMillis: EXPORT_TIMEOUT_MS } : {}),
    },
    // The cluster makes no spans of its own: no need for global providers.
    registerGlobal: false,
  });
  const { traces, metrics } = telemetry.destinations;
  return {
    journeys: telemetry.journeys,
    destination: [...new Set([describe(traces), describe(metrics)])].filter((text) => text !== "").join("; "),
    shutdown: () => telemetry.shutdown({ timeoutMillis: FLUSH_DEADLINE_MS }),
    exportErrors: () => telemetry.exportErrors(),
  };
}
