/**
 * A small workload for the job queue: three `fetch` children and their `merge` parent (which
 * reads their results), a `flaky` job that fails its first attempt and succeeds after a backoff,
 * and a `broken` job that always fails. Two workers, two jobs in flight each.
 */
import { JobQueue, QueueWorker, type Handler } from "./queue.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const HANDLERS: Record<string, Handler> = {
  fetch: async (job) => {
    await sleep(5);
    return `data of ${job.id}`;
  },
  merge: async (_job, children) => {
    await sleep(5);
    return children.join("+");
  },
  flaky: async (job) => {
    await sleep(5);
    if (job.attempts < 2) throw new Error("transient");
    return "ok at last";
  },
  broken: async () => {
    await sleep(5);
    throw new Error("always");
  },
};

/** Starts two workers on a new queue; add jobs with `submit()`, then await `queue.drained()`. */
export function startCluster(): { queue: JobQueue; workers: QueueWorker[]; submit(): void; stop(): void } {
  const queue = new JobQueue();
  let flows = 0;
  const workers = [new QueueWorker(queue, "worker-1", 2, HANDLERS), new QueueWorker(queue, "worker-2", 2, HANDLERS)];
  return {
    queue,
    workers,
    submit() {
      // One flow: the merge and its fetch children (taskjourney's computation); the others are jobs alone.
      const flow = `flow-${++flows}`;
      const children = [0, 1, 2].map(() => queue.add({ name: "fetch", flow }).id);
      queue.add({ name: "merge", children, flow });
      queue.add({ name: "flaky", maxAttempts: 2, backoffMs: 20 });
      queue.add({ name: "broken" });
    },
    stop() {
      for (const worker of workers) worker.stop();
    },
  };
}
