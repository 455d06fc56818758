/**
 * What telemetry costs the job-queue example per job, deterministically (issue 34): the process
 * of bench/job-queue.bench.ts (bench/job-queue-process.ts: the queue and two workers in one
 * process, `taskjourney/sdk` per queue and worker, OTLP JSON files, jobs that resolve at once),
 * run by bench/job-queue-driver.ts with its epoch clock fixed, for telemetry off, metrics only and
 * metrics + traces at 1%:
 *
 * - instructions per job: valgrind's callgrind counts the process (`node --predictable`, fixed
 *   hash and random seeds) with FEW and MANY rounds of --jobs jobs; (MANY − FEW) / (jobs of the
 *   rounds between) is the warm cost of a job, start-up, the first round's compiling and the
 *   shutdown's export cancelled;
 * - bytes allocated per job: the heap's used size before and after every round but the first,
 *   run natively in a young generation that no collection runs in (checked).
 *
 *   npx tsx bench/job-queue-instructions.ts [--jobs 4000] [--few 2] [--many 4] [--modes off,metrics,on]
 *                                           [--parts] [--functions 25] [--allocations] [--bytes-only]
 *                                           [--switch async-context,no-carriers,no-traces]
 *
 * --parts: also each difference (metrics − off, on − metrics) split into the parts of the runtime
 * that spent it (callgrind-parts.ts: compilers, GC, builtins, JIT code, …). --functions N: also
 * the N functions whose self instructions per job differ most in each difference, JIT-compiled
 * JavaScript named through V8's perf map (`node --perf-basic-prof`; callgrind sees its code at
 * anonymous addresses; the flag itself moves the counts by thousands a job, so take the totals
 * from a run without it). --allocations: the functions allocating most of each difference (V8's
 * sampling heap profiler, sampled: a guide). --switch turns parts off in every mode
 * (bench/job-queue-process.ts), to measure what each costs by its absence. Needs valgrind (Debian
 * package valgrind) but with --bytes-only / --allocations; each mode runs its two counts in
 * parallel.
 */
import { bundleDriver, runCaptured, type Captured } from "./counting.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { PARTS, partsOf, selfBySymbol } from "./callgrind-parts.js";
import type { JobQueueMode } from "./job-queue-process.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The driver bundled beside the benchmarks (its relative imports hold), one per run: runs may overlap. */
const DRIVER = path.join(ROOT, `bench/.job-queue-driver-${process.pid}.mjs`);
const SEMI_SPACE_MIB = 1024;
const JOB_QUEUE_MODES: readonly JobQueueMode[] = ["off", "metrics", "on"];

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "4000" },
    few: { type: "string", default: "2" },
    many: { type: "string", default: "4" },
    modes: { type: "string", default: JOB_QUEUE_MODES.join(",") },
    functions: { type: "string", default: "0" },
    parts: { type: "boolean", default: false },
    allocations: { type: "boolean", default: false },
    "bytes-only": { type: "boolean", default: false },
    switch: { type: "string", default: "" },
  },
});
const jobs = Math.max(4, Math.floor(Number(values.jobs) / 4) * 4);
const few = Number(values.few);
const many = Number(values.many);
const topFunctions = Number(values.functions);
const modes = values.modes.split(",") as JobQueueMode[];
if (!(few >= 2 && many > few) || !(topFunctions >= 0) || modes.some((mode) => !JOB_QUEUE_MODES.includes(mode))) {
  console.error("job-queue-instructions: --few ≥ 2 < --many, --functions a count, --modes of off,metrics,on");
  process.exit(2);
}

bundleDriver(path.join(ROOT, "bench/job-queue-driver.ts"), DRIVER);
process.on("exit", () => fs.rmSync(DRIVER, { force: true }));

function run(command: string, args: string[]): Promise<Captured> {
  return runCaptured(command, args, ROOT);
}

interface Counted {
  total: number;
  /** With --functions: self instructions by function, JIT code named through the perf map. */
  bySymbol?: Map<string, number>;
}

async function instructions(mode: JobQueueMode, rounds: number): Promise<Counted> {
  const named = topFunctions > 0;
  const directory =
    named || values.parts ? fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-jq-callgrind-")) : undefined;
  const { code, stderr } = await run("valgrind", [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    `--callgrind-out-file=${directory === undefined ? "/dev/null" : path.join(directory, "callgrind.%p")}`,
    process.execPath,
    "--predictable",
    "--predictable-gc-schedule",
    "--hash-seed=1",
    "--random-seed=1",
    ...(named ? ["--perf-basic-prof"] : []),
    DRIVER,
    mode,
    String(rounds),
    String(jobs),
    `--switch=${values.switch}`,
  ]);
  const collected = /Collected : (\d+)/.exec(stderr);
  if (code !== 0 || collected === null)
    throw new Error(`valgrind ${mode} ×${rounds} failed, exit ${code}:\n${stderr.slice(-2000)}`);
  if (directory === undefined) return { total: Number(collected[1]) };
  try {
    const file = fs.readdirSync(directory)[0];
    const pid = file.split(".").pop()!;
    const perfMap = named ? `/tmp/perf-${pid}.map` : undefined;
    const bySymbol = selfBySymbol(path.join(directory, file), perfMap);
    if (perfMap !== undefined) fs.rmSync(perfMap, { force: true });
    return { total: Number(collected[1]), bySymbol };
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** The driver run natively for `mode` over the counted rounds, with `--bytes` or `--allocations`: its last line, parsed. */
async function measured<T>(mode: JobQueueMode, nodeFlags: string[], what: "--bytes" | "--allocations"): Promise<T> {
  const { code, stdout, stderr } = await run(process.execPath, [
    "--predictable",
    "--random-seed=1",
    ...nodeFlags,
    DRIVER,
    mode,
    String(many - few + 1),
    String(jobs),
    `--switch=${values.switch}`,
    what,
  ]);
  if (code !== 0) throw new Error(`driver ${mode} ${what} failed, exit ${code}:\n${stderr.slice(-2000)}`);
  return JSON.parse(stdout.trim().split("\n").pop()!) as T;
}

async function bytes(mode: JobQueueMode): Promise<number> {
  const result = await measured<{ bytes: number; jobs: number; collections: number }>(
    mode,
    ["--expose-gc", `--min-semi-space-size=${SEMI_SPACE_MIB}`, `--max-semi-space-size=${SEMI_SPACE_MIB}`],
    "--bytes",
  );
  if (result.collections !== 0)
    throw new Error(`driver ${mode} --bytes: ${result.collections} collections while counting; use fewer --jobs`);
  return result.bytes / result.jobs;
}

function allocations(mode: JobQueueMode): Promise<{ jobs: number; bytes: Record<string, number> }> {
  return measured(mode, [], "--allocations");
}

/** The entries of `after − before` (per job) that differ most, largest first. */
function differences(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>, perJob: number) {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .map((name) => [name, ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / perJob] as const)
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
}

/** (MANY − FEW) by function, per job of the rounds between. */
function perJobBySymbol(fewCount: Counted, manyCount: Counted): Map<string, number> {
  const result = new Map<string, number>();
  const names = new Set([...fewCount.bySymbol!.keys(), ...manyCount.bySymbol!.keys()]);
  for (const name of names)
    result.set(name, (manyCount.bySymbol!.get(name) ?? 0) - (fewCount.bySymbol!.get(name) ?? 0));
  return result;
}

console.log(
  `job queue${values.switch === "" ? "" : ` (switched off: ${values.switch})`}: ${jobs} jobs a round; instructions (MANY ${many} − FEW ${few} rounds) and bytes per job; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
);
const rows: Array<{ mode: JobQueueMode; instructions?: number; bytes: number }> = [];
const bySymbol = new Map<JobQueueMode, Map<string, number>>();
const allocated = new Map<JobQueueMode, Map<string, number>>();
for (const mode of modes) {
  const row: (typeof rows)[number] = { mode, bytes: await bytes(mode) };
  if (values.allocations) {
    const result = await allocations(mode);
    allocated.set(mode, new Map(Object.entries(result.bytes).map(([name, value]) => [name, value / result.jobs])));
  } else if (!values["bytes-only"]) {
    const [fewCount, manyCount] = await Promise.all([instructions(mode, few), instructions(mode, many)]);
    const extraJobs = (many - few) * jobs;
    row.instructions = (manyCount.total - fewCount.total) / extraJobs;
    if (topFunctions > 0 || values.parts) {
      const perJob = perJobBySymbol(fewCount, manyCount);
      for (const [name, value] of perJob) perJob.set(name, value / extraJobs);
      bySymbol.set(mode, perJob);
    }
  }
  rows.push(row);
  console.log(
    `  ${mode.padEnd(8)} ${row.instructions === undefined ? "" : `${Math.round(row.instructions).toLocaleString("en")} instructions, `}${Math.round(row.bytes).toLocaleString("en")} B per job`,
  );
}
const off = rows.find((row) => row.mode === "off");
if (off !== undefined)
  for (const row of rows)
    if (row !== off)
      console.log(
        `  ${row.mode} − off: ${row.instructions === undefined ? "" : `${Math.round(row.instructions - off.instructions!).toLocaleString("en")} instructions, `}${Math.round(row.bytes - off.bytes).toLocaleString("en")} B per job`,
      );
const pairs: Array<[JobQueueMode, JobQueueMode]> = [
  ["off", "metrics"],
  ["metrics", "on"],
];
for (const [from, to] of pairs) {
  const a = bySymbol.get(from);
  const b = bySymbol.get(to);
  if (a !== undefined && b !== undefined) {
    const [partsA, partsB] = [partsOf(a), partsOf(b)];
    console.log(`\n${to} − ${from}, instructions per job by part of the runtime:`);
    for (const part of PARTS)
      console.log(
        `${Math.round(partsB[part] - partsA[part])
          .toLocaleString("en")
          .padStart(8)}  ${part}`,
      );
  }
  for (const [what, source, unit] of [
    ["self instructions", bySymbol, ""],
    ["bytes allocated (sampled)", allocated, " B"],
  ] as const) {
    const a = source.get(from);
    const b = source.get(to);
    if (a === undefined || b === undefined) continue;
    console.log(`\n${to} − ${from}, ${what} per job by function:`);
    if (what === "self instructions" && topFunctions === 0) continue;
    for (const [name, value] of differences(a, b, 1).slice(0, topFunctions || 25))
      console.log(`${value.toFixed(0).padStart(8)}${unit}  ${name.slice(0, 150)}`);
  }
}
