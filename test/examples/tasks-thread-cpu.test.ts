import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import runTask, { threadCpuMs } from "../../examples/cluster/tasks.mjs";

const TASKS = new URL("../../examples/cluster/tasks.mjs", import.meta.url).href;
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe("a worker thread's CPU time (tasks.mjs)", () => {
  it("is read on this runtime, and does not advance while the thread sleeps", () => {
    const before = threadCpuMs();
    expect(typeof before).toBe("number");
    sleep(200);
    const after = threadCpuMs()!;
    expect(after).toBeGreaterThanOrEqual(before!);
    // A blocked thread is not on a CPU: a tick-granular or process-wide clock would show more.
    expect(after - before!).toBeLessThan(20);
  });

  it("is this thread's alone: another thread's 100 ms of CPU leaves it where it was", async () => {
    const before = threadCpuMs()!;
    const processBefore = process.cpuUsage();
    // The other thread spins until its own clock says 100 ms, and reports how much it read.
    const worker = new Worker(
      `import { threadCpuMs } from ${JSON.stringify(TASKS)};
       import { parentPort } from "node:worker_threads";
       const start = threadCpuMs();
       let spins = 0;
       while (threadCpuMs() - start < 100 && spins < 1e9) spins++;
       parentPort.postMessage(threadCpuMs() - start);`,
      { eval: true, type: "module" } as never,
    );
    const spun = await new Promise<number>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    const processUsed = process.cpuUsage(processBefore);
    expect(spun).toBeGreaterThanOrEqual(100);
    // The process paid for the other thread's spin; this thread only waited for its message.
    expect((processUsed.user + processUsed.system) / 1000).toBeGreaterThanOrEqual(100);
    expect(threadCpuMs()! - before).toBeLessThan(50);
  });

  it("gives a measured task its CPU seconds, never more than its wall time and a reading's slack", () => {
    for (let i = 0; i < 20; i++) {
      const result = runTask({ func: "arange", args: [i, 4096, 1], measure: true });
      expect(result.cpu).toBeTypeOf("number");
      expect(result.cpu!).toBeGreaterThanOrEqual(0);
      expect(result.cpu!).toBeLessThanOrEqual(result.wall + 0.001);
    }
    expect(runTask({ func: "arange", args: [0, 16, 1], measure: false }).cpu).toBeUndefined();
  });
});
