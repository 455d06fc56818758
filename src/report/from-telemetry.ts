import { EXECUTE_LUMP, type ExecuteOutcome } from "../model/activities.js";
import { computationsFromMetrics } from "./computations.js";
import type { Breakdown } from "../model/breakdown.js";
import {
  ATTR_DROPPED_REASON,
  ATTR_TASK_ACTIVITY,
  ATTR_TASK_PREFIX,
  ATTR_TASK_STATE,
  METRIC_ACTIVE,
  METRIC_DROPPED,
  METRIC_EXECUTE_TIME,
  METRIC_GATHER_TIME,
  METRIC_STATE_DURATION,
  METRIC_STATE_TIME,
  METRIC_TRANSITIONS,
  METRIC_WAIT_TIME,
  ATTR_TASK_OUTCOME,
  ATTR_UNFINISHED,
  RESOURCE_ROLE,
} from "../shared/semconv.js";
import { dataError, guarded, unknownStateError } from "./arguments.js";
import { FAILED_STATES, failedOutcome, failedTasks } from "./failures.js";
import {
  breakdownOfTask,
  hasWaitAttributes,
  journeyKind,
  SpanIndex,
  stateVisitsOf,
  stringAttribute,
} from "./from-trace.js";
import type { DecodedSpan } from "./otlp-json.js";
import { explicitQuantile, histogramQuantile, mergeExplicit, mergeHistograms } from "./histograms.js";
import { reportDataFrom, type ReportData } from "./html.js";
import type { TelemetryFiles } from "./inputs.js";
import type { ExplicitBuckets, ExponentialBuckets, MetricPoint } from "./otlp-metrics.js";
import {
  DASK_MEASURED,
  journeyShapes,
  measuredState,
  stateOrder,
  type ExecuteTime,
  type JourneyShapes,
  type Role,
} from "./machine-from-data.js";
import type { PrefixRow } from "./table.js";
import { slowestInMeasured, slowestJourneys } from "./slowest.js";
import { keptTracesOf, type TimelineOptions } from "./timeline.js";

/**
 * ReportData from what an application exported: its metrics for the per-prefix tables, the
 * activity breakdowns and how many tasks failed (as a metrics backend would sum them: the latest
 * point of each cumulative series, every point of a delta one, histograms merged across
 * processes), its spans for the slowest journeys and their trees and for the failed tasks with
 * why they failed (src/report/failures.ts). Without metrics, the tables come from the spans' journeys
 * (the sampled ones only, which the page says). A summary among the inputs (ReportData or the
 * cluster example's `summary.json`) is taken as it is, the spans adding the slowest journeys
 * when it has none and the failed tasks when they hold any (they know where and why).
 */

export interface ReportFromTelemetryOptions {
  /** The page title. Default "taskjourney report" (a summary's own title when there is one). */
  title?: string;
  /** How many slowest journeys to show. Default 10. */
  slowest?: number;
  /** How many failed tasks to list. Default 100. */
  failures?: number;
  /** ISO time the data was taken. Default now. */
  generatedAt?: string;
  /**
   * The state whose visit durations the per-prefix quantiles show, for each role whose data has
   * it (`--state`). Default: found in the data (src/report/machine-from-data.ts): Dask's
   * `executing` / `processing`, else the state the journeys' spans end from, else (metrics
   * only) the state whose time matches the execute ledgers'.
   */
  state?: string;
  /** What the inputs were, for the page's description; default "N files". */
  inputs?: string;
  /** The bounds of the kept traces' timelines (src/report/timeline.ts TIMELINE_DEFAULTS: 5 slowest, 5 failed, 300 spans drawn each). */
  timelines?: TimelineOptions;
}

function roleOf(point: MetricPoint): Role {
  return point.resource[RESOURCE_ROLE] === "scheduler" ? "scheduler" : "worker";
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value);
}

/** A stable text of a point's identity: resource, metric, attributes, start (a restart begins a new series). */
function seriesKey(point: MetricPoint): string {
  const sorted = (attributes: Record<string, unknown>) =>
    JSON.stringify(
      Object.keys(attributes)
        .sort()
        .map((name) => [name, attributes[name]]),
    );
  return `${sorted(point.resource)}\u0000${point.metric}\u0000${sorted(point.attributes)}\u0000${point.startNanos}`;
}

/** The points a backend would sum: the latest of each cumulative series, every delta point. */
function currentPoints(points: readonly MetricPoint[]): MetricPoint[] {
  const latest = new Map<string, MetricPoint>();
  const deltas: MetricPoint[] = [];
  for (const point of points) {
    if (point.temporality === 1) {
      deltas.push(point);
      continue;
    }
    const key = seriesKey(point);
    const seen = latest.get(key);
    if (seen === undefined || point.timeNanos >= seen.timeNanos) latest.set(key, point);
  }
  return [...latest.values(), ...deltas];
}

function add(into: Record<string, number>, name: string, value: number | undefined): void {
  if (value === undefined || !Number.isFinite(value)) return;
  into[name] = (into[name] ?? 0) + value;
}

function nullRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** One (prefix, state)'s visit durations. */
interface Durations {
  exponential: ExponentialBuckets[];
  explicit: ExplicitBuckets[];
  /** Exact durations, when the rows come from spans. */
  exact: number[];
}

interface PrefixCells {
  stateSeconds: Record<string, number>;
  /** By state: which one the quantiles show is decided once every state is known. */
  durations: Map<string, Durations>;
}

function cellsOf(map: Map<string, PrefixCells>, prefix: string): PrefixCells {
  let cells = map.get(prefix);
  if (cells === undefined) map.set(prefix, (cells = { stateSeconds: nullRecord(), durations: new Map() }));
  return cells;
}

function durationsOf(cells: PrefixCells, state: string): Durations {
  let durations = cells.durations.get(state);
  if (durations === undefined) cells.durations.set(state, (durations = { exponential: [], explicit: [], exact: [] }));
  return durations;
}

/** Every state a role's rows hold time or durations of. */
function statesIn(map: Map<string, PrefixCells>): Set<string> {
  const states = new Set<string>();
  for (const cells of map.values()) {
    for (const state of Object.keys(cells.stateSeconds)) states.add(state);
    for (const state of cells.durations.keys()) states.add(state);
  }
  return states;
}

function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/**
 * Rows in the order the tables show them: prefixes that reached the measured state first, then by
 * time. With no measured state, the quantiles are unknown (NaN) and the counts 0.
 */
function rowsOf(map: Map<string, PrefixCells>, measured: string | undefined): PrefixRow[] {
  const rows: PrefixRow[] = [];
  const none: Durations = { exponential: [], explicit: [], exact: [] };
  for (const [prefix, cells] of map) {
    let row: PrefixRow;
    const durations = (measured === undefined ? undefined : cells.durations.get(measured)) ?? none;
    if (durations.exact.length > 0) {
      const sorted = [...durations.exact].sort((a, b) => a - b);
      row = {
        prefix,
        count: sorted.length,
        p50: exactQuantile(sorted, 0.5),
        p90: exactQuantile(sorted, 0.9),
        p99: exactQuantile(sorted, 0.99),
        stateSeconds: cells.stateSeconds,
      };
    } else if (durations.exponential.length > 0) {
      const merged = mergeHistograms(durations.exponential);
      row = {
        prefix,
        count: merged.count,
        p50: histogramQuantile(merged, 0.5),
        p90: histogramQuantile(merged, 0.9),
        p99: histogramQuantile(merged, 0.99),
        stateSeconds: cells.stateSeconds,
      };
    } else {
      const merged = mergeExplicit(durations.explicit);
      const quantile = (q: number) => (merged === undefined ? Number.NaN : explicitQuantile(merged, q));
      row = {
        prefix,
        count: merged?.count ?? 0,
        p50: quantile(0.5),
        p90: quantile(0.9),
        p99: quantile(0.99),
        stateSeconds: cells.stateSeconds,
      };
    }
    rows.push(row);
  }
  const total = (row: PrefixRow) => Object.values(row.stateSeconds).reduce((sum, value) => sum + value, 0);
  return rows.sort(
    (a, b) => (b.count > 0 ? 1 : 0) - (a.count > 0 ? 1 : 0) || total(b) - total(a) || a.prefix.localeCompare(b.prefix),
  );
}

interface Aggregates {
  worker: Map<string, PrefixCells>;
  scheduler: Map<string, PrefixCells>;
  execute: Record<string, number>;
  gather: Record<string, number>;
  wait: Record<string, Record<string, number>>;
  dropped: Record<string, number>;
  /** Transitions into a failed terminal state, by role and state: "worker:error", "scheduler:erred", "worker:dead". */
  failed: Record<string, number>;
  /** Transitions into every state, by role and state ("scheduler:removed"): the terminal ones say how journeys ended. */
  transitions: Record<string, number>;
  /** The states each role has a task.active point of: its non-terminal ones (the producer gives none for a terminal state). */
  live: Record<Role, Set<string>>;
  /**
   * The states of each (process, prefix, export) in the order the points came: the producer
   * writes a prefix's states in the order the machine declared them, so each sequence is a piece
   * of the declared order, whichever journeys were sampled.
   */
  declared: Record<Role, string[][]>;
}

function emptyAggregates(): Aggregates {
  return {
    worker: new Map(),
    scheduler: new Map(),
    execute: nullRecord(),
    gather: nullRecord(),
    wait: nullRecord(),
    dropped: nullRecord(),
    failed: nullRecord(),
    transitions: nullRecord(),
    live: { worker: new Set(), scheduler: new Set() },
    declared: { worker: [], scheduler: [] },
  };
}

/** The declared order's pieces: task.transitions' states per (process, prefix, export), in the points' order. */
function declaredSequences(points: readonly MetricPoint[], into: Record<Role, string[][]>): void {
  const sequences = new Map<string, { role: Role; states: string[] }>();
  for (const point of points) {
    if (point.metric !== METRIC_TRANSITIONS) continue;
    const key = `${JSON.stringify(point.resource)}\u0000${text(point.attributes[ATTR_TASK_PREFIX])}\u0000${point.timeNanos}`;
    let sequence = sequences.get(key);
    if (sequence === undefined) sequences.set(key, (sequence = { role: roleOf(point), states: [] }));
    const state = text(point.attributes[ATTR_TASK_STATE]);
    if (!sequence.states.includes(state)) sequence.states.push(state);
  }
  for (const { role, states } of sequences.values()) if (states.length > 1) into[role].push(states);
}

/** `failedStates`: the terminal states that are failures (Dask's, and those the spans' failed journeys ended in). */
function fromMetrics(points: readonly MetricPoint[], failedStates: ReadonlySet<string>): Aggregates {
  const aggregates = emptyAggregates();
  declaredSequences(points, aggregates.declared);
  for (const point of currentPoints(points)) {
    const role = roleOf(point);
    const prefix = text(point.attributes[ATTR_TASK_PREFIX]);
    const state = text(point.attributes[ATTR_TASK_STATE]);
    const activity = text(point.attributes[ATTR_TASK_ACTIVITY]);
    switch (point.metric) {
      case METRIC_STATE_TIME:
        add(cellsOf(aggregates[role], prefix).stateSeconds, state, point.value);
        break;
      case METRIC_STATE_DURATION: {
        const durations = durationsOf(cellsOf(aggregates[role], prefix), state);
        if (point.exponential !== undefined) durations.exponential.push(point.exponential);
        if (point.explicit !== undefined) durations.explicit.push(point.explicit);
        break;
      }
      // Wherever executions and transfers were metered: Dask's scheduler meters none, a job
      // queue recorded on its scheduler side runs its jobs there.
      case METRIC_EXECUTE_TIME:
        add(aggregates.execute, activity, point.value);
        break;
      case METRIC_GATHER_TIME:
        add(aggregates.gather, activity, point.value);
        break;
      case METRIC_WAIT_TIME:
        // The scheduler's own waiting is another thing (dependencies computing), not mixed in.
        if (role === "worker") add((aggregates.wait[prefix] ??= nullRecord()), activity, point.value);
        break;
      case METRIC_TRANSITIONS:
        // By role: a machine of your own may fail jobs under one name on both sides (attempts on workers, tasks on the scheduler).
        if (failedStates.has(state)) add(aggregates.failed, `${role}:${state}`, point.value);
        add(aggregates.transitions, `${role}:${state}`, point.value);
        break;
      case METRIC_ACTIVE:
        aggregates.live[role].add(state);
        break;
      case METRIC_DROPPED:
        add(aggregates.dropped, text(point.attributes[ATTR_DROPPED_REASON]), point.value);
        break;
    }
  }
  return aggregates;
}

/**
 * The same aggregates from the journeys' spans (sampled journeys only). `executing` is each
 * role's measured state: its visits' activities are the execute breakdown (on the scheduler only
 * where it metered any: a job queue's runs, never Dask's processing).
 */
function fromSpans(index: SpanIndex, executing: Record<Role, string | undefined>): Aggregates {
  const aggregates = emptyAggregates();
  for (const task of index.tasks) {
    const breakdown = breakdownOfTask(index, task);
    const role: Role = breakdown.kind === "scheduler" ? "scheduler" : "worker";
    const cells = cellsOf(aggregates[role], breakdown.prefix);
    const spans = breakdown.kind === "compute" ? stateVisitsOf(index, task) : undefined;
    breakdown.children.forEach((visit, position) => {
      add(cells.stateSeconds, visit.name, visit.seconds);
      durationsOf(cells, visit.name).exact.push(visit.seconds);
      const into =
        role === "scheduler"
          ? visit.name === executing.scheduler && visit.children.length > 0
            ? aggregates.execute
            : undefined
          : visit.name === executing.worker && breakdown.kind === "compute"
            ? aggregates.execute
            : visit.name === "flight" && breakdown.kind === "fetch"
              ? aggregates.gather
              : undefined;
      // The machine's waiting state, as breakdownOfTask() tells it (by its task.wait.* attributes, not its name).
      const wait =
        spans !== undefined && hasWaitAttributes(spans[position])
          ? (aggregates.wait[breakdown.prefix] ??= nullRecord())
          : undefined;
      // As the metrics count it: an execution that did not succeed is its whole time under one lump.
      const lump =
        into === aggregates.execute && visit.outcome !== undefined
          ? (EXECUTE_LUMP[visit.outcome as ExecuteOutcome] ?? EXECUTE_LUMP.error)
          : undefined;
      if (lump !== undefined) add(into!, lump, visit.seconds);
      for (const activity of visit.children) {
        if (into !== undefined && lump === undefined) add(into, activity.name, activity.seconds);
        if (wait !== undefined) add(wait, activity.name, activity.seconds);
      }
    });
  }
  return aggregates;
}

/**
 * ReportData from the files `readTelemetryFiles` read (see the module comment). Throws a
 * TypeError saying what is missing when they hold no spans, metrics or summary, or more than
 * one summary.
 */
export function reportDataFromTelemetry(
  telemetry: Pick<TelemetryFiles, "spans" | "metrics" | "summaries" | "files">,
  options: ReportFromTelemetryOptions = {},
): ReportData {
  return guarded(
    "reportDataFromTelemetry(telemetry, options)",
    [
      ["telemetry", "{ spans, metrics, summaries, files }, as readTelemetryFiles() gives", telemetry],
      ["options", "{ title?, slowest?, failures?, generatedAt?, state? } (ReportFromTelemetryOptions)", options],
    ],
    () => {
      const slowestCount = options.slowest ?? 10;
      const index = telemetry.spans.length > 0 ? new SpanIndex(telemetry.spans) : undefined;
      const slowest = (): Breakdown[] => (index === undefined ? [] : slowestJourneys(index, slowestCount));
      const failed = index === undefined ? { failures: [], total: 0 } : failedTasks(index, options.failures ?? 100);
      if (telemetry.summaries.length > 1) {
        throw dataError(
          `several summaries among the inputs (${telemetry.summaries.map((summary) => summary.file).join(", ")}): give one`,
        );
      }
      if (telemetry.summaries.length === 1) {
        const { file, summary } = telemetry.summaries[0];
        let data: ReportData;
        try {
          data = reportDataFrom(summary);
        } catch (error) {
          throw dataError(`${file}: ${(error as Error).message}`, { cause: error });
        }
        if (data.slowest === undefined || data.slowest.length === 0) data.slowest = slowest();
        // The spans know where and why each failed; a summary's list is the keys (and reasons, if it has them).
        if (failed.failures.length > 0) data.failures = failed.failures;
        if (options.title !== undefined) data.title = options.title;
        data.computations ??= computationsFromMetrics(telemetry.metrics, new Set(FAILED_STATES));
        if (index !== undefined) data.keptTraces = keptTracesOf(index, data, options.timelines);
        return data;
      }
      const hasMetrics = telemetry.metrics.some(
        (point) => point.metric === METRIC_STATE_TIME || point.metric === METRIC_STATE_DURATION,
      );
      if (!hasMetrics && index === undefined) {
        throw dataError(
          `no taskjourney spans, metrics or summary in ${telemetry.files.join(", ")}: expected OTLP/JSON requests ({"resourceSpans": …}, {"resourceMetrics": …}) ` +
            "or a summary (ReportData {title, prefixes, execute, gather, wait, slowest?}, or the cluster example's summary.json)",
        );
      }
      if (!hasMetrics && index !== undefined && index.tasks.length === 0) {
        throw dataError(
          `${telemetry.files.join(", ")}: ${index.spans.length} spans but no taskjourney task span (a "task <prefix>" span with task.key) and no taskjourney metrics`,
        );
      }
      const shapes = index === undefined ? undefined : journeyShapes(index);
      const failedSet = new Set([...FAILED_STATES, ...(index === undefined ? [] : failedStates(index))]);
      let aggregates: Aggregates;
      let measured: Record<Role, string | undefined>;
      if (hasMetrics) {
        aggregates = fromMetrics(telemetry.metrics, failedSet);
        measured = measuredStates(
          statesIn(aggregates.worker),
          statesIn(aggregates.scheduler),
          options.state,
          shapes,
          executeTime(aggregates),
        );
      } else {
        // The states of the spans' journeys (fetch journeys' do not execute), before the rows are made.
        const lived = (role: Role) => new Set(shapes!.sequences[role].flat());
        measured = measuredStates(lived("worker"), lived("scheduler"), options.state, shapes);
        aggregates = fromSpans(index!, measured);
      }
      const dropped = Object.entries(aggregates.dropped).filter(([, count]) => count > 0);
      const processes = new Set(telemetry.metrics.map((point) => JSON.stringify(point.resource))).size;
      const source = hasMetrics
        ? `from the metrics of ${processes} process${processes === 1 ? "" : "es"}${index === undefined ? "" : ` and ${index.tasks.length} sampled journeys' spans`}`
        : `from the spans of ${index!.tasks.length} sampled journeys (no taskjourney metrics among the inputs: the tables count these journeys only)`;
      const workerRows = rowsOf(aggregates.worker, measured.worker);
      const schedulerRows = rowsOf(aggregates.scheduler, measured.scheduler);
      const unmeasured = (["worker", "scheduler"] as const).filter(
        (role) => measured[role] === undefined && aggregates[role].size > 0,
      );
      // Every failure the metrics counted (or, without metrics, the sampled journeys that failed).
      const failureCounts = hasMetrics
        ? aggregates.failed
        : countBy(
            index!.tasks
              .filter((task) => failedOutcome(task) !== undefined)
              .map(
                (task) =>
                  `${journeyKind(index!, task) === "scheduler" ? "scheduler" : "worker"}:${failedOutcome(task)}`,
              ),
          );
      const data: ReportData = {
        title: options.title ?? "taskjourney report",
        generatedAt: options.generatedAt ?? new Date().toISOString(),
        description:
          `${source}, ${options.inputs ?? `${telemetry.files.length} file${telemetry.files.length === 1 ? "" : "s"}`}` +
          `${dropped.length === 0 ? "" : `; taskjourney dropped inputs: ${dropped.map(([reason, count]) => `${reason} ${count}`).join(", ")}`}` +
          `${unmeasured.length === 0 ? "" : `; no state to measure found in the data for the quantiles of ${unmeasured.map((role) => (role === "scheduler" ? "the tasks" : "the attempts")).join(" and ")} (give one with --state)`}`,
        prefixes: workerRows,
        // Named only when not Dask's (the page's default).
        durationOf:
          measured.worker === undefined || measured.worker === DASK_MEASURED.worker ? undefined : measured.worker,
        // The declared order first (from the metrics), then the order the sampled journeys lived.
        states: stateOrder(statesIn(aggregates.worker), [
          ...aggregates.declared.worker,
          ...(shapes?.sequences.worker ?? []),
        ]),
        schedulerPrefixes: schedulerRows.length > 0 ? schedulerRows : undefined,
        schedulerDurationOf:
          measured.scheduler === undefined || measured.scheduler === DASK_MEASURED.scheduler
            ? undefined
            : measured.scheduler,
        schedulerStates:
          schedulerRows.length > 0
            ? stateOrder(statesIn(aggregates.scheduler), [
                ...aggregates.declared.scheduler,
                ...(shapes?.sequences.scheduler ?? []),
              ])
            : undefined,
        execute: aggregates.execute,
        gather: aggregates.gather,
        wait: aggregates.wait,
        slowest: slowest(),
        ...slowestInMeasured(index, measured, slowestCount),
        failures: failed.failures,
        failureCounts,
        outcomes: hasMetrics ? endings(aggregates) : countBy(index!.tasks.flatMap((task) => spanEnding(index!, task))),
        computations: computationsFromMetrics(telemetry.metrics, failedSet),
      };
      if (index !== undefined) data.keptTraces = keptTracesOf(index, data, options.timelines);
      return data;
    },
  );
}

/** How journeys ended, from the metrics: entries into each role's terminal states (those with no task.active point). */
function endings(aggregates: Aggregates): Record<string, number> {
  const out = nullRecord<number>();
  for (const [key, count] of Object.entries(aggregates.transitions)) {
    const colon = key.indexOf(":");
    const role = key.slice(0, colon) as Role;
    if (!aggregates.live[role].has(key.slice(colon + 1)) && count > 0) out[key] = count;
  }
  return out;
}

/** A task span's ending as `endings` keys it ("scheduler:removed"); none while unfinished or for a fetch. */
function spanEnding(index: SpanIndex, task: DecodedSpan): string[] {
  const outcome = stringAttribute(task, ATTR_TASK_OUTCOME);
  if (outcome === undefined || task.attributes[ATTR_UNFINISHED] === true) return [];
  return [`${journeyKind(index, task) === "scheduler" ? "scheduler" : "worker"}:${outcome}`];
}

/** Each role's measured state (see measuredState); a `--state` that no role has is an error. */
function measuredStates(
  worker: ReadonlySet<string>,
  scheduler: ReadonlySet<string>,
  explicit: string | undefined,
  shapes: JourneyShapes | undefined,
  executeTime?: ExecuteTime,
): Record<Role, string | undefined> {
  if (explicit !== undefined && !worker.has(explicit) && !scheduler.has(explicit)) {
    const known = [...new Set([...worker, ...scheduler])].sort();
    throw unknownStateError(
      `no state ${JSON.stringify(explicit)} in the data to measure; its states: ${known.length === 0 ? "(none)" : known.join(", ")}`,
    );
  }
  const workerState = measuredState(worker, "worker", { explicit, shapes, executeTime });
  const schedulerState = measuredState(scheduler, "scheduler", { explicit, shapes, otherRole: workerState });
  return {
    worker: workerState ?? measuredState(worker, "worker", { explicit, shapes, otherRole: schedulerState }),
    scheduler: schedulerState,
  };
}

/** The workers' execute time and seconds by state, from the metrics. */
function executeTime(aggregates: Aggregates): ExecuteTime {
  const stateSeconds = new Map<string, number>();
  for (const cells of aggregates.worker.values()) {
    for (const [state, seconds] of Object.entries(cells.stateSeconds))
      stateSeconds.set(state, (stateSeconds.get(state) ?? 0) + seconds);
  }
  return { executeSeconds: Object.values(aggregates.execute).reduce((sum, seconds) => sum + seconds, 0), stateSeconds };
}

/** The failed terminal state of each failed task journey in the spans. */
function failedStates(index: SpanIndex): string[] {
  return index.tasks.map(failedOutcome).filter((outcome) => outcome !== undefined);
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts = nullRecord<number>();
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
