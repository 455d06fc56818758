import type { Breakdown, BreakdownNode } from "../model/breakdown.js";
import { keySplit } from "../model/keys.js";
import { dataError, guarded } from "./arguments.js";
import { keptTracesFrom, type KeptTraces } from "./kept-traces.js";
import type { PrefixRow } from "./table.js";
import { computationRows, type ReportComputation } from "./computations.js";

export type { BarKind, KeptTraces, TimelineBar, TraceTimeline } from "./kept-traces.js";

/** Everything the report shows; plain JSON (NaN quantiles may be written as null). */
export interface ReportData {
  /** The page title. */
  title: string;
  /** When the data was taken, ISO 8601. */
  generatedAt: string;
  /** The workload's name, if a benchmark or example produced the data. */
  workload?: string;
  /** A line under the title. */
  description?: string;
  /** The per-prefix rows (src/report/table.ts): count, p50/p90/p99 of `durationOf`, seconds by state. */
  prefixes: PrefixRow[];
  /** What the quantiles measure. Default "executing". */
  durationOf?: string;
  /**
   * The order of the state columns (a machine's own order, as its journeys lived it); states
   * not listed follow, in Dask's lifecycle order, then by name. Default: that order alone.
   */
  states?: string[];
  /** The scheduler's per-prefix rows (quantiles of `schedulerDurationOf`), shown when present. */
  schedulerPrefixes?: PrefixRow[];
  /** What the scheduler rows' quantiles measure. Default "processing". */
  schedulerDurationOf?: string;
  /** The order of the scheduler table's state columns, as `states` is of the workers'. */
  schedulerStates?: string[];
  /** task.execute.time by activity, seconds. */
  execute: Record<string, number>;
  /** task.gather.time by activity, seconds. */
  gather: Record<string, number>;
  /** task.wait.time by dependent prefix, then by activity, seconds. */
  wait: Record<string, Record<string, number>>;
  /** The slowest journeys' breakdowns (explain()), slowest first. */
  slowest?: Breakdown[];
  /** Tasks that failed, with why when known, earliest first (from the spans, or a summary's list). */
  failures?: ReportFailure[];
  /**
   * How many journeys failed in all, by terminal state: `error` (workers' executions), `erred`
   * (the scheduler), or a machine's own failure state; from the metrics (task.transitions) or a summary, so it counts what the
   * list, made of sampled traces, may not hold.
   */
  failureCounts?: Record<string, number>;
  /**
   * How journeys ended, by role and terminal state ("scheduler:completed", "scheduler:removed",
   * "worker:failed"): from task.transitions, or the sampled journeys without metrics. Cancelled
   * and removed tasks show here.
   */
  outcomes?: Record<string, number>;
  /**
   * The journeys with the longest single visit to the measured state (the slowest runs, which
   * `slowest`, by total time, may not hold when backoffs or queueing dominate), longest first.
   */
  slowestIn?: { state: string; journeys: Array<{ key: string; seconds: number; breakdown: Breakdown }> };
  /**
   * The slowest journey whose trace was exported, when the slowest (`slowest[0]`) was not: its
   * trace is drawn too (reason "slowest traced"). The cluster demo's summary says which
   * (`report.slowestTraced`); from spans alone every journey in `slowest` was traced.
   */
  slowestTraced?: Breakdown;
  /**
   * The timelines of the traces kept for the slowest journeys and the failed tasks (from the
   * spans: src/report/timeline.ts), bounded, with the keys no span holds. Read back by
   * reportDataFrom() as written, checked and within the same bounds.
   */
  keptTraces?: KeptTraces;
  /** Each computation's totals (one graph submission, one flow), from task.computation.* or a summary. */
  computations?: ReportComputation[];
}

/** One failed task, as the report's "Failed tasks" table shows it. */
export interface ReportFailure {
  key: string;
  prefix: string;
  /** The worker or scheduler it failed on ("" when not known). */
  instance: string;
  /** "compute" (a worker's execution), "scheduler", or "fetch"; "" when not known. */
  kind: string;
  /** The terminal state: "error" on a worker, "erred" on the scheduler (or a machine's own, e.g. "failed"). */
  outcome: string;
  /** The state of the attempt that failed, e.g. "executing". */
  state?: string;
  /** Why, as explain() words it: "TypeError: no such file". */
  error?: string;
  /** The journey's wall seconds up to its failure. */
  seconds?: number;
  /** The task's attempts at its executing state in the trace (retries included), when known. */
  attempts?: number;
}

/** A number as read from JSON, or NaN (a quantile written as null, a missing cell). */
export function finite(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : Number.NaN;
}

// ---- reading report data back from JSON (the CLI's summaries, the cluster example's summary.json) ----

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function stateNames(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((name) => typeof name !== "string"))
    throw dataError(`${field} must be an array of state names`);
  return value as string[];
}

function secondsRecord(value: unknown, field: string, what = "seconds"): Record<string, number> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw dataError(`${field} must be an object of ${what} by name`);
  // No prototype: an activity named `__proto__` or `constructor` is a name like any other.
  const out = Object.create(null) as Record<string, number>;
  for (const [name, seconds] of Object.entries(value)) {
    if (seconds === null) continue;
    if (typeof seconds !== "number") throw dataError(`${field}.${name} must be a number of ${what}`);
    out[name] = seconds;
  }
  return out;
}

function quantile(value: unknown): number {
  return typeof value === "number" ? value : Number.NaN;
}

function prefixRows(value: unknown, field: string): PrefixRow[] {
  if (!Array.isArray(value))
    throw dataError(`${field} must be an array of {prefix, count, p50, p90, p99, stateSeconds}`);
  return value.map((row: unknown, index) => {
    if (!isRecord(row) || typeof row.prefix !== "string")
      throw dataError(`${field}[${index}] must have a string prefix`);
    return {
      prefix: row.prefix,
      count: typeof row.count === "number" ? row.count : 0,
      p50: quantile(row.p50),
      p90: quantile(row.p90),
      p99: quantile(row.p99),
      stateSeconds: secondsRecord(row.stateSeconds, `${field}[${index}].stateSeconds`),
    };
  });
}

/**
 * Levels of a breakdown tree read from a summary: a visit, its activities and theirs, nested as
 * deep as metered work nests (far fewer in practice). Deeper is a crafted file, refused by name
 * rather than overflowing the stack here and in the page's renderer.
 */
const MAX_BREAKDOWN_DEPTH = 256;

function breakdownNode(value: unknown, field: string, depth = 1): BreakdownNode {
  if (!isRecord(value) || typeof value.name !== "string") throw dataError(`${field} must be {name, seconds, children}`);
  if (depth > MAX_BREAKDOWN_DEPTH)
    throw dataError(
      `${field.slice(0, field.indexOf(".children"))}: its children nest more than ${MAX_BREAKDOWN_DEPTH} levels deep`,
    );
  const node: BreakdownNode = {
    name: value.name,
    seconds: typeof value.seconds === "number" ? value.seconds : Number.NaN,
    children: Array.isArray(value.children)
      ? value.children.map((child, index) => breakdownNode(child, `${field}.children[${index}]`, depth + 1))
      : [],
  };
  // A failed attempt keeps its outcome and reason, so the tree says why as explain() did.
  if (typeof value.outcome === "string") node.outcome = value.outcome;
  if (typeof value.error === "string") node.error = value.error;
  if (isRecord(value.quantities)) node.quantities = secondsRecord(value.quantities, `${field}.quantities`, "units");
  return node;
}

function failureList(value: unknown, field: string): ReportFailure[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value))
    throw dataError(`${field} must be an array of {key, prefix, instance, kind, outcome, state?, error?, seconds?}`);
  return value.map((item: unknown, index) => {
    if (!isRecord(item) || typeof item.key !== "string")
      throw dataError(`${field}[${index}] must be a failure with a string key`);
    const failure: ReportFailure = {
      key: item.key,
      prefix: typeof item.prefix === "string" ? item.prefix : "",
      instance: typeof item.instance === "string" ? item.instance : "",
      kind: typeof item.kind === "string" ? item.kind : "",
      outcome: typeof item.outcome === "string" ? item.outcome : "error",
    };
    if (typeof item.state === "string") failure.state = item.state;
    if (typeof item.error === "string") failure.error = item.error;
    if (typeof item.seconds === "number") failure.seconds = item.seconds;
    if (typeof item.attempts === "number") failure.attempts = item.attempts;
    return failure;
  });
}

/**
 * The cluster example's failures: `failed` (the keys that raised), `failures` ([{key, error}],
 * when the summary has them; the error without its stack trace) and `erred` (how many erred in
 * all, dependents included).
 */
function summaryFailures(json: Record<string, unknown>): Pick<ReportData, "failures" | "failureCounts"> {
  const reasons = Array.isArray(json.failures) ? json.failures.filter(isRecord) : [];
  const failed = Array.isArray(json.failed)
    ? json.failed.filter((key): key is string => typeof key === "string")
    : reasons.map((item) => item.key).filter((key): key is string => typeof key === "string");
  const counts = Object.create(null) as Record<string, number>;
  if (failed.length > 0) counts.error = failed.length;
  if (typeof json.erred === "number" && json.erred > 0) counts.erred = json.erred;
  if (failed.length === 0 && counts.erred === undefined) return {};
  const failures = failed.map((key): ReportFailure => {
    const reported = reasons.find((item) => item.key === key)?.error;
    // Why, not where: a worker's error text may carry its stack trace, which explain() leaves out too.
    const error = typeof reported === "string" ? reported.split(/\n\s+at /)[0] : undefined;
    return {
      key,
      prefix: keySplit(key),
      instance: "",
      kind: "compute",
      outcome: "error",
      ...(error === undefined ? {} : { error }),
    };
  });
  return { failures, failureCounts: counts };
}

function breakdowns(value: unknown, field: string): Breakdown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw dataError(`${field} must be an array of breakdowns`);
  return value
    .filter((item) => item !== null && item !== undefined)
    .map((item: unknown, index) => breakdown(item, `${field}[${index}]`));
}

function breakdown(item: unknown, field: string): Breakdown {
  if (!isRecord(item) || typeof item.key !== "string")
    throw dataError(`${field} must be a breakdown with a string key`);
  return {
    key: item.key,
    prefix: typeof item.prefix === "string" ? item.prefix : "",
    instance: typeof item.instance === "string" ? item.instance : "",
    seconds: typeof item.seconds === "number" ? item.seconds : Number.NaN,
    kind: typeof item.kind === "string" ? item.kind : "compute",
    outcome: typeof item.outcome === "string" ? item.outcome : undefined,
    ...(typeof item.computation === "string" ? { computation: item.computation } : {}),
    children: Array.isArray(item.children)
      ? item.children.map((child, i) => breakdownNode(child, `${field}.children[${i}]`))
      : [],
  };
}

function slowestInFrom(value: unknown): ReportData["slowestIn"] {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || typeof value.state !== "string" || !Array.isArray(value.journeys))
    throw dataError("slowestIn must be {state, journeys: [{key, seconds, breakdown}]}");
  const items = (value.journeys as unknown[]).map((item) => (isRecord(item) ? item : {}));
  const trees = breakdowns(
    items.map((item) => item.breakdown),
    "slowestIn.journeys[].breakdown",
  )!;
  return {
    state: value.state,
    journeys: trees.map((breakdown, index) => {
      const item = items[index];
      return { key: breakdown.key, seconds: typeof item.seconds === "number" ? item.seconds : Number.NaN, breakdown };
    }),
  };
}

/**
 * The cluster demo's slowest traced task (`report.slowestTraced`), when its slowest task
 * (`report.slowest[0]`) was not traced: the one whose tree it prints instead, whose trace the page draws.
 */
function clusterSlowestTraced(report: Record<string, unknown>): Pick<ReportData, "slowestTraced"> {
  const first = Array.isArray(report.slowest) ? report.slowest[0] : undefined;
  const traced = report.slowestTraced;
  if (
    !isRecord(first) ||
    first.traced !== false ||
    !isRecord(traced) ||
    traced.breakdown === undefined ||
    traced.breakdown === null
  )
    return {};
  return { slowestTraced: breakdown(traced.breakdown, "report.slowestTraced.breakdown") };
}

function waitRecord(value: unknown, field: string): Record<string, Record<string, number>> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw dataError(`${field} must be an object: dependent prefix → activity → seconds`);
  const out = Object.create(null) as Record<string, Record<string, number>>;
  for (const [prefix, activities] of Object.entries(value))
    out[prefix] = secondsRecord(activities, `${field}.${prefix}`);
  return out;
}

/**
 * ReportData from parsed JSON, checked: a ReportData object as written by JSON.stringify (NaN
 * quantiles as null), or the cluster example's run summary (`{workload, description, report:
 * {rows, execute, gather, waitByPrefix, slowest: [{breakdown}]}}`). Throws a TypeError naming
 * the field that is wrong.
 */
export function reportDataFrom(json: unknown): ReportData {
  return guarded("reportDataFrom(json)", [["json", "a ReportData JSON object", json]], () => {
    if (!isRecord(json))
      throw dataError(
        "expected a JSON object: ReportData {title, generatedAt, prefixes, execute, gather, wait, slowest?}",
      );
    const generatedAt = typeof json.generatedAt === "string" ? json.generatedAt : new Date().toISOString();
    const workload = typeof json.workload === "string" ? json.workload : undefined;
    const description = typeof json.description === "string" ? json.description : undefined;
    if (Array.isArray(json.prefixes)) {
      return {
        title: typeof json.title === "string" ? json.title : "taskjourney report",
        generatedAt,
        workload,
        description,
        prefixes: prefixRows(json.prefixes, "prefixes"),
        durationOf: typeof json.durationOf === "string" ? json.durationOf : undefined,
        states: stateNames(json.states, "states"),
        schedulerPrefixes:
          json.schedulerPrefixes === undefined || json.schedulerPrefixes === null
            ? undefined
            : prefixRows(json.schedulerPrefixes, "schedulerPrefixes"),
        schedulerDurationOf: typeof json.schedulerDurationOf === "string" ? json.schedulerDurationOf : undefined,
        schedulerStates: stateNames(json.schedulerStates, "schedulerStates"),
        execute: secondsRecord(json.execute, "execute"),
        gather: secondsRecord(json.gather, "gather"),
        wait: waitRecord(json.wait, "wait"),
        slowest: breakdowns(json.slowest, "slowest"),
        failures: failureList(json.failures, "failures"),
        failureCounts:
          json.failureCounts === undefined || json.failureCounts === null
            ? undefined
            : secondsRecord(json.failureCounts, "failureCounts", "tasks"),
        outcomes:
          json.outcomes === undefined || json.outcomes === null
            ? undefined
            : secondsRecord(json.outcomes, "outcomes", "journeys"),
        slowestIn: slowestInFrom(json.slowestIn),
        slowestTraced:
          json.slowestTraced === undefined || json.slowestTraced === null
            ? undefined
            : breakdown(json.slowestTraced, "slowestTraced"),
        keptTraces: keptTracesFrom(json.keptTraces),
        computations: computationRows(json.computations, "computations"),
      };
    }
    const report = json.report;
    if (isRecord(report) && Array.isArray(report.rows)) {
      const slowest = Array.isArray(report.slowest)
        ? report.slowest.map((item: unknown) => (isRecord(item) ? item.breakdown : undefined))
        : undefined;
      return {
        title: typeof json.title === "string" ? json.title : `taskjourney: ${workload ?? "cluster run"}`,
        generatedAt,
        workload,
        description,
        prefixes: prefixRows(report.rows, "report.rows"),
        schedulerPrefixes: Array.isArray(report.schedulerRows)
          ? prefixRows(report.schedulerRows, "report.schedulerRows")
          : undefined,
        execute: secondsRecord(report.execute, "report.execute"),
        gather: secondsRecord(report.gather, "report.gather"),
        wait: waitRecord(report.waitByPrefix, "report.waitByPrefix"),
        // The demo ranks its slowest by its own clock (since the task arrived); the page shows each
        // tree's own seconds, so it ranks them by those: the order and the numbers shown agree.
        slowest: breakdowns(slowest, "report.slowest[].breakdown")?.sort(
          (a, b) => (finite(b.seconds) || 0) - (finite(a.seconds) || 0),
        ),
        ...summaryFailures(json),
        ...clusterSlowestTraced(report),
      };
    }
    throw dataError(
      "expected ReportData: {title, generatedAt, workload?, prefixes: [{prefix, count, p50, p90, p99, stateSeconds}], execute: {activity: s}, gather: {activity: s}, wait: {prefix: {activity: s}}, slowest?: [Breakdown]}, or the cluster example's summary {report: {rows, ...}}",
    );
  });
}
