import { ATTR_TASK_KEY, ATTR_TASK_OUTCOME, ATTR_UNFINISHED, SPAN_TASK_PREFIX } from "../shared/semconv.js";
import { failureReason, journeyInstance, journeyKind, stringAttribute, type SpanIndex } from "./from-trace.js";
import type { ReportFailure } from "./html.js";
import type { DecodedSpan } from "./otlp-json.js";

/**
 * The failed tasks of a trace, for the report's "Failed tasks" table: every journey that ended in
 * `error` (a worker's execution) or `erred` (the scheduler), or in a machine's own failure state
 * (see failedOutcome), with why when the spans say so — the
 * failed attempt's `task.error`, else its `exception` event, else the task span's, else a status
 * message of the user's. A key that failed on a worker and erred on the scheduler in one trace is
 * listed once, by the worker's journey, which knows why; a key retried to success, not at all.
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
 * at one end time, those with a reason first), at most `limit`; and how many in all. A task is
 * failed when its last word in the trace is a failure: the scheduler's journey of the key when
 * the trace has one (it outlives the attempts), else the key's journey that ended last. A key
 * whose attempt failed and was retried to success (a job queue's retry, a worker that died) is
 * not a failed task. The failure shown is the key's failed worker journey that ended last (it
 * knows why), else the verdict itself.
 */
export function failedTasks(index: SpanIndex, limit: number): { failures: ReportFailure[]; total: number } {
  const byTraceAndKey = new Map<string, DecodedSpan[]>();
  for (const task of index.tasks) {
    if (task.attributes[ATTR_UNFINISHED] === true || stringAttribute(task, ATTR_TASK_OUTCOME) === undefined) continue;
    const id = `${task.traceId}\u0000${stringAttribute(task, ATTR_TASK_KEY) ?? ""}`;
    const journeys = byTraceAndKey.get(id);
    if (journeys === undefined) byTraceAndKey.set(id, [task]);
    else journeys.push(task);
  }
  const all: Array<{ failure: ReportFailure; end: bigint }> = [];
  for (const journeys of byTraceAndKey.values()) {
    const kinds = journeys.map((task) => journeyKind(index, task));
    const scheduler = journeys.filter((_, at) => kinds[at] === "scheduler");
    const verdict = latest(scheduler.length > 0 ? scheduler : journeys);
    if (failedOutcome(verdict) === undefined) continue;
    const failedWorkers = journeys.filter((task, at) => kinds[at] !== "scheduler" && failedOutcome(task) !== undefined);
    const shown = failedWorkers.length > 0 ? latest(failedWorkers) : verdict;
    const failure = describeFailure(index, shown);
    const attempts = attemptsOf(index, journeys, kinds, scheduler, failure.state);
    if (attempts > 0) failure.attempts = attempts;
    all.push({ failure, end: shown.endNanos });
  }
  // At one time (a scheduler erring a task's dependents as it errs the task), those that say why first.
  const known = (entry: { failure: ReportFailure }) => (entry.failure.error === undefined ? 1 : 0);
  all.sort((a, b) => (a.end < b.end ? -1 : a.end > b.end ? 1 : known(a) - known(b)));
  return { failures: all.slice(0, Math.max(0, limit)).map((entry) => entry.failure), total: all.length };
}

/**
 * A failed task's attempts in the trace: its executing journeys on workers (one an attempt, as a
 * job queue's workers run them), or its scheduler journey's visits to the failed attempt's state
 * (a queue recorded on its scheduler side only), whichever says more; 0 when neither tells.
 */
function attemptsOf(
  index: SpanIndex,
  journeys: readonly DecodedSpan[],
  kinds: readonly string[],
  scheduler: readonly DecodedSpan[],
  state: string | undefined,
): number {
  const onWorkers = kinds.filter((kind) => kind === "compute").length;
  let visits = 0;
  if (state !== undefined)
    for (const task of scheduler)
      visits += index.visitsOf(task).filter((visit) => visit.scope === task.scope && visit.name === state).length;
  return Math.max(onWorkers, visits);
}

/** The journey of `journeys` that ended last. */
function latest(journeys: readonly DecodedSpan[]): DecodedSpan {
  return journeys.reduce((last, task) => (task.endNanos >= last.endNanos ? task : last));
}

/** A failed journey as the table lists it, with why when the spans say so. */
function describeFailure(index: SpanIndex, task: DecodedSpan): ReportFailure {
  const outcome = failedOutcome(task)!;
  // The attempt that failed: the last state span marked with the outcome (explain()'s "executing … error: …").
  const attempt = index
    .visitsOf(task)
    .filter((visit) => visit.scope === task.scope && stringAttribute(visit, ATTR_TASK_OUTCOME) === "error")
    .at(-1);
  const failure: ReportFailure = {
    key: stringAttribute(task, ATTR_TASK_KEY) ?? "",
    prefix: task.name.startsWith(SPAN_TASK_PREFIX) ? task.name.slice(SPAN_TASK_PREFIX.length) : "",
    instance: journeyInstance(task),
    kind: journeyKind(index, task),
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
  return failure;
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
