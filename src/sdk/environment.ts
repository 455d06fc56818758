import { diag, DiagConsoleLogger, DiagLogLevel, type Attributes } from "@opentelemetry/api";
import { diagLogLevelFromString, getStringFromEnv, getStringListFromEnv } from "@opentelemetry/core";
import { detectResources, envDetector } from "@opentelemetry/resources";
import { configurationError } from "../configuration.js";
import { registeredDiagLogger } from "../otel/warn.js";
import type {
  ExporterOptions,
  MetricsExporterName,
  OtlpProtocol,
  PrometheusOptions,
  TracesExporterName,
} from "./options.js";
import { BATCH_DEFAULTS, type BatchSettings } from "./queue-counted-processor.js";
import { RepeatLimitedLogger } from "./repeat-limited-logger.js";
import { DEFAULT_ZIPKIN_ENDPOINT } from "./zipkin-exporter.js";

/**
 * `startTelemetry()`'s configuration: options checked (bad ones throw naming the option), the
 * OTEL_* variables read, the exporters resolved, and the diag logger installed.
 */

export const DEFAULT_OTLP_BASE = "http://localhost:4318";
export const DEFAULT_FLUSH_TIMEOUT = 30_000;
/** The OTLP exporters' own default, resolved here so that `env` and the option reach them. */
export const DEFAULT_EXPORT_TIMEOUT = 10_000;
export const DEFAULT_PROMETHEUS_PORT = 9464;
/** Connections the Prometheus endpoint holds at once, and the milliseconds a request may take to arrive whole. */
export const PROMETHEUS_MAX_CONNECTIONS = 64;
export const PROMETHEUS_REQUEST_TIMEOUT = 10_000;

export function fail(what: string, expected: string, value: unknown): never {
  configurationError("startTelemetry", what, expected, value);
}

/** An OTEL_* variable of process.env, trimmed; undefined when unset or blank. */
export function read(name: string): string | undefined {
  return getStringFromEnv(name)?.trim();
}

export function positiveInteger(name: string, value: unknown, unit = "milliseconds"): number {
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
export function batchSettings(): BatchSettings {
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

export function exporterNames<T extends string>(name: string, value: unknown, allowed: readonly T[]): T[] {
  const list = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(list)) fail(name, `one or more of ${allowed.join(", ")}`, value);
  const names = list.map((item) => (typeof item === "string" ? item.trim().toLowerCase() : item));
  for (const item of names) if (!allowed.includes(item as T)) fail(name, `one or more of ${allowed.join(", ")}`, value);
  const chosen = [...new Set(names as T[])].filter((item) => item !== "none");
  return chosen;
}

export function protocolOf(name: string, value: string): OtlpProtocol {
  if (value === "http/protobuf" || value === "http/json") return value;
  fail(name, '"http/protobuf" or "http/json" (gRPC is not supported)', value);
}

/**
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (which wins for service.name), parsed as the
 * SDKs parse them: percent-decoded, and the whole variable ignored when one entry is malformed,
 * as the specification says. envDetector is deprecated in the 3.x line in favour of
 * resourceAttributesEnvDetector and serviceNameEnvDetector, which 2.x lacks; it is in both.
 */
export function resourceFromEnvironment(): Attributes {
  return detectResources({ detectors: [envDetector] }).attributes;
}

export function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9.-]+/g, "_").replace(/^_+|_+$/g, "");
}

export interface ResolvedExporters {
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

export function isHttpUrl(text: unknown): text is string {
  if (typeof text !== "string" || !URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

export function resolveExporters(options: ExporterOptions, disabled: boolean): ResolvedExporters {
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

/**
 * OTEL_LOG_LEVEL as the OpenTelemetry SDKs read it (core's diagLogLevelFromString: a name such as
 * "debug", an unknown one meaning INFO), WARN when unset so that export failures and dropped input
 * are not silent; nothing when the application installed a diag logger of its own. Returns the
 * logger registered here, to remove at shutdown.
 */
const LOG_LEVEL_NAMES = ["NONE", "ERROR", "WARN", "INFO", "DEBUG", "VERBOSE", "ALL"];

export function installDiagLogger(): unknown {
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
