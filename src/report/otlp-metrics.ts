import {
  ATTR_DROPPED_REASON,
  ATTR_TASK_ACTIVITY,
  ATTR_TASK_PREFIX,
  ATTR_TASK_STATE,
  ATTR_TASK_COMPUTATION,
  RESOURCE_ROLE,
  METRIC_ACTIVE,
  METRIC_DROPPED,
  METRIC_EXECUTE_TIME,
  METRIC_GATHER_TIME,
  METRIC_STATE_DURATION,
  METRIC_STATE_TIME,
  METRIC_TRANSITIONS,
  METRIC_WAIT_TIME,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_TASKS,
  METRIC_COMPUTATION_TIME,
  METRIC_COMPUTATION_WALL,
} from "../shared/semconv.js";
import { decodeAttributes, type Attributes } from "./otlp-json.js";

/**
 * Reading taskjourney's metrics back from OTLP/JSON (`{"resourceMetrics": [...]}` requests, as
 * `taskjourney/sdk`'s `fileDirectory` and the Collector's file exporter write them): the points
 * the report is made of, and only those (an application's own metrics in the same file are
 * skipped, so they cost no memory).
 */

/**
 * The metrics the report reads (task.transitions for how many tasks failed and how journeys
 * ended; task.active for which states are not terminal, the producer giving it for those only).
 */
const READ: ReadonlySet<string> = new Set([
  METRIC_ACTIVE,
  METRIC_STATE_TIME,
  METRIC_STATE_DURATION,
  METRIC_EXECUTE_TIME,
  METRIC_GATHER_TIME,
  METRIC_WAIT_TIME,
  METRIC_TRANSITIONS,
  METRIC_DROPPED,
  // By computation (report/computations.ts).
  METRIC_COMPUTATION_TIME,
  METRIC_COMPUTATION_TASKS,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_WALL,
]);

/**
 * The same metrics as Prometheus names them (collector/README.md, "Metric names in Prometheus":
 * the Collector's `UnderscoreEscapingWithSuffixes`), for reading them back from Prometheus.
 * `task.state.duration` is a native histogram there, or, exported with `histogram: "explicit"`,
 * a classic one (`_bucket`, `_sum`, `_count`). `task.active` (unit `{task}`, no suffix) tells
 * the report which states are live, hence which are the ends ("How they ended").
 */
export const PROMETHEUS_NAMES: ReadonlyArray<{ metric: string; name: string; histogram?: true }> = [
  { metric: METRIC_ACTIVE, name: "task_active" },
  { metric: METRIC_STATE_TIME, name: "task_state_time_seconds_total" },
  { metric: METRIC_STATE_DURATION, name: "task_state_duration_seconds", histogram: true },
  { metric: METRIC_EXECUTE_TIME, name: "task_execute_time_seconds_total" },
  { metric: METRIC_GATHER_TIME, name: "task_gather_time_seconds_total" },
  { metric: METRIC_WAIT_TIME, name: "task_wait_time_seconds_total" },
  { metric: METRIC_TRANSITIONS, name: "task_transitions_total" },
  { metric: METRIC_DROPPED, name: "taskjourney_dropped_total" },
  { metric: METRIC_COMPUTATION_TIME, name: "task_computation_time_seconds_total" },
  { metric: METRIC_COMPUTATION_TASKS, name: "task_computation_tasks_total" },
  { metric: METRIC_COMPUTATION_ACTIVE, name: "task_computation_active" },
  { metric: METRIC_COMPUTATION_WALL, name: "task_computation_wall_seconds" },
];

/** The Prometheus labels of the metrics' own attributes, by the attribute each stands for. */
export const PROMETHEUS_ATTRIBUTE_LABELS: Readonly<Record<string, string>> = {
  task_prefix: ATTR_TASK_PREFIX,
  task_state: ATTR_TASK_STATE,
  task_activity: ATTR_TASK_ACTIVITY,
  reason: ATTR_DROPPED_REASON,
  task_computation: ATTR_TASK_COMPUTATION,
};

/** Resource attributes the report reads, by their Prometheus label (`resource_constant_labels`). */
export const PROMETHEUS_RESOURCE_LABELS: Readonly<Record<string, string>> = {
  taskjourney_role: RESOURCE_ROLE,
  service_name: "service.name",
  service_instance_id: "service.instance.id",
};

/** An exponential histogram data point's buckets (positive values only: durations). */
export interface ExponentialBuckets {
  count: number;
  sum: number;
  /** NaN when absent. */
  min: number;
  max: number;
  scale: number;
  zeroCount: number;
  offset: number;
  counts: number[];
}

/** An explicit-bucket histogram data point (`histogram: "explicit"`). */
export interface ExplicitBuckets {
  count: number;
  sum: number;
  min: number;
  max: number;
  bounds: number[];
  counts: number[];
}

export interface MetricPoint {
  metric: string;
  /** OTLP aggregation temporality: 1 delta, 2 cumulative (0: unspecified, read as cumulative). */
  temporality: number;
  resource: Attributes;
  attributes: Attributes;
  startNanos: bigint;
  timeNanos: bigint;
  /** A sum's or gauge's value. */
  value?: number;
  exponential?: ExponentialBuckets;
  explicit?: ExplicitBuckets;
}

function nanos(value: unknown): bigint {
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return 0n;
}

/** A number written as a number or (64-bit integers in the protobuf JSON mapping) a string. */
function number(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.length <= 32) return Number(value);
  return Number.NaN;
}

function counts(value: unknown): number[] {
  return Array.isArray(value) ? value.map(number) : [];
}

function temporalityOf(value: unknown): number {
  if (value === 1 || value === "AGGREGATION_TEMPORALITY_DELTA") return 1;
  if (value === 2 || value === "AGGREGATION_TEMPORALITY_CUMULATIVE") return 2;
  return 0;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The report's points of one ExportMetricsServiceRequest, appended to `into`. */
export function decodeMetricsRequest(request: unknown, into: MetricPoint[] = []): MetricPoint[] {
  for (const resourceMetrics of asArray(record(request)?.resourceMetrics)) {
    const rm = record(resourceMetrics);
    if (rm === undefined) continue;
    const resource = decodeAttributes(record(rm.resource)?.attributes);
    for (const scopeMetrics of asArray(rm.scopeMetrics)) {
      for (const metric of asArray(record(scopeMetrics)?.metrics)) {
        const m = record(metric);
        if (m === undefined || typeof m.name !== "string" || !READ.has(m.name)) continue;
        const data = record(m.sum) ?? record(m.gauge) ?? record(m.exponentialHistogram) ?? record(m.histogram);
        if (data === undefined) continue;
        const temporality = temporalityOf(data.aggregationTemporality);
        for (const dataPoint of asArray(data.dataPoints)) {
          const p = record(dataPoint);
          if (p === undefined) continue;
          const point: MetricPoint = {
            metric: m.name,
            temporality,
            resource,
            attributes: decodeAttributes(p.attributes),
            startNanos: nanos(p.startTimeUnixNano),
            timeNanos: nanos(p.timeUnixNano),
          };
          if (data === m.exponentialHistogram) {
            const positive = record(p.positive);
            point.exponential = {
              count: number(p.count),
              sum: number(p.sum),
              min: number(p.min),
              max: number(p.max),
              scale: number(p.scale ?? 0),
              zeroCount: number(p.zeroCount ?? 0),
              offset: number(positive?.offset ?? 0),
              counts: counts(positive?.bucketCounts),
            };
          } else if (data === m.histogram) {
            point.explicit = {
              count: number(p.count),
              sum: number(p.sum),
              min: number(p.min),
              max: number(p.max),
              bounds: counts(p.explicitBounds),
              counts: counts(p.bucketCounts),
            };
          } else {
            point.value = number(p.asDouble ?? p.asInt);
          }
          into.push(point);
        }
      }
    }
  }
  return into;
}
