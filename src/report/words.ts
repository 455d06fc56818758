/**
 * The words the page and the text tables share for what depends on the machine: a Dask cluster's
 * data speaks of workers and the scheduler, `processing` and gathers; a machine of the user's own
 * of tasks and journeys, in its own state names only. Its journeys where the tasks run are its
 * attempts under a queue that begins one per attempt (the job queue's runners), its tasks under an
 * engine that keeps a task's attempts in one journey (retries as a state): `runsOf` tells which
 * from the data, and says "journeys" when the data does not tell.
 */
import { ALL_STATES } from "../model/states.js";
import type { ReportData } from "./report-data.js";
import type { PrefixRow } from "./table.js";

const DASK_STATES: ReadonlySet<string> = new Set(ALL_STATES);

/**
 * Whether the data is of a machine of the user's own: a state column or measured state Dask does
 * not have (reportDataFromTelemetry names `states` only then), or none measured at all.
 */
export function isCustomMachine(data: ReportData): boolean {
  if (data.states !== undefined || data.schedulerStates !== undefined) return true;
  if (data.durationOf !== undefined && !DASK_STATES.has(data.durationOf)) return true;
  if (data.schedulerDurationOf !== undefined && !DASK_STATES.has(data.schedulerDurationOf)) return true;
  const rows = [...data.prefixes, ...(data.schedulerPrefixes ?? [])];
  return rows.some((row) => Object.keys(row.stateSeconds).some((state) => !DASK_STATES.has(state)));
}

/**
 * What a custom machine's journeys where the tasks run are: "attempt" (one journey each, as a queue
 * that hands jobs to runners records them), "task" (one journey a task, its attempts included, as
 * an in-process engine records them) or "journey" when the data does not tell.
 */
export type RunNoun = "attempt" | "task" | "journey";

/** The words a page uses for its data: whether the machine is the user's own, and what its runs are. */
export interface MachineWords {
  custom: boolean;
  runs: RunNoun;
}

/**
 * What the data's runs are. More visits to the measured state than journeys ended there means some
 * journey visited it more than once: its attempts are one journey, so a journey is a task. Else a
 * queue's (a scheduler side beside them) are its attempts; else the data does not tell.
 */
export function machineWords(data: ReportData): MachineWords {
  const custom = isCustomMachine(data);
  const visits = data.prefixes.reduce((total, row) => total + (Number.isFinite(row.count) ? row.count : 0), 0);
  const ended = Object.entries(data.outcomes ?? {})
    .filter(([key, count]) => splitKey(key).role !== "scheduler" && Number.isFinite(count))
    .reduce((total, [, count]) => total + count, 0);
  const runs: RunNoun =
    ended > 0 && visits > ended ? "task" : (data.schedulerPrefixes?.length ?? 0) > 0 ? "attempt" : "journey";
  return { custom, runs };
}

/** What the workers' table's rows are on this page: Dask's workers, a custom machine's attempts, tasks or journeys. */
export function workerSide(words: MachineWords): string {
  if (!words.custom) return "On the workers";
  if (words.runs === "attempt") return "Attempts (the journeys of the processes that run the tasks, one an attempt)";
  if (words.runs === "task")
    return "Tasks (the journeys of the processes that run them, one a task, its attempts included)";
  return "Journeys (of the processes that run the tasks: one a task, or one an attempt where each attempt begins one)";
}

/** What the scheduler's table's rows are: Dask's scheduler, a custom machine's tasks. */
export function schedulerSide(custom: boolean): string {
  return custom ? "Tasks (the scheduling process's journeys, one a task, retries included)" : "On the scheduler";
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function splitKey(key: string): { role: string | undefined; state: string } {
  const colon = key.indexOf(":");
  return colon === -1 ? { role: undefined, state: key } : { role: key.slice(0, colon), state: key.slice(colon + 1) };
}

/**
 * How many a Dask failure count is, in words: "3 ended in error on workers", "1 erred on the
 * scheduler". Its key is "<role>:<state>", or a state alone (Dask's error and erred say their role).
 */
function daskFailureCount(key: string, count: number): string {
  const { role, state } = splitKey(key);
  const where =
    state === "erred" && role !== "worker"
      ? "erred on the scheduler"
      : `ended in ${state}${role === "scheduler" ? " on the scheduler" : role === "worker" || state === "error" ? " on workers" : ""}`;
  return `${count} ${where}`;
}

/**
 * The failure counts in words. On a custom machine the scheduler's count is of tasks and the
 * workers' of its runs (words.runs), so a queue's job tried three times that failed is "1 task
 * failed (failed); 3 attempts failed, 2 of them retried", not 4 failures; an engine's task that
 * failed after its retries is "1 task failed (ended in failed)". Undefined when nothing failed.
 */
export function failureWords(
  counts: Readonly<Record<string, number>> | undefined,
  words: MachineWords,
): string | undefined {
  const custom = words.custom;
  const entries = Object.entries(counts ?? {}).filter(([, count]) => Number.isFinite(count) && count > 0);
  if (entries.length === 0) return undefined;
  if (!custom) {
    // The workers' errors first, then the scheduler's: the order the failures happen in.
    const order = (key: string) =>
      key.startsWith("scheduler:") || key === "erred" ? 1 : key.startsWith("worker:") || key === "error" ? 0 : 2;
    return entries
      .sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b))
      .map(([key, count]) => daskFailureCount(key, count))
      .join(", ");
  }
  const sum = (role: string) =>
    entries.filter(([key]) => splitKey(key).role === role).reduce((total, [, count]) => total + count, 0);
  const statesOf = (role: string) =>
    entries
      .filter(([key]) => splitKey(key).role === role)
      .map(([key]) => splitKey(key).state)
      .join(", ");
  const tasks = sum("scheduler");
  const runs = sum("worker");
  const parts: string[] = [];
  if (tasks > 0) parts.push(`${plural(tasks, "task")} failed (ended in ${statesOf("scheduler")})`);
  if (runs > 0) {
    // Only a queue's runs are its attempts: more of them failed than tasks means retries.
    const retried = words.runs === "attempt" && tasks > 0 && runs > tasks ? `, ${runs - tasks} of them retried` : "";
    const where = words.runs === "task" && tasks > 0 ? " where they ran" : "";
    parts.push(
      `${plural(runs, words.runs)} failed${where}${tasks > 0 ? "" : ` (ended in ${statesOf("worker")})`}${retried}`,
    );
  }
  const other = entries.filter(([key]) => splitKey(key).role === undefined);
  for (const [state, count] of other) parts.push(`${count} ended in ${state}`);
  return parts.join("; ");
}

/**
 * How journeys ended, in words: "tasks: 5 completed, 1 failed, 1 removed; attempts: 6 completed,
 * 3 failed" (a queue), "tasks: 2 done, 1 failed" (an engine), "on workers: …; on the scheduler: …"
 * (Dask). Undefined without counts.
 */
export function outcomeWords(
  outcomes: Readonly<Record<string, number>> | undefined,
  words: MachineWords,
): string | undefined {
  const custom = words.custom;
  const byRole = new Map<string, Array<[string, number]>>();
  for (const [key, count] of Object.entries(outcomes ?? {})) {
    if (!Number.isFinite(count) || count <= 0) continue;
    const { role, state } = splitKey(key);
    const side = role === "scheduler" ? "scheduler" : "worker";
    byRole.set(side, [...(byRole.get(side) ?? []), [state, count]]);
  }
  if (byRole.size === 0) return undefined;
  // Two sides of tasks (an engine's runs beside a scheduler) say which is which.
  const runs = words.runs === "task" && byRole.has("scheduler") ? "tasks where they ran" : `${words.runs}s`;
  const label = (role: string) =>
    custom ? (role === "scheduler" ? "tasks" : runs) : role === "scheduler" ? "on the scheduler" : "on workers";
  return ["scheduler", "worker"]
    .filter((role) => byRole.has(role))
    .map(
      (role) =>
        `${label(role)}: ${byRole
          .get(role)!
          .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
          .map(([state, count]) => `${count} ${state}`)
          .join(", ")}`,
    )
    .join("; ");
}

/**
 * The state a table's quantiles measure: the one the data names, else Dask's default, except on a
 * custom machine whose rows have no such state (Dask's name would be a state it does not have):
 * undefined, "no state to measure found".
 */
export function measuredOf(
  rows: readonly PrefixRow[],
  given: string | undefined,
  dask: string,
  custom: boolean,
): string | undefined {
  if (given !== undefined) return given;
  if (!custom) return dask;
  return rows.some((row) => row.stateSeconds[dask] !== undefined) ? dask : undefined;
}
