import { AggregationTemporality, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { type SpanExporter } from "@opentelemetry/sdk-trace";
import { deadlineAgentFactory } from "./deadline-agent.js";
import { load } from "./load-dependency.js";
import type { OtlpProtocol } from "./options.js";

/** The OTLP span and metric exporters, loaded only when configured. */

export async function otlpSpanExporter(
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

export async function otlpMetricExporter(
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
