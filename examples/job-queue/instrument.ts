/**
 * The job queue of queue.ts mapped onto taskjourney, as docs/instrumenting.md explains step by
 * step (the guide quotes this file between its `// [name]` markers). Both sides record the
 * queue's own state machine: the queue side its scheduler journeys, each worker its own worker
 * journeys; the two carriers of a job travel in its data.
 */
// [machine]
import { defineMachine, instrument, type TaskJourneys, type TraceCarrier } from "taskjourney";
import type { JobQueue, QueueWorker } from "./queue.js";

/** Epoch seconds of an epoch-milliseconds time the queue stored. */
const seconds = (ms: number): number => ms / 1000;

/**
 * The queue's own state machine, declared once and used on both sides: taskjourney records the
 * job's states by their names, and `transition()` takes no other (a misspelt state does not compile).
 */
export const JOB_MACHINE = defineMachine({
  states: ["added", "waiting-children", "waiting", "delayed", "active", "completed", "failed"],
  transitions: {
    added: ["waiting-children", "waiting"],
    "waiting-children": ["waiting"],
    waiting: ["active"],
    active: ["completed", "failed", "delayed"],
    delayed: ["waiting"],
  },
  terminal: { success: "completed", failure: "failed" },
  // A job is `added` before its journey: the first move out of it begins one.
  initial: "added",
  // Waiting for children is waiting for dependencies; the backoff (`delayed`) is a state of its own.
  waiting: "waiting-children",
  queued: "waiting",
  executing: "active",
  forgotten: ["completed", "failed"],
});

/** Its states as a type, for code that takes the journeys: `TaskJourneys<"scheduler", JobJourneyState>`. */
export type JobJourneyState = (typeof JOB_MACHINE.states)[number];

/**
 * The journeys' `runtime` option, on both sides: the epoch clock the queue stores its times in,
 * and no AsyncLocalStorage. The one activity, readChildren(), runs in run()'s synchronous part,
 * where the execution's ledger is found without it; on Node 20 AsyncLocalStorage installs promise
 * hooks that tax every promise of the process (here 1.1 KB allocated a job).
 */
export const JOB_RUNTIME = { clock: () => Date.now() / 1000, timeOrigin: 0, asyncContext: false };
// [/machine]

// [queue]
/**
 * The queue's side: a job's life is one journey, retries and their backoff included:
 * added → waiting-children → waiting → active (→ delayed → waiting → active …) → completed | failed.
 * `journeys` must use the epoch clock: `runtime: JOB_RUNTIME`.
 */
export function instrumentQueue(queue: JobQueue, journeys: TaskJourneys<"scheduler", JobJourneyState>): void {
  queue.hooks.added = (job) => {
    // Ids are numbers: the job's name is its prefix, until the job is forgotten.
    journeys.describe(job.id, { prefix: job.name });
    if (job.children.length > 0) journeys.dependencies(job.id, job.children);
    // A job without children goes straight to waiting: it never waits for dependencies. A flow's
    // jobs share its computation: the flow's totals in computations(), explain() and the report.
    journeys.transition(job.id, "added", job.state === "waiting" ? "waiting" : "waiting-children", {
      at: seconds(job.createdAt),
      computation: job.flow,
    });
  };
  queue.hooks.childrenDone = (job) => journeys.transition(job.id, "waiting-children", "waiting");
  queue.hooks.active = (job) => {
    journeys.transition(job.id, "waiting", "active");
    // The first carrier: to the worker, naming the job's journey.
    const carrier: TraceCarrier = {};
    journeys.propagation.sender.inject(job.id, carrier);
    job.data.carrier = carrier;
  };
  queue.hooks.completed = (job) => {
    // The second carrier: back with the result. If the worker kept its journey, keep this one.
    journeys.propagation.receiver.resultFrom(job.id, job.data.resultCarrier as TraceCarrier);
    journeys.transition(job.id, "active", "completed");
  };
  queue.hooks.failed = (job, retry) => {
    journeys.propagation.receiver.resultFrom(job.id, job.data.resultCarrier as TraceCarrier);
    // A retried attempt's backoff is `delayed`, recorded as such; the last attempt's failure ends
    // the journey. Each failed attempt carries the queue's reason (explain(), its span, the report).
    journeys.transition(job.id, "active", retry ? "delayed" : "failed", { error: job.error });
  };
  queue.hooks.retrying = (job) => journeys.transition(job.id, "delayed", "waiting");
}
// [/queue]

// [worker]
/**
 * A worker's side, with the same machine: each attempt it runs is a journey, active → completed | failed.
 * `journeys` takes `runtime: JOB_RUNTIME` too (a handler that meters after an `await` would need asyncContext).
 */
export function instrumentWorker(worker: QueueWorker, journeys: TaskJourneys<"worker", JobJourneyState>): () => void {
  // The first carrier, before the journey begins: it nests under the queue's journey of the job.
  worker.hooks.starting = (job) => journeys.propagation.receiver.continueFrom(job.id, job.data.carrier as TraceCarrier);
  // The second carrier, once the journey ended: back to the queue with the result.
  worker.hooks.finished = (job) => {
    const carrier: TraceCarrier = {};
    journeys.propagation.sender.inject(job.id, carrier);
    job.data.resultCarrier = carrier;
  };
  return instrument(worker, journeys, {
    // run() is the execution: active → completed, or failed when it throws; the prefix is the job's name.
    execute: { method: "run", key: (job) => job.id, prefix: (job) => job.name },
    // Reading the children's results is an activity of the parent's execution.
    activities: { method: "readChildren", activity: "read-children" },
  });
}
// [/worker]
