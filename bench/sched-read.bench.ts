/**
 * What one thread CPU reading costs the cluster's worker threads, in CPU time of this process,
 * user and system apart: the reading examples/cluster/tasks.mjs takes (CLOCK_THREAD_CPUTIME_ID
 * through WASI's clock_time_get, exact), against what it read before (/proc/thread-self/sched,
 * parsed in place: exact too, but the kernel formats the whole file on every read, which is most
 * of its cost and invisible to valgrind's instruction counts) and the cheaper-looking but
 * tick-granular alternatives. The /proc rows are Linux only and left out elsewhere.
 *
 *   npx tsx bench/sched-read.bench.ts [--readings 100000]
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { threadCpuMs } from "../examples/cluster/tasks.mjs";
import { table } from "./harness.js";

const { values } = parseArgs({ options: { readings: { type: "string", default: "100000" } } });
const N = Number(values.readings);
let sink = 0;

/** The number after `label` and its colon in the first `length` bytes (how tasks.mjs read the sched file). */
function schedField(bytes: Buffer, length: number, label: Buffer): number {
  let at = bytes.indexOf(label);
  if (at === -1 || at >= length) return NaN;
  at = bytes.indexOf(58 /* ":" */, at + label.length);
  if (at === -1 || at >= length) return NaN;
  at++;
  while (at < length && bytes[at] === 32) at++;
  let value = 0;
  let scale = 0;
  for (; at < length; at++) {
    const byte = bytes[at];
    if (byte === 46 /* "." */ && scale === 0) scale = 1;
    else if (byte >= 48 && byte <= 57) {
      value = value * 10 + (byte - 48);
      if (scale !== 0) scale *= 10;
    } else break;
  }
  return scale === 0 ? value : value / scale;
}

const CASES: Array<[string, () => void]> = [
  ["WASI clock_time_get(THREAD_CPUTIME) (tasks.mjs now)", () => (sink += threadCpuMs() ?? 0)],
];
const open = (file: string) => {
  try {
    return fs.openSync(file, "r");
  } catch {
    return undefined;
  }
};
const sched = open("/proc/thread-self/sched");
const schedstat = open("/proc/thread-self/schedstat");
const buffer = Buffer.alloc(1024);
if (sched !== undefined) {
  const LABELS = ["se.exec_start", "se.sum_exec_runtime", "se.nr_migrations"].map((label) => Buffer.from(label));
  const origin = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  CASES.push(
    ["read /proc/thread-self/sched", () => (sink += fs.readSync(sched, buffer, 0, buffer.length, 0))],
    [
      "read + parse /proc/thread-self/sched in place (tasks.mjs before)",
      () => {
        const length = fs.readSync(sched, buffer, 0, buffer.length, 0);
        const now = origin + performance.now();
        sink +=
          schedField(buffer, length, LABELS[1]) +
          now -
          schedField(buffer, length, LABELS[0]) +
          schedField(buffer, length, LABELS[2]);
      },
    ],
  );
}
if (schedstat !== undefined)
  CASES.push([
    "read /proc/thread-self/schedstat (tick-granular)",
    () => (sink += fs.readSync(schedstat, buffer, 0, 256, 0)),
  ]);
const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
if (threadCpuUsage !== undefined)
  CASES.push(["process.threadCpuUsage() (tick-granular)", () => (sink += threadCpuUsage.call(process).user)]);

const rows: string[][] = [];
for (const [name, read] of CASES) {
  for (let i = 0; i < 1000; i++) read(); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) read();
  const used = process.cpuUsage(before);
  rows.push([
    name,
    (used.user / N).toFixed(2),
    (used.system / N).toFixed(2),
    ((used.user + used.system) / N).toFixed(2),
  ]);
}
console.log(table(["one reading", "user µs", "system µs", "CPU µs"], rows));
console.log(`node ${process.version}, ${N.toLocaleString("en-US")} readings each (checksum ${sink > 0 ? "ok" : sink})`);
