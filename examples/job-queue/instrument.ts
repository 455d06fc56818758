/**
 * The job queue of queue.ts mapped onto taskjourney, as docs/instrumenting.md explains step by
 * step (the guide quotes this file between its `// [name]` markers). The queue side records
 * scheduler journeys, each worker its own worker journeys; the two carriers of a job travel in
 * its data.
 */
import { instrument, type TaskJourneys, type TraceCarrier } from "taskjourney";
import type { Job, JobQueue, QueueWorker } from "./queue.js";

/** Epoch seconds of an epoch-milliseconds time the queue stored. */
const seconds = (ms: number): number => ms / 1000;

// [queue]
/**
 * The queue's side, with the scheduler's state machine: a job's attempt is one journey,
 * released → waiting (for its children) → queued (for a worker) → processing → memory | erred.
 * `journeys` must use the epoch clock: `clock: () => Date.now() / 1000, timeOrigin: 0`.
 */
export function instrumentQueue(queue: JobQueue, journeys: TaskJourneys): void {
  const enqueue = (job: Job, at: number): void => {
    journeys.transition(job.id, "released", "waiting", at);
    // A job with no children to wait for is queued at once: no waiting time, no false dependency wait.
    if (job.state === "waiting") journeys.transition(job.id, "waiting", "queued", at);
  };
  queue.hooks.added = (job) => {
    // Ids are numbers: the job's name is its prefix, for every attempt, until it is forgotten.
    journeys.describe(job.id, { prefix: job.name });
    if (job.children.length > 0) journeys.dependencies(job.id, job.children);
    enqueue(job, seconds(job.createdAt));
  };
  queue.hooks.childrenDone = (job) => journeys.transition(job.id, "waiting", "queued");
  queue.hooks.active = (job) => {
    journeys.transition(job.id, "queued", "processing");
    // The first carrier: to the worker, naming this attempt's journey.
    const carrier: TraceCarrier = {};
    journeys.inject(job.id, carrier);
    job.data.carrier = carrier;
  };
  queue.hooks.completed = (job) => {
    // The second carrier: back with the result. If the worker kept its journey, keep this one.
    journeys.returned(job.id, job.data.resultCarrier as TraceCarrier);
    journeys.transition(job.id, "processing", "memory");
    journeys.transition(job.id, "memory", "forgotten");
  };
  queue.hooks.failed = (job, retry) => {
    journeys.returned(job.id, job.data.resultCarrier as TraceCarrier);
    // The attempt's journey ends here; the backoff is no state of the job's, so nothing records it.
    journeys.transition(job.id, "processing", "erred");
    if (!retry) journeys.transition(job.id, "erred", "forgotten");
  };
  // After the backoff, the next attempt is a journey of its own, queued at once.
  queue.hooks.retrying = (job) => enqueue(job, Date.now() / 1000);
}
// [/queue]

// [worker]
/** A worker's side, with the worker's state machine: each attempt it runs is a journey that starts executing. */
export function instrumentWorker(worker: QueueWorker, journeys: TaskJourneys): () => void {
  // The first carrier, before the journey begins: it nests under the queue's journey of the job.
  worker.hooks.starting = (job) => journeys.parent(job.id, job.data.carrier as TraceCarrier);
  // The second carrier, once the journey ended: back to the queue with the result.
  worker.hooks.finished = (job) => {
    const carrier: TraceCarrier = {};
    journeys.inject(job.id, carrier);
    job.data.resultCarrier = carrier;
  };
  return instrument(worker, journeys, {
    // run() is the execution: executing → memory, or error when it throws; the prefix is the job's name.
    execute: { method: "run", key: (job) => job.id, prefix: (job) => job.name },
    // Reading the children's results is an activity of the parent's execution.
    activities: { method: "readChildren", activity: "read-children" },
  });
}
// [/worker]
