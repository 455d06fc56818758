/**
 * The producer: sends the workload's jobs to PostgreSQL through pg-boss and exits. It is the only
 * "scheduler" such a queue has, and it never learns how a job ends: its journey of each job ends
 * at the hand-off, the job's trace carrier travelling in the job's payload.
 * Usage (main.ts forks it): producer.ts <database url> <schema> <instance> <ratio> <out dir>
 */
import { randomUUID } from "node:crypto";
import PgBoss from "pg-boss";
import type { TraceCarrier } from "taskjourney";
import { PRODUCER_MACHINE } from "./machines.js";
import { epochSeconds, startOpenTelemetry } from "./telemetry.js";
import { plan, type JobData } from "./workload.js";

const [url, schema, instance, ratio, out] = process.argv.slice(2);
const telemetry = startOpenTelemetry({
  role: "scheduler",
  instance,
  machine: PRODUCER_MACHINE,
  ratio: Number(ratio),
  out,
});
const producer = telemetry.journeys;

const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
boss.on("error", (error) => console.error(`${instance}: pg-boss: ${error.message}`));
await boss.start();

/** What a job's payload holds: its data and, beside it, the trace carrier and the batch it was sent in. */
export interface Payload extends JobData {
  carrier: TraceCarrier;
  /** The computation: every job this run of the producer sends is one batch. */
  batch: string;
}

/** This run's batch, one computation (what Dask calls a span): the jobs sent together. */
const batch = `batch-${randomUUID().slice(0, 8)}`;

// [send]
async function send(job: ReturnType<typeof plan>[number]): Promise<void> {
  // The producer's journey of the job: from here to the queue's answer. Its prefix is the key's
  // (`resize-3` → resize). It begins at the clock cut to the millisecond, as the queue cuts its
  // times: the job's createdOn, where the workers begin, is then never before it.
  // The batch is its computation: the jobs' totals together, here and (from the payload) on the workers.
  producer.transition(job.key, "created", "sending", {
    at: Math.floor(epochSeconds() * 1000) / 1000,
    computation: batch,
  });
  // The carrier, written before the send, goes in the payload: the job's id exists only once
  // send() resolves, and a worker may have started the job by then.
  const carrier: TraceCarrier = {};
  producer.propagation.sender.handOff(job.key, carrier);
  const payload: Payload = { key: job.key, file: `media/${job.key}.bin`, carrier, batch };
  try {
    await boss.send(job.queue, payload, {
      retryLimit: job.retryLimit,
      retryDelay: 1,
      retryBackoff: true,
      startAfter: job.startAfter,
    });
    // The journey ends here: nothing stays open on a producer that never hears back.
    producer.transition(job.key, "sending", "enqueued");
  } catch (error) {
    producer.transition(job.key, "sending", "refused", { error: error as Error });
  }
}
// [/send]

// One job at a time, each sent once the queue confirmed the one before: a job may then be
// inserted, and taken by a worker, within the millisecond its journey began here.
for (const job of plan()) await send(job);
await boss.stop({ graceful: true, wait: true });
await telemetry.shutdown();
