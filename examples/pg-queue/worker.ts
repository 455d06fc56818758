/**
 * A worker process: takes jobs from every queue through pg-boss and runs them, one journey per
 * attempt, continuing the job's trace from the carrier in its payload. Runs until its parent
 * (main.ts) says "stop" over IPC; then it stops taking jobs, lets those running finish, and
 * exports the rest.
 * Usage (main.ts forks it): worker.ts <database url> <schema> <instance> <ratio> <out dir>
 */
import PgBoss from "pg-boss";
import { ATTEMPT_MACHINE } from "./machines.js";
import type { Payload } from "./producer.js";
import { startOpenTelemetry } from "./telemetry.js";
import { QUEUES, work } from "./workload.js";

const [url, schema, instance, ratio, out] = process.argv.slice(2);
const telemetry = startOpenTelemetry({ role: "worker", instance, machine: ATTEMPT_MACHINE, ratio: Number(ratio), out });
const journeys = telemetry.journeys;

const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
boss.on("error", (error) => console.error(`${instance}: pg-boss: ${error.message}`));
await boss.start();

/** A row time (a Date of whole milliseconds) in the journeys' clock: epoch seconds. */
const seconds = (date: Date): number => date.getTime() / 1000;

// [attempt]
async function attempt(job: PgBoss.JobWithMetadata<Payload>): Promise<string> {
  // The queue's job id is this side's key; the attempt, from the row's retry count.
  const attempt = job.retryCount + 1;
  // Before the attempt's first transition: its journey continues the producer's trace.
  journeys.propagation.receiver.continueFrom(job.id, job.data.carrier, { attempt });
  // The attempt's journey, from the row's times: since the job was due (created, or its retry's
  // backoff over) until it started, then running. The job's queue name is its prefix, the
  // producer's batch (from the payload) its computation.
  const prefix = job.name;
  const computation = job.data.batch;
  if (attempt === 1 && job.startAfter > job.createdOn) {
    journeys.transition(job.id, "created", "delayed", { at: seconds(job.createdOn), prefix, computation });
    journeys.transition(job.id, "delayed", "queued", { at: seconds(job.startAfter) });
  } else {
    const due = attempt === 1 ? job.createdOn : job.startAfter;
    journeys.transition(job.id, "created", "queued", { at: seconds(due), prefix, computation });
  }
  journeys.transition(job.id, "queued", "active", { at: seconds(job.startedOn) });
  const run = journeys.execute(job.id);
  try {
    const result = await work(job.name, job.data, attempt, async (activity, step) => await run.meter(activity, step));
    run.end("completed");
    return result;
  } catch (error) {
    // pg-boss retries the job while it has retries left: this attempt ends `retrying`, the last one `failed`.
    run.end(job.retryCount < job.retryLimit ? "retrying" : "failed", { error });
    throw error;
  }
}
// [/attempt]

for (const queue of QUEUES)
  await boss.work<Payload>(queue, { includeMetadata: true, batchSize: 1, pollingIntervalSeconds: 0.5 }, ([job]) =>
    attempt(job),
  );
process.send?.("ready");

process.on("message", async (message) => {
  if (message !== "stop") return;
  await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  await telemetry.shutdown();
  process.disconnect();
});
