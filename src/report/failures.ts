import { ATTR_TASK_KEY, ATTR_TASK_OUTCOME, ATTR_UNFINISHED, SPAN_TASK_PREFIX } from "../otel/semconv.js";
import { failureReason, journeyInstance, journeyKind, stringAttribute, type SpanIndex } from "./from-trace.js";
import type { ReportFailure } from "./html.js";
import type { DecodedSpan } from "./otlp-json.js";

/**
 * The failed tasks of a trace, for the report's "Failed tasks" table: every journey that ended in
 * `error` (a worker's execution) or `erred` (the scheduler), or in a machine's own failure state
 * (see failedOutcome), with why when the spans say so — the
 * failed attempt's `task.error`, else its `exception` event, else the task span's, else a status
 * message of the user's. A key that failed on a worker and erred on the scheduler in one trace is
 * listed once, by the worker's journey, which knows why.
 */

/** Terminal states of a task that failed: a worker's `error`, the scheduler's `erred`. */
export const FAILED_STATES: readonly string[] = ["error", "erred"];

/**
 * The failed terminal state a task span ended in, or undefined: Dask's (FAILED_STATES), or any
 * outcome of a span with status ERROR, which taskjourney gives a journey that ended in its
 * machine's failure state (a job queue's `failed`), whatever the machine calls it.
 */
export function failedOutcome(task: DecodedSpan): string | undefined {
  const outcome = stringAttribute(task, ATTR_TASK_OUTCOME);
  if (outcome === undefined || task.attributes[ATTR_UNFINISHED] === true) return undefined;
  return FAILED_STATES.includes(outcome) || task.statusCode === 2 ? outcome : undefined;
}

/**
 * The failed tasks, earliest end first (the first failure is most often the cause of the others;
 * at one end time, those with a reason first), at most `limit`; and how many in all.
 */
export function failedTasks(index: SpanIndex, limit: number): { failures: ReportFailure[]; total: number } {
  const byTraceAndKey = new Map<string, { failure: ReportFailure; end: bigint }>();
  for (const task of index.tasks) {
    const outcome = failedOutcome(task);
    if (outcome === undefined) continue;
    const key = stringAttribute(task, ATTR_TASK_KEY) ?? "";
    const kind = journeyKind(index, task);
    // The attempt that failed: the last state span marked with the outcome (explain()'s "executing … error: …").
    const attempt = index
      .visitsOf(task)
      .filter((visit) => visit.scope === task.scope && stringAttribute(visit, ATTR_TASK_OUTCOME) === "error")
      .at(-1);
    const failure: ReportFailure = {
      key,
      prefix: task.name.startsWith(SPAN_TASK_PREFIX) ? task.name.slice(SPAN_TASK_PREFIX.length) : "",
      instance: journeyInstance(task),
      kind,
      outcome,
      seconds: Number(task.endNanos - task.startNanos) / 1e9,
    };
    if (attempt !== undefined) failure.state = attempt.name;
    const error =
      (attempt === undefined ? undefined : failureReason(attempt)) ??
      failureReason(task) ??
      statusReason(task, outcome) ??
      (attempt === undefined ? undefined : statusReason(attempt, outcome));
    if (error !== undefined) failure.error = error;
    const id = `${task.traceId}\u0000${key}`;
    const seen = byTraceAndKey.get(id);
    // The worker's journey (it knows why) over the scheduler's; else the first.
    if (seen === undefined || (seen.failure.kind === "scheduler" && kind !== "scheduler"))
      byTraceAndKey.set(id, { failure, end: task.endNanos });
  }
  // At one time (a scheduler erring a task's dependents as it errs the task), those that say why first.
  const known = (entry: { failure: ReportFailure }) => (entry.failure.error === undefined ? 1 : 0);
  const all = [...byTraceAndKey.values()].sort((a, b) =>
    a.end < b.end ? -1 : a.end > b.end ? 1 : known(a) - known(b),
  );
  return { failures: all.slice(0, Math.max(0, limit)).map((entry) => entry.failure), total: all.length };
}

/**
 * A span's error status message when the user's (an exporter of the user's own making, or the
 * error's message when no exception event survived); not the texts taskjourney writes when it
 * knows no reason ("task ended in error", "executing error").
 */
function statusReason(span: DecodedSpan, outcome: string): string | undefined {
  const message = span.statusMessage;
  if (span.statusCode !== 2 || message === undefined) return undefined;
  if (message === `task ended in ${outcome}` || message === `${span.name} error` || message === `${span.name} failed`)
    return undefined;
  return message;
}
