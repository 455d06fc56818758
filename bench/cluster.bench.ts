/**
 * Overhead of taskjourney on a real workload: the cluster example (scheduler + worker processes,
 * piscina threads, TCP transfers) runs the same graph with telemetry off and on — metrics on,
 * traces at ratio 0.01 — alternating, at least 5 times each. The measure is the run time the
 * scheduler reports (graph submitted → result in hand), so process start-up and the final export
 * are left out; the result is the ratio of the medians. Target: ≤ 1.01.
 *
 *     npx tsx bench/cluster.bench.ts [--runs 5] [--workload reduction] [--size 2000]
 *                                    [--workers 3] [--threads 2] [--trace-ratio 0.01]
 *
 * "Off" runs no taskjourney code at all in the workers (no instrument(), no ledgers, no thread CPU
 * readings); the scheduler then keeps its duration statistics itself with DurationStatistics, so
 * both modes schedule alike. The runs go through main.ts, each a fresh set of processes.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { printSuite, report, type SuiteResult } from "./harness.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = path.join(ROOT, "examples/cluster/main.ts");

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    workload: { type: "string", default: "reduction" },
    size: { type: "string", default: "2000" },
    workers: { type: "string", default: "3" },
    threads: { type: "string", default: "2" },
    "trace-ratio": { type: "string", default: "0.01" },
  },
});
const runs = Math.max(5, Number(values.runs));

interface Sample {
  runSeconds: number;
  wallSeconds: number;
  cpuSeconds: number;
  result: unknown;
  taskjourney: string;
}

function runOnce(telemetry: boolean): Promise<Sample> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-bench-"));
  const args = [
    "--import", "tsx", MAIN,
    "--workload", values.workload,
    "--size", values.size,
    "--workers", values.workers,
    "--threads", values.threads,
    "--trace-ratio", values["trace-ratio"],
    "--out", outDir,
    "--quiet",
    ...(telemetry ? [] : ["--no-telemetry"]),
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
        resolve({ runSeconds: summary.runSeconds, wallSeconds: summary.wallSeconds, cpuSeconds: summary.cpuSeconds, result: summary.result, taskjourney: summary.taskjourney });
      } catch (error) {
        reject(error);
      } finally {
        fs.rmSync(outDir, { recursive: true, force: true });
      }
    });
  });
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  return sorted[low] + (sorted[Math.ceil(position)] - sorted[low]) * (position - low);
}

const samples: Record<"off" | "on", Sample[]> = { off: [], on: [] };
console.log(`cluster overhead: ${values.workload} of ~${values.size} tasks on ${values.workers} workers × ${values.threads} threads, ${runs} runs per mode, alternating`);
for (let round = 0; round < runs; round++) {
  // Alternate which mode goes first, so drift in the machine's load hits both alike.
  const order: Array<"off" | "on"> = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
  for (const mode of order) {
    const sample = await runOnce(mode === "on");
    samples[mode].push(sample);
    console.log(`  round ${round + 1} ${mode.padEnd(3)} run ${sample.runSeconds.toFixed(3)} s, ${sample.cpuSeconds.toFixed(3)} CPU s (wall with start-up ${sample.wallSeconds.toFixed(2)} s)`);
  }
}
const results = new Set(Object.values(samples).flatMap((list) => list.map((sample) => JSON.stringify(sample.result))));
if (results.size !== 1) throw new Error(`runs disagree on the result: ${[...results].join(" vs ")}`);

const nanoseconds = (list: Sample[], q: number) => quantile(list.map((sample) => sample.runSeconds), q) * 1e9;
const caseOf = (name: string, list: Sample[]) => ({
  name,
  p25: nanoseconds(list, 0.25),
  median: nanoseconds(list, 0.5),
  p75: nanoseconds(list, 0.75),
  p99: nanoseconds(list, 0.99),
  mean: (list.reduce((sum, sample) => sum + sample.runSeconds, 0) / list.length) * 1e9,
  samples: list.length,
});
const off = caseOf("cluster run, telemetry off", samples.off);
const on = caseOf(`cluster run, metrics + traces ${values["trace-ratio"]}`, samples.on);
const ratio = on.median / off.median;
const median = (list: Sample[], field: "wallSeconds" | "cpuSeconds") => quantile(list.map((sample) => sample[field]), 0.5);
const wallRatio = median(samples.on, "wallSeconds") / median(samples.off, "wallSeconds");
const cpuRatio = median(samples.on, "cpuSeconds") / median(samples.off, "cpuSeconds");
const result: SuiteResult = {
  suite: "cluster",
  runtime: `node ${process.version} ${process.arch}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`,
  cases: [off, on],
  ratios: [
    { name: "telemetry on / off (run time)", value: ratio, max: 1.01, met: ratio <= 1.01 },
    { name: "telemetry on / off (CPU time, all processes)", value: cpuRatio },
  ],
  notes: [
    `per-run times (s) off: ${samples.off.map((s) => s.runSeconds.toFixed(3)).join(" ")}`,
    `per-run times (s) on:  ${samples.on.map((s) => s.runSeconds.toFixed(3)).join(" ")}`,
    `per-run CPU (s) off: ${samples.off.map((s) => s.cpuSeconds.toFixed(3)).join(" ")}`,
    `per-run CPU (s) on:  ${samples.on.map((s) => s.cpuSeconds.toFixed(3)).join(" ")}`,
    `ratio of median wall times, start-up and final export included: ${wallRatio.toFixed(3)}×`,
    `taskjourney loaded from: ${[...new Set(samples.on.map((s) => s.taskjourney))].join(", ")} (npm run build first to measure the built package)`,
    "The run time is the scheduler's: graph submitted → result fetched. Compare the ratio with the spread of each mode's runs: differences smaller than that spread are noise.",
  ],
};
printSuite(result);
report(result);
