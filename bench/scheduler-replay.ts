/**
 * The cluster's scheduler, deterministically: the example's own Scheduler computes a workload's
 * graph (the reduction by default) round after round under fresh keys, as the cluster bench's
 * warm-up and measured rounds do, with taskjourney instrumented as the cluster does it
 * (telemetry.ts, instrumentScheduler) or not at all. The workers are faked, synchronously: three
 * of two threads each, whose connections queue what the scheduler sends; each compute-task is
 * answered with task-finished (64 KiB of result, and a carrier back when the task's was sampled:
 * a worker's journey has one to return only when it was traced), in the order the scheduler sent them. Nothing
 * here waits on a clock, so the same messages arrive in the same order in every run.
 *
 *   node bench/.scheduler-replay.mjs <off|on|metrics> <rounds> [size]
 *
 * One difference from the cluster: a prefix's duration estimate is read from the statistics once
 * (when it first has three finished tasks), not again every 100 ms of wall time, which valgrind
 * would stretch unevenly; in the cluster those reads are a few per prefix per second, not per task.
 * bench/cluster-instructions.bench.ts (--role scheduler) runs this under valgrind with two round
 * counts: the difference is the scheduler's warm cost per task. Without valgrind it prints its own
 * CPU time per task.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Message } from "../examples/cluster/transport.js";
import type { ComputeTaskMessage } from "../examples/cluster/protocol.js";
import { Scheduler, instrumentScheduler } from "../examples/cluster/scheduler.js";
import { startTelemetry } from "../examples/cluster/telemetry.js";
import { buildGraph, renamedForRound } from "../examples/cluster/workloads.js";
import { MODES, type ReplayMode } from "./cluster-replay.js";

const WORKERS = 3;
const RESULT_BYTES = 65_536;

export async function replayScheduler(
  mode: ReplayMode,
  rounds: number,
  size: number,
): Promise<{ tasks: number; decisions: number }> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-scheduler-replay-"));
  // Exports only at shutdown, whatever valgrind does to the wall clock: the same work in every run.
  process.env.OTEL_METRIC_EXPORT_INTERVAL = "86400000";
  process.env.OTEL_BSP_SCHEDULE_DELAY = "86400000";
  try {
    const scheduler = new Scheduler({ saturation: 1.5, estimateRefreshMs: Number.POSITIVE_INFINITY });
    const address = "tcp://127.0.0.1:2";
    scheduler.address = address;
    const telemetry =
      mode === "off"
        ? undefined
        : await startTelemetry({
            role: "scheduler",
            instance: address,
            outDir: directory,
            traceRatio: mode === "metrics" ? "off" : 0.01,
          });
    if (telemetry !== undefined) instrumentScheduler(scheduler, telemetry.journeys);
    // The private parts a real run reaches through sockets, around TypeScript's `private`.
    const inside = scheduler as any;
    // The root's result is fetched from its worker over a socket: not part of the per-task cost.
    inside.fetchResult = () => Promise.resolve(undefined);
    const sent: Array<{ connection: unknown; message: Message }> = [];
    for (let worker = 0; worker < WORKERS; worker++) {
      const connection = {
        send(message: Message) {
          sent.push({ connection, message });
        },
        reply() {},
        close() {},
      };
      inside.handle(connection, {
        op: "register",
        address: `tcp://127.0.0.1:${10 + worker}`,
        nthreads: 2,
        pid: worker,
        memoryLimit: 1 << 30,
      });
    }
    const graph = buildGraph("reduction", { size, seed: 1 });
    for (let round = 0; round < rounds; round++) {
      const done = scheduler.compute(renamedForRound(graph, round));
      for (let next = 0; next < sent.length; next++) {
        const { connection, message } = sent[next];
        if (message.op !== "compute-task") continue;
        const task = message as ComputeTaskMessage;
        inside.handle(connection, {
          op: "task-finished",
          key: task.key,
          nbytes: RESULT_BYTES,
          ...(task.carrier?.traceparent.endsWith("-01") ? { carrier: task.carrier } : {}),
        });
      }
      sent.length = 0;
      await done;
      scheduler.forget();
    }
    await telemetry?.shutdown();
    return { tasks: graph.tasks.length * rounds, decisions: scheduler.decisions.total };
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [mode, count, size = "2000"] = process.argv.slice(2);
  if (!(MODES as readonly string[]).includes(mode) || !(Number(count) > 0) || !(Number(size) > 0)) {
    console.error(`usage: scheduler-replay <${MODES.join("|")}> <rounds> [size]`);
    process.exit(2);
  }
  const started = process.cpuUsage();
  const { tasks, decisions } = await replayScheduler(mode as ReplayMode, Number(count), Number(size));
  const used = process.cpuUsage(started);
  if (process.env.TASKJOURNEY_REPLAY_QUIET === undefined) {
    console.log(JSON.stringify({ mode, tasks, decisions, cpuMicrosPerTask: (used.user + used.system) / tasks }));
  }
}

if (/scheduler-replay\.(ts|mjs)$/.test(process.argv[1] ?? "")) await main();
