import type { Breakdown } from "../model/breakdown.js";
import type { PrefixRow } from "./table.js";

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
