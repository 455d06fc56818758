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
 *                                    [--warmup 1] [--attribute] [--perf DIR]
 *
 * --perf DIR runs the cluster under Linux perf (into DIR/<mode>-<n>; bench/cluster-perf.ts) and
 * splits every process's and thread's CPU over the measured round by part: where the real scheduler
 * and workers spend what telemetry adds, paired per round against off, and taskjourney's heaviest
 * functions in the workers. Sampling and V8's perf maps cost CPU in every mode alike; the CPU
 * figures of such a run are not comparable with a run without it.
 *
 * --attribute adds a third mode, metrics only (telemetry on, no traces at all), to tell the cost
 * of recording and metrics from that of traces.
 *
 * --attribute-parts (issue 34, "Where it goes") adds, beside off and the base mode (--parts-base
 * metrics, the default, or on), one mode per part of the telemetry with that part alone switched
 * off (examples/cluster/parts.ts, through TASKJOURNEY_CLUSTER_OFF), and one with all of them off:
 * a part's cost is the base minus the mode without it, paired per round. --parts a,b picks the
 * parts (implies --attribute-parts). Every process then also counts its garbage collections
 * (TASKJOURNEY_CLUSTER_GC=1, in every mode alike), reported per task beside the CPU.
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
import { PARTS, type Part } from "../examples/cluster/parts.js";
import { PERF_PARTS, PERF_ROLES, perfCommand, readRoundPerf, type PerfRole, type RoundPerf } from "./cluster-perf.js";

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
    "attribute-parts": { type: "boolean", default: false },
    parts: { type: "string" },
    "parts-base": { type: "string", default: "metrics" },
    length: { type: "string" },
    "memory-limit": { type: "string" },
    perf: { type: "string" },
    /** The suite's name in `npm run bench`'s summary (cluster-tiny.bench.ts gives its own). */
    suite: { type: "string", default: "cluster" },
  },
});
const runs = Math.max(3, Number(values.runs));
const warmup = Math.max(0, Number(values.warmup));

type Base = "off" | "on" | "metrics";
/** A base mode, or a base with parts of the telemetry switched off: "metrics-carriers", "metrics-all". */
type Mode = string;
const partNames = Object.keys(PARTS) as Part[];
const attributeParts = values["attribute-parts"] || values.parts !== undefined;
const partsBase = values["parts-base"] as Base;
if (partsBase !== "metrics" && partsBase !== "on")
  throw new Error(`--parts-base must be metrics or on, got "${partsBase}"`);
const chosenParts = (values.parts ?? partNames.join(",")).split(",").filter(Boolean) as Part[];
for (const part of chosenParts)
  if (!partNames.includes(part))
    throw new Error(`--parts: unknown part "${part}"; the parts are ${partNames.join(", ")}`);
/** Each mode's base and the parts it switches off. */
const MODE_PARTS = new Map<Mode, { base: Base; off: Part[] }>();
// Attributing parts without --attribute: off, the base and the part modes only (each run costs ~10 s).
const MODES: Mode[] = values.attribute ? ["off", "on", "metrics"] : attributeParts ? ["off"] : ["off", "on"];
if (attributeParts) {
  if (!MODES.includes(partsBase)) MODES.push(partsBase);
  for (const part of chosenParts) {
    MODES.push(`${partsBase}-${part}`);
    MODE_PARTS.set(`${partsBase}-${part}`, { base: partsBase, off: [part] });
  }
  if (chosenParts.length > 1) {
    MODES.push(`${partsBase}-all`);
    MODE_PARTS.set(`${partsBase}-all`, { base: partsBase, off: chosenParts });
  }
}
const BASE_LABELS: Record<Base, string> = {
  off: "cluster run, telemetry off",
  on: `cluster run, metrics + traces ${values["trace-ratio"]}`,
  metrics: "cluster run, metrics only (no traces)",
};
const label = (mode: Mode): string => {
  const parts = MODE_PARTS.get(mode);
  return parts === undefined
    ? BASE_LABELS[mode as Base]
    : `${BASE_LABELS[parts.base]} without ${parts.off.length > 1 ? "all parts" : parts.off[0]}`;
};
const baseOf = (mode: Mode): Base => MODE_PARTS.get(mode)?.base ?? (mode as Base);

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
  /** Garbage collections over the measured round (all processes, and the scheduler's), when counted. */
  gc?: { count: number; major: number; seconds: number; schedulerCount: number; schedulerSeconds: number };
  /** The machine's 1-minute load average as the run ended. */
  load: number;
  result: unknown;
  taskjourney: string;
  /** With --perf: the CPU of every thread by part over the measured round. */
  perf?: RoundPerf;
}

let perfRuns = 0;

function modeArgs(mode: Mode): string[] {
  const base = baseOf(mode);
  if (base === "off") return ["--no-telemetry"];
  return ["--trace-ratio", base === "metrics" ? "off" : values["trace-ratio"]];
}

function runOnce(mode: Mode): Promise<Sample> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-bench-"));
  const perfDir = values.perf === undefined ? undefined : path.resolve(values.perf, `${mode}-${++perfRuns}`);
  if (perfDir !== undefined) fs.mkdirSync(perfDir, { recursive: true });
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
    const env = { ...process.env };
    delete env.TASKJOURNEY_CLUSTER_OFF;
    const off = MODE_PARTS.get(mode)?.off;
    if (off !== undefined) env.TASKJOURNEY_CLUSTER_OFF = off.join(",");
    if (attributeParts) env.TASKJOURNEY_CLUSTER_GC = "1";
    if (perfDir !== undefined) {
      env.TASKJOURNEY_CLUSTER_MARKS = perfDir;
      env.TASKJOURNEY_WORKER_ARGV = `${env.TASKJOURNEY_WORKER_ARGV ?? ""} --perf-basic-prof`.trim();
    }
    const command = perfDir === undefined ? { command: process.execPath, args } : perfCommand(perfDir, args);
    const child = spawn(command.command, command.args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("exit", async (code) => {
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
          gc: summary.rounds[summary.rounds.length - 1].gc,
          load: os.loadavg()[0],
          result: summary.result,
          taskjourney: summary.taskjourney,
          ...(perfDir === undefined
            ? {}
            : {
                perf: await readRoundPerf(
                  perfDir,
                  summary.tasks,
                  warmup,
                  JSON.parse(fs.readFileSync(path.join(outDir, "pids.json"), "utf8")),
                ),
              }),
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

const samples: Record<Mode, Sample[]> = Object.fromEntries(MODES.map((mode) => [mode, []]));
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
      `  round ${round + 1} ${mode.padEnd(attributeParts ? 28 : 7)} run ${sample.runSeconds.toFixed(3)} s, ${sample.cpuSeconds.toFixed(3)} CPU s` +
        ` (scheduler ${sample.schedulerCpuSeconds.toFixed(3)}, load ${sample.load.toFixed(1)})` +
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
    name: label(mode),
    p25: quantile(times, 0.25) * 1e9,
    median: quantile(times, 0.5) * 1e9,
    p75: quantile(times, 0.75) * 1e9,
    p99: quantile(times, 0.99) * 1e9,
    mean: (times.reduce((sum, time) => sum + time, 0) / times.length) * 1e9,
    samples: times.length,
  };
});
const ratios: RatioResult[] = [];
/** The telemetry modes against off (the part modes are reported against their base below). */
const TELEMETRY_MODES = MODES.filter((mode) => mode !== "off" && !MODE_PARTS.has(mode));
for (const mode of TELEMETRY_MODES) {
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
const pad = attributeParts ? 28 : 7;
const notes = MODES.flatMap((mode) => [
  `per-run time (s) ${mode.padEnd(pad)}: ${seconds(mode, "runSeconds")
    .map((x) => x.toFixed(3))
    .join(" ")}`,
  `per-run CPU  (s) ${mode.padEnd(pad)}: ${seconds(mode, "cpuSeconds")
    .map((x) => x.toFixed(3))
    .join(" ")}`,
]);
const tasks = samples.off[0].tasks;
/** Per round, (a − b) per task in µs, for one field: the runs of a round ran side by side, so the machine's drift cancels. */
const paired = (a: Mode, b: Mode, field: Field): number[] => {
  const first = seconds(a, field);
  const second = seconds(b, field);
  return first.map((value, index) => ((value - second[index]) / tasks) * 1e6);
};
const spread = (list: number[]): string =>
  `median ${quantile(list, 0.5).toFixed(1)} µs per task, quartiles ${quantile(list, 0.25).toFixed(1)}…${quantile(list, 0.75).toFixed(1)}, ` +
  `range ${Math.min(...list).toFixed(1)}…${Math.max(...list).toFixed(1)}`;
for (const mode of TELEMETRY_MODES) {
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
    notes.push(
      `  per round, ${mode} − off, ${role}: ${spread(paired(mode, "off", field))}` +
        ` (off: ${((median("off", field) / tasks) * 1e6).toFixed(0)} µs per task)`,
    );
  }
}
if (attributeParts) {
  // What each part costs: the base mode minus the same mode with that part alone switched off.
  notes.push(`Parts (${partsBase} − ${partsBase} without the part, per round; CPU µs per task):`);
  for (const mode of MODES.filter((mode) => MODE_PARTS.has(mode))) {
    const off = MODE_PARTS.get(mode)!.off;
    const name = off.length > 1 ? "all parts" : off[0];
    notes.push(
      `  ${name}: all processes ${spread(paired(partsBase, mode, "cpuSeconds"))}; ` +
        `scheduler ${quantile(paired(partsBase, mode, "schedulerCpuSeconds"), 0.5).toFixed(1)}, ` +
        `workers + threads ${quantile(paired(partsBase, mode, "workerCpuSeconds"), 0.5).toFixed(1)}`,
    );
  }
  notes.push(
    `  (${MODES.filter((mode) => MODE_PARTS.has(mode))
      .map((mode) => `${mode}: ${label(mode)}`)
      .join("; ")})`,
  );
  // Garbage collection, counted in every process in every mode alike (pauses on the main threads).
  for (const mode of MODES) {
    const gc = samples[mode].map((sample) => sample.gc);
    if (gc.some((item) => item === undefined)) continue;
    const per = (pick: (item: NonNullable<Sample["gc"]>) => number, scale: number) =>
      quantile(
        gc.map((item) => (pick(item!) / tasks) * scale),
        0.5,
      );
    notes.push(
      `GC ${mode.padEnd(pad)}: ${per((item) => item.count, 1000).toFixed(2)} collections per 1,000 tasks ` +
        `(${per((item) => item.major, 1000).toFixed(2)} major) ` +
        `(scheduler ${per((item) => item.schedulerCount, 1000).toFixed(2)}), pauses ${per((item) => item.seconds, 1e6).toFixed(1)} µs per task ` +
        `(scheduler ${per((item) => item.schedulerSeconds, 1e6).toFixed(1)})`,
    );
  }
}
if (values.perf !== undefined) notes.push(...perfNotes());
notes.push(
  ...(MODES.includes("on")
    ? [
        `ratio of median wall times, start-up and final export included (on / off): ${(median("on", "wallSeconds") / median("off", "wallSeconds")).toFixed(3)}×`,
      ]
    : []),
  `taskjourney loaded from: ${[...new Set(MODES.filter((mode) => mode !== "off").flatMap((mode) => samples[mode].map((s) => s.taskjourney)))].join(", ")}`,
  `load average (1 min) at the runs' ends: median ${quantile(
    MODES.flatMap((mode) => samples[mode].map((sample) => sample.load)),
    0.5,
  ).toFixed(
    1,
  )}, range ${Math.min(...MODES.flatMap((mode) => samples[mode].map((sample) => sample.load))).toFixed(1)}…${Math.max(
    ...MODES.flatMap((mode) => samples[mode].map((sample) => sample.load)),
  ).toFixed(1)}`,
  "Run time: graph submitted → result fetched, at the scheduler. Differences smaller than the spread of each mode's runs are noise.",
  warmup > 0
    ? `Measured: the round after ${warmup} warm-up round(s) on the same processes; "cold": the first round of a fresh cluster.`
    : "Measured: the first round of a fresh cluster (--warmup 0).",
);
/**
 * The CPU by part (--perf), µs per task: each mode's medians by who ran it (the main threads, the
 * other threads), then each telemetry mode minus off paired per round, and taskjourney's heaviest
 * functions in the workers.
 */
function perfNotes(): string[] {
  const lines: string[] = ["CPU by part over the measured round (perf, every thread), µs per task:"];
  const header = `  ${"".padEnd(24)}${PERF_ROLES.map((role) => role.padStart(18)).join("")}${"all".padStart(10)}`;
  const cell = (list: number[]) => quantile(list, 0.5).toFixed(1);
  const table = (
    title: string,
    mode: Mode,
    value: (sample: Sample, index: number, role: PerfRole, part: string) => number,
  ) => {
    lines.push(title, header);
    const totals = (sample: Sample, index: number, role: PerfRole) =>
      PERF_PARTS.reduce((sum, part) => sum + value(sample, index, role, part), 0);
    for (const part of [...PERF_PARTS, "all"]) {
      const of = (role: PerfRole) =>
        samples[mode].map((sample, index) =>
          part === "all" ? totals(sample, index, role) : value(sample, index, role, part),
        );
      const all = samples[mode].map((sample, index) =>
        PERF_ROLES.reduce(
          (sum, role) => sum + (part === "all" ? totals(sample, index, role) : value(sample, index, role, part)),
          0,
        ),
      );
      lines.push(
        `  ${part.padEnd(24)}${PERF_ROLES.map((role) => cell(of(role)).padStart(18)).join("")}${cell(all).padStart(10)}` +
          `  (${quantile(all, 0.25).toFixed(1)}…${quantile(all, 0.75).toFixed(1)})`,
      );
    }
  };
  for (const mode of MODES) {
    table(` ${mode}:`, mode, (sample, _index, role, part) => sample.perf!.parts[role][part as never]);
  }
  for (const mode of MODES.filter((m) => m !== "off")) {
    table(
      ` ${mode} − off, paired per round:`,
      mode,
      (sample, index, role, part) =>
        sample.perf!.parts[role][part as never] - samples.off[index].perf!.parts[role][part as never],
    );
    const means = (of: Mode) => {
      const functions = new Map<string, number>();
      for (const sample of samples[of])
        for (const [fn, spent] of Object.entries(sample.perf!.functions))
          functions.set(fn, (functions.get(fn) ?? 0) + spent / samples[of].length);
      return functions;
    };
    const ours = means(mode);
    const offs = means("off");
    lines.push(`  taskjourney's heaviest functions in the workers (${mode}, mean of the rounds, µs per task):`);
    for (const [fn, spent] of [...ours]
      .filter(([fn]) => fn.startsWith("workers taskjourney: "))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20))
      lines.push(`    ${spent.toFixed(2).padStart(6)}  ${fn.slice("workers taskjourney: ".length)}`);
    // Everything else that grew: the host's, the packages' and the runtime's functions (taskjourney's own are above).
    const grew = [...new Set([...ours.keys(), ...offs.keys()])]
      .filter((fn) => !fn.includes(" taskjourney: "))
      .map((fn) => [fn, (ours.get(fn) ?? 0) - (offs.get(fn) ?? 0)] as const)
      .sort((a, b) => b[1] - a[1]);
    lines.push(`  other functions that grew most (${mode} − off, means of the rounds, µs per task):`);
    for (const [fn, spent] of grew.slice(0, 25)) lines.push(`    ${spent.toFixed(2).padStart(6)}  ${fn}`);
  }
  return lines;
}

const result: SuiteResult = {
  suite: values.suite,
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
