// @ts-check
/**
 * The piscina worker-thread entry: runs one task function and measures the thread's own time.
 * Plain JavaScript, loaded without a TypeScript loader (see functions.mjs); the message and
 * result types are ThreadTask and ThreadResult in protocol.ts.
 *
 * CPU time of *this thread* is CLOCK_THREAD_CPUTIME_ID, which Node.js has no JavaScript API for but
 * WASI does: `clock_time_get` with WASI's thread clock, which Node's WASI (uvwasi) answers with
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID), a syscall that brings the thread's scheduler accounting up
 * to date first: exact to the nanosecond, migrations between CPUs included. A one-function
 * WebAssembly module (below) imports it; a reading costs 0.8–1.0 µs of CPU on Node 20, 24 and 26
 * (`npx tsx bench/sched-read.bench.ts`), where reading /proc/thread-self/sched, as this file did
 * before, cost 9.6–10 µs (the kernel formats the whole file on every read): ≈ 14 µs of a worker's
 * task in the replay's profile, one of the larger parts of what telemetry added to it.
 *
 * The fallbacks, in order: `process.threadCpuUsage()` (Node 23.9 and later:
 * getrusage(RUSAGE_THREAD)), brought up to date only at scheduler ticks (tasks of 0.5–2 ms read 0
 * or a whole tick, 4 ms: right on average over many tasks only); without it, CPU time is unknown.
 *
 * thread-cpu is then that CPU time; thread-noncpu the rest of the thread's wall time: runnable but
 * not running (more busy threads than cores), or blocked.
 */
import { createRequire } from "node:module";
import { FUNCTIONS, SECEDING } from "./functions.mjs";

/**
 * (module
 *   (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
 *   (memory (export "memory") 1)
 *   (func (export "now") (result f64)            ;; nanoseconds, or -1 if the clock failed
 *     (if (result f64) (i32.eqz (call $clock (i32.const 3) (i64.const 1) (i32.const 0)))
 *       (then (f64.convert_i64_u (i64.load (i32.const 0))))
 *       (else (f64.const -1)))))
 * Clock 3 is WASI's THREAD_CPUTIME_ID; the timestamp lands at address 0.
 */
// prettier-ignore
const THREAD_CLOCK_WASM = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x0c, 0x02, 0x60, 0x03, 0x7f, 0x7e, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7c, // types
  0x02, 0x29, 0x01, 0x16, ...new TextEncoder().encode("wasi_snapshot_preview1"),
  0x0e, ...new TextEncoder().encode("clock_time_get"), 0x00, 0x00, // import: func of type 0
  0x03, 0x02, 0x01, 0x01, // one function of type 1
  0x05, 0x03, 0x01, 0x00, 0x01, // one memory, 1 page
  0x07, 0x10, 0x02, 0x06, ...new TextEncoder().encode("memory"), 0x02, 0x00, 0x03,
  ...new TextEncoder().encode("now"), 0x00, 0x01, // exports
  0x0a, 0x20, 0x01, 0x1e, 0x00, // code: one body, no locals
  0x41, 0x03, 0x42, 0x01, 0x41, 0x00, 0x10, 0x00, 0x45, // call $clock(3, 1, 0), i32.eqz
  0x04, 0x7c, 0x41, 0x00, 0x29, 0x03, 0x00, 0xba, // if f64: i64.load, f64.convert_i64_u
  0x05, 0x44, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0xbf, // else f64.const -1
  0x0b, 0x0b, // end if, end function
]);

/**
 * This thread's CPU time in ms from WASI, or undefined where WASI or its thread clock is missing.
 * node:wasi prints an ExperimentalWarning when first loaded: that one warning is held back (the
 * module's API is stable enough for one clock call, and every worker thread would print it).
 * @returns {(() => number) | undefined}
 */
function wasiThreadClock() {
  const emitWarning = process.emitWarning;
  try {
    process.emitWarning = /** @type {typeof process.emitWarning} */ (
      (/** @type {string | Error} */ warning, /** @type {any[]} */ ...rest) => {
        if (!String(warning).startsWith("WASI is an experimental")) emitWarning.call(process, warning, ...rest);
      }
    );
    const { WASI } = createRequire(import.meta.url)("node:wasi");
    const wasi = new WASI({ version: "preview1" });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(THREAD_CLOCK_WASM), {
      wasi_snapshot_preview1: wasi.wasiImport,
    });
    wasi.initialize(instance);
    const now = /** @type {() => number} */ (instance.exports.now);
    if (!(now() >= 0)) return undefined;
    return () => now() / 1e6;
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** @type {(() => { user: number, system: number }) | undefined} */
const threadCpuUsage = typeof process.threadCpuUsage === "function" ? process.threadCpuUsage.bind(process) : undefined;

/** This thread's CPU time in ms, or undefined if it cannot be known here. */
export const threadCpuMs =
  wasiThreadClock() ??
  (threadCpuUsage === undefined
    ? () => undefined
    : () => {
        const { user, system } = threadCpuUsage();
        return (user + system) / 1000;
      });

/**
 * Seconds on CPU between two readings, or undefined without them.
 * @param {number | undefined} start
 * @param {number | undefined} end
 * @param {number} wall seconds
 */
function cpuBetween(start, end, wall) {
  if (start === undefined || end === undefined) return undefined;
  const seconds = (end - start) / 1000;
  return seconds >= 0 ? Math.min(seconds, wall) : undefined;
}

/**
 * @param {{ func: string, args: unknown[], measure?: boolean, port?: import("node:worker_threads").MessagePort }} task
 */
export default function runTask(task) {
  const fn = FUNCTIONS[/** @type {keyof typeof FUNCTIONS} */ (task.func)];
  if (fn === undefined) throw new Error(`unknown task function "${task.func}"`);
  const measure = task.measure === true;
  const cpuStart = measure ? threadCpuMs() : undefined;
  const start = performance.now();
  /** @type {number | undefined} */
  let secededAt;
  /** @type {number | undefined} */
  let cpuAtSecede;
  const context = {
    secede() {
      if (secededAt !== undefined) return;
      cpuAtSecede = measure ? threadCpuMs() : undefined;
      secededAt = performance.now();
      task.port?.postMessage("secede");
    },
  };
  try {
    const call = /** @type {(...args: unknown[]) => unknown} */ (fn);
    const value = SECEDING.has(task.func) ? call(...task.args, context) : call(...task.args);
    const end = performance.now();
    const cpuEnd = !measure ? undefined : secededAt === undefined ? threadCpuMs() : cpuAtSecede;
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
