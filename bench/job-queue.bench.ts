/**
 * What taskjourney adds per job to the job-queue example (examples/job-queue, issue 34): almost
 * free jobs (handlers that resolve at once), so that what is left is the queue's and the workers'
 * own per-job work and what telemetry adds to it. Modes, alternating, each run a fresh process:
 * telemetry off; metrics only (no traces at all); metrics + head sampling at --trace-ratio
 * (default 0.01, slow and failed journeys kept too). Telemetry as a user sets it up:
 * `taskjourney/sdk`'s startTelemetry for the queue (role scheduler) and one per worker, OTLP JSON
 * files into a temporary directory, the guide's instrument.ts and JOB_RUNTIME (the epoch clock
 * the queue needs, no AsyncLocalStorage; until 2026-12-05 AsyncLocalStorage was on, the
 * library's default, which the figures before then include). Each run computes --jobs jobs once to warm
 * up, then again measured: process CPU (user + system, one process holds the queue and both
 * workers) per job, and the per-round differences against off, median and quartiles.
 *
 *     npx tsx bench/job-queue.bench.ts [--runs 10] [--jobs 20000] [--trace-ratio 0.01] [--switch async-context]
 *
 * --switch turns a part of the set-up off or on in the telemetry modes (job-queue-process.ts:
 * `async-context` puts AsyncLocalStorage back on, as a queue whose handlers meter after an `await`
 * needs it; `no-carriers`; `no-traces`), comma-separated.
 *
 * Jobs come in groups of four: three `fetch` children and their `merge` parent, which reads their
 * results (the read-children activity). Two workers, two jobs in flight each.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { printSuite, report, type CaseResult, type SuiteResult } from "./harness.js";
import { JOB_QUEUE_SWITCHES, type JobQueueSwitch } from "./job-queue-process.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    jobs: { type: "string", default: "20000" },
    "trace-ratio": { type: "string", default: "0.01" },
    switch: { type: "string", default: "" },
    child: { type: "string" },
  },
});
const jobs = Math.max(4, Math.floor(Number(values.jobs) / 4) * 4);
const switches = new Set(values.switch.split(",").filter(Boolean) as JobQueueSwitch[]);
for (const name of switches)
  if (!JOB_QUEUE_SWITCHES.includes(name))
    throw new Error(`--switch: unknown switch "${name}"; the switches are ${JOB_QUEUE_SWITCHES.join(", ")}`);
type Mode = "off" | "metrics" | "on";

/** One run in this process (the child): warm-up round, measured round; prints the CPU as JSON. */
async function child(mode: Mode): Promise<void> {
  const { startJobQueue } = await import("./job-queue-process.js");
  const jobQueue = await startJobQueue(mode, {
    traceRatio: Number(values["trace-ratio"]),
    metricExportIntervalMillis: 10_000,
    switches,
  });
  await jobQueue.round(jobs);
  const before = process.cpuUsage();
  const started = performance.now();
  await jobQueue.round(jobs);
  const used = process.cpuUsage(before);
  const seconds = (performance.now() - started) / 1000;
  await jobQueue.stop();
  process.stdout.write(`${JSON.stringify({ cpuSeconds: (used.user + used.system) / 1e6, seconds })}\n`);
  // The workers' loops wait on take() forever: nothing else to do.
  process.exit(0);
}

function runOnce(mode: Mode): Promise<{ cpuSeconds: number; seconds: number; load: number }> {
  const file = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    let output = "";
    const proc = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        file,
        "--child",
        mode,
        "--jobs",
        String(jobs),
        "--trace-ratio",
        values["trace-ratio"],
        "--switch",
        values.switch,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    proc.stdout.on("data", (chunk: Buffer) => (output += chunk));
    proc.stderr.on("data", (chunk: Buffer) => (output += chunk));
    proc.once("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`run failed (exit ${code}):\n${output}`);
        const line = output.trim().split("\n").at(-1)!;
        resolve({ ...(JSON.parse(line) as { cpuSeconds: number; seconds: number }), load: os.loadavg()[0] });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
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

async function main(): Promise<void> {
  const runs = Math.max(3, Number(values.runs));
  const modes: Mode[] = ["off", "metrics", "on"];
  const samples: Record<Mode, Array<{ cpuSeconds: number; seconds: number; load: number }>> = {
    off: [],
    metrics: [],
    on: [],
  };
  console.log(`job queue: ${jobs} tiny jobs per round, ${runs} runs per mode (${modes.join(", ")}), alternating`);
  for (let round = 0; round < runs; round++) {
    // Rotate which mode goes first, so drift in the machine's load hits every mode alike.
    for (const mode of modes.map((_, index) => modes[(index + round) % modes.length])) {
      const sample = await runOnce(mode);
      samples[mode].push(sample);
      console.log(
        `  round ${round + 1} ${mode.padEnd(7)} ${sample.cpuSeconds.toFixed(3)} CPU s, ${sample.seconds.toFixed(3)} s (load ${sample.load.toFixed(1)})`,
      );
    }
  }
  const perJob = (mode: Mode) => samples[mode].map((sample) => (sample.cpuSeconds / jobs) * 1e6);
  console.log(`CPU per job, telemetry off: median ${quantile(perJob("off"), 0.5).toFixed(1)} µs`);
  for (const mode of ["metrics", "on"] as const) {
    const paired = perJob(mode).map((value, index) => value - perJob("off")[index]);
    console.log(
      `added per job (${mode === "on" ? `metrics + traces ${values["trace-ratio"]}` : "metrics only"}), per round: ` +
        `median ${quantile(paired, 0.5).toFixed(1)} µs, quartiles ${quantile(paired, 0.25).toFixed(1)}…${quantile(paired, 0.75).toFixed(1)}, ` +
        `range ${Math.min(...paired).toFixed(1)}…${Math.max(...paired).toFixed(1)}; CPU ratio ${(quantile(perJob(mode), 0.5) / quantile(perJob("off"), 0.5)).toFixed(2)}×`,
    );
  }
  const loads = modes.flatMap((mode) => samples[mode].map((sample) => sample.load));
  const notes: string[] = [];
  for (const mode of ["metrics", "on"] as const) {
    const paired = perJob(mode).map((value, index) => value - perJob("off")[index]);
    notes.push(
      `added per job (${mode}), per round: median ${quantile(paired, 0.5).toFixed(1)} µs, quartiles ${quantile(paired, 0.25).toFixed(1)}…${quantile(paired, 0.75).toFixed(1)}`,
    );
  }
  notes.push(
    `load average (1 min) at the runs' ends: median ${quantile(loads, 0.5).toFixed(1)}, range ${Math.min(...loads).toFixed(1)}…${Math.max(...loads).toFixed(1)}`,
  );
  // For `npm run bench`'s summary: CPU per job of each mode, as timings (ns).
  const cases: CaseResult[] = modes.map((mode) => {
    const list = perJob(mode).map((us) => us * 1000);
    return {
      name: `job queue, CPU per job, ${mode === "off" ? "telemetry off" : mode === "metrics" ? "metrics only" : `metrics + traces ${values["trace-ratio"]}`}`,
      p25: quantile(list, 0.25),
      median: quantile(list, 0.5),
      p75: quantile(list, 0.75),
      p99: quantile(list, 0.99),
      mean: list.reduce((sum, value) => sum + value, 0) / list.length,
      samples: list.length,
    };
  });
  const result: SuiteResult = {
    suite: "job-queue",
    runtime: `node ${process.version} ${process.arch}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
    cases,
    ratios: (["metrics", "on"] as const).map((mode) => ({
      name: `${mode} / off (CPU per job)`,
      value: quantile(perJob(mode), 0.5) / quantile(perJob("off"), 0.5),
    })),
    notes,
  };
  printSuite(result);
  report(result);
}

if (values.child !== undefined) await child(values.child as Mode);
else await main();
