/** Types of tasks.mjs (plain JavaScript, the piscina thread entry; see functions.d.mts for why). */
import type { MessagePort } from "node:worker_threads";
import type { ThreadResult } from "./protocol.js";

/** Runs one task function on this thread and measures the thread's own time. */
export default function runTask(task: {
  func: string;
  args: unknown[];
  measure?: boolean;
  port?: MessagePort;
}): ThreadResult;

/** This thread's CPU time in ms (CLOCK_THREAD_CPUTIME_ID through WASI), or undefined where it cannot be read. */
export const threadCpuMs: () => number | undefined;
