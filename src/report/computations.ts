/**
 * The report's computations (one graph submission, one flow: `transition(…, { computation })`):
 * their totals from the task.computation.* metrics, or from a summary's JSON, and their section
 * of the page.
 */
import type { MetricPoint } from "./otlp-metrics.js";
import type { DecodedSpan } from "./otlp-json.js";
import {
  ATTR_TASK_COMPUTATION,
  ATTR_TASK_STATE,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_TASKS,
  METRIC_COMPUTATION_TIME,
  METRIC_COMPUTATION_WALL,
  RESOURCE_ROLE,
} from "../shared/semconv.js";
import { dataError } from "./arguments.js";

/** One computation as the report shows it. */
export interface ReportComputation {
  name: string;
  /** Its tasks: ended ones and live ones. */
  tasks: number;
  /** Not ended when the data was taken. */
  live: number;
  /** Ended in a failure state (per task). */
  failed: number;
  /** Tasks ended, by terminal state. */
  ended: Record<string, number>;
  /** Task-seconds by state: summed over its tasks. */
  seconds: Record<string, number>;
  /** Wall seconds from its first task's start to its last task's end (to when the data was taken while live). */
  wall: number;
  /** Whose totals: the scheduler's (which sees every task), else the workers' summed. */
  from: "scheduler" | "workers";
}

/** Rows the page shows at most; the rest are counted in a note. */
export const COMPUTATION_ROWS = 100;

interface Totals {
  seconds: Record<string, number>;
  ended: Record<string, number>;
  /** By process (resource): the latest gauge values. */
  active: Map<string, { time: bigint; value: number }>;
  wall: Map<string, { time: bigint; value: number }>;
}

function record(): Record<string, number> {
  return Object.create(null) as Record<string, number>;
}

function sorted(attributes: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(attributes)
      .sort()
      .map((name) => [name, attributes[name]]),
  );
}

/**
 * The computations in `points` (the task.computation.* metrics), or undefined with none: a
 * backend's sums (the latest of each cumulative series, every delta point), the gauges' latest per
 * process. The scheduler's totals when it exported any for a computation, else the workers' summed.
 */
export function computationsFromMetrics(
  points: readonly MetricPoint[],
  failedStates: ReadonlySet<string>,
): ReportComputation[] | undefined {
  const byRole = { scheduler: new Map<string, Totals>(), worker: new Map<string, Totals>() };
  const latest = new Map<string, MetricPoint>();
  for (const point of points) {
    const name = point.attributes[ATTR_TASK_COMPUTATION];
    if (typeof name !== "string" || !point.metric.startsWith("task.computation.")) continue;
    const role = point.resource[RESOURCE_ROLE] === "scheduler" ? "scheduler" : "worker";
    let totals = byRole[role].get(name);
    if (totals === undefined) {
      totals = { seconds: record(), ended: record(), active: new Map(), wall: new Map() };
      byRole[role].set(name, totals);
    }
    const value = point.value;
    if (value === undefined || !Number.isFinite(value)) continue;
    const process = sorted(point.resource);
    if (point.metric === METRIC_COMPUTATION_ACTIVE || point.metric === METRIC_COMPUTATION_WALL) {
      const gauges = point.metric === METRIC_COMPUTATION_ACTIVE ? totals.active : totals.wall;
      const seen = gauges.get(process);
      if (seen === undefined || point.timeNanos >= seen.time) gauges.set(process, { time: point.timeNanos, value });
      continue;
    }
    if (point.metric !== METRIC_COMPUTATION_TIME && point.metric !== METRIC_COMPUTATION_TASKS) continue;
    if (point.temporality === 1) {
      add(totals, point, value);
      continue;
    }
    const series = `${process}\u0000${point.metric}\u0000${sorted(point.attributes)}\u0000${point.startNanos}`;
    const seen = latest.get(series);
    if (seen === undefined || point.timeNanos >= seen.timeNanos) latest.set(series, point);
  }
  for (const point of latest.values()) {
    const role = point.resource[RESOURCE_ROLE] === "scheduler" ? "scheduler" : "worker";
    add(byRole[role].get(point.attributes[ATTR_TASK_COMPUTATION] as string)!, point, point.value!);
  }
  const names = new Set([...byRole.scheduler.keys(), ...byRole.worker.keys()]);
  if (names.size === 0) return undefined;
  const rows: ReportComputation[] = [];
  for (const name of names) {
    const scheduler = byRole.scheduler.get(name);
    const totals = scheduler ?? byRole.worker.get(name)!;
    const ended = totals.ended;
    const live = [...totals.active.values()].reduce((sum, { value }) => sum + value, 0);
    const endedCount = Object.values(ended).reduce((sum, count) => sum + count, 0);
    const failed = Object.entries(ended)
      .filter(([state]) => failedStates.has(state))
      .reduce((sum, [, count]) => sum + count, 0);
    rows.push({
      name,
      tasks: endedCount + live,
      live,
      failed,
      ended: { ...ended },
      seconds: { ...totals.seconds },
      wall: Math.max(0, ...[...totals.wall.values()].map(({ value }) => value)),
      from: scheduler === undefined ? "workers" : "scheduler",
    });
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
}

/**
 * When computation `name` ran as its task spans among `tasks` say (the spans that carry
 * `task.computation`): the earliest start and the latest end, in epoch seconds; undefined with
 * none. The metrics carry no times, only the wall seconds; spans are of sampled journeys, so with
 * a sampling ratio under 1 these bound the traced tasks, not every one.
 */
export function computationTimes(
  tasks: readonly DecodedSpan[],
  name: string,
): { start: number; end: number } | undefined {
  let start: bigint | undefined;
  let end: bigint | undefined;
  for (const task of tasks) {
    if (task.attributes[ATTR_TASK_COMPUTATION] !== name) continue;
    if (start === undefined || task.startNanos < start) start = task.startNanos;
    if (end === undefined || task.endNanos > end) end = task.endNanos;
  }
  if (start === undefined || end === undefined) return undefined;
  return { start: epochSeconds(start), end: epochSeconds(end) };
}

/** Epoch nanoseconds as seconds, whole seconds apart so that no nanosecond is lost to the double's 53 bits past a microsecond. */
function epochSeconds(nanos: bigint): number {
  return Number(nanos / 1_000_000_000n) + Number(nanos % 1_000_000_000n) / 1e9;
}

function add(totals: Totals, point: MetricPoint, value: number): void {
  const state = point.attributes[ATTR_TASK_STATE];
  if (typeof state !== "string") return;
  const into = point.metric === METRIC_COMPUTATION_TIME ? totals.seconds : totals.ended;
  into[state] = (into[state] ?? 0) + value;
}

/** `computations` of a summary read from JSON, checked (undefined when absent). */
export function computationRows(value: unknown, field: string): ReportComputation[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw dataError(`${field} must be an array of {name, tasks, live, failed, seconds, wall}`);
  return value.map((row: unknown, index) => {
    const at = `${field}[${index}]`;
    if (row === null || typeof row !== "object" || typeof (row as { name?: unknown }).name !== "string")
      throw dataError(`${at} must have a string name`);
    const given = row as Record<string, unknown>;
    const count = (name: string): number => {
      const number = given[name] ?? 0;
      if (typeof number !== "number" || !(number >= 0)) throw dataError(`${at}.${name} must be a number >= 0`);
      return number;
    };
    return {
      name: given.name as string,
      tasks: count("tasks"),
      live: count("live"),
      failed: count("failed"),
      ended: numbers(given.ended, `${at}.ended`),
      seconds: numbers(given.seconds, `${at}.seconds`),
      wall: count("wall"),
      from: given.from === "workers" ? "workers" : "scheduler",
    };
  });
}

function numbers(value: unknown, field: string): Record<string, number> {
  const out = record();
  if (value === undefined || value === null) return out;
  if (typeof value !== "object" || Array.isArray(value))
    throw dataError(`${field} must be an object of numbers by state`);
  for (const [name, number] of Object.entries(value)) {
    if (typeof number !== "number" || !Number.isFinite(number)) throw dataError(`${field}.${name} must be a number`);
    out[name] = number;
  }
  return out;
}
