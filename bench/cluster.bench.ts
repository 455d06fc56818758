/**
 * Overhead of taskjourney on a real workload: the cluster example (scheduler + worker processes,
 * piscina threads, TCP transfers) runs the same graph with telemetry off and on — metrics on,
 * traces at ratio 0.01 — alternating, 10 times each by default (--runs). The measure is the run time the
 * scheduler reports (graph submitted → result in hand), so process start-up and the final export
 * are left out; the result is the ratio of the medians. Target: ≤ 1.01. The CPU time of all the
 * processes over the run (threads included) is reported beside it: on a busy machine it is the
 * steadier of the two.
 *
 * Each cluster first computes the workload `--warmup` times (default 1) under keys of its own, then
 * the measured round: a scheduler runs for hours, so what it pays per task is the warm cost. The
 * first round (a cold cluster: V8 still compiling the code on the task path, taskjourney's and the
 * cluster's own) is reported beside it as "cold". --warmup 0 measures the cold round alone.
 *
 *     npx tsx bench/cluster.bench.ts [--runs 10] [--workload reduction] [--size 2000]
 *                                    [--workers 3] [--threads 2] [--trace-ratio 0.01]
 *                                    [--warmup 1] [--attribute]
 *
 * --attribute adds a third mode, metrics only (telemetry on, no traces at all), to tell the cost
 * of recording and metrics from that of traces.
 *
 * "Off" runs no taskjourney code at all in the workers (no instrument(), no ledgers, no thread CPU
 * readings); the scheduler then keeps its duration statistics itself with DurationStatistics, so
 * both modes schedule alike. Each run is a fresh set of processes started through main.ts.
 * Run `npm run build` first: the cluster loads the built dist/ when it is up to date (the output
 * says which it used).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { printSuite, report, type CaseResult, type RatioResult, type SuiteResult } from "./harness.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = path.join(ROOT, "examples/cluster/main.ts");

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    workload: { type: "string", default: "reduction" },
    size: { type: "string", default: "2000" },
    workers: { type: "string", default: "3" },
    threads: { type: "string", default: "2" },
    "trace-ratio": { type: "string", default: "0.01" },
    warmup: { type: "string", default: "1" },
    attribute: { type: "boolean", default: false },
    length: { type: "string" },
    "memory-limit": { type: "string" },
  },
});
const runs = Math.max(3, Number(values.runs));
const warmup = Math.max(0, Number(values.warmup));

type Mode = "off" | "on" | "metrics";
const MODES: Mode[] = values.attribute ? ["off", "on", "metrics"] : ["off", "on"];
const LABELS: Record<Mode, string> = {
  off: "cluster run, telemetry off",
  on: `cluster run, metrics + traces ${values["trace-ratio"]}`,
  metrics: "cluster run, metrics only (no traces)",
};

interface Sample {
  runSeconds: number;
  wallSeconds: number;
  cpuSeconds: number;
  /** The scheduler process's part of cpuSeconds (the rest: the worker processes and their threads). */
  schedulerCpuSeconds: number;
  /** The first round's run and CPU seconds: the cold cluster (the measured round itself when --warmup 0). */
  coldRunSeconds: number;
  coldCpuSeconds: number;
  /** Tasks in one round's graph. */
  tasks: number;
  result: unknown;
  taskjourney: string;
}

function modeArgs(mode: Mode): string[] {
  if (mode === "off") return ["--no-telemetry"];
  return ["--trace-ratio", mode === "metrics" ? "off" : values["trace-ratio"]];
}

function runOnce(mode: Mode): Promise<Sample> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-bench-"));
  const args = [
    "--import",
    "tsx",
    MAIN,
    "--workload",
    values.workload,
    "--size",
    values.size,
    "--workers",
    values.workers,
    "--threads",
    values.threads,
    "--out",
    outDir,
    "--quiet",
    "--warmup",
    String(warmup),
    ...(values.length === undefined ? [] : ["--length", values.length]),
    ...(values["memory-limit"] === undefined ? [] : ["--memory-limit", values["memory-limit"]]),
    ...modeArgs(mode),
  ];
  return new Promise((resolve, reject) => {
    let output = "";
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`run failed (exit ${code}):\n${output}`);
        const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8"));
        const cold = summary.rounds[0];
        resolve({
          runSeconds: summary.runSeconds,
          wallSeconds: summary.wallSeconds,
          cpuSeconds: summary.cpuSeconds,
          schedulerCpuSeconds: summary.schedulerCpuSeconds,
          coldRunSeconds: cold.runSeconds,
          coldCpuSeconds: cold.cpuSeconds,
          tasks: summary.tasks,
          result: summary.result,
          taskjourney: summary.taskjourney,
        });
      } catch (error) {
        reject(error);
      } finally {
        fs.rmSync(outDir, { recursive: true, force: true });
      }
    });
  });
}

function quantile(list: number[], q: number): number {
  const sorted = [...list].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  return sorted[low] + (sorted[Math.ceil(position)] - sorted[low]) * (position - low);
}

const samples: Record<Mode, Sample[]> = { off: [], on: [], metrics: [] };
console.log(
  `cluster overhead: ${values.workload} of ~${values.size} tasks on ${values.workers} workers × ${values.threads} threads, ` +
    `${runs} runs per mode (${MODES.join(", ")}), alternating`,
);
for (let round = 0; round < runs; round++) {
  // Rotate which mode goes first, so drift in the machine's load hits every mode alike.
  const order = MODES.map((_, index) => MODES[(index + round) % MODES.length]);
  for (const mode of order) {
    const sample = await runOnce(mode);
    samples[mode].push(sample);
    console.log(
      `  round ${round + 1} ${mode.padEnd(7)} run ${sample.runSeconds.toFixed(3)} s, ${sample.cpuSeconds.toFixed(3)} CPU s` +
        (warmup > 0 ? `; cold ${sample.coldRunSeconds.toFixed(3)} s, ${sample.coldCpuSeconds.toFixed(3)} CPU s` : "") +
        ` (wall with start-up ${sample.wallSeconds.toFixed(2)} s)`,
    );
  }
}
const results = new Set(MODES.flatMap((mode) => samples[mode].map((sample) => JSON.stringify(sample.result))));
if (results.size !== 1) throw new Error(`runs disagree on the result: ${[...results].join(" vs ")}`);

type Field =
  | "runSeconds"
  | "cpuSeconds"
  | "schedulerCpuSeconds"
  | "workerCpuSeconds"
  | "wallSeconds"
  | "coldRunSeconds"
  | "coldCpuSeconds";
const seconds = (mode: Mode, field: Field) =>
  samples[mode].map((sample) =>
    field === "workerCpuSeconds" ? sample.cpuSeconds - sample.schedulerCpuSeconds : sample[field],
  );
const median = (mode: Mode, field: Field) => quantile(seconds(mode, field), 0.5);
const cases: CaseResult[] = MODES.map((mode) => {
  const times = seconds(mode, "runSeconds");
  return {
    name: LABELS[mode],
    p25: quantile(times, 0.25) * 1e9,
    median: quantile(times, 0.5) * 1e9,
    p75: quantile(times, 0.75) * 1e9,
    p99: quantile(times, 0.99) * 1e9,
    mean: (times.reduce((sum, time) => sum + time, 0) / times.length) * 1e9,
    samples: times.length,
  };
});
const ratios: RatioResult[] = [];
for (const mode of MODES.filter((mode) => mode !== "off")) {
  const run = median(mode, "runSeconds") / median("off", "runSeconds");
  const cpu = median(mode, "cpuSeconds") / median("off", "cpuSeconds");
  ratios.push({
    name: `${mode} / off (run time)`,
    value: run,
    ...(mode === "on" ? { max: 1.01, met: run <= 1.01 } : {}),
  });
  ratios.push({ name: `${mode} / off (CPU time, all processes)`, value: cpu });
  if (warmup > 0) {
    ratios.push({
      name: `${mode} / off, cold cluster (run time)`,
      value: median(mode, "coldRunSeconds") / median("off", "coldRunSeconds"),
    });
    ratios.push({
      name: `${mode} / off, cold cluster (CPU time)`,
      value: median(mode, "coldCpuSeconds") / median("off", "coldCpuSeconds"),
    });
  }
}
const notes = MODES.flatMap((mode) => [
  `per-run time (s) ${mode.padEnd(7)}: ${seconds(mode, "runSeconds")
    .map((x) => x.toFixed(3))
    .join(" ")}`,
  `per-run CPU  (s) ${mode.padEnd(7)}: ${seconds(mode, "cpuSeconds")
    .map((x) => x.toFixed(3))
    .join(" ")}`,
]);
const tasks = samples.off[0].tasks;
for (const mode of MODES.filter((mode) => mode !== "off")) {
  // The figure that carries over to other workloads: what telemetry adds per task, whatever the task costs.
  const added = (field: Field) => ((median(mode, field) - median("off", field)) / tasks) * 1e6;
  notes.push(
    `CPU added per task (${mode}, all processes): ${added("cpuSeconds").toFixed(0)} µs warm` +
      (warmup > 0 ? `, ${added("coldCpuSeconds").toFixed(0)} µs cold` : "") +
      ` (telemetry off: ${((median("off", "cpuSeconds") / tasks) * 1e6).toFixed(0)} µs per task)`,
  );
  // The spread: the runs of one round ran side by side in time, so their difference cancels the
  // machine's drift; the quartiles of those per-round differences say how far to trust the median.
  for (const [field, role] of [
    ["cpuSeconds", "all processes"],
    ["schedulerCpuSeconds", "scheduler"],
    ["workerCpuSeconds", "workers + threads"],
  ] as const) {
    const on = seconds(mode, field);
    const off = seconds("off", field);
    const paired = on.map((value, index) => ((value - off[index]) / tasks) * 1e6);
    notes.push(
      `  per round, ${mode} − off, ${role}: median ${quantile(paired, 0.5).toFixed(1)} µs per task, ` +
        `quartiles ${quantile(paired, 0.25).toFixed(1)}…${quantile(paired, 0.75).toFixed(1)}, range ${Math.min(...paired).toFixed(1)}…${Math.max(...paired).toFixed(1)}` +
        ` (off: ${((quantile(off, 0.5) / tasks) * 1e6).toFixed(0)} µs per task)`,
    );
  }
}
notes.push(
  `ratio of median wall times, start-up and final export included (on / off): ${(median("on", "wallSeconds") / median("off", "wallSeconds")).toFixed(3)}×`,
  `taskjourney loaded from: ${[...new Set(MODES.filter((mode) => mode !== "off").flatMap((mode) => samples[mode].map((s) => s.taskjourney)))].join(", ")}`,
  "Run time: graph submitted → result fetched, at the scheduler. Differences smaller than the spread of each mode's runs are noise.",
  warmup > 0
    ? `Measured: the round after ${warmup} warm-up round(s) on the same processes; "cold": the first round of a fresh cluster.`
    : "Measured: the first round of a fresh cluster (--warmup 0).",
);
const result: SuiteResult = {
  suite: "cluster",
  runtime: `node ${process.version} ${process.arch}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
  cases,
  ratios,
  notes,
};
printSuite(result);
report(result);
