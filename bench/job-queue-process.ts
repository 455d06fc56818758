/**
 * The process bench/job-queue.bench.ts measures and bench/job-queue-instructions.ts counts: one
 * process holding the job queue of examples/job-queue and its two workers (two jobs in flight
 * each), jobs that resolve at once, telemetry as a user sets it up (`taskjourney/sdk`'s
 * startTelemetry for the queue, role scheduler, and one per worker, OTLP JSON files into a
 * temporary directory, the guide's instrument.ts and its JOB_RUNTIME: the epoch clock the queue
 * needs, no AsyncLocalStorage; the library's defaults otherwise). Modes: telemetry off; metrics only (no traces at all); metrics + head
 * sampling at `traceRatio` (slow and failed journeys kept too).
 *
 * Jobs come in groups of four: three `fetch` children and their `merge` parent, which reads their
 * results (the read-children activity).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { JobQueue, QueueWorker } from "../examples/job-queue/queue.js";
import { instrumentQueue, instrumentWorker, JOB_MACHINE, JOB_RUNTIME } from "../examples/job-queue/instrument.js";

export type JobQueueMode = "off" | "metrics" | "on";
export const JOB_QUEUE_MODES: readonly JobQueueMode[] = ["off", "metrics", "on"];

/**
 * Parts switched off, one at a time, to measure what each costs (bench/job-queue-instructions.ts
 * --switch): `async-context` the journeys' AsyncLocalStorage on (the library's default; the
 * guide's JOB_RUNTIME turns it off);
 * `no-carriers` the four carrier calls of instrument.ts (the hooks then only move states);
 * `no-traces` no trace exporter (so no span processor, no tracer provider).
 */
export const JOB_QUEUE_SWITCHES = ["async-context", "no-carriers", "no-traces"] as const;
export type JobQueueSwitch = (typeof JOB_QUEUE_SWITCHES)[number];

export interface JobQueueProcess {
  /** Adds `jobs` jobs (a multiple of 4) and resolves once the queue drained them. */
  round(jobs: number): Promise<void>;
  /** Stops the workers, shuts telemetry down (its last export) and removes the files. */
  stop(): Promise<void>;
}

export async function startJobQueue(
  mode: JobQueueMode,
  options: { traceRatio: number; metricExportIntervalMillis: number; switches?: ReadonlySet<JobQueueSwitch> },
): Promise<JobQueueProcess> {
  const switches = options.switches ?? new Set<JobQueueSwitch>();
  const handlers = {
    fetch: async () => 1,
    merge: async (_job: unknown, children: unknown[]) => children.length,
  };
  const queue = new JobQueue();
  const workers = [new QueueWorker(queue, "worker-1", 2, handlers), new QueueWorker(queue, "worker-2", 2, handlers)];
  const shutdowns: Array<() => Promise<unknown>> = [];
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-jobqueue-"));
  if (mode !== "off") {
    // Loaded only when on: telemetry off is a process without it.
    const { startTelemetry } = await import("taskjourney/sdk");
    const journeysOptions = {
      // The guide's: the epoch clock, no AsyncLocalStorage (--switch async-context: with it).
      runtime: { ...JOB_RUNTIME, asyncContext: switches.has("async-context") },
      machine: JOB_MACHINE,
      sampling: mode === "metrics" ? { ratio: 0, keepSlowerThan: 0, keepErrors: false } : { ratio: options.traceRatio },
    };
    const start = (role: "scheduler" | "worker", instance: string) =>
      startTelemetry({
        role,
        instance,
        serviceName: "job-queue-bench",
        journeys: journeysOptions,
        fileDirectory: outDir,
        exporters: {
          metricExportIntervalMillis: options.metricExportIntervalMillis,
          ...(switches.has("no-traces") ? { traces: "none" as const } : {}),
        },
        registerGlobal: false,
      });
    const queueTelemetry = await start("scheduler", "queue");
    shutdowns.push(() => queueTelemetry.shutdown());
    instrumentQueue(queue, queueTelemetry.journeys as never);
    for (const worker of workers) {
      const telemetry = await start("worker", worker.name);
      shutdowns.push(() => telemetry.shutdown());
      instrumentWorker(worker, telemetry.journeys as never);
      if (switches.has("no-carriers")) worker.hooks.starting = worker.hooks.finished = undefined;
    }
    if (switches.has("no-carriers")) {
      const journeys = queueTelemetry.journeys;
      queue.hooks.active = (job) => journeys.transition(job.id, "waiting", "active");
      queue.hooks.completed = (job) => journeys.transition(job.id, "active", "completed");
    }
  }
  for (const worker of workers) worker.start();
  return {
    async round(jobs) {
      for (let group = 0; group < jobs / 4; group++) {
        const children = [0, 1, 2].map(() => queue.add({ name: "fetch" }).id);
        queue.add({ name: "merge", children });
      }
      await queue.drained();
    },
    async stop() {
      for (const worker of workers) worker.stop();
      await Promise.all(shutdowns.map((shutdown) => shutdown()));
      fs.rmSync(outDir, { recursive: true, force: true });
    },
  };
}
