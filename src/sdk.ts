/**
 * `taskjourney/sdk`: one call sets up OpenTelemetry for a scheduler or worker process and hands
 * back a TaskJourneys wired to it.
 *
 *     import { startTelemetry } from "taskjourney/sdk";
 *     const telemetry = await startTelemetry({ role: "worker", instance: "tcp://10.0.0.7:40001" });
 *     const { journeys } = telemetry;
 *     ...
 *     await telemetry.shutdown();
 *
 * Spans go through a TracerProvider of `@opentelemetry/sdk-trace` (the package of that name exists
 * in both OpenTelemetry JS lines, 2.x and 3.x, which is why it is used instead of 2.x's
 * sdk-trace-node, which 3.x dropped) with a BatchSpanProcessor, metrics through a
 * MeterProvider whose PeriodicExportingMetricReaders carry `journeys.metricProducer`; both are
 * exported over OTLP/HTTP (protobuf or JSON) as the standard OTEL_* environment variables say,
 * spans also to a Zipkin server (OTEL_TRACES_EXPORTER=zipkin, sdk/zipkin-exporter.ts), to the console, to OTLP JSON lines files (when no endpoint is configured and `fileDirectory`
 * is given), or, for metrics, to a Prometheus pull endpoint. Role and instance become resource
 * attributes (`taskjourney.role`, `service.instance.id`), never metric attributes.
 *
 * The OpenTelemetry SDK packages are dependencies of taskjourney with ranges admitting both lines
 * (npm picks the line whose `engines` match the running Node.js, or reuses the project's own);
 * this module is the only one that needs them. Exporters are loaded only when configured.
 *
 * The OTEL_* variables are read from process.env through @opentelemetry/core's env helpers and
 * the resource's through @opentelemetry/resources' envDetector, as the SDK components read them
 * (the OTLP exporters read OTEL_EXPORTER_OTLP_HEADERS there; the OTEL_BSP_* variables, which
 * @opentelemetry/sdk-trace's BatchSpanProcessor no longer reads, are read here), so one
 * environment configures everything. That is why the former `env` option is gone: it could
 * only ever feed the variables read here, never those the SDK reads, and every setting it could
 * carry has an explicit option (`exporters`, `serviceName`, `resourceAttributes`), which wins
 * over the environment. Tests set process.env instead (vitest's `vi.stubEnv`).
 */
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import {
  context,
  diag,
  DiagConsoleLogger,
  DiagLogLevel,
  metrics,
  propagation,
  ProxyTracerProvider,
  trace,
  type Attributes,
  type AttributeValue,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  diagLogLevelFromString,
  getBooleanFromEnv,
  getStringFromEnv,
  getStringListFromEnv,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
  type Resource,
} from "@opentelemetry/resources";
import {
  AggregationTemporality,
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricProducer,
  type MetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  TracerProvider,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import { resolveOptions, TaskJourneys, type StateOf } from "./journeys.js";
import type { StateMachine } from "./model/machine.js";
import { configurationError, defined } from "./configuration.js";
import { ListenError } from "./shared/errors.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_SIGNAL,
  INSTRUMENTATION_SCOPE,
  METRIC_EXPORT_FAILURES,
  RESOURCE_INSTANCE,
  RESOURCE_ROLE,
} from "./otel/semconv.js";
import { VERSION } from "./version.js";
import { SpanIds } from "./otel/span-ids.js";
import { internalsOf } from "./internal.js";
import type { Role } from "./model/states.js";
import type { TaskJourneysOptions } from "./types.js";
import { CountedMetricExporter, CountedSpanExporter } from "./sdk/counted-exporters.js";
import { BATCH_DEFAULTS, QueueCountedSpanProcessor, type BatchSettings } from "./sdk/queue-counted-processor.js";
import { ExportFailures, type ExportFailure } from "./sdk/export-failures.js";
import { load } from "./sdk/load-dependency.js";
import { deadlineAgentFactory } from "./sdk/deadline-agent.js";
import { FileMetricExporter, FileSpanExporter, JsonLinesFile, jsonSerializers } from "./sdk/file-exporters.js";
import { RepeatLimitedLogger } from "./sdk/repeat-limited-logger.js";
import { DEFAULT_ZIPKIN_ENDPOINT, ZipkinSpanExporter } from "./sdk/zipkin-exporter.js";
import { registeredDiagLogger } from "./otel/warn.js";

export type {
  /**
   * One kind of failed export (signal, destination, error type) and the spans or data points it lost.
   * @stable
   * @example
   * for (const failure of telemetry.exportFailures()) console.warn(failure.signal, failure.errorType, failure.items);
   */
  ExportFailure,
} from "./sdk/export-failures.js";
export {
  /**
   * An OTLP/JSON lines file exporter of metrics, for any SDK setup (NodeSDK, your own providers).
   * @experimental
   * @example
   * const reader = new PeriodicExportingMetricReader({ exporter: createFileMetricExporter({ path: "telemetry/metrics.jsonl" }) });
   */
  createFileMetricExporter,
  /**
   * An OTLP/JSON lines file exporter of spans, for any SDK setup (NodeSDK, your own providers).
   * @experimental
   * @example
   * const processor = new BatchSpanProcessor(createFileSpanExporter({ path: "telemetry/traces.jsonl" }));
   */
  createFileSpanExporter,
} from "./sdk/file-exporters.js";
export {
  /**
   * Bad configuration: an option of `startTelemetry()` or an `OTEL_*` variable (a `TypeError`, code `TJ_INVALID_OPTION`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1", exporters: { timeoutMillis: -1 } }); } catch (error) { if (error instanceof InvalidOptionError) console.error(error.message); }
   */
  InvalidOptionError,
  /**
   * An exporter package missing from the installation (code `TJ_MISSING_DEPENDENCY`); the message says how to repair it.
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1" }); } catch (error) { if (error instanceof MissingDependencyError) console.error(error.message); }
   */
  MissingDependencyError,
  /**
   * An installed package that cannot work with this one, e.g. an older `@opentelemetry/api` (code `TJ_INCOMPATIBLE_DEPENDENCY`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1" }); } catch (error) { if (error instanceof IncompatibleDependencyError) console.error(error.message); }
   */
  IncompatibleDependencyError,
  /**
   * The Prometheus endpoint cannot listen on its host and port (code `TJ_LISTEN_FAILED`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1", exporters: { metrics: "prometheus" } }); } catch (error) { if (error instanceof ListenError) console.error(error.message); }
   */
  ListenError,
  /**
   * Every error code taskjourney's errors carry, as a type.
   * @stable
   * @example
   * const code: TaskJourneyErrorCode = "TJ_LISTEN_FAILED";
   */
  type TaskJourneyErrorCode,
} from "./shared/errors.js";
export type {
  /**
   * What `createFileMetricExporter()` takes: `path`, and `temporality`.
   * @experimental
   * @example
   * const options: FileMetricExporterOptions = { path: "telemetry/metrics.jsonl" };
   */
  FileMetricExporterOptions,
  /**
   * What `createFileSpanExporter()` takes: `path` (its directory made when missing).
   * @experimental
   * @example
   * const options: FileSpanExporterOptions = { path: "telemetry/traces.jsonl" };
   */
  FileSpanExporterOptions,
} from "./sdk/file-exporters.js";

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
  journeys?: Omit<TaskJourneysOptions, "role" | "instance" | "tracerProvider" | "meterProvider" | "machine"> & {
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
   * Every kind of failed export so far (signal, destination, error type) with the spans or metric
   * data points it lost, as counted in `taskjourney.export.failures`.
   */
  exportFailures(): ExportFailure[];
  /** Exports what is pending now, without shutting down; waits at most `timeoutMillis`. Never rejects. */
  forceFlush(options?: FlushOptions): Promise<FlushResult>;
  /**
   * Stops the journeys, flushes and shuts down the providers made here, waiting for the exports
   * at most `timeoutMillis` (a dead or silent endpoint cannot hold the process's exit longer).
   * Idempotent: a second call gets the first one's promise. Never rejects.
   */
  shutdown(options?: FlushOptions): Promise<FlushResult>;
}

const DEFAULT_OTLP_BASE = "http://localhost:4318";
const DEFAULT_FLUSH_TIMEOUT = 30_000;
/** The OTLP exporters' own default, resolved here so that `env` and the option reach them. */
const DEFAULT_EXPORT_TIMEOUT = 10_000;
const DEFAULT_PROMETHEUS_PORT = 9464;
/** Connections the Prometheus endpoint holds at once, and the milliseconds a request may take to arrive whole. */
const PROMETHEUS_MAX_CONNECTIONS = 64;
const PROMETHEUS_REQUEST_TIMEOUT = 10_000;

function fail(what: string, expected: string, value: unknown): never {
  configurationError("startTelemetry", what, expected, value);
}

/** An OTEL_* variable of process.env, trimmed; undefined when unset or blank. */
function read(name: string): string | undefined {
  return getStringFromEnv(name)?.trim();
}

function positiveInteger(name: string, value: unknown, unit = "milliseconds"): number {
  const number = typeof value === "string" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number <= 0)
    fail(name, `a positive integer (${unit})`, value);
  return number;
}

/**
 * The batch span processor's settings from OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT,
 * OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE, as the specification names them:
 * @opentelemetry/sdk-trace's BatchSpanProcessor reads none of them itself (sdk-trace-base's did).
 */
function batchSettings(): BatchSettings {
  const setting = (name: string, fallback: number, unit: string) => {
    const text = read(name);
    return text === undefined ? fallback : positiveInteger(name, text, unit);
  };
  return {
    scheduledDelayMillis: setting("OTEL_BSP_SCHEDULE_DELAY", BATCH_DEFAULTS.scheduledDelayMillis, "milliseconds"),
    exportTimeoutMillis: setting("OTEL_BSP_EXPORT_TIMEOUT", BATCH_DEFAULTS.exportTimeoutMillis, "milliseconds"),
    maxQueueSize: setting("OTEL_BSP_MAX_QUEUE_SIZE", BATCH_DEFAULTS.maxQueueSize, "spans"),
    maxExportBatchSize: setting("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", BATCH_DEFAULTS.maxExportBatchSize, "spans"),
  };
}

function exporterNames<T extends string>(name: string, value: unknown, allowed: readonly T[]): T[] {
  const list = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(list)) fail(name, `one or more of ${allowed.join(", ")}`, value);
  const names = list.map((item) => (typeof item === "string" ? item.trim().toLowerCase() : item));
  for (const item of names) if (!allowed.includes(item as T)) fail(name, `one or more of ${allowed.join(", ")}`, value);
  const chosen = [...new Set(names as T[])].filter((item) => item !== "none");
  return chosen;
}

function protocolOf(name: string, value: string): OtlpProtocol {
  if (value === "http/protobuf" || value === "http/json") return value;
  fail(name, '"http/protobuf" or "http/json" (gRPC is not supported)', value);
}

/**
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (which wins for service.name), parsed as the
 * SDKs parse them: percent-decoded, and the whole variable ignored when one entry is malformed,
 * as the specification says. envDetector is deprecated in the 3.x line in favour of
 * resourceAttributesEnvDetector and serviceNameEnvDetector, which 2.x lacks; it is in both.
 */
function resourceFromEnvironment(): Attributes {
  return detectResources({ detectors: [envDetector] }).attributes;
}

function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9.-]+/g, "_").replace(/^_+|_+$/g, "");
}

interface ResolvedExporters {
  traces: TracesExporterName[];
  metrics: MetricsExporterName[];
  tracesUrl: string | undefined;
  metricsUrl: string | undefined;
  tracesProtocol: OtlpProtocol;
  metricsProtocol: OtlpProtocol;
  intervalMillis: number;
  timeoutMillis: number;
  tracesExportTimeout: number;
  metricsExportTimeout: number;
  zipkinUrl: string;
  zipkinExportTimeout: number;
  prometheus: Required<PrometheusOptions> | undefined;
  headers: Record<string, string> | undefined;
}

function isHttpUrl(text: unknown): text is string {
  if (typeof text !== "string" || !URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

function resolveExporters(options: ExporterOptions, disabled: boolean): ResolvedExporters {
  const traces = exporterNames<TracesExporterName>(
    options.traces !== undefined ? 'option "exporters.traces"' : "OTEL_TRACES_EXPORTER",
    options.traces ?? getStringListFromEnv("OTEL_TRACES_EXPORTER") ?? "otlp",
    ["otlp", "zipkin", "console", "none"],
  );
  const metricNames = exporterNames<MetricsExporterName>(
    options.metrics !== undefined ? 'option "exporters.metrics"' : "OTEL_METRICS_EXPORTER",
    options.metrics ?? getStringListFromEnv("OTEL_METRICS_EXPORTER") ?? "otlp",
    ["otlp", "console", "prometheus", "none"],
  );

  const url = (
    option: string | undefined,
    optionName: string,
    specificEnv: string,
    path: string,
  ): string | undefined => {
    if (option !== undefined) {
      if (!isHttpUrl(option)) fail(`option "${optionName}"`, "an http(s) URL", option);
      return option;
    }
    if (options.endpoint !== undefined) {
      if (!isHttpUrl(options.endpoint)) fail('option "exporters.endpoint"', "an http(s) URL", options.endpoint);
      return joinUrl(options.endpoint, path);
    }
    const specific = read(specificEnv);
    if (specific !== undefined) {
      if (!isHttpUrl(specific)) fail(specificEnv, "an http(s) URL", specific);
      return specific;
    }
    const base = read("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (base !== undefined) {
      if (!isHttpUrl(base)) fail("OTEL_EXPORTER_OTLP_ENDPOINT", "an http(s) URL", base);
      return joinUrl(base, path);
    }
    return undefined;
  };

  const protocol = (signalEnv: string) => {
    if (options.protocol !== undefined) return protocolOf('option "exporters.protocol"', options.protocol);
    const specific = read(signalEnv);
    if (specific !== undefined) return protocolOf(signalEnv, specific);
    const general = read("OTEL_EXPORTER_OTLP_PROTOCOL");
    if (general !== undefined) return protocolOf("OTEL_EXPORTER_OTLP_PROTOCOL", general);
    return "http/protobuf";
  };

  const intervalMillis =
    options.metricExportIntervalMillis !== undefined
      ? positiveInteger('option "exporters.metricExportIntervalMillis"', options.metricExportIntervalMillis)
      : read("OTEL_METRIC_EXPORT_INTERVAL") !== undefined
        ? positiveInteger("OTEL_METRIC_EXPORT_INTERVAL", read("OTEL_METRIC_EXPORT_INTERVAL"))
        : 60_000;
  const timeoutMillis =
    options.metricExportTimeoutMillis !== undefined
      ? positiveInteger('option "exporters.metricExportTimeoutMillis"', options.metricExportTimeoutMillis)
      : read("OTEL_METRIC_EXPORT_TIMEOUT") !== undefined
        ? positiveInteger("OTEL_METRIC_EXPORT_TIMEOUT", read("OTEL_METRIC_EXPORT_TIMEOUT"))
        : 30_000;

  const exportTimeout = (signalEnv: string): number => {
    if (options.timeoutMillis !== undefined)
      return positiveInteger('option "exporters.timeoutMillis"', options.timeoutMillis);
    for (const name of [signalEnv, "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
      const text = read(name);
      if (text !== undefined) return positiveInteger(name, text);
    }
    return DEFAULT_EXPORT_TIMEOUT;
  };

  // Zipkin's endpoint and timeout, as the specification names them (OTEL_EXPORTER_ZIPKIN_*).
  let zipkinUrl = DEFAULT_ZIPKIN_ENDPOINT;
  if (options.zipkinEndpoint !== undefined) {
    if (!isHttpUrl(options.zipkinEndpoint))
      fail('option "exporters.zipkinEndpoint"', "an http(s) URL", options.zipkinEndpoint);
    zipkinUrl = options.zipkinEndpoint;
  } else {
    const fromEnv = read("OTEL_EXPORTER_ZIPKIN_ENDPOINT");
    if (fromEnv !== undefined) {
      if (!isHttpUrl(fromEnv)) fail("OTEL_EXPORTER_ZIPKIN_ENDPOINT", "an http(s) URL", fromEnv);
      zipkinUrl = fromEnv;
    }
  }
  const zipkinExportTimeout =
    options.timeoutMillis !== undefined
      ? positiveInteger('option "exporters.timeoutMillis"', options.timeoutMillis)
      : read("OTEL_EXPORTER_ZIPKIN_TIMEOUT") !== undefined
        ? positiveInteger("OTEL_EXPORTER_ZIPKIN_TIMEOUT", read("OTEL_EXPORTER_ZIPKIN_TIMEOUT"))
        : DEFAULT_EXPORT_TIMEOUT;

  let prometheus: Required<PrometheusOptions> | undefined;
  const wantsPrometheus =
    metricNames.includes("prometheus") || (options.prometheus !== undefined && options.prometheus !== false);
  if (
    options.prometheus !== undefined &&
    typeof options.prometheus !== "boolean" &&
    (typeof options.prometheus !== "object" || options.prometheus === null)
  ) {
    fail('option "exporters.prometheus"', "a boolean or { host, port, endpoint }", options.prometheus);
  }
  if (wantsPrometheus) {
    const given = typeof options.prometheus === "object" ? options.prometheus : {};
    const envPort = read("OTEL_EXPORTER_PROMETHEUS_PORT");
    const port = given.port ?? (envPort !== undefined ? Number(envPort) : DEFAULT_PROMETHEUS_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      fail(
        given.port !== undefined ? 'option "exporters.prometheus.port"' : "OTEL_EXPORTER_PROMETHEUS_PORT",
        "a port number",
        given.port ?? envPort,
      );
    }
    const endpoint = given.endpoint ?? "/metrics";
    if (typeof endpoint !== "string") fail('option "exporters.prometheus.endpoint"', "a path", endpoint);
    const host = given.host ?? read("OTEL_EXPORTER_PROMETHEUS_HOST") ?? "localhost";
    if (typeof host !== "string") fail('option "exporters.prometheus.host"', "a host name", host);
    prometheus = { host, port, endpoint: endpoint.startsWith("/") ? endpoint : `/${endpoint}` };
  }
  if (options.headers !== undefined && (typeof options.headers !== "object" || options.headers === null)) {
    fail('option "exporters.headers"', "an object of strings", options.headers);
  }

  return {
    traces: disabled ? [] : traces,
    metrics: disabled ? [] : metricNames.filter((name) => name !== "prometheus"),
    tracesUrl: url(
      options.tracesEndpoint,
      "exporters.tracesEndpoint",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "v1/traces",
    ),
    metricsUrl: url(
      options.metricsEndpoint,
      "exporters.metricsEndpoint",
      "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
      "v1/metrics",
    ),
    tracesProtocol: protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
    metricsProtocol: protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"),
    intervalMillis,
    timeoutMillis: Math.min(timeoutMillis, intervalMillis),
    tracesExportTimeout: exportTimeout("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"),
    metricsExportTimeout: exportTimeout("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"),
    zipkinUrl,
    zipkinExportTimeout,
    prometheus: disabled ? undefined : prometheus,
    headers: options.headers,
  };
}

async function otlpSpanExporter(
  protocol: OtlpProtocol,
  url: string,
  headers: Record<string, string> | undefined,
  timeoutMillis: number,
): Promise<SpanExporter> {
  const config = {
    url,
    timeoutMillis,
    httpAgentOptions: deadlineAgentFactory("TRACES", timeoutMillis),
    ...(headers !== undefined ? { headers } : {}),
  };
  if (protocol === "http/protobuf") {
    const { OTLPTraceExporter } = await load(
      () => import("@opentelemetry/exporter-trace-otlp-proto"),
      "@opentelemetry/exporter-trace-otlp-proto",
      "OTLP http/protobuf traces",
    );
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await load(
    () => import("@opentelemetry/exporter-trace-otlp-http"),
    "@opentelemetry/exporter-trace-otlp-http",
    "OTLP http/json traces",
  );
  return new OTLPTraceExporter(config);
}

async function otlpMetricExporter(
  protocol: OtlpProtocol,
  url: string,
  headers: Record<string, string> | undefined,
  temporality: AggregationTemporality,
  timeoutMillis: number,
): Promise<PushMetricExporter> {
  const config = {
    url,
    temporalityPreference: temporality,
    timeoutMillis,
    httpAgentOptions: deadlineAgentFactory("METRICS", timeoutMillis),
    ...(headers !== undefined ? { headers } : {}),
  };
  if (protocol === "http/protobuf") {
    const { OTLPMetricExporter } = await load(
      () => import("@opentelemetry/exporter-metrics-otlp-proto"),
      "@opentelemetry/exporter-metrics-otlp-proto",
      "OTLP http/protobuf metrics",
    );
    return new OTLPMetricExporter(config);
  }
  const { OTLPMetricExporter } = await load(
    () => import("@opentelemetry/exporter-metrics-otlp-http"),
    "@opentelemetry/exporter-metrics-otlp-http",
    "OTLP http/json metrics",
  );
  return new OTLPMetricExporter(config);
}

/**
 * OTEL_LOG_LEVEL as the OpenTelemetry SDKs read it (core's diagLogLevelFromString: a name such as
 * "debug", an unknown one meaning INFO), WARN when unset so that export failures and dropped input
 * are not silent; nothing when the application installed a diag logger of its own. Returns the
 * logger registered here, to remove at shutdown.
 */
const LOG_LEVEL_NAMES = ["NONE", "ERROR", "WARN", "INFO", "DEBUG", "VERBOSE", "ALL"];

function installDiagLogger(): unknown {
  if (registeredDiagLogger() !== undefined) return undefined;
  const text = read("OTEL_LOG_LEVEL");
  // Repeats of one warning are told once a minute: the exporters warn on every export for some answers (RepeatLimitedLogger).
  diag.setLogger(new RepeatLimitedLogger(new DiagConsoleLogger()), {
    logLevel: text === undefined ? DiagLogLevel.WARN : (diagLogLevelFromString(text) ?? DiagLogLevel.WARN),
  });
  if (text !== undefined && !LOG_LEVEL_NAMES.includes(text.toUpperCase()))
    diag.warn(`taskjourney: OTEL_LOG_LEVEL=${text} is not one of ${LOG_LEVEL_NAMES.join(", ")}; logging at INFO`);
  return registeredDiagLogger();
}

/**
 * What 2.x's NodeTracerProvider.register() did, which `@opentelemetry/sdk-trace` (both lines)
 * leaves to the caller: the global tracer provider, an AsyncLocalStorage context manager and
 * the W3C trace-context and baggage propagators.
 */
function registerTracing(tracerProvider: TracerProvider): void {
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/**
 * Sets up tracing and metrics for one scheduler or worker process, configured by `options` and
 * the standard OTEL_* environment variables, and returns a TaskJourneys wired to them.
 * Throws an InvalidOptionError (a TypeError, code TJ_INVALID_OPTION) naming the option or
 * variable when the configuration is bad.
 * @stable
 * @example
 * const telemetry = await startTelemetry({ role: "worker", instance: "tcp://10.0.0.7:40001" });
 * telemetry.journeys.transition("inc-1", "waiting", "ready");
 * await telemetry.shutdown();
 */
export async function startTelemetry<R extends Role, S extends string = StateOf<R>>(
  options: StartTelemetryOptions<R, S>,
): Promise<Telemetry<R, S>> {
  if (options === null || typeof options !== "object") fail("options", "an object", options);
  if ("env" in options) {
    // Removed (see the top of this file); a JavaScript caller still passing it learns why.
    fail(
      'option "env"',
      "absent: startTelemetry reads the OTEL_* variables from process.env, as the OpenTelemetry SDK does; use the exporters, serviceName and resourceAttributes options",
      (options as { env?: unknown }).env,
    );
  }
  const { role, instance } = options;
  if (role !== "worker" && role !== "scheduler") fail('option "role"', '"worker" or "scheduler"', role);
  if (typeof instance !== "string") fail('option "instance"', "a string", instance);
  if (options.serviceName !== undefined && (typeof options.serviceName !== "string" || options.serviceName === "")) {
    fail('option "serviceName"', "a non-empty string", options.serviceName);
  }
  if (
    options.fileDirectory !== undefined &&
    (typeof options.fileDirectory !== "string" || options.fileDirectory === "")
  ) {
    fail('option "fileDirectory"', "a directory path", options.fileDirectory);
  }
  if (
    options.resourceAttributes !== undefined &&
    (typeof options.resourceAttributes !== "object" || options.resourceAttributes === null)
  ) {
    fail('option "resourceAttributes"', "an object", options.resourceAttributes);
  }
  if (options.journeys !== undefined && (typeof options.journeys !== "object" || options.journeys === null)) {
    fail('option "journeys"', "an object", options.journeys);
  }
  if (options.exporters !== undefined && (typeof options.exporters !== "object" || options.exporters === null)) {
    fail('option "exporters"', "an object", options.exporters);
  }
  if (options.registerGlobal !== undefined && typeof options.registerGlobal !== "boolean") {
    fail('option "registerGlobal"', "a boolean", options.registerGlobal);
  }
  const journeyOptions = defined(options.journeys);
  const preference = read("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE")?.toLowerCase();
  // The journeys' temporality follows the OTLP exporters' preference unless set.
  const temporality = journeyOptions.temporality ?? (preference === "delta" ? "delta" : "cumulative");
  // Bad journeys options throw here, before anything is made.
  resolveOptions({ ...journeyOptions, temporality, role, instance });
  const disabled = getBooleanFromEnv("OTEL_SDK_DISABLED");
  const exporters = resolveExporters(options.exporters ?? {}, disabled);
  // Before the logger below: detectResources prints what it found at debug level, which would
  // be noise at OTEL_LOG_LEVEL=debug.
  const fromEnv = resourceFromEnvironment();
  // Once the configuration is known to be good, so that a rejected one leaves no logger behind.
  const diagLogger = installDiagLogger();
  const removeDiagLogger = () => {
    // Unless the application has replaced it since.
    if (diagLogger !== undefined && registeredDiagLogger() === diagLogger) diag.disable();
  };

  // The resource: SDK defaults < OTEL_RESOURCE_ATTRIBUTES < options < service name, role, instance.
  // OTEL_SERVICE_NAME, else service.name of OTEL_RESOURCE_ATTRIBUTES (the detector's precedence).
  const serviceName = options.serviceName ?? (fromEnv["service.name"] as string | undefined) ?? `taskjourney-${role}`;
  const identity: Attributes = { "service.name": serviceName, [RESOURCE_ROLE]: role };
  if (instance !== "") identity[RESOURCE_INSTANCE] = instance;
  const resource = defaultResource().merge(
    resourceFromAttributes({ ...fromEnv, ...defined(options.resourceAttributes), ...identity } as Record<
      string,
      AttributeValue
    >),
  );

  const sdkTemporality = temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;

  const fileBase = `${role}-${fileSafe(instance) || String(process.pid)}`;
  const useFileForTraces =
    options.fileDirectory !== undefined && exporters.traces.includes("otlp") && exporters.tracesUrl === undefined;
  const useFileForMetrics =
    options.fileDirectory !== undefined && exporters.metrics.includes("otlp") && exporters.metricsUrl === undefined;
  const serializers = useFileForTraces || useFileForMetrics ? await jsonSerializers() : undefined;
  if (serializers !== undefined) await mkdir(options.fileDirectory!, { recursive: true });

  // Every exporter made here is wrapped: a failed export is counted and told, rate-limited.
  const exportFailures = new ExportFailures({ tell: (message) => diag.warn(message) });
  const batch = batchSettings();
  // A span dropped on the processor's full queue is counted and told as well (queue_full).
  const batched = (exporter: SpanExporter, destination: string, deadlineMillis?: number): SpanProcessor =>
    new QueueCountedSpanProcessor(
      new CountedSpanExporter(exporter, destination, exportFailures, batch.exportTimeoutMillis, deadlineMillis),
      batch,
      destination,
      exportFailures,
    );

  // Spans.
  const traceDestinations: Destination[] = [];
  const spanProcessors: SpanProcessor[] = [];
  for (const name of exporters.traces) {
    if (name === "console") {
      spanProcessors.push(new BatchSpanProcessor({ ...batch, exporter: new ConsoleSpanExporter() }));
      traceDestinations.push({ kind: "console" });
    } else if (name === "zipkin") {
      const url = exporters.zipkinUrl;
      const timeoutMillis = exporters.zipkinExportTimeout;
      spanProcessors.push(batched(new ZipkinSpanExporter({ url, timeoutMillis }), url, timeoutMillis));
      traceDestinations.push({ kind: "zipkin", url });
    } else if (useFileForTraces) {
      const path = join(options.fileDirectory!, `traces-${fileBase}.jsonl`);
      spanProcessors.push(batched(new FileSpanExporter(new JsonLinesFile(path), serializers!.traces), path));
      traceDestinations.push({ kind: "file", path });
    } else {
      const url = exporters.tracesUrl ?? joinUrl(DEFAULT_OTLP_BASE, "v1/traces");
      const exporter = await otlpSpanExporter(
        exporters.tracesProtocol,
        url,
        exporters.headers,
        exporters.tracesExportTimeout,
      );
      spanProcessors.push(batched(exporter, url, exporters.tracesExportTimeout));
      traceDestinations.push({ kind: "otlp", protocol: exporters.tracesProtocol, url });
    }
  }
  // Ids the span bridge can choose: a journey's ids handed out by inject() cost no span unless it is kept.
  const spanIds = new SpanIds();
  const tracerProvider = new TracerProvider({ resource, spanProcessors, idGenerator: spanIds });

  // Metric exporters; the readers come once the journeys (and their producer) exist.
  const metricDestinations: Destination[] = [];
  const pushExporters: PushMetricExporter[] = [];
  for (const name of exporters.metrics) {
    if (name === "console") {
      pushExporters.push(new ConsoleMetricExporter({ temporalitySelector: () => sdkTemporality }));
      metricDestinations.push({ kind: "console" });
    } else if (useFileForMetrics) {
      const path = join(options.fileDirectory!, `metrics-${fileBase}.jsonl`);
      pushExporters.push(
        new CountedMetricExporter(
          new FileMetricExporter(new JsonLinesFile(path), serializers!.metrics, sdkTemporality),
          path,
          exportFailures,
          exporters.timeoutMillis,
        ),
      );
      metricDestinations.push({ kind: "file", path });
    } else {
      const url = exporters.metricsUrl ?? joinUrl(DEFAULT_OTLP_BASE, "v1/metrics");
      const exporter = await otlpMetricExporter(
        exporters.metricsProtocol,
        url,
        exporters.headers,
        sdkTemporality,
        exporters.metricsExportTimeout,
      );
      pushExporters.push(
        new CountedMetricExporter(
          exporter,
          url,
          exportFailures,
          exporters.timeoutMillis,
          exporters.metricsExportTimeout,
        ),
      );
      metricDestinations.push({ kind: "otlp", protocol: exporters.metricsProtocol, url });
    }
  }

  // The journeys: the meter provider is not passed on purpose, since its observable instruments
  // would export the sums a second time next to the metric producer registered below.
  // With no span exporter (OTEL_TRACES_EXPORTER=none), no span is built only to be dropped.
  const traces = spanProcessors.length > 0 && (journeyOptions as { traces?: boolean }).traces !== false;
  const journeys = new TaskJourneys({ ...journeyOptions, temporality, role, instance, tracerProvider, traces });
  internalsOf(journeys)!.spans.useIds(spanIds);
  // Delta state lives in a producer, so each reader gets its own; the first gets journeys.metricProducer.
  const producerFor = (index: number): MetricProducer =>
    index === 0 ? journeys.metricProducer : journeys.createMetricProducer();
  const readers: MetricReader[] = pushExporters.map(
    (exporter, index) =>
      new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: exporters.intervalMillis,
        exportTimeoutMillis: exporters.timeoutMillis,
        metricProducers: [producerFor(index)],
      }),
  );

  // Prometheus pulls cumulative data and reads no exponential histograms: explicit buckets.
  let prometheusServer: Server | undefined;
  let prometheusUrl: string | undefined;
  if (exporters.prometheus !== undefined) {
    const { PrometheusExporter } = await load(
      () => import("@opentelemetry/exporter-prometheus"),
      "@opentelemetry/exporter-prometheus",
      "the Prometheus endpoint",
    );
    const producer = journeys.createMetricProducer({ temporality: "cumulative", histogram: "explicit" });
    const pull = new PrometheusExporter({ preventServerStart: true, metricProducers: [producer] });
    // exporter-prometheus pins an exact sdk-metrics release, not always the one resolved here
    // (0.301.0 pins 3.1.0 where the rest of 3.x resolves 3.1.1), so its MetricReader may be a
    // second copy of the class, whose private fields TypeScript compares by declaration. The
    // MeterProvider only calls the reader's public methods, the same in both copies.
    readers.push(pull as unknown as MetricReader);
    const { host, port, endpoint } = exporters.prometheus;
    // A scraper needs a connection or two and sends a line and a few headers: a client that opens
    // many, or sends its headers a byte at a time, must not hold the host's file descriptors.
    // Past PROMETHEUS_MAX_CONNECTIONS, a connection is closed as it comes; a request not whole
    // within PROMETHEUS_REQUEST_TIMEOUT is answered 408 and closed (Node.js's own defaults: 60 s
    // for headers, 300 s for a request, checked every 30 s, and no limit on connections).
    const server = createServer(
      {
        headersTimeout: PROMETHEUS_REQUEST_TIMEOUT,
        requestTimeout: PROMETHEUS_REQUEST_TIMEOUT,
        connectionsCheckingInterval: 1_000,
      },
      (request, response) => {
        const path = (request.url ?? "/").split("?")[0];
        if (request.method === "GET" && path === endpoint) {
          pull.getMetricsRequestHandler(request, response);
        } else {
          response.statusCode = 404;
          response.end(`not found; metrics are at ${endpoint}\n`);
        }
      },
    );
    server.maxConnections = PROMETHEUS_MAX_CONNECTIONS;
    server.unref();
    try {
      const bound = await listen(server, port, host);
      prometheusServer = server;
      prometheusUrl = `http://${host.includes(":") ? `[${host}]` : host}:${bound}${endpoint}`;
      metricDestinations.push({ kind: "prometheus", url: prometheusUrl });
    } catch (error) {
      await journeys.shutdown();
      await tracerProvider.shutdown().catch(() => undefined);
      await Promise.all(pushExporters.map((exporter) => exporter.shutdown().catch(() => undefined)));
      removeDiagLogger();
      throw new ListenError(
        `startTelemetry: the Prometheus endpoint cannot listen on ${host}:${port}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  const meterProvider = new MeterProvider({ resource, readers });
  // Items lost by failed exports, by signal and error type: in the next export that gets through.
  meterProvider
    .getMeter(INSTRUMENTATION_SCOPE, VERSION)
    .createObservableCounter(METRIC_EXPORT_FAILURES, {
      unit: "{item}",
      description: "Spans and metric data points that failed to export, by signal and error type.",
    })
    .addCallback((result) => {
      for (const { signal, errorType, items } of exportFailures.totals())
        result.observe(items, { [ATTR_SIGNAL]: signal, [ATTR_ERROR_TYPE]: errorType });
    });

  let ownsTracer = false;
  let ownsMeter = false;
  if (options.registerGlobal !== false) {
    registerTracing(tracerProvider);
    const global = trace.getTracerProvider();
    ownsTracer =
      global instanceof ProxyTracerProvider ? global.getDelegate() === tracerProvider : global === tracerProvider;
    ownsMeter = metrics.setGlobalMeterProvider(meterProvider);
  }

  const allDestinations = [...traceDestinations, ...metricDestinations]
    .map((destination) =>
      "url" in destination ? destination.url : "path" in destination ? destination.path : destination.kind,
    )
    .join(", ");

  // Globals off and the diag logger removed once, when shutdown() resolves: at the deadline if it
  // passes first, so that nothing of this telemetry outlives the call (a provider still waiting
  // for a silent endpoint finishes in the background, unheard, or the process exits).
  let cleanedUp = false;
  const cleanUp = () => {
    if (cleanedUp) return;
    cleanedUp = true;
    if (ownsTracer) {
      trace.disable();
      context.disable();
      propagation.disable();
    }
    if (ownsMeter) metrics.disable();
    removeDiagLogger();
  };

  let shutdownPromise: Promise<FlushResult> | undefined;
  const shutdown = (flushOptions?: FlushOptions): Promise<FlushResult> => {
    shutdownPromise ??= (async () => {
      const timeoutMillis = flushTimeout("shutdown", flushOptions);
      const failures: unknown[] = [];
      const attempt = async (work: () => Promise<unknown>) => {
        try {
          await work();
        } catch (error) {
          failures.push(error);
        }
      };
      const work = (async () => {
        // Journeys first: they stop recording at once, and hand their last spans to the tracer
        // provider, whose flush they await. The meter provider's last collection need not wait
        // for that flush: the signals are exported side by side, each waiting for its own
        // exporters' timeouts at worst.
        const journeysClosed = attempt(() => journeys.shutdown());
        await Promise.all([
          journeysClosed.then(() => attempt(() => tracerProvider.shutdown())),
          attempt(() => meterProvider.shutdown()),
        ]);
        if (prometheusServer !== undefined) await attempt(() => closeServer(prometheusServer!));
        if (failures.length > 0 && !cleanedUp) diag.error("taskjourney: shutting down telemetry failed", ...failures);
        return failures.length === 0;
      })();
      const completed = await within(work, timeoutMillis);
      if (completed === undefined) {
        diag.warn(
          `taskjourney: telemetry shutdown stopped waiting after ${timeoutMillis} ms for the exports to ${allDestinations}; what they carried is lost.`,
        );
        exportFailures.abandonPending(timeoutMillis);
      }
      exportFailures.tellUntold();
      cleanUp();
      return { completed: completed === true };
    })();
    return shutdownPromise;
  };

  return {
    journeys,
    tracerProvider,
    meterProvider,
    resource,
    destinations: { traces: traceDestinations, metrics: metricDestinations },
    prometheusUrl,
    exportFailures: () => exportFailures.failures(),
    async forceFlush(flushOptions?: FlushOptions): Promise<FlushResult> {
      if (shutdownPromise !== undefined) return { completed: true };
      const timeoutMillis = flushTimeout("forceFlush", flushOptions);
      const work = Promise.all([tracerProvider.forceFlush(), meterProvider.forceFlush()]).then(
        () => true,
        (error: unknown) => {
          diag.error("taskjourney: flushing telemetry failed", error);
          return false;
        },
      );
      const completed = await within(work, timeoutMillis);
      if (completed === undefined)
        diag.warn(
          `taskjourney: forceFlush stopped waiting after ${timeoutMillis} ms for the exports to ${allDestinations}.`,
        );
      return { completed: completed === true };
    },
    shutdown,
  };
}

/** The flush deadline of `options`; a bad one is told and replaced by the default (shutdown must not throw). */
function flushTimeout(call: string, options: FlushOptions | undefined): number {
  const value = options?.timeoutMillis;
  if (value === undefined) return DEFAULT_FLUSH_TIMEOUT;
  if (typeof value === "number" && value > 0) return value;
  diag.warn(
    `taskjourney: ${call}({ timeoutMillis }) must be a positive number of milliseconds, got ${typeof value === "number" ? value : typeof value}; waiting ${DEFAULT_FLUSH_TIMEOUT} ms`,
  );
  return DEFAULT_FLUSH_TIMEOUT;
}

/**
 * `work`'s value (work that never rejects), or undefined once `timeoutMillis` passed first. The
 * timer is not unref'd: work waiting on a callback that holds no handle must still see its deadline.
 */
function within<T>(work: Promise<T>, timeoutMillis: number): Promise<T | undefined> {
  if (!Number.isFinite(timeoutMillis)) return work;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMillis);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}
