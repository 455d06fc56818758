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

/** The number after `label` and its colon in the first `length` bytes of a sched file reading, or NaN. */
export function schedField(bytes: Buffer, length: number, label: string | Buffer): number;
