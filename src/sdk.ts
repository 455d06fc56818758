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
export type {
  /**
   * One kind of export error (signal, destination, error type) and the spans or data points it lost.
   * @stable
   * @example
   * for (const error of telemetry.exportErrors()) console.warn(error.signal, error.errorType, error.items);
   */
  ExportErrorCount,
  /**
   * The old name of `ExportErrorCount`, kept for one minor release.
   * @stable
   * @deprecated write `ExportErrorCount` (an export error is not a failure of a task)
   * @example
   * const old: ExportFailure[] = telemetry.exportErrors();
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
export {
  /**
   * An installed package that cannot work with this one, e.g. an older `@opentelemetry/api` (code `TJ_INCOMPATIBLE_DEPENDENCY`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1" }); } catch (error) { if (error instanceof IncompatibleDependencyError) console.error(error.message); }
   */
  IncompatibleDependencyError,
  /**
   * Bad configuration: an option of `startTelemetry()` or an `OTEL_*` variable (a `TypeError`, code `TJ_INVALID_OPTION`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1", exporters: { timeoutMillis: -1 } }); } catch (error) { if (error instanceof InvalidOptionError) console.error(error.message); }
   */
  InvalidOptionError,
  /**
   * The Prometheus endpoint cannot listen on its host and port (code `TJ_LISTEN_FAILED`).
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1", exporters: { metrics: "prometheus" } }); } catch (error) { if (error instanceof ListenError) console.error(error.message); }
   */
  ListenError,
  /**
   * An exporter package missing from the installation (code `TJ_MISSING_DEPENDENCY`); the message says how to repair it.
   * @stable
   * @example
   * try { await startTelemetry({ role: "worker", instance: "w1" }); } catch (error) { if (error instanceof MissingDependencyError) console.error(error.message); }
   */
  MissingDependencyError,
  /**
   * Every error code taskjourney's errors carry, as a type.
   * @stable
   * @example
   * const code: TaskJourneyErrorCode = "TJ_LISTEN_FAILED";
   */
  type TaskJourneyErrorCode,
} from "./shared/errors.js";

export type {
  Destination,
  ExporterOptions,
  FlushOptions,
  FlushResult,
  MetricsExporterName,
  OtlpProtocol,
  PrometheusOptions,
  StartTelemetryOptions,
  Telemetry,
  TracesExporterName,
} from "./sdk/options.js";
export { startTelemetry } from "./sdk/start.js";
