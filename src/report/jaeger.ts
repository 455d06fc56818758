import { apiUrl, BackendError, HttpStatusError, requestJson, type RequestBounds } from "./http-json.js";
import { decodeTraceRequest, type DecodedSpan } from "./otlp-json.js";

/**
 * Spans read back from Jaeger's query API (Jaeger v2, and v1 ≥ 1.35, which serve both): traces
 * through the api_v3 endpoints, whose answers are OTLP/JSON (`{"result": {"resourceSpans": …}}`),
 * so they decode as the files do; a key's traces found first through the v1 search
 * (`/api/traces?tags=`), since api_v3's HTTP gateway takes no attribute filter (v1.76:
 * "not supported by grpc-gateway"). Jaeger searches within one service: without a service
 * named, every service it lists is searched, at most MAX_SERVICES of them. Every request is
 * bounded (http-json.ts), and so are the traces read (`limit`) and hence the requests made.
 */

/** The services searched at most when none is named. */
export const MAX_SERVICES = 100;

/** The attribute holding a task's key on its task span (docs/spans.md). */
const TASK_KEY = "task.key";

export interface JaegerQuery extends RequestBounds {
  /** The query API's base URL (Jaeger's UI port, e.g. http://localhost:16686). */
  url: string;
  /** The service whose traces are read; default every service Jaeger lists. */
  service?: string;
  /** Traces that began within this many milliseconds before `now`. */
  sinceMs: number;
  /** The most traces read. */
  limit: number;
  /** Only the traces holding a span with this task.key (explain). */
  key?: string;
  /** Epoch milliseconds; default Date.now(). */
  now?: number;
}

export interface JaegerSpans {
  spans: DecodedSpan[];
  /** The traces read. */
  traces: number;
  /** The services searched. */
  services: string[];
  /** What may be missing (the limit reached, services left out), one line each. */
  warnings: string[];
}

const WHAT = "Jaeger";

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Jaeger's "No traces found", a 404 with `{"error": {"httpCode": 404, …}}`, as opposed to a URL that is not its API. */
function noTraces(error: unknown): boolean {
  return error instanceof HttpStatusError && error.status === 404 && record(record(error.body)?.error) !== undefined;
}

async function servicesOf(query: JaegerQuery, warnings: string[]): Promise<string[]> {
  if (query.service !== undefined) return [query.service];
  const url = apiUrl(query.url, "/api/v3/services");
  const body = await requestJson(WHAT, url, query);
  const services = record(body)?.services;
  if (!Array.isArray(services) || !services.every((name) => typeof name === "string"))
    throw new BackendError(
      `${WHAT} at ${url}: expected {"services": [names]}, got ${JSON.stringify(body).slice(0, 200)}`,
    );
  const sorted = [...(services as string[])].sort();
  if (sorted.length > MAX_SERVICES) {
    warnings.push(
      `${WHAT} at ${query.url} lists ${sorted.length} services; the first ${MAX_SERVICES} by name were searched (name one with --service)`,
    );
    return sorted.slice(0, MAX_SERVICES);
  }
  return sorted;
}

/** The attribute where Jaeger notes what it changed in a span as it stored it. */
const WARNINGS = "@jaeger@warnings";
const SANITIZED_END =
  /^Negative duration detected, sanitizing end timestamp\. Original end timestamp: (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,9}))? ([+-]\d\d)(\d\d)\b/;

/** A Go time as Jaeger writes it ("2026-12-05 14:08:30.895042896 +0000 UTC") in epoch nanoseconds. */
function goTimeNanos(match: RegExpExecArray): bigint | undefined {
  const [, date, time, fraction = "", hours, minutes] = match;
  const ms = Date.parse(`${date}T${time}${hours}:${minutes}`);
  if (!Number.isFinite(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, "0"));
}

/**
 * A span as it was exported: Jaeger (v2) stores a span that ends where it begins — taskjourney's
 * zero-length state visits, a task ready the moment it became so — with its end moved 1 ns later
 * and a warning saying so in `@jaeger@warnings`; the end written there is put back, and the
 * warning taken away, so that such a span reads as it does from the files (0 s, not 0.0 µs).
 */
function unsanitized(span: DecodedSpan): DecodedSpan {
  const warnings = span.attributes[WARNINGS];
  if (!Array.isArray(warnings)) return span;
  const kept = warnings.filter((warning) => {
    const match = typeof warning === "string" ? SANITIZED_END.exec(warning) : null;
    const end = match === null ? undefined : goTimeNanos(match);
    if (end === undefined) return true;
    span.endNanos = end;
    return false;
  });
  if (kept.length === 0) delete span.attributes[WARNINGS];
  else span.attributes[WARNINGS] = kept;
  return span;
}

/** The spans of an api_v3 answer (`{"result": TracesData}`). */
function decodeAnswer(body: unknown, url: string): DecodedSpan[] {
  const result = record(record(body)?.result);
  if (result === undefined || !Array.isArray(result.resourceSpans))
    throw new BackendError(
      `${WHAT} at ${url}: expected an api_v3 answer {"result": {"resourceSpans": …}}, got ${JSON.stringify(body).slice(0, 200)}`,
    );
  return decodeTraceRequest(result).map(unsanitized);
}

/**
 * Reads spans from Jaeger (see the module comment): the traces of the service(s) that began in
 * the window, newest first, at most `limit`; with `key`, only the traces holding that task key.
 */
export async function readJaegerSpans(query: JaegerQuery): Promise<JaegerSpans> {
  const now = query.now ?? Date.now();
  const start = now - query.sinceMs;
  const warnings: string[] = [];
  const services = await servicesOf(query, warnings);
  const spans: DecodedSpan[] = [];
  const traces = new Set<string>();
  const take = (found: DecodedSpan[]): void => {
    for (const span of found) {
      traces.add(span.traceId);
      spans.push(span);
    }
  };
  if (query.key === undefined) {
    for (const service of services) {
      const remaining = query.limit - traces.size;
      if (remaining <= 0) break;
      const url = apiUrl(query.url, "/api/v3/traces", {
        "query.service_name": service,
        "query.start_time_min": new Date(start).toISOString(),
        "query.start_time_max": new Date(now).toISOString(),
        "query.num_traces": String(remaining),
      });
      let body: unknown;
      try {
        body = await requestJson(WHAT, url, query);
      } catch (error) {
        if (noTraces(error)) continue;
        throw error;
      }
      const found = decodeAnswer(body, url);
      // A trace of several services comes whole in each one's answer: read once.
      const seenBefore = new Set(traces);
      take(found.filter((span) => !seenBefore.has(span.traceId)));
      if (new Set(found.map((span) => span.traceId)).size >= remaining)
        warnings.push(
          `${WHAT} at ${query.url}: ${query.limit} traces read, the --limit: the newest of service ${JSON.stringify(service)}${services.length > 1 ? " and those before it" : ""}; older ones are left out (raise --limit, or narrow --since)`,
        );
    }
    return { spans, traces: traces.size, services, warnings };
  }
  // A key's traces: their IDs from the v1 search by tag, then each trace as OTLP/JSON.
  const ids: string[] = [];
  for (const service of services) {
    const remaining = query.limit - ids.length;
    if (remaining <= 0) break;
    const url = apiUrl(query.url, "/api/traces", {
      service,
      tags: JSON.stringify({ [TASK_KEY]: query.key }),
      start: String(Math.floor(start) * 1000),
      end: String(Math.ceil(now) * 1000),
      limit: String(remaining),
    });
    const data = record(await requestJson(WHAT, url, query))?.data;
    if (data === null) continue;
    if (!Array.isArray(data))
      throw new BackendError(`${WHAT} at ${url}: expected {"data": [traces]} from its search by tag`);
    for (const trace of data) {
      const id = record(trace)?.traceID;
      if (typeof id === "string" && /^[0-9a-fA-F]{1,32}$/.test(id) && !ids.includes(id) && ids.length < query.limit)
        ids.push(id);
    }
    if (ids.length >= query.limit)
      warnings.push(
        `${WHAT} at ${query.url}: ${query.limit} traces hold key ${JSON.stringify(query.key)}, the --limit; others may be left out (raise --limit)`,
      );
  }
  for (const id of ids) {
    const url = apiUrl(query.url, `/api/v3/traces/${id}`);
    let body: unknown;
    try {
      body = await requestJson(WHAT, url, query);
    } catch (error) {
      // Gone between the search and now (the memory store keeps the newest traces only).
      if (noTraces(error)) continue;
      throw error;
    }
    const seenBefore = new Set(traces);
    take(decodeAnswer(body, url).filter((span) => !seenBefore.has(span.traceId)));
  }
  return { spans, traces: traces.size, services, warnings };
}
