import { apiUrl, BackendError, requestJson, type RequestBounds } from "./http-json.js";
import type { Attributes } from "./otlp-json.js";
import {
  PROMETHEUS_ATTRIBUTE_LABELS,
  PROMETHEUS_NAMES,
  PROMETHEUS_RESOURCE_LABELS,
  type ExplicitBuckets,
  type ExponentialBuckets,
  type MetricPoint,
} from "./otlp-metrics.js";

/**
 * taskjourney's metrics read back from Prometheus' HTTP API (`/api/v1/query`), as the metric
 * points the files give: for each series with a sample in the window, its latest sample — a
 * cumulative total since its process started, as the last point in a metrics file is — so the
 * report sums what the files would. Not a rate or an increase over the window: those
 * extrapolate, and a process that started before the window would count only in part.
 *
 * What Prometheus' data model keeps differs from the files in two ways, both said where they show:
 * a native histogram keeps at most scale 8 (the Collector's remote write downscales OTel's finer
 * buckets) and no min or max, so the quantiles are those of the same counts in coarser buckets
 * (within 0.27% of a bucket's bounds, a bucket being a factor 2^(1/256) wide); and a process
 * restarted under the same labels is one series, whose latest sample is the new process's total.
 *
 * Native histograms come from `last_over_time`, which Prometheus 2.x (before native histograms
 * were complete) answers with a float 0; then from the window's samples, the latest of each
 * series kept (the answer holds every sample of the window, bounded like every answer).
 */

export interface PrometheusQuery extends RequestBounds {
  /** The HTTP API's base URL, e.g. http://localhost:9090. */
  url: string;
  /** Only the series of this service (the `service_name` label); default every series. */
  service?: string;
  /** Series with a sample within this many milliseconds before `now`. */
  sinceMs: number;
  /** Epoch milliseconds; default Date.now(). */
  now?: number;
}

export interface PrometheusMetrics {
  points: MetricPoint[];
  /** The series read. */
  series: number;
  /** The PromQL queries made. */
  queries: number;
  warnings: string[];
}

const WHAT = "Prometheus";

interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  histogram?: [number, NativeHistogram];
  values?: Array<[number, string]>;
  histograms?: Array<[number, NativeHistogram]>;
}

interface NativeHistogram {
  count: string;
  sum: string;
  buckets?: Array<[number, string, string, string]>;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** PromQL's string literal of `value` (JSON's escapes are PromQL's). */
function quoted(value: string): string {
  return JSON.stringify(value);
}

async function query(
  options: PrometheusQuery,
  promql: string,
  expect: "vector" | "matrix",
  counter: { queries: number },
): Promise<Sample[]> {
  const url = apiUrl(options.url, "/api/v1/query");
  counter.queries++;
  const body = record(
    await requestJson(WHAT, url, options, {
      query: promql,
      time: ((options.now ?? Date.now()) / 1000).toFixed(3),
    }),
  );
  const data = record(body?.data);
  if (body?.status !== "success" || data === undefined || !Array.isArray(data.result))
    throw new BackendError(
      `${WHAT} at ${url}: ${promql}: ${typeof body?.error === "string" ? body.error : `expected {"status": "success", "data": {"result": […]}}, got ${JSON.stringify(body).slice(0, 200)}`}`,
    );
  if (data.resultType !== expect)
    throw new BackendError(`${WHAT} at ${url}: ${promql}: expected a ${expect}, got a ${String(data.resultType)}`);
  return data.result as Sample[];
}

/** A series' labels as the resource and the metric attributes of a point. */
function labelsOf(labels: Record<string, string>): { resource: Attributes; attributes: Attributes } {
  const resource = Object.create(null) as Attributes;
  const attributes = Object.create(null) as Attributes;
  for (const [label, value] of Object.entries(labels)) {
    if (label === "__name__" || label === "le") continue;
    const attribute = PROMETHEUS_ATTRIBUTE_LABELS[label];
    if (attribute !== undefined) attributes[attribute] = value;
    else resource[PROMETHEUS_RESOURCE_LABELS[label] ?? label] = value;
  }
  return { resource, attributes };
}

function point(metric: string, labels: Record<string, string>, time: number): MetricPoint {
  return {
    metric,
    // Prometheus keeps cumulative series only (remote write drops delta ones).
    temporality: 2,
    ...labelsOf(labels),
    startNanos: 0n,
    timeNanos: BigInt(Math.round(time * 1000)) * 1_000_000n,
  };
}

/** The most buckets one histogram may span, as mergeHistograms keeps at most. */
const MAX_BUCKETS = 4096;

/**
 * A Prometheus native histogram (its buckets as the query API writes them: [boundary rule,
 * lower, upper, count]) as OTel exponential buckets: scale from a bucket's width (upper / lower
 * = 2^(2^-scale)), OTel index = Prometheus index - 1 (OTel's bucket i is (base^i, base^(i+1)]);
 * the zero bucket as zeroCount; no min or max. Undefined for one that is not such (a custom
 * bucket layout, a scale out of range).
 */
export function nativeToExponential(histogram: NativeHistogram): ExponentialBuckets | undefined {
  const result: ExponentialBuckets = {
    count: Number(histogram.count),
    sum: Number(histogram.sum),
    min: Number.NaN,
    max: Number.NaN,
    scale: 0,
    zeroCount: 0,
    offset: 0,
    counts: [],
  };
  const positive: Array<{ index: number; count: number }> = [];
  let scale: number | undefined;
  for (const bucket of histogram.buckets ?? []) {
    if (!Array.isArray(bucket) || bucket.length !== 4) return undefined;
    const lower = Number(bucket[1]);
    const upper = Number(bucket[2]);
    const count = Number(bucket[3]);
    if (!Number.isFinite(count) || count < 0) return undefined;
    if (lower <= 0 && upper >= 0) {
      result.zeroCount += count;
      continue;
    }
    if (upper < 0) continue; // durations are not negative
    const width = Math.log2(Math.log2(upper / lower));
    const bucketScale = Math.round(-width);
    if (!Number.isFinite(width) || Math.abs(-width - bucketScale) > 1e-6 || bucketScale < -10 || bucketScale > 20)
      return undefined;
    if (scale !== undefined && bucketScale !== scale) return undefined;
    scale = bucketScale;
    positive.push({ index: Math.round(Math.log2(upper) * 2 ** bucketScale) - 1, count });
  }
  if (scale === undefined) return result;
  result.scale = scale;
  const low = Math.min(...positive.map((bucket) => bucket.index));
  const high = Math.max(...positive.map((bucket) => bucket.index));
  if (high - low + 1 > MAX_BUCKETS) return undefined;
  result.offset = low;
  result.counts = new Array<number>(high - low + 1).fill(0);
  for (const { index, count } of positive) result.counts[index - low] += count;
  return result;
}

/** The identity of a series: its labels but `le`, sorted. */
function seriesId(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.entries(labels)
      .filter(([name]) => name !== "le" && name !== "__name__")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * Reads taskjourney's metrics from Prometheus (see the module comment): one query per metric
 * family (two or three more for duration histograms), each bounded.
 */
export async function readPrometheusMetrics(options: PrometheusQuery): Promise<PrometheusMetrics> {
  const selector = options.service === undefined ? "" : `{service_name=${quoted(options.service)}}`;
  const range = `[${Math.max(1, Math.ceil(options.sinceMs / 1000))}s]`;
  const counter = { queries: 0 };
  const points: MetricPoint[] = [];
  const warnings: string[] = [];
  let unconverted = 0;
  const latest = (name: string) => `last_over_time(${name}${selector}${range})`;
  for (const family of PROMETHEUS_NAMES) {
    if (family.histogram !== true) {
      for (const sample of await query(options, latest(family.name), "vector", counter)) {
        if (sample.value === undefined) continue;
        points.push({ ...point(family.metric, sample.metric, sample.value[0]), value: Number(sample.value[1]) });
      }
      continue;
    }
    // A native histogram: the latest sample of each series, by last_over_time where Prometheus
    // keeps histograms in it, else from the window's samples.
    let natives = await query(options, latest(family.name), "vector", counter);
    if (natives.length > 0 && natives.every((sample) => sample.histogram === undefined)) {
      natives = (await query(options, `${family.name}${selector}${range}`, "matrix", counter)).map((series) => ({
        metric: series.metric,
        histogram: series.histograms?.at(-1),
      }));
    }
    for (const sample of natives) {
      if (sample.histogram === undefined) continue;
      const exponential = nativeToExponential(sample.histogram[1]);
      if (exponential === undefined) {
        unconverted++;
        continue;
      }
      points.push({ ...point(family.metric, sample.metric, sample.histogram[0]), exponential });
    }
    if (natives.some((sample) => sample.histogram !== undefined)) continue;
    // A classic histogram (exported with explicit buckets): _bucket{le}, _sum, _count.
    const buckets = await query(options, latest(`${family.name}_bucket`), "vector", counter);
    if (buckets.length === 0) continue;
    const sums = new Map(
      (await query(options, latest(`${family.name}_sum`), "vector", counter)).map((sample) => [
        seriesId(sample.metric),
        Number(sample.value?.[1]),
      ]),
    );
    const bySeries = new Map<string, { labels: Record<string, string>; time: number; les: Array<[number, number]> }>();
    for (const sample of buckets) {
      if (sample.value === undefined) continue;
      const id = seriesId(sample.metric);
      let series = bySeries.get(id);
      if (series === undefined) bySeries.set(id, (series = { labels: sample.metric, time: sample.value[0], les: [] }));
      const le = sample.metric.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(sample.metric.le);
      if (!Number.isNaN(le)) series.les.push([le, Number(sample.value[1])]);
    }
    for (const [id, series] of bySeries) {
      series.les.sort((a, b) => a[0] - b[0]);
      const bounds = series.les.filter(([le]) => le !== Number.POSITIVE_INFINITY).map(([le]) => le);
      // Cumulative counts per bound into each bucket's own.
      const counts = series.les.map(([, cumulative], i) => cumulative - (i === 0 ? 0 : series.les[i - 1][1]));
      if (series.les.at(-1)?.[0] !== Number.POSITIVE_INFINITY) counts.push(0);
      const explicit: ExplicitBuckets = {
        count: series.les.at(-1)?.[1] ?? 0,
        sum: sums.get(id) ?? Number.NaN,
        min: Number.NaN,
        max: Number.NaN,
        bounds,
        counts,
      };
      points.push({ ...point(family.metric, series.labels, series.time), explicit });
    }
  }
  if (unconverted > 0)
    warnings.push(
      `${WHAT} at ${options.url}: ${unconverted} duration histogram series are not exponential buckets as OTel's (a custom layout or a scale out of range): left out of the quantiles`,
    );
  // One point per series: its latest sample.
  return { points, series: points.length, queries: counter.queries, warnings };
}
