import { DEADLINE_TIMEOUTS, type RequestBounds } from "./http-json.js";
import { readJaegerSpans } from "./jaeger.js";
import type { DecodedSpan } from "./otlp-json.js";
import type { MetricPoint } from "./otlp-metrics.js";
import { readPrometheusMetrics } from "./prometheus.js";

/**
 * What the backends users run hold for `explain` and `report`: spans from Jaeger, metrics from
 * Prometheus, in the shapes the files give (DecodedSpan, MetricPoint), so that everything after
 * reading is the same code.
 */

export interface BackendsQuery extends RequestBounds {
  /** Jaeger's query API base URL. */
  jaeger?: string;
  /** Prometheus' HTTP API base URL. */
  prometheus?: string;
  service?: string;
  sinceMs: number;
  /** The most traces read from Jaeger. */
  limit: number;
  /** Only the traces of this task key (explain). */
  key?: string;
  now?: number;
  /** Epoch milliseconds by which all requests must be done; default 10 × timeoutMs from now. */
  deadline?: number;
}

export interface BackendsData {
  spans: DecodedSpan[];
  metrics: MetricPoint[];
  /** Each backend read and what it gave, e.g. "Jaeger at http://…: 12 traces of service x". */
  sources: string[];
  warnings: string[];
}

/**
 * Reads the backends given, one request at a time: each within `timeoutMs` and `maxBytes`, all
 * of them within 10 × `timeoutMs` (or by `deadline`).
 */
export async function readBackends(query: BackendsQuery): Promise<BackendsData> {
  const now = query.now ?? Date.now();
  const result: BackendsData = { spans: [], metrics: [], sources: [], warnings: [] };
  // All requests together within DEADLINE_TIMEOUTS timeouts: each is bounded, and so is their sum.
  const bounds = {
    timeoutMs: query.timeoutMs,
    maxBytes: query.maxBytes,
    deadline: query.deadline ?? Date.now() + DEADLINE_TIMEOUTS * query.timeoutMs,
  };
  if (query.jaeger !== undefined) {
    const read = await readJaegerSpans({
      ...bounds,
      url: query.jaeger,
      service: query.service,
      sinceMs: query.sinceMs,
      limit: query.limit,
      key: query.key,
      now,
    });
    result.spans.push(...read.spans);
    result.warnings.push(...read.warnings);
    const services = read.services.length === 1 ? `service ${read.services[0]}` : `${read.services.length} services`;
    result.sources.push(
      `Jaeger at ${query.jaeger} (${read.traces} trace${read.traces === 1 ? "" : "s"} of ${services})`,
    );
  }
  if (query.prometheus !== undefined) {
    const read = await readPrometheusMetrics({
      ...bounds,
      url: query.prometheus,
      service: query.service,
      sinceMs: query.sinceMs,
      now,
    });
    result.metrics.push(...read.points);
    result.warnings.push(...read.warnings);
    result.sources.push(
      `Prometheus at ${query.prometheus} (${read.series} series${query.service === undefined ? "" : ` of service ${query.service}`})`,
    );
  }
  return result;
}
