// @ts-check
/**
 * The piscina worker-thread entry: runs one task function and measures the thread's own time.
 * Plain JavaScript, loaded without a TypeScript loader (see functions.mjs); the message and
 * result types are ThreadTask and ThreadResult in protocol.ts.
 *
 * CPU time of *this thread*: `process.cpuUsage()` is process-wide, and `process.threadCpuUsage()`
 * (Node 23.9 and later: getrusage(RUSAGE_THREAD)) is brought up to date only at scheduler ticks:
 * measured on Node 24 and 26 for unpreempted spins of 0.5–2 ms, it read 0 or a whole tick (4 ms),
 * within 10% of the truth for 0–5% of them, where the reading below was for 99%. So on Linux the
 * thread reads the scheduler's accounting of itself from /proc/thread-self/sched: `se.sum_exec_runtime` is its CPU
 * time up to `se.exec_start`, when its current run on a CPU began; while it runs (as it does when
 * reading) its CPU time is that plus the time since. The scheduler's clock is the CPU's
 * `clock_task`, which runs behind CLOCK_MONOTONIC by a per-CPU offset (interrupt and stolen time
 * since boot), so that sum is only used between two readings on the same CPU. When the thread moved
 * to another CPU during the task (`se.nr_migrations` changed), the task gets the difference of the
 * two `se.sum_exec_runtime` alone, which misses the current run at each reading: short by at most
 * a scheduler tick (a few ms), which matters little to a task long enough to have migrated. Time
 * stolen by a hypervisor during the current run counts as CPU. (/proc/thread-self/schedstat is cheaper but only brought up to date
 * at scheduler ticks, which loses most of a short task.) A reading costs some µs, so it is
 * taken only when the worker is instrumented. Without the file (other systems, kernels without
 * SCHED_DEBUG) `process.threadCpuUsage()` is the fallback where Node.js has it, right to a tick
 * per reading (an error that averages out over many tasks); without either, CPU time is unknown.
 *
 * thread-cpu is then that CPU time; thread-noncpu the rest of the thread's wall time: runnable but
 * not running (more busy threads than cores), or blocked.
 */
import fs from "node:fs";
import { FUNCTIONS, SECEDING } from "./functions.mjs";

const buffer = Buffer.alloc(1024);
/** @type {number | undefined} */
let sched;
try {
  // Opened by this thread, so /proc/thread-self is this thread for the life of the descriptor.
  sched = fs.openSync("/proc/thread-self/sched", "r");
} catch {
  sched = undefined;
}

/** @type {(() => { user: number, system: number }) | undefined} */
const threadCpuUsage = typeof process.threadCpuUsage === "function" ? process.threadCpuUsage.bind(process) : undefined;

/**
 * CLOCK_MONOTONIC in ms, the clock of the sched file's `se.exec_start` (offset per CPU, see above):
 * performance.now() runs on it from an origin of its own, taken once here. Cheaper than
 * process.hrtime.bigint(), which allocates a BigInt per reading.
 */
const monotonicOrigin = Number(process.hrtime.bigint()) / 1e6 - performance.now();

/**
 * The number after `label` and its colon in the first `length` bytes of `bytes` (ASCII digits and
 * one dot, as the sched file prints them), or NaN. Read in place: no string, no regular expression.
 * @param {Buffer} bytes
 * @param {number} length
 * @param {string | Buffer} label a Buffer is found faster (no conversion per search)
 */
export function schedField(bytes, length, label) {
  let at = bytes.indexOf(label);
  if (at === -1 || at >= length) return NaN;
  at = bytes.indexOf(58 /* ":" */, at + label.length);
  if (at === -1 || at >= length) return NaN;
  at++;
  while (at < length && bytes[at] === 32) at++;
  let value = 0;
  let scale = 0;
  let digits = 0;
  for (; at < length; at++) {
    const byte = bytes[at];
    if (byte === 46 /* "." */ && scale === 0) scale = 1;
    else if (byte >= 48 && byte <= 57) {
      value = value * 10 + (byte - 48);
      if (scale !== 0) scale *= 10;
      digits++;
    } else break;
  }
  return digits === 0 ? NaN : scale === 0 ? value : value / scale;
}

const EXEC_START = Buffer.from("se.exec_start");
const SUM_EXEC_RUNTIME = Buffer.from("se.sum_exec_runtime");
const NR_MIGRATIONS = Buffer.from("se.nr_migrations");

/**
 * This thread's CPU time in ms (offset by its CPU's clock difference), its CPU time up to its
 * current run, and its migration count; from process.threadCpuUsage() where the file cannot be
 * read (no migrations to tell apart); else undefined.
 * @returns {{ cpu: number, sum: number, migrations: number } | undefined}
 */
function reading() {
  if (sched === undefined) {
    if (threadCpuUsage === undefined) return undefined;
    const { user, system } = threadCpuUsage();
    const cpu = (user + system) / 1000;
    return { cpu, sum: cpu, migrations: 0 };
  }
  try {
    const length = fs.readSync(sched, buffer, 0, buffer.length, 0);
    const now = monotonicOrigin + performance.now();
    const start = schedField(buffer, length, EXEC_START);
    const sum = schedField(buffer, length, SUM_EXEC_RUNTIME);
    const migrations = schedField(buffer, length, NR_MIGRATIONS);
    if (Number.isNaN(start) || Number.isNaN(sum) || Number.isNaN(migrations)) throw new Error("unexpected format");
    return { cpu: sum + now - start, sum, migrations };
  } catch {
    fs.closeSync(sched);
    sched = undefined;
    return undefined;
  }
}

/**
 * The reading that ended this thread's last task, when that task did not secede: the next task
 * starts from it instead of reading again. The thread does nothing between two tasks but wait
 * (no CPU) and hand the previous result back and take the next task's arguments (piscina's
 * structured clones, tens of µs for the reduction's 64 KiB arrays), so that hand-over is counted
 * in the next task's thread-cpu (at the expense of its thread-noncpu: the two still add up to the
 * function's wall time); in exchange a task costs one reading of the sched file, not two (each
 * 4–14 µs of CPU, most of it the kernel formatting the file).
 * @type {{ cpu: number, sum: number, migrations: number } | undefined}
 */
let lastEnd;

/**
 * Seconds on CPU between two readings, or undefined without them.
 * @param {{ cpu: number, sum: number, migrations: number } | undefined} start
 * @param {{ cpu: number, sum: number, migrations: number } | undefined} end
 * @param {number} wall seconds
 */
function cpuBetween(start, end, wall) {
  if (start === undefined || end === undefined) return undefined;
  const seconds = (start.migrations === end.migrations ? end.cpu - start.cpu : end.sum - start.sum) / 1000;
  return seconds >= 0 ? Math.min(seconds, wall) : undefined;
}

/**
 * @param {{ func: string, args: unknown[], measure?: boolean, port?: import("node:worker_threads").MessagePort }} task
 */
export default function runTask(task) {
  const fn = FUNCTIONS[/** @type {keyof typeof FUNCTIONS} */ (task.func)];
  if (fn === undefined) throw new Error(`unknown task function "${task.func}"`);
  const measure = task.measure === true;
  const cpuStart = !measure ? undefined : (lastEnd ?? reading());
  lastEnd = undefined;
  const start = performance.now();
  /** @type {number | undefined} */
  let secededAt;
  /** @type {{ cpu: number, sum: number, migrations: number } | undefined} */
  let cpuAtSecede;
  const context = {
    secede() {
      if (secededAt !== undefined) return;
      cpuAtSecede = measure ? reading() : undefined;
      secededAt = performance.now();
      task.port?.postMessage("secede");
    },
  };
  try {
    const call = /** @type {(...args: unknown[]) => unknown} */ (fn);
    const value = SECEDING.has(task.func) ? call(...task.args, context) : call(...task.args);
    const end = performance.now();
    const cpuEnd = !measure ? undefined : secededAt === undefined ? (lastEnd = reading()) : cpuAtSecede;
    return {
      value,
      wall: (end - start) / 1000,
      cpu: cpuBetween(cpuStart, cpuEnd, ((secededAt ?? end) - start) / 1000 + 0.001),
      secededAfter: secededAt === undefined ? undefined : (secededAt - start) / 1000,
    };
  } finally {
    task.port?.close();
  }
}
