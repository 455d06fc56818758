/**
 * OpenTelemetry as the user already has it: their own NodeSDK, set up as docs/exporting.md says,
 * with taskjourney's journeys beside it. Spans and metrics go over OTLP where
 * OTEL_EXPORTER_OTLP_ENDPOINT says, else to OTLP/JSON files in `<out>/otlp/` (one pair per
 * process), which `taskjourney report` and `explain` read.
 */
import path from "node:path";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace";
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { TaskJourneys, type StateMachine } from "taskjourney";
import { createFileMetricExporter, createFileSpanExporter } from "taskjourney/sdk";

/** The journeys' clock: epoch seconds to the microsecond, so that the queue's row times (epoch milliseconds) go in as they are. */
export const epochSeconds = (): number => (performance.timeOrigin + performance.now()) / 1000;

export interface TelemetryOptions<S extends string> {
  role: "scheduler" | "worker";
  /** This process's name: `service.instance.id` in every backend, as given. */
  instance: string;
  machine: StateMachine<S>;
  /** Head-sampling ratio of journeys into traces (failed and slow ones are kept whatever it is). */
  ratio: number;
  /** Where the OTLP/JSON files go when no OTLP endpoint is set. */
  out: string;
}

export function startOpenTelemetry<S extends string>(options: TelemetryOptions<S>) {
  const { role, instance } = options;
  const journeys = new TaskJourneys<"scheduler" | "worker", S>({
    role,
    machine: options.machine,
    instance,
    sampling: { ratio: options.ratio },
    runtime: { clock: epochSeconds, timeOrigin: 0 },
  });
  const otlp = process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  const file = (signal: string) => path.join(options.out, "otlp", `${signal}-${role}-${instance}.jsonl`);
  const sdk = new NodeSDK({
    // Detected here, named last: NodeSDK's own detectors would replace service.instance.id.
    autoDetectResources: false,
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector, processDetector, hostDetector, osDetector] }))
      .merge(resourceFromAttributes({ "service.instance.id": instance, "taskjourney.role": role })),
    // taskjourney chooses the ids of the spans it hands out: a job kept only by a consumer (it
    // failed) gets its producer's span as its root all the same.
    idGenerator: journeys.idGenerator,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: otlp ? new OTLPTraceExporter() : createFileSpanExporter({ path: file("traces") }),
      }),
    ],
    metricReaders: [
      new PeriodicExportingMetricReader({
        exporter: otlp ? new OTLPMetricExporter() : createFileMetricExporter({ path: file("metrics") }),
        metricProducers: [journeys.metricProducer],
      }),
    ],
  });
  sdk.start();
  return {
    journeys,
    /** Ends what is still live (told on stderr), then exports the rest: the journeys first, then the SDK. */
    async shutdown(): Promise<void> {
      await journeys.shutdown();
      await sdk.shutdown();
    },
  };
}
