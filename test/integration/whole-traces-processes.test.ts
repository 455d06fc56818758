/**
 * Whole traces across two real processes: the scheduler here, the worker in a child process,
 * joined only by the carriers in their JSON messages, at head-sampling ratios 0, 0.1 and 1 with
 * failed and slow tasks.
 */
import { spawn } from "node:child_process";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  plan,
  records,
  schedulerReceives,
  schedulerSends,
  side,
  type Reply,
  type SpanRecord,
} from "../fixtures/whole-traces.js";
import { checkWholeTraces } from "../fixtures/whole-traces-check.js";

const WORKER = fileURLToPath(new URL("../fixtures/whole-traces-worker.ts", import.meta.url));

/** A worker process: send() a line, receive its answer. */
function startWorker(ratio: number) {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, String(ratio)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answers = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return {
    async send(message: unknown): Promise<{ reply?: Reply; spans?: SpanRecord[] }> {
      child.stdin.write(JSON.stringify(message) + "\n");
      const answer = await answers.next();
      if (answer.done === true) throw new Error("the worker process ended early");
      return JSON.parse(answer.value) as { reply?: Reply; spans?: SpanRecord[] };
    },
    exited,
  };
}

describe("whole traces across two processes", () => {
  for (const ratio of [0, 0.1, 1]) {
    it(`ratio ${ratio}: every kept task is one trace with both sides, no parent missing`, async () => {
      const tasks = plan(120);
      const scheduler = side("scheduler", ratio);
      const worker = startWorker(ratio);
      for (const task of tasks) {
        scheduler.clock.now = task.start + 1;
        const { reply } = await worker.send(schedulerSends(scheduler.journeys, task));
        scheduler.clock.now = task.start + 1.5 + task.seconds;
        schedulerReceives(scheduler.journeys, task, reply!);
      }
      const { spans: workerSpans } = await worker.send("end");
      expect(await worker.exited).toBe(0);
      const spans = [...records(scheduler.exporter.getFinishedSpans()), ...workerSpans!];
      const kept = checkWholeTraces(spans, tasks, ratio);
      const withWorker = new Set(workerSpans!.filter((span) => span.name.startsWith("task ")).map((span) => span.key));
      // Failed tasks are kept on both sides at every ratio; at ratio 1 every task is.
      expect(withWorker.size).toBeGreaterThanOrEqual(tasks.filter((task) => task.fail).length);
      if (ratio === 1) expect(kept.size).toBe(120);
      if (ratio < 1) expect(kept.size).toBeLessThan(120);
    });
  }
});
