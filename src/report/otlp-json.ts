import { ATTR_EXCEPTION_MESSAGE, ATTR_EXCEPTION_TYPE, EVENT_EXCEPTION } from "../shared/semconv.js";
import { guarded } from "./arguments.js";
import { OtlpDocumentReader, readInputFile } from "./input-files.js";

export { OtlpJsonError } from "./input-files.js";

/**
 * Reading spans back from OTLP/JSON: the OpenTelemetry Collector's file exporter (one
 * `ExportTraceServiceRequest` per line) or an OTLP/HTTP JSON request body. Both spellings of
 * the same data are accepted:
 *
 * - trace and span ids as hex (the OTLP/JSON spec, the Collector, @opentelemetry/otlp-transformer's
 *   JsonTraceSerializer) or as base64 (the protobuf JSON mapping some exporters use);
 * - 64-bit integers (timestamps, `intValue`) as decimal strings (the Collector) or as numbers;
 * - `scopeSpans` or the older `instrumentationLibrarySpans`.
 *
 * Why our own: @opentelemetry/otlp-transformer only encodes (its JSON serializers decode export
 * responses, not requests), and a protobuf JSON mapping would read ids as base64, not the hex of
 * the OTLP/JSON files the Collector writes.
 */

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

/** One span, decoded into plain values; ids in lowercase hex. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  /** The parent's span id, or undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP span kind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Unix epoch nanoseconds, exact. */
  startNanos: bigint;
  endNanos: bigint;
  attributes: Attributes;
  links: Array<{ traceId: string; spanId: string; attributes: Attributes }>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The status message (what Jaeger shows beside an error), when there is one. */
  statusMessage?: string;
  /**
   * The first `exception` event's type and message (semantic conventions), when the span has one:
   * why a failed execution or transfer failed, for a trace written without `task.error`.
   */
  exception?: { type: string; message: string };
  /** The attributes of the resource that emitted the span (service.name, service.instance.id). */
  resource: Attributes;
  /** The instrumentation scope's name ("taskjourney" for ours). */
  scope: string;
}

const HEX = /^[0-9a-fA-F]*$/;

/**
 * A trace or span id as lowercase hex, whichever way it was written: hex of `bytes` bytes, or
 * base64 of them. Empty or absent ids give "".
 */
export function decodeId(value: unknown, bytes: number): string {
  if (typeof value !== "string" || value === "") return "";
  if (value.length === bytes * 2 && HEX.test(value)) return value.toLowerCase();
  const decoded = Buffer.from(value, "base64");
  if (decoded.length === bytes) return decoded.toString("hex");
  // Neither: keep it as written so that ids still match each other within one file.
  return value.toLowerCase();
}

/** A uint64 nanosecond timestamp written as a string or a number (or {low, high} long bits). */
function decodeNanos(value: unknown): bigint {
  // At most 20 digits (a uint64): a crafted million-digit number would cost BigInt quadratic time.
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isFinite(value)) return BigInt(Math.round(value));
  if (value !== null && typeof value === "object" && "low" in value && "high" in value) {
    const { low, high } = value as { low: number; high: number };
    return (BigInt(high >>> 0) << 32n) + BigInt(low >>> 0);
  }
  return 0n;
}

function decodeNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    // The protobuf JSON mapping spells non-finite doubles as strings.
    if (value === "NaN") return Number.NaN;
    if (value === "Infinity") return Number.POSITIVE_INFINITY;
    if (value === "-Infinity") return Number.NEGATIVE_INFINITY;
    const parsed = Number(value);
    return parsed;
  }
  return Number.NaN;
}

/** How deep arrays and key-value lists nest in an attribute before the rest reads as null. */
const MAX_VALUE_DEPTH = 32;

/** An OTLP AnyValue as a plain value (nested deeper than 32 levels: null, so a crafted file cannot overflow the stack). */
export function decodeAnyValue(value: unknown, depth = 0): AttributeValue {
  if (value === null || typeof value !== "object" || depth > MAX_VALUE_DEPTH) return null;
  const any = value as Record<string, unknown>;
  if ("stringValue" in any) return String(any.stringValue);
  if ("boolValue" in any) return any.boolValue === true || any.boolValue === "true";
  if ("intValue" in any) return decodeNumber(any.intValue);
  if ("doubleValue" in any) return decodeNumber(any.doubleValue);
  if ("arrayValue" in any) {
    const values = (any.arrayValue as { values?: unknown[] } | null)?.values;
    return Array.isArray(values) ? values.map((item) => decodeAnyValue(item, depth + 1)) : [];
  }
  if ("kvlistValue" in any) {
    const values = (any.kvlistValue as { values?: unknown[] } | null)?.values;
    return decodeAttributes(values, depth + 1);
  }
  if ("bytesValue" in any) return String(any.bytesValue);
  return null;
}

/**
 * OTLP KeyValue[] as a record without a prototype: a `__proto__` (or `constructor`) attribute
 * in a crafted file is an attribute like any other, never the object's prototype, so it cannot
 * make `task.key` or any other attribute appear.
 */
export function decodeAttributes(list: unknown, depth = 0): Attributes {
  const attributes = Object.create(null) as Attributes;
  if (!Array.isArray(list)) return attributes;
  for (const entry of list) {
    if (entry === null || typeof entry !== "object") continue;
    const { key, value } = entry as { key?: unknown; value?: unknown };
    if (typeof key === "string") attributes[key] = decodeAnyValue(value, depth);
  }
  return attributes;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The spans of one ExportTraceServiceRequest (`{"resourceSpans": [...]}`), appended to `into`. */
export function decodeTraceRequest(request: unknown, into: DecodedSpan[] = []): DecodedSpan[] {
  if (request === null || typeof request !== "object") return into;
  const resourceSpansList = asArray((request as { resourceSpans?: unknown }).resourceSpans);
  for (const resourceSpans of resourceSpansList) {
    if (resourceSpans === null || typeof resourceSpans !== "object") continue;
    const rs = resourceSpans as {
      resource?: { attributes?: unknown };
      scopeSpans?: unknown;
      instrumentationLibrarySpans?: unknown;
    };
    const resource = decodeAttributes(rs.resource?.attributes);
    const scopes = [...asArray(rs.scopeSpans), ...asArray(rs.instrumentationLibrarySpans)];
    for (const scopeSpans of scopes) {
      if (scopeSpans === null || typeof scopeSpans !== "object") continue;
      const ss = scopeSpans as {
        scope?: { name?: unknown };
        instrumentationLibrary?: { name?: unknown };
        spans?: unknown;
      };
      const scope = String(ss.scope?.name ?? ss.instrumentationLibrary?.name ?? "");
      for (const span of asArray(ss.spans)) {
        if (span === null || typeof span !== "object") continue;
        const s = span as Record<string, unknown>;
        const parent = decodeId(s.parentSpanId, 8);
        const status = s.status as { code?: unknown; message?: unknown } | undefined;
        const decoded: DecodedSpan = {
          traceId: decodeId(s.traceId, 16),
          spanId: decodeId(s.spanId, 8),
          parentSpanId: parent === "" || /^0+$/.test(parent) ? undefined : parent,
          name: typeof s.name === "string" ? s.name : "",
          kind: decodeKind(s.kind),
          startNanos: decodeNanos(s.startTimeUnixNano),
          endNanos: decodeNanos(s.endTimeUnixNano),
          attributes: decodeAttributes(s.attributes),
          links: asArray(s.links).map((link) => {
            const l = (link ?? {}) as { traceId?: unknown; spanId?: unknown; attributes?: unknown };
            return {
              traceId: decodeId(l.traceId, 16),
              spanId: decodeId(l.spanId, 8),
              attributes: decodeAttributes(l.attributes),
            };
          }),
          statusCode: decodeStatus(status?.code),
          resource,
          scope,
        };
        if (typeof status?.message === "string" && status.message !== "") decoded.statusMessage = status.message;
        const exception = decodeException(s.events);
        if (exception !== undefined) decoded.exception = exception;
        into.push(decoded);
      }
    }
  }
  return into;
}

/** The first `exception` event's type and message; only those two attributes are kept (not the stack trace). */
function decodeException(events: unknown): { type: string; message: string } | undefined {
  for (const event of asArray(events)) {
    if (event === null || typeof event !== "object" || (event as { name?: unknown }).name !== EVENT_EXCEPTION) continue;
    const attributes = decodeAttributes((event as { attributes?: unknown }).attributes);
    const type = attributes[ATTR_EXCEPTION_TYPE];
    const message = attributes[ATTR_EXCEPTION_MESSAGE];
    if (typeof type !== "string" && typeof message !== "string") continue;
    return { type: typeof type === "string" ? type : "", message: typeof message === "string" ? message : "" };
  }
  return undefined;
}

const KINDS = [
  "SPAN_KIND_UNSPECIFIED",
  "SPAN_KIND_INTERNAL",
  "SPAN_KIND_SERVER",
  "SPAN_KIND_CLIENT",
  "SPAN_KIND_PRODUCER",
  "SPAN_KIND_CONSUMER",
];
const STATUSES = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

function decodeKind(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") return Math.max(0, KINDS.indexOf(value));
  return 0;
}

function decodeStatus(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") return Math.max(0, STATUSES.indexOf(value));
  return 0;
}

/**
 * Every span of an OTLP/JSON text: JSON lines (one request per line, as the Collector's file
 * exporter writes), or one JSON document holding a request or an array of requests.
 */
export function decodeOtlpJson(text: string, source = "input"): DecodedSpan[] {
  return guarded(
    "decodeOtlpJson(text, source)",
    [
      ["text", "a string of OTLP/JSON", text],
      ["source", "a string naming the input, for messages", source],
    ],
    () => {
      const spans: DecodedSpan[] = [];
      const reader = new OtlpDocumentReader(source, (document) => decodeDocument(document, spans));
      reader.feed(text);
      reader.end();
      return spans;
    },
  );
}

function decodeDocument(document: unknown, into: DecodedSpan[]): DecodedSpan[] {
  if (Array.isArray(document)) {
    for (const item of document) decodeTraceRequest(item, into);
  } else {
    decodeTraceRequest(document, into);
  }
  return into;
}

/**
 * Reads and decodes an OTLP/JSON file (see decodeOtlpJson), a piece at a time, refusing one of
 * more than `maxBytes` bytes (default 512 MiB).
 */
export function readOtlpJsonFile(path: string, options: { maxBytes?: number } = {}): DecodedSpan[] {
  return guarded(
    "readOtlpJsonFile(path, options)",
    [
      ["path", "a file name", path],
      ["options", "{ maxBytes?: number }", options],
    ],
    () => {
      const spans: DecodedSpan[] = [];
      readInputFile(path, (document) => decodeDocument(document, spans), {
        maxBytes: options.maxBytes,
        what: "trace file",
      });
      return spans;
    },
  );
}
