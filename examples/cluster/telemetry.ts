/**
 * OpenTelemetry setup of one cluster process (scheduler or worker): a TaskJourneys with its own
 * tracer provider and a metric reader fed by `journeys.metricProducer`.
 *
 * Where it goes: with OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal variables) set, OTLP/HTTP to
 * that endpoint; otherwise OTLP JSON lines into `<out>/otlp/`, one file per process and signal
 * (`traces-<role>-<port>.jsonl`, `metrics-<role>-<port>.jsonl`), each line one OTLP export
 * request as the OTLP/HTTP JSON encoding has it.
 */
import fs from "node:fs";
import path from "node:path";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { JsonMetricsSerializer, JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { TaskJourneys, semconv } from "../../src/index.js";

export interface TelemetryOptions {
  role: "scheduler" | "worker";
  /** The process's address, e.g. tcp://127.0.0.1:40001. */
  instance: string;
  /** Where OTLP JSON files go when no endpoint is configured. */
  outDir: string;
  /** Head-sampling ratio of task journeys into traces. */
  traceRatio: number;
  /** Metric export interval, ms (a final export happens at shutdown anyway). */
  exportIntervalMs?: number;
}

export interface Telemetry {
  journeys: TaskJourneys;
  /** "otlp http://…" or the directory of the JSON files. */
  destination: string;
  /** Flushes and exports everything, then stops. */
  shutdown(): Promise<void>;
}

/** The endpoint OTLP exporters will use, if any is configured. */
export function otlpEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || undefined;
}

/** Appends each export request as one line of OTLP JSON. */
class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      const body = JsonTraceSerializer.serializeRequest(spans as never);
      if (body !== undefined) fs.appendFileSync(this.file, Buffer.concat([Buffer.from(body), Buffer.from("\n")]));
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  async shutdown(): Promise<void> {}
}

class JsonLinesMetricExporter implements PushMetricExporter {
  constructor(private readonly file: string) {}

  export(metrics: ResourceMetrics, done: (result: ExportResult) => void): void {
    try {
      const body = JsonMetricsSerializer.serializeRequest(metrics);
      if (body !== undefined) fs.appendFileSync(this.file, Buffer.concat([Buffer.from(body), Buffer.from("\n")]));
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}

export function startTelemetry(options: TelemetryOptions): Telemetry {
  const port = options.instance.replace(/^.*:/, "");
  const resource = resourceFromAttributes({
    "service.name": `taskjourney-cluster-${options.role}`,
    [semconv.RESOURCE_ROLE]: options.role,
    [semconv.RESOURCE_INSTANCE]: options.instance,
  });
  const endpoint = otlpEndpoint();
  let spanExporter: SpanExporter;
  let metricExporter: PushMetricExporter;
  let destination: string;
  if (endpoint !== undefined) {
    spanExporter = new OTLPTraceExporter();
    metricExporter = new OTLPMetricExporter();
    destination = `OTLP ${endpoint}`;
  } else {
    const directory = path.join(options.outDir, "otlp");
    fs.mkdirSync(directory, { recursive: true });
    spanExporter = new JsonLinesSpanExporter(path.join(directory, `traces-${options.role}-${port}.jsonl`));
    metricExporter = new JsonLinesMetricExporter(path.join(directory, `metrics-${options.role}-${port}.jsonl`));
    destination = directory;
  }
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(spanExporter, { maxQueueSize: 65536, maxExportBatchSize: 2048, scheduledDelayMillis: 1000 })],
  });
  const journeys = new TaskJourneys({
    role: options.role,
    instance: options.instance,
    tracerProvider,
    sampling: { ratio: options.traceRatio },
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: metricExporter,
        exportIntervalMillis: options.exportIntervalMs ?? 10_000,
        metricProducers: [journeys.metricProducer],
      }),
    ],
  });
  let stopped: Promise<void> | undefined;
  return {
    journeys,
    destination,
    shutdown() {
      stopped ??= (async () => {
        await journeys.shutdown();
        await meterProvider.forceFlush();
        await meterProvider.shutdown();
        await tracerProvider.forceFlush();
        await tracerProvider.shutdown();
      })();
      return stopped;
    },
  };
}
