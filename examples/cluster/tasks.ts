/**
 * The piscina worker-thread entry: runs one task function and measures the thread's own time.
 *
 * CPU time of *this thread* comes from Linux's /proc/thread-self/schedstat (nanoseconds on
 * CPU), since Node 20 has no per-thread CPU clock (`process.threadCpuUsage` arrived in Node 23.9
 * and `process.cpuUsage()` is process-wide). The thread's wall time minus that is time the thread
 * was runnable but not running (more busy threads than cores) or blocked. Where schedstat is not
 * readable the CPU time is reported as unknown and the worker records the thread's wall time
 * under its own activity name, "thread-wall", rather than pretend it was CPU.
 */
import fs from "node:fs";
import type { MessagePort } from "node:worker_threads";
import { FUNCTIONS, SECEDING, type TaskContext, type Value } from "./functions.js";

export interface ThreadTask {
  func: string;
  args: unknown[];
  /** Present for functions that may secede: the thread says "secede" through it. */
  port?: MessagePort;
}

export interface ThreadResult {
  value: Value;
  /** Seconds from the function's start to its return, in the thread. */
  wall: number;
  /** Seconds on CPU of this thread over the same span (until secede, if it seceded); undefined if unknown. */
  cpu: number | undefined;
  /** Seconds from the function's start to its secede() call, if it seceded. */
  secededAfter: number | undefined;
}

const SCHEDSTAT = "/proc/thread-self/schedstat";

function readThreadCpu(): number | undefined {
  try {
    const text = fs.readFileSync(SCHEDSTAT, "latin1");
    const nanoseconds = Number(text.slice(0, text.indexOf(" ")));
    return Number.isFinite(nanoseconds) ? nanoseconds / 1e9 : undefined;
  } catch {
    return undefined;
  }
}

const hasThreadCpu = readThreadCpu() !== undefined;
const threadCpu = hasThreadCpu ? readThreadCpu : () => undefined;

export default function runTask(task: ThreadTask): ThreadResult {
  const fn = FUNCTIONS[task.func];
  if (fn === undefined) throw new Error(`unknown task function "${task.func}"`);
  const cpuStart = threadCpu();
  const start = performance.now();
  let secededAt: number | undefined;
  let cpuAtSecede: number | undefined;
  const context: TaskContext = {
    secede() {
      if (secededAt !== undefined) return;
      cpuAtSecede = threadCpu();
      secededAt = performance.now();
      task.port?.postMessage("secede");
    },
  };
  try {
    const value = SECEDING.has(task.func) ? fn(...task.args, context) : fn(...task.args);
    const end = performance.now();
    const cpuEnd = secededAt === undefined ? threadCpu() : cpuAtSecede;
    return {
      value,
      wall: (end - start) / 1000,
      cpu: cpuStart === undefined || cpuEnd === undefined ? undefined : cpuEnd - cpuStart,
      secededAfter: secededAt === undefined ? undefined : (secededAt - start) / 1000,
    };
  } finally {
    task.port?.close();
  }
}
