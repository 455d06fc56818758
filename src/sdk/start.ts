import {
  context,
  diag,
  metrics,
  propagation,
  ProxyTracerProvider,
  trace,
  type Attributes,
  type AttributeValue,
} from "@opentelemetry/api";
import { getBooleanFromEnv } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
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
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { defined, refuseUnknownNames } from "../configuration.js";
import { internalsOf } from "../internal.js";
import { resolveOptions, TaskJourneys, type StateOf } from "../journeys.js";
import type { Role } from "../model/states.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_SIGNAL,
  INSTRUMENTATION_SCOPE,
  METRIC_EXPORT_ERRORS,
  RESOURCE_INSTANCE,
  RESOURCE_ROLE,
} from "../otel/semconv.js";
import { SpanIds } from "../otel/span-ids.js";
import { registeredDiagLogger, tell } from "../otel/warn.js";
import { deprecated } from "../recorder/deprecations.js";
import { ListenError } from "../shared/errors.js";
import { VERSION } from "../version.js";
import { CountedMetricExporter, CountedSpanExporter } from "./counted-exporters.js";
import {
  batchSettings,
  DEFAULT_OTLP_BASE,
  fail,
  fileSafe,
  installDiagLogger,
  joinUrl,
  PROMETHEUS_MAX_CONNECTIONS,
  PROMETHEUS_REQUEST_TIMEOUT,
  read,
  resolveExporters,
  resourceFromEnvironment,
} from "./environment.js";
import { ExportFailures } from "./export-failures.js";
import { otlpMetricExporter, otlpSpanExporter } from "./exporters.js";
import { FileMetricExporter, FileSpanExporter, JsonLinesFile, jsonSerializers } from "./file-exporters.js";
import { closeServer, flushTimeout, listen, registerTracing, within } from "./lifecycle.js";
import { load } from "./load-dependency.js";
import type {
  Destination,
  ExporterOptions,
  FlushOptions,
  FlushResult,
  StartTelemetryOptions,
  Telemetry,
} from "./options.js";
import { QueueCountedSpanProcessor } from "./queue-counted-processor.js";
import { ZipkinSpanExporter } from "./zipkin-exporter.js";

/**
 * The names startTelemetry() reads, and those of its `exporters` option: records keyed by every
 * option, so that an option added to the types and not here fails to compile (instead of being refused).
 */
const START_OPTION_NAMES = Object.keys({
  role: true,
  instance: true,
  serviceName: true,
  resourceAttributes: true,
  journeys: true,
  exporters: true,
  fileDirectory: true,
  registerGlobal: true,
} satisfies Record<keyof StartTelemetryOptions<Role>, true>);
const EXPORTER_OPTION_NAMES = Object.keys({
  traces: true,
  metrics: true,
  endpoint: true,
  tracesEndpoint: true,
  metricsEndpoint: true,
  zipkinEndpoint: true,
  protocol: true,
  headers: true,
  metricExportIntervalMillis: true,
  metricExportTimeoutMillis: true,
  timeoutMillis: true,
  prometheus: true,
} satisfies Record<keyof ExporterOptions, true>);

/** `startTelemetry()`: puts together options.ts, environment.ts, exporters.ts and lifecycle.ts. */

/**
 * The telemetry (its role and instance) whose providers hold the global OpenTelemetry API in this
 * process, until its shutdown; and whether a second start was told of it (once a process).
 */
let globalHolder: string | undefined;
let toldSecondStart = false;

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
  // A misspelt name (`fileDirectry`) would pass silently in plain JavaScript, its default used.
  refuseUnknownNames("startTelemetry", options, START_OPTION_NAMES);
  if (options.exporters !== null && typeof options.exporters === "object")
    refuseUnknownNames("startTelemetry", options.exporters, EXPORTER_OPTION_NAMES, "exporters.");
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
  const temporality =
    journeyOptions.metrics?.temporality ??
    journeyOptions.temporality ??
    (preference === "delta" ? "delta" : "cumulative");
  // The grouped form, so that only a user's own flat names are told as deprecated.
  const metricOptions = { ...journeyOptions.metrics, temporality };
  // Bad journeys options throw here, before anything is made.
  resolveOptions({ ...journeyOptions, metrics: metricOptions, role, instance });
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
  const journeys = new TaskJourneys({
    ...journeyOptions,
    metrics: metricOptions,
    role,
    instance,
    tracerProvider,
    traces,
  });
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
    .createObservableCounter(METRIC_EXPORT_ERRORS, {
      unit: "{item}",
      description: "Spans and metric data points not exported, by export error: signal and error type.",
    })
    .addCallback((result) => {
      for (const { signal, errorType, items } of exportFailures.totals())
        result.observe(items, { [ATTR_SIGNAL]: signal, [ATTR_ERROR_TYPE]: errorType });
    });

  let ownsTracer = false;
  let ownsMeter = false;
  const label = `${role}${instance === "" ? "" : ` "${instance}"`}`;
  if (options.registerGlobal !== false && globalHolder !== undefined) {
    // A second start in this process while the first holds the global API: registering would
    // only have the API print four "duplicate registration" errors with their stacks. Told once.
    if (!toldSecondStart) {
      toldSecondStart = true;
      tell(
        "warn",
        `taskjourney: startTelemetry() of the ${label} while the telemetry of the ${globalHolder} holds the global ` +
          `OpenTelemetry API (tracer, meter, context, propagator): this one's providers are not registered globally ` +
          `(its journeys export as usual). Pass registerGlobal: false to every startTelemetry() of a process but one.`,
      );
    }
  } else if (options.registerGlobal !== false) {
    registerTracing(tracerProvider);
    const global = trace.getTracerProvider();
    ownsTracer =
      global instanceof ProxyTracerProvider ? global.getDelegate() === tracerProvider : global === tracerProvider;
    ownsMeter = metrics.setGlobalMeterProvider(meterProvider);
    if (ownsTracer || ownsMeter) globalHolder = label;
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
    if (ownsTracer || ownsMeter) globalHolder = undefined;
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
    exportErrors: () => exportFailures.failures(),
    exportFailures: () => {
      deprecated((message) => tell("warn", message), "telemetry.exportFailures()", "telemetry.exportErrors()");
      return exportFailures.failures();
    },
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
