/**
 * @elastic/mockotlpserver in-process: an OTLP/HTTP receiver on a free loopback port that decodes
 * protobuf and JSON requests with the real OTLP protos and hands them to callbacks. It has no
 * type declarations, so its programmatic API is typed here.
 */
import { createRequire } from "node:module";

interface MockOtlpServerOptions {
  services?: Array<"http" | "grpc" | "ui">;
  httpHostname?: string;
  httpPort?: number;
  logLevel?: string;
  onTrace?: (request: unknown) => void;
  onMetrics?: (request: unknown) => void;
  onRequest?: (request: { transport: string; method: string; path: string; headers: Record<string, string> }) => void;
}

interface MockOtlpServerInstance {
  httpUrl: URL | null;
  start(): Promise<void>;
  close(): Promise<void>;
}

interface MockOtlpModule {
  MockOtlpServer: new (options: MockOtlpServerOptions) => MockOtlpServerInstance;
  /** Proto or JSON request → one JSON shape: attributes as objects, 64-bit integers as strings (proto) or numbers (JSON). */
  normalizeMetrics(request: unknown): OtlpMetricsRequest;
  normalizeTrace(request: unknown): OtlpTraceRequest;
}

const mock = createRequire(import.meta.url)("@elastic/mockotlpserver") as MockOtlpModule;

/** The decoded, normalized OTLP JSON shapes, as far as the tests read them. */
export type Attributes = Record<string, unknown>;
export type Num = number | string | undefined;
export interface OtlpNumberPoint {
  attributes?: Attributes;
  asDouble?: number;
  asInt?: Num;
  startTimeUnixNano?: string;
  timeUnixNano?: string;
}
export interface OtlpExponentialPoint {
  attributes?: Attributes;
  count?: Num;
  sum?: number;
  min?: number;
  max?: number;
  scale?: number;
  zeroCount?: Num;
  positive?: { offset?: number; bucketCounts?: Num[] };
  negative?: { offset?: number; bucketCounts?: Num[] };
}
export interface OtlpHistogramPoint {
  attributes?: Attributes;
  count?: Num;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: Num[];
  explicitBounds?: number[];
}
export interface OtlpMetric {
  name: string;
  unit?: string;
  description?: string;
  sum?: { dataPoints: OtlpNumberPoint[]; aggregationTemporality?: number | string; isMonotonic?: boolean };
  gauge?: { dataPoints: OtlpNumberPoint[] };
  exponentialHistogram?: { dataPoints: OtlpExponentialPoint[]; aggregationTemporality?: number | string };
  histogram?: { dataPoints: OtlpHistogramPoint[]; aggregationTemporality?: number | string };
}
export interface OtlpResource {
  attributes?: Attributes;
}
export interface OtlpMetricsRequest {
  resourceMetrics: Array<{
    resource?: OtlpResource;
    scopeMetrics: Array<{ scope?: { name?: string; version?: string }; metrics: OtlpMetric[] }>;
  }>;
}
export interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind?: string | number;
  attributes?: Attributes;
}
export interface OtlpTraceRequest {
  resourceSpans: Array<{
    resource?: OtlpResource;
    scopeSpans: Array<{ scope?: { name?: string }; spans: OtlpSpan[] }>;
  }>;
}

export interface MockOtlp {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly metrics: OtlpMetricsRequest[];
  readonly traces: OtlpTraceRequest[];
  /** Path and content type of every request received. */
  readonly requests: Array<{ path: string; contentType: string }>;
  /** Polls until `ready()` returns a value other than undefined; throws after `timeoutMs`. */
  waitFor<T>(ready: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startMockOtlp(): Promise<MockOtlp> {
  const metrics: OtlpMetricsRequest[] = [];
  const traces: OtlpTraceRequest[] = [];
  const requests: Array<{ path: string; contentType: string }> = [];
  const server = new mock.MockOtlpServer({
    services: ["http"],
    httpHostname: "127.0.0.1",
    httpPort: 0,
    logLevel: "warn",
    onMetrics: (request) => metrics.push(mock.normalizeMetrics(request)),
    onTrace: (request) => traces.push(mock.normalizeTrace(request)),
    onRequest: (request) => requests.push({ path: request.path, contentType: String(request.headers["content-type"]) }),
  });
  await server.start();
  const url = String(server.httpUrl).replace(/\/$/, "");
  return {
    url,
    metrics,
    traces,
    requests,
    async waitFor<T>(ready: () => T | undefined, timeoutMs = 10_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = ready();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`mockotlpserver: nothing matching arrived within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => server.close(),
  };
}

/** A proto (string) or JSON (number) 64-bit integer, or an omitted proto3 zero, as a number. */
export function num(value: Num): number {
  return value === undefined ? 0 : Number(value);
}
