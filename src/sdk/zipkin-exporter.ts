/**
 * Spans to a Zipkin server, as Zipkin's JSON v2 posted to its `/api/v2/spans`: what startTelemetry
 * sends with `OTEL_TRACES_EXPORTER=zipkin`. The mapping is the OpenTelemetry specification's
 * Zipkin exporter's (as @opentelemetry/exporter-zipkin maps it): span kind, µs timestamps,
 * `localEndpoint.serviceName` from service.name, attributes and resource attributes as string
 * tags, `otel.status_code` and `error` from the status, `otel.scope.name` / `otel.scope.version`,
 * events as annotations.
 *
 * Why not @opentelemetry/exporter-zipkin itself: its Node.js transport posts on Node's global
 * agent with no timeout and keeps every byte of the answer, so a Zipkin that accepts the
 * connection and never answers holds the export and its socket (and with it the process's exit)
 * for ever, and one that answers without end grows the host's memory without bound. Here each
 * request goes through the deadline agent (destroyed at the export timeout, as the OTLP exporters'
 * requests are) and at most ZIPKIN_ANSWER_BYTES of an answer are kept.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import { SpanKind, SpanStatusCode, type Attributes, type HrTime } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { withRequestDeadlines } from "./deadline-agent.js";

/** The OpenTelemetry specification's default Zipkin endpoint (OTEL_EXPORTER_ZIPKIN_ENDPOINT). */
export const DEFAULT_ZIPKIN_ENDPOINT = "http://localhost:9411/api/v2/spans";
/** What is kept of an answer, for the error that names it: Zipkin's own are a line. */
const ZIPKIN_ANSWER_BYTES = 4096;

/** A Zipkin v2 span (zipkin2-api.yaml), as much of it as is sent. */
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: "CLIENT" | "SERVER" | "PRODUCER" | "CONSUMER";
  timestamp: number;
  duration: number;
  localEndpoint: { serviceName: string };
  tags: Record<string, string>;
  annotations?: Array<{ timestamp: number; value: string }>;
}

/** A Zipkin server's answer other than 2xx; `status` is its HTTP status (error.type in the failure count). */
export class ZipkinAnswerError extends Error {
  override name = "ZipkinAnswerError";
  readonly code = "TJ_EXPORT_REJECTED";
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`Zipkin answered ${status}${body === "" ? "" : `: ${body}`}`);
  }
}

const KINDS: Partial<Record<SpanKind, ZipkinSpan["kind"]>> = {
  [SpanKind.CLIENT]: "CLIENT",
  [SpanKind.SERVER]: "SERVER",
  [SpanKind.PRODUCER]: "PRODUCER",
  [SpanKind.CONSUMER]: "CONSUMER",
  // INTERNAL: no kind, which Zipkin reads as a local span.
};

/** Microseconds since the epoch, whole (Zipkin's unit). */
function micros(time: HrTime): number {
  return time[0] * 1_000_000 + Math.round(time[1] / 1_000);
}

/** A tag's value: strings as they are, arrays as a JSON list (the specification's rule), the rest as String() gives them. */
function tagValue(value: unknown): string {
  return typeof value === "string" ? value : Array.isArray(value) ? JSON.stringify(value) : String(value);
}

function addTags(tags: Record<string, string>, attributes: Attributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) tags[key] = tagValue(value);
}

/** One span in Zipkin's JSON v2. */
export function toZipkinSpan(span: ReadableSpan): ZipkinSpan {
  const context = span.spanContext();
  const tags: Record<string, string> = {};
  addTags(tags, span.resource.attributes);
  addTags(tags, span.attributes);
  const scope = span.instrumentationScope;
  if (scope.name !== "") tags["otel.scope.name"] = scope.name;
  if (scope.version !== undefined && scope.version !== "") tags["otel.scope.version"] = scope.version;
  if (span.status.code !== SpanStatusCode.UNSET) tags["otel.status_code"] = SpanStatusCode[span.status.code];
  // Zipkin's UI marks a span with an `error` tag as failed, whatever its value.
  if (span.status.code === SpanStatusCode.ERROR) tags.error = span.status.message ?? "";
  if (span.droppedAttributesCount > 0) tags["otel.dropped_attributes_count"] = String(span.droppedAttributesCount);
  if (span.droppedEventsCount > 0) tags["otel.dropped_events_count"] = String(span.droppedEventsCount);
  if (span.droppedLinksCount > 0) tags["otel.dropped_links_count"] = String(span.droppedLinksCount);
  const serviceName = span.attributes["service.name"] ?? span.resource.attributes["service.name"] ?? "unknown_service";
  const zipkin: ZipkinSpan = {
    traceId: context.traceId,
    id: context.spanId,
    name: span.name,
    timestamp: micros(span.startTime),
    // Zipkin takes a duration of 0 as none: a span shorter than 0.5 µs is shown as 1 µs.
    duration: Math.max(1, micros(span.duration)),
    localEndpoint: { serviceName: String(serviceName) },
    tags,
  };
  const parentId = span.parentSpanContext?.spanId;
  if (parentId !== undefined) zipkin.parentId = parentId;
  const kind = KINDS[span.kind];
  if (kind !== undefined) zipkin.kind = kind;
  if (span.events.length > 0) {
    zipkin.annotations = span.events.map((event) => ({
      timestamp: micros(event.time),
      value:
        event.attributes === undefined || Object.keys(event.attributes).length === 0
          ? event.name
          : JSON.stringify({ [event.name]: event.attributes }),
    }));
  }
  return zipkin;
}

export interface ZipkinExporterOptions {
  /** Where spans are posted, e.g. http://localhost:9411/api/v2/spans. */
  url: string;
  /** How long one export may take: its request is destroyed then. */
  timeoutMillis: number;
}

/** Posts each batch of spans to Zipkin once (no retries), its request bounded by the export timeout. */
export class ZipkinSpanExporter implements SpanExporter {
  private readonly url: URL;
  private agent: Promise<Agent> | undefined;
  private readonly pending = new Set<Promise<void>>();
  private shut = false;

  constructor(private readonly options: ZipkinExporterOptions) {
    this.url = new URL(options.url);
  }

  private agentFor(): Promise<Agent> {
    this.agent ??= (async () => {
      const agent =
        this.url.protocol === "https:"
          ? new (await import("node:https")).Agent({ keepAlive: true })
          : new (await import("node:http")).Agent({ keepAlive: true });
      return withRequestDeadlines(agent, this.options.timeoutMillis);
    })();
    return this.agent;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.shut) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("Zipkin exporter is shut down") });
      return;
    }
    if (spans.length === 0) {
      resultCallback({ code: ExportResultCode.SUCCESS });
      return;
    }
    const sent = this.post(JSON.stringify(spans.map(toZipkinSpan))).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (error: Error) => resultCallback({ code: ExportResultCode.FAILED, error }),
    );
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
  }

  private async post(body: string): Promise<void> {
    const agent = await this.agentFor();
    const { request } = this.url.protocol === "https:" ? await import("node:https") : await import("node:http");
    await new Promise<void>((resolve, reject) => {
      let req: ClientRequest;
      try {
        req = request(this.url, {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        });
      } catch (error) {
        reject(error as Error);
        return;
      }
      req.once("error", reject);
      req.once("response", (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        let kept = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (kept.length < ZIPKIN_ANSWER_BYTES) kept += chunk.slice(0, ZIPKIN_ANSWER_BYTES - kept.length);
        });
        response.once("error", reject);
        response.once("end", () => {
          if (status >= 200 && status < 300) resolve();
          else reject(new ZipkinAnswerError(status, kept.trim().replace(/\s+/g, " ").slice(0, 300)));
        });
      });
      req.end(body);
    });
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.pending);
  }

  async shutdown(): Promise<void> {
    this.shut = true;
    await this.forceFlush();
    if (this.agent !== undefined) (await this.agent).destroy();
  }
}
