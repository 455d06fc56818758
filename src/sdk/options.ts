import { type Attributes } from "@opentelemetry/api";
import { type Resource } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { TaskJourneys, type StateOf } from "../journeys.js";
import type { StateMachine } from "../model/machine.js";
import type { Role } from "../model/states.js";
import type { DeprecatedFlatOptions, TaskJourneysOptions } from "../types.js";
import { type ExportErrorCount } from "./export-failures.js";

/** The public options and results of `startTelemetry()` (re-exported by the `taskjourney/sdk` entry, src/sdk.ts). */

/**
 * Where spans go, as in OTEL_TRACES_EXPORTER.
 * @stable
 * @example
 * const traces: TracesExporterName[] = ["otlp", "zipkin"];
 */
export type TracesExporterName = "otlp" | "zipkin" | "console" | "none";
/**
 * Where metrics go, as in OTEL_METRICS_EXPORTER.
 * @stable
 * @example
 * const metrics: MetricsExporterName = "prometheus";
 */
export type MetricsExporterName = "otlp" | "console" | "prometheus" | "none";
/**
 * The OTLP protocol, as in OTEL_EXPORTER_OTLP_PROTOCOL.
 * @stable
 * @example
 * const protocol: OtlpProtocol = "http/json";
 */
export type OtlpProtocol = "http/protobuf" | "http/json";

/**
 * The Prometheus pull endpoint's host, port and path.
 * @stable
 * @example
 * const prometheus: PrometheusOptions = { host: "0.0.0.0", port: 9464, endpoint: "/metrics" };
 */
export interface PrometheusOptions {
  /** Default OTEL_EXPORTER_PROMETHEUS_HOST, else "localhost". */
  host?: string;
  /** Default OTEL_EXPORTER_PROMETHEUS_PORT, else 9464; 0 picks a free port (see `prometheusUrl`). */
  port?: number;
  /** Default "/metrics". */
  endpoint?: string;
}

/**
 * Exporter settings in code; each one left out is read from its OTEL_* variable, then the default.
 * @stable
 * @example
 * const exporters: ExporterOptions = { traces: "otlp", metrics: ["otlp", "prometheus"], endpoint: "http://collector:4318" };
 */
export interface ExporterOptions {
  /** OTEL_TRACES_EXPORTER; default "otlp". */
  traces?: TracesExporterName | readonly TracesExporterName[];
  /** OTEL_METRICS_EXPORTER; default "otlp". */
  metrics?: MetricsExporterName | readonly MetricsExporterName[];
  /** Base URL for both signals (/v1/traces and /v1/metrics are appended); OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint?: string;
  /** Full URL of the traces endpoint; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  tracesEndpoint?: string;
  /** Full URL of the metrics endpoint; OTEL_EXPORTER_OTLP_METRICS_ENDPOINT. */
  metricsEndpoint?: string;
  /** Where `traces: "zipkin"` posts spans as Zipkin JSON v2; OTEL_EXPORTER_ZIPKIN_ENDPOINT, default http://localhost:9411/api/v2/spans. */
  zipkinEndpoint?: string;
  /** OTEL_EXPORTER_OTLP_PROTOCOL (and its _TRACES_/_METRICS_ forms); default "http/protobuf". */
  protocol?: OtlpProtocol;
  /** Extra HTTP headers of OTLP requests (the exporters also read OTEL_EXPORTER_OTLP_HEADERS). */
  headers?: Record<string, string>;
  /** OTEL_METRIC_EXPORT_INTERVAL; default 60000. */
  metricExportIntervalMillis?: number;
  /** OTEL_METRIC_EXPORT_TIMEOUT; default 30000, at most the interval. */
  metricExportTimeoutMillis?: number;
  /** How long one OTLP export may take, retries included: OTEL_EXPORTER_OTLP_TIMEOUT (and its _TRACES_/_METRICS_ forms); default 10000. Also one Zipkin export's (else OTEL_EXPORTER_ZIPKIN_TIMEOUT). */
  timeoutMillis?: number;
  /** A Prometheus pull endpoint with explicit-bucket duration histograms; also `OTEL_METRICS_EXPORTER=prometheus`. */
  prometheus?: boolean | PrometheusOptions;
}

/**
 * What `startTelemetry()` takes: role, instance, service name, resource attributes, journeys' options, exporters, files.
 *
 * `R` and `S` as TaskJourneys takes them: the role, and the state names of `journeys.machine`
 * (else the role's Dask preset's), so that the journeys handed back type `transition()` by them.
 * @stable
 * @example
 * const options: StartTelemetryOptions<"worker"> = { role: "worker", instance: "tcp://10.0.0.7:40001", fileDirectory: "telemetry" };
 */
export interface StartTelemetryOptions<R extends Role = Role, S extends string = StateOf<R>> {
  /** Whose journeys: a worker's or the scheduler's. Becomes the resource attribute taskjourney.role. */
  role: R;
  /** This process among its peers, e.g. "tcp://10.0.0.7:40001". Becomes service.instance.id. */
  instance: string;
  /** service.name; default OTEL_SERVICE_NAME, else service.name of OTEL_RESOURCE_ATTRIBUTES, else "taskjourney-<role>". */
  serviceName?: string;
  /** More resource attributes, over those of OTEL_RESOURCE_ATTRIBUTES. */
  resourceAttributes?: Attributes;
  /** Options of the TaskJourneys made here (its providers are the ones made here). */
  journeys?: Omit<TaskJourneysOptions, "role" | "instance" | "tracerProvider" | "meterProvider" | "machine"> &
    DeprecatedFlatOptions & {
      /** Your scheduler's state machine (its states, moves, terminal states and roles), instead of the role's Dask preset. */
      machine?: StateMachine<S>;
    };
  exporters?: ExporterOptions;
  /**
   * When set and no OTLP endpoint is configured for a signal, its OTLP export goes to OTLP JSON
   * lines files in this directory instead (`traces-<role>-<instance>.jsonl`,
   * `metrics-<role>-<instance>.jsonl`), one `{"resourceSpans":[...]}` or
   * `{"resourceMetrics":[...]}` request per line, as the Collector's file exporter writes them.
   */
  fileDirectory?: string;
  /** Register the tracer provider (with context manager and propagator) and meter provider globally; default true. */
  registerGlobal?: boolean;
}

/**
 * One place a signal goes to, as resolved from options and environment.
 * @stable
 * @example
 * for (const destination of telemetry.destinations.traces) if (destination.kind === "file") console.log(destination.path);
 */
export type Destination =
  | { kind: "otlp"; protocol: OtlpProtocol; url: string }
  | { kind: "zipkin"; url: string }
  | { kind: "file"; path: string }
  | { kind: "console" }
  | { kind: "prometheus"; url: string };

/**
 * How a flush or shutdown ended: `completed`, or lost to the deadline.
 * @stable
 * @example
 * const { completed }: FlushResult = await telemetry.shutdown({ timeoutMillis: 5000 });
 */
export interface FlushResult {
  /** False when the deadline passed first: what was still being exported is lost (and its failure counted, if it fails before the process exits). */
  readonly completed: boolean;
}

/**
 * How long `forceFlush()` and `shutdown()` wait for the exports.
 * @stable
 * @example
 * const options: FlushOptions = { timeoutMillis: 5000 };
 */
export interface FlushOptions {
  /** The most milliseconds to wait for the exports; default 30000. */
  timeoutMillis?: number;
}

/**
 * What `startTelemetry()` resolves: the journeys, the providers, where signals go, failed exports, flush and shutdown.
 * @stable
 * @example
 * const telemetry: Telemetry<"worker"> = await startTelemetry({ role: "worker", instance: "w1" });
 * process.once("SIGTERM", () => void telemetry.shutdown());
 */
export interface Telemetry<R extends Role = Role, S extends string = StateOf<R>> {
  readonly journeys: TaskJourneys<R, S>;
  readonly tracerProvider: TracerProvider;
  readonly meterProvider: MeterProvider;
  readonly resource: Resource;
  /** Where spans and metrics go. */
  readonly destinations: { readonly traces: readonly Destination[]; readonly metrics: readonly Destination[] };
  /** The Prometheus scrape URL, when the pull endpoint is on. */
  readonly prometheusUrl: string | undefined;
  /**
   * Every kind of export error so far (signal, destination, error type) with the spans or metric
   * data points it lost, as counted in `taskjourney.export.errors`.
   */
  exportErrors(): ExportErrorCount[];
  /** @deprecated The old name of `exportErrors()`, told once: write `exportErrors()`. */
  exportFailures(): ExportErrorCount[];
  /** Exports what is pending now, without shutting down; waits at most `timeoutMillis`. Never rejects. */
  forceFlush(options?: FlushOptions): Promise<FlushResult>;
  /**
   * Stops the journeys, flushes and shuts down the providers made here, waiting for the exports
   * at most `timeoutMillis` (a dead or silent endpoint cannot hold the process's exit longer).
   * Idempotent: a second call gets the first one's promise. Never rejects.
   */
  shutdown(options?: FlushOptions): Promise<FlushResult>;
}
