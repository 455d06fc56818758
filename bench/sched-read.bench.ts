/**
 * What one thread CPU reading costs the cluster's worker threads (examples/cluster/tasks.mjs), in
 * CPU time of this process, user and system apart: reading /proc/thread-self/sched (the kernel
 * formats the whole file on every read: most of the cost, and invisible to valgrind's
 * instruction counts), parsing it the old way (a regular expression over a latin1 string and a
 * BigInt clock) and in place (tasks.mjs's schedField), and the cheaper but tick-granular
 * alternatives for comparison. Linux only; elsewhere it says so and exits.
 *
 *   npx tsx bench/sched-read.bench.ts [--readings 100000]
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { schedField } from "../examples/cluster/tasks.mjs";
import { table } from "./harness.js";

const { values } = parseArgs({ options: { readings: { type: "string", default: "100000" } } });
const N = Number(values.readings);
let sched: number;
try {
  sched = fs.openSync("/proc/thread-self/sched", "r");
} catch {
  console.log("sched-read: no /proc/thread-self/sched here; skipped");
  process.exit(0);
}
const schedstat = fs.openSync("/proc/thread-self/schedstat", "r");
const buffer = Buffer.alloc(1024);
const OLD_PATTERN =
  /se\.exec_start\s*:\s*([\d.]+)[\s\S]*?se\.sum_exec_runtime\s*:\s*([\d.]+)[\s\S]*?se\.nr_migrations\s*:\s*(\d+)/;
const LABELS = ["se.exec_start", "se.sum_exec_runtime", "se.nr_migrations"].map((label) => Buffer.from(label));
const origin = Number(process.hrtime.bigint()) / 1e6 - performance.now();
let sink = 0;

const CASES: Array<[string, () => void]> = [
  ["read /proc/thread-self/sched", () => (sink += fs.readSync(sched, buffer, 0, buffer.length, 0))],
  [
    "read + parse, regular expression and BigInt clock (before)",
    () => {
      const length = fs.readSync(sched, buffer, 0, buffer.length, 0);
      const now = Number(process.hrtime.bigint()) / 1e6;
      const match = OLD_PATTERN.exec(buffer.toString("latin1", 0, length))!;
      sink += Number(match[2]) + now - Number(match[1]) + Number(match[3]);
    },
  ],
  [
    "read + parse in place (tasks.mjs now)",
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
  ["read /proc/thread-self/schedstat (tick-granular)", () => (sink += fs.readSync(schedstat, buffer, 0, 256, 0))],
];
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
