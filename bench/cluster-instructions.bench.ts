/**
 * What telemetry costs one cluster worker per task, deterministically: instructions counted by
 * valgrind (`--tool=callgrind`, `node --predictable`) while bench/cluster-replay.ts replays a
 * stimulus recorded from a real worker of the reduction, with telemetry off, on (metrics + traces
 * at 1%, as the cluster runs) and metrics only. Each mode runs with FEW and MANY repetitions of
 * the stimulus; (MANY − FEW) / (extra tasks) cancels start-up, warm-up and the final export, so
 * the figure is the warm cost per task, and "on − off" is what telemetry adds to it. Instruction
 * counts are steadier than CPU times, but not exact here: on a loaded machine two runs of the same
 * code (the first four, without --predictable-gc-schedule, which was added after them; 166 tasks,
 * 1 and 2 repetitions) differed by up to 157k instructions per task, about 12%, most likely V8's
 * heap sizing following the wall clock. Use more tasks and repetitions (--lines 0 for the whole
 * stimulus, --few 2 --many 6) on a quiet machine before trusting differences of a few percent.
 *
 *   npx tsx bench/cluster-instructions.bench.ts [--stimulus file.jsonl] [--lines 400] [--few 1] [--many 2]
 *                                               [--modes off,on,metrics]
 *
 * Without --stimulus it first records one: the cluster computes the reduction (--size 2000, one
 * round, telemetry on) with TASKJOURNEY_STIMULUS set, and the worker that computed most tasks is
 * replayed. Keep a stimulus (--keep) to compare two versions of the code on the same one.
 * --lines keeps only the stimulus's first lines (a prefix of the real sequence: what it started
 * still finishes), so that valgrind takes minutes rather than an hour on a loaded machine.
 * Needs valgrind; each mode runs its two counts in parallel.
 *
 * --role scheduler counts the scheduler instead: bench/scheduler-replay.ts, the example's own
 * Scheduler computing the reduction (--size) against fake workers that answer at once, FEW and
 * MANY rounds under fresh keys; no stimulus is needed.
 *
 * --cache-sim also simulates the caches (callgrind --cache-sim=yes: L1 32 KiB 8-way, and the
 * core's own 1 MiB L2 as the last level, the L3 a 2-core VM shares with its host being no cache
 * to count on) and reports the misses per task and an estimated cycle count, Ir + 10 × L1 misses
 * + 40 × L2 misses (kcachegrind's estimate with an L2-sized last level). On the cluster,
 * taskjourney's calls run between the tasks' own work, which has the caches full of arrays: a
 * journey that takes 2 µs in a loop took 7 µs between 2 MB of other memory traffic and 20 µs
 * between 8 MB. Instruction counts alone do not see that; misses do. Slower (about 2×).
 * The worker replay is warm only after a few repetitions of the whole stimulus (V8 is still
 * compiling taskjourney's less frequent paths after the first): `--lines 0 --few 4 --many 8`.
 *
 * --parts also splits each mode's instructions per task into the parts of the runtime that spent
 * them (callgrind-parts.ts: V8's optimizing compilers, parsing and bytecode, garbage collection,
 * the write barrier, builtins, JIT-compiled JavaScript, the rest of V8, Node.js, malloc, other), by
 * the symbol of each function's self instructions. With --few 1 --many 2 that is the second
 * repetition, what the cluster bench measures after its warm-up round; with --few 12 --many 16,
 * V8 has settled. --functions N (implies --parts) lists the N functions whose self instructions
 * per task telemetry changes most (on − off, by symbol; all JIT-compiled code as one line, its
 * addresses differing from run to run).
 *
 * --allocations (worker only) counts bytes allocated instead, without valgrind: each mode replays
 * MANY repetitions natively with V8's sampling heap profiler on from repetition FEW + 1, and the
 * bytes per task of those repetitions are reported, with the functions that allocate most of what
 * telemetry adds (on − off, by function). Allocation is what garbage collection costs follow, and
 * it is nearly the same from run to run (sampled every 512 bytes, at fixed intervals). A second
 * run per mode counts every byte instead (the heap's growth between collections, by V8's
 * GCProfiler: no sampling); both still move by a few hundred bytes a task between runs, as the
 * replay's own allocations do (V8 optimizes at different moments, timers fire in other places).
 *
 * --profile (worker only) runs V8's CPU profiler instead, without valgrind: RUNS alternating
 * native runs of each mode, profiled from repetition FEW + 1 to MANY, and reports the µs per task
 * of each part of the process (taskjourney's own code, the OpenTelemetry SDK, the thread CPU
 * clock, the host, garbage collection: bench/profile-parts.ts), the median run and the range, then
 * taskjourney's functions that cost most. taskjourney's part varies by a few µs a task between
 * runs, where the process's CPU varies by hundreds: the measure to judge a change to the recorder by.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildSync } from "esbuild";
import { median, table } from "./harness.js";
import { PARTS, partOf, partsOf, selfBySymbol, JIT_CODE, type Part } from "./callgrind-parts.js";
import {
  MODES,
  computeTasks,
  readStimulus,
  type Allocations,
  type HeapBytes,
  type ReplayMode,
} from "./cluster-replay.js";
import { replayGc, type ReplayGc } from "./replay-gc.js";
import { PROFILE_PARTS, type ProfilePart, type ProfileSplit } from "./profile-parts.js";
import { buildGraph } from "../examples/cluster/workloads.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({
  options: {
    stimulus: { type: "string" },
    keep: { type: "string" },
    few: { type: "string", default: "1" },
    many: { type: "string", default: "2" },
    size: { type: "string", default: "2000" },
    /** The stimulus's first lines only; 0: all of it. */
    lines: { type: "string", default: "400" },
    modes: { type: "string", default: "off,on,metrics" },
    role: { type: "string", default: "worker" },
    "cache-sim": { type: "boolean", default: false },
    allocations: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    gc: { type: "boolean", default: false },
    /** --gc: alternating native runs per mode. */
    runs: { type: "string", default: "3" },
    parts: { type: "boolean", default: false },
    /** With a count N: the N functions whose self instructions per task telemetry changes most. */
    functions: { type: "string", default: "0" },
  },
});
const countAllocations = values.allocations;
const countGc = values.gc;
const profileCpu = values.profile;
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`cluster-instructions: --runs must be a count, got ${values.runs}`);
  process.exit(2);
}
const linesReplayed = Number(values.lines) > 0 ? `first ${values.lines} lines` : "all lines";
const cacheSim = values["cache-sim"];
const topFunctions = Number(values.functions);
if (!Number.isInteger(topFunctions) || topFunctions < 0) {
  console.error(`cluster-instructions: --functions must be a count, got ${values.functions}`);
  process.exit(2);
}
const byPart = values.parts || topFunctions > 0;
/** callgrind's events with --cache-sim=yes, in the order of its "Collected" line. */
const EVENTS = ["Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"] as const;
type Counts = Record<(typeof EVENTS)[number], number>;
/** Estimated cycles: instructions, 10 per L1 miss, 40 per last-level (L2) miss. */
function cycles(counts: Counts): number {
  return counts.Ir + 10 * (counts.I1mr + counts.D1mr + counts.D1mw) + 40 * (counts.ILmr + counts.DLmr + counts.DLmw);
}
const few = Number(values.few);
const many = Number(values.many);

if (!countAllocations && !countGc && !profileCpu && spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("cluster-instructions: valgrind is not installed (Debian package valgrind); skipped");
  process.exit(0);
}

/** Records a stimulus from a real cluster run; returns the file of the busiest worker. */
function record(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-stimulus-"));
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-stimulus-out-"));
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "examples/cluster/main.ts", "--size", values.size, "--out", out, "--quiet"],
    {
      cwd: ROOT,
      env: { ...process.env, TASKJOURNEY_STIMULUS: directory },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  fs.rmSync(out, { recursive: true, force: true });
  if (run.status !== 0) throw new Error(`recording the stimulus failed (exit ${run.status})`);
  const files = fs.readdirSync(directory).map((file) => path.join(directory, file));
  const busiest = files.sort((a, b) => computeTasks(readStimulus(b)) - computeTasks(readStimulus(a)))[0];
  if (values.keep !== undefined) fs.copyFileSync(busiest, values.keep);
  return busiest;
}

const role = values.role;
if (role !== "worker" && role !== "scheduler") throw new Error(`--role: worker or scheduler, not ${role}`);
if (countAllocations && role !== "worker") throw new Error("--allocations: the worker replay only");
if (countGc && role !== "worker") throw new Error("--gc: the worker replay only");
if (profileCpu && role !== "worker") throw new Error("--profile: the worker replay only");
const modes = values.modes.split(",") as ReplayMode[];
if (!modes.every((mode) => (MODES as readonly string[]).includes(mode)) || !modes.includes("off"))
  throw new Error(`--modes: some of ${MODES.join(", ")}, off among them`);
const recorded = role === "scheduler" ? undefined : (values.stimulus ?? record());
// The prefix that is replayed, in a file of its own for the driver.
const stimulus = path.join(os.tmpdir(), `taskjourney-stimulus-${process.pid}.jsonl`);
if (recorded !== undefined) {
  fs.writeFileSync(
    stimulus,
    fs
      .readFileSync(recorded, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .slice(0, Number(values.lines) > 0 ? Number(values.lines) : undefined)
      .join("\n") + "\n",
  );
  process.on("exit", () => fs.rmSync(stimulus, { force: true }));
}
// The scheduler computes the reduction's graph: its task count is the graph's.
const tasks =
  recorded !== undefined
    ? computeTasks(readStimulus(stimulus))
    : buildGraph("reduction", { size: Number(values.size), seed: 1 }).tasks.length;
// Bundled to plain JavaScript beside its source (tsx's loader under valgrind made counts vary).
const replayer = role === "scheduler" ? "scheduler-replay" : "cluster-replay";
const driver = path.join(ROOT, "bench", `.${replayer}.mjs`);
buildSync({
  entryPoints: [path.join(ROOT, "bench", `${replayer}.ts`)],
  bundle: true,
  platform: "node",
  format: "esm",
  packages: "external",
  outfile: driver,
  logLevel: "error",
});
process.on("exit", () => fs.rmSync(driver, { force: true }));

/** What one callgrind run counted: its totals, and with --parts its self instructions by function. */
interface Counted {
  counts: Counts;
  bySymbol?: Map<string, number>;
}

function instructions(mode: ReplayMode, repetitions: number): Promise<Counted> {
  const outFile = byPart
    ? path.join(os.tmpdir(), `taskjourney-callgrind-${process.pid}-${mode}-${repetitions}.out`)
    : "/dev/null";
  const args = [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    `--callgrind-out-file=${outFile}`,
    ...(cacheSim ? ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64"] : []),
    process.execPath,
    "--predictable",
    "--predictable-gc-schedule",
    // The same string hashes and Math.random in every run: counts of one build differ by < 0.5%.
    "--hash-seed=1",
    "--random-seed=1",
    driver,
    ...(role === "scheduler" ? [mode, String(repetitions), values.size] : [stimulus, mode, String(repetitions)]),
  ];
  return new Promise((done, fail) => {
    let output = "";
    const child = spawn("valgrind", args, {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, TASKJOURNEY_REPLAY_QUIET: "1" },
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("exit", (code) => {
      const collected = /Collected : ([\d ]+)/.exec(output);
      if (code !== 0 || collected === null) {
        fail(new Error(`valgrind ${mode} ×${repetitions} failed (exit ${code}):\n${output.slice(-2000)}`));
        return;
      }
      const numbers = collected[1].trim().split(/\s+/).map(Number);
      const counts = Object.fromEntries(EVENTS.map((event, index) => [event, numbers[index] ?? 0])) as Counts;
      if (!byPart) {
        done({ counts });
        return;
      }
      try {
        done({ counts, bySymbol: selfBySymbol(outFile) });
      } catch (error) {
        fail(error);
      } finally {
        fs.rmSync(outFile, { force: true });
      }
    });
  });
}

if (countAllocations) {
  await reportAllocations();
  process.exit(0);
}
if (countGc) {
  reportGc();
  process.exit(0);
}
if (profileCpu) {
  reportProfile();
  process.exit(0);
}

/** --profile: RUNS alternating native runs per mode under V8's CPU profiler, split by part. */
function reportProfile(): void {
  console.log(
    `cluster worker replay, CPU profile: ${recorded} (${linesReplayed}), ${tasks} compute tasks per repetition, repetitions ${few + 1}–${many} of ${runs} alternating runs per mode`,
  );
  const measured = new Map<ReplayMode, ProfileSplit[]>(modes.map((mode) => [mode, []]));
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) {
      const replayed = spawnSync(process.execPath, [driver, stimulus, mode, String(many)], {
        cwd: ROOT,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, TASKJOURNEY_REPLAY_PROFILE: String(few + 1) },
      });
      if (replayed.status !== 0)
        throw new Error(`replay ${mode} failed (exit ${replayed.status}):\n${replayed.stderr.slice(-2000)}`);
      const { profile } = JSON.parse(replayed.stdout.trim().split("\n").pop()!) as { profile: ProfileSplit };
      measured.get(mode)!.push(profile);
    }
  }
  const fixed = (value: number) => value.toFixed(1);
  const of = (mode: ReplayMode, part: ProfilePart) => measured.get(mode)!.map((split) => split.perTask[part]);
  const total = (split: ProfileSplit) => PROFILE_PARTS.reduce((sum, part) => sum + split.perTask[part], 0);
  const others = modes.filter((mode) => mode !== "off");
  const cell = (values: number[]) =>
    runs === 1
      ? fixed(values[0])
      : `${fixed(median(values))} (${fixed(Math.min(...values))}–${fixed(Math.max(...values))})`;
  console.log("");
  console.log(
    table(
      ["µs per task (median run, range)", ...modes, ...others.map((mode) => `${mode} − off`)],
      [
        ...PROFILE_PARTS.map((part) => [
          part,
          ...modes.map((mode) => cell(of(mode, part))),
          ...others.map((mode) => fixed(median(of(mode, part)) - median(of("off", part)))),
        ]),
        [
          "all",
          ...modes.map((mode) => cell(measured.get(mode)!.map(total))),
          ...others.map((mode) =>
            fixed(median(measured.get(mode)!.map(total)) - median(measured.get("off")!.map(total))),
          ),
        ],
      ],
    ),
  );
  for (const mode of others) {
    const names = new Set(measured.get(mode)!.flatMap((split) => Object.keys(split.functions)));
    const rows = [...names]
      .map((name) => [name, median(measured.get(mode)!.map((split) => split.functions[name] ?? 0))] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15);
    console.log("");
    console.log(
      table(
        [`${mode}: taskjourney's functions (with the natives they call)`, "µs per task"],
        rows.map(([name, value]) => [name, value.toFixed(2)]),
      ),
    );
  }
  console.log(
    `node ${process.version}, V8's CPU profiler every 100 µs; a part's natives and node: internals are its own`,
  );
}

/**
 * --gc: natively, RUNS alternating runs of each mode under --trace-gc, repetitions FEW + 1 … MANY
 * counted: the CPU per task (the median repetition of each run; the median run and the range),
 * young and full collections per 1,000 tasks, the main thread's GC pause per task, and the heap after a full
 * collection. What the collector does with the heap telemetry adds, which callgrind's GC
 * instructions show with a run-to-run spread as large as the difference (its helper threads).
 */
function reportGc(): void {
  console.log(
    `cluster worker replay, garbage collection: ${recorded} (${linesReplayed}), ${tasks} compute tasks per repetition, repetitions ${few + 1}–${many} of ${runs} alternating runs per mode`,
  );
  const measured = new Map<ReplayMode, ReplayGc[]>(modes.map((mode) => [mode, []]));
  const output = path.join(os.tmpdir(), `taskjourney-replay-gc-${process.pid}.txt`);
  process.on("exit", () => fs.rmSync(output, { force: true }));
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) {
      // One file for both streams: V8's GC lines (stdout) and the repetition lines (stderr) in order.
      const fd = fs.openSync(output, "w");
      const replayed = spawnSync(process.execPath, ["--trace-gc", driver, stimulus, mode, String(many)], {
        cwd: ROOT,
        stdio: ["ignore", fd, fd],
        env: { ...process.env, TASKJOURNEY_REPLAY_EACH: "1", TASKJOURNEY_REPLAY_QUIET: "1" },
      });
      fs.closeSync(fd);
      const text = fs.readFileSync(output, "utf8");
      if (replayed.status !== 0)
        throw new Error(`replay ${mode} failed (exit ${replayed.status}):\n${text.slice(-2000)}`);
      measured.get(mode)!.push(replayGc(text, few));
    }
  }
  const counted = (many - few) * tasks;
  const cpu = (mode: ReplayMode) => measured.get(mode)!.map((gc) => median(gc.cpuMicrosPerTask));
  const fixed = (value: number, digits = 1) => value.toFixed(digits);
  const offCpu = median(cpu("off"));
  console.log("");
  console.log(
    table(
      [
        "worker, per task (warm)",
        "CPU µs (median run)",
        "runs' range",
        "added by telemetry",
        "young GCs per 1,000 tasks",
        "full GCs per 1,000 tasks",
        "GC pause µs",
        "heap after full GC, MB",
      ],
      modes.map((mode) => {
        const all = measured.get(mode)!;
        const runsCpu = cpu(mode);
        const young = all.reduce((sum, gc) => sum + gc.youngCollections, 0) / runs;
        const full = all.reduce((sum, gc) => sum + gc.fullCollections, 0) / runs;
        const pause = all.reduce((sum, gc) => sum + gc.pauseMillis, 0) / runs;
        return [
          mode,
          fixed(median(runsCpu)),
          `${fixed(Math.min(...runsCpu))}–${fixed(Math.max(...runsCpu))}`,
          mode === "off" ? "" : fixed(median(runsCpu) - offCpu),
          fixed((young * 1000) / counted),
          fixed((full * 1000) / counted),
          fixed((pause * 1000) / counted),
          fixed(median(all.flatMap((gc) => gc.heapAfterFull))),
        ];
      }),
    ),
  );
  console.log(`node ${process.version}, --trace-gc; CPU is the process's, every thread (V8's GC helpers too)`);
}

/** --allocations: bytes per task of repetitions FEW + 1 … MANY, per mode, and by function. */
async function reportAllocations(): Promise<void> {
  console.log(
    `cluster worker replay, allocations: ${recorded} (${linesReplayed}), ${tasks} compute tasks per repetition, repetitions ${few + 1}–${many} sampled`,
  );
  const measured = new Map<ReplayMode, Allocations>();
  const exact = new Map<ReplayMode, HeapBytes>();
  const replayed = (mode: ReplayMode, flags: string[], env: Record<string, string>) => {
    const run = spawnSync(process.execPath, [...flags, driver, stimulus, mode, String(many)], {
      cwd: ROOT,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env },
    });
    if (run.status !== 0) throw new Error(`replay ${mode} failed (exit ${run.status}):\n${run.stderr.slice(-2000)}`);
    return JSON.parse(run.stdout.trim().split("\n").pop()!) as { allocations?: Allocations; heap?: HeapBytes };
  };
  for (const mode of modes) {
    // A sample every 512 bytes exactly, not at random intervals: sites move less from run to run.
    const sampling = ["--sampling-heap-profiler-suppress-randomness", "--hash-seed=1", "--random-seed=1"];
    measured.set(mode, replayed(mode, sampling, { TASKJOURNEY_REPLAY_ALLOCATIONS: String(few + 1) }).allocations!);
    // The exact total, in a run of its own (no profiler's session in it).
    const young = ["--predictable", "--hash-seed=1", "--random-seed=1"];
    exact.set(mode, replayed(mode, young, { TASKJOURNEY_REPLAY_HEAP: String(few + 1) }).heap!);
  }
  const format = (value: number) => Math.round(value).toLocaleString("en-US");
  const off = measured.get("off")!;
  const exactOff = exact.get("off")!;
  console.log("");
  console.log(
    table(
      [
        "worker, per task (warm)",
        "bytes allocated (sampled)",
        "added by telemetry",
        "bytes allocated (exact)",
        "added by telemetry",
      ],
      modes.map((mode) => {
        const bytes = measured.get(mode)!.bytesPerTask;
        const heap = exact.get(mode)!;
        return [
          mode,
          format(bytes),
          mode === "off" ? "" : format(bytes - off.bytesPerTask),
          format(heap.bytesPerTask),
          mode === "off" ? "" : format(heap.bytesPerTask - exactOff.bytesPerTask),
        ];
      }),
    ),
  );
  for (const mode of modes.filter((mode) => mode !== "off")) {
    const sites = measured.get(mode)!.sites;
    const added = Object.keys({ ...sites, ...off.sites })
      .map((site): [string, number] => [site, (sites[site] ?? 0) - (off.sites[site] ?? 0)])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    console.log("");
    console.log(
      table(
        [`${mode} − off, by allocating function`, "bytes per task"],
        added.map(([site, bytes]) => [site, format(bytes)]),
      ),
    );
  }
  console.log(`node ${process.version}, V8's sampling heap profiler (every 512 bytes on average)`);
}

console.log(
  recorded === undefined
    ? `cluster scheduler replay: the reduction of ${tasks} tasks, ${few} and ${many} rounds`
    : `cluster worker replay: ${recorded} (${linesReplayed}), ${tasks} compute tasks per repetition, ${few} and ${many} repetitions`,
);
const perTask = new Map<ReplayMode, Counts>();
const partsPerTask = new Map<ReplayMode, Record<Part, number>>();
const symbolsPerTask = new Map<ReplayMode, Map<string, number>>();
const format = (value: number) => Math.round(value).toLocaleString("en-US");
for (const mode of modes) {
  const started = performance.now();
  const [low, high] = await Promise.all([instructions(mode, few), instructions(mode, many)]);
  const extraTasks = (many - few) * tasks;
  const counts = Object.fromEntries(
    EVENTS.map((event) => [event, (high.counts[event] - low.counts[event]) / extraTasks]),
  ) as Counts;
  perTask.set(mode, counts);
  if (high.bySymbol !== undefined && low.bySymbol !== undefined) {
    const symbols = new Map<string, number>();
    for (const symbol of new Set([...high.bySymbol.keys(), ...low.bySymbol.keys()])) {
      symbols.set(symbol, ((high.bySymbol.get(symbol) ?? 0) - (low.bySymbol.get(symbol) ?? 0)) / extraTasks);
    }
    symbolsPerTask.set(mode, symbols);
    partsPerTask.set(mode, partsOf(symbols));
  }
  console.log(
    `  ${mode}: ${format(counts.Ir)} instructions per task` +
      (cacheSim ? `, ${format(cycles(counts))} estimated cycles` : "") +
      ` (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
}
const off = perTask.get("off")!;
const l1 = (counts: Counts) => counts.I1mr + counts.D1mr + counts.D1mw;
const l2 = (counts: Counts) => counts.ILmr + counts.DLmr + counts.DLmw;
const added = (value: number, base: number) => (value === base ? "" : format(value - base));
console.log("");
console.log(
  table(
    [
      `${role}, per task (warm)`,
      "instructions",
      "added by telemetry",
      ...(cacheSim ? ["L1 misses", "L2 misses", "est. cycles", "added"] : []),
    ],
    modes.map((mode) => {
      const counts = perTask.get(mode)!;
      const base = mode === "off" ? counts : off;
      return [
        mode,
        format(counts.Ir),
        added(counts.Ir, base.Ir),
        ...(cacheSim
          ? [format(l1(counts)), format(l2(counts)), format(cycles(counts)), added(cycles(counts), cycles(base))]
          : []),
      ];
    }),
  ),
);
if (partsPerTask.size > 0) {
  const offParts = partsPerTask.get("off")!;
  console.log("");
  console.log(
    table(
      [
        `${role}, instructions per task by part`,
        ...modes,
        ...modes.filter((mode) => mode !== "off").map((mode) => `${mode} − off`),
      ],
      PARTS.map((part) => [
        part,
        ...modes.map((mode) => format(partsPerTask.get(mode)![part])),
        ...modes.filter((mode) => mode !== "off").map((mode) => format(partsPerTask.get(mode)![part] - offParts[part])),
      ]),
    ),
  );
}
if (topFunctions > 0) {
  const offSymbols = symbolsPerTask.get("off") ?? new Map<string, number>();
  for (const mode of modes.filter((mode) => mode !== "off")) {
    const symbols = symbolsPerTask.get(mode)!;
    const changed = [...new Set([...symbols.keys(), ...offSymbols.keys()])]
      .map((symbol): [string, number] => [symbol, (symbols.get(symbol) ?? 0) - (offSymbols.get(symbol) ?? 0)])
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
      .slice(0, topFunctions);
    console.log("");
    console.log(
      table(
        [`${role}, ${mode} − off, by function (self)`, "part", "instructions per task"],
        changed.map(([symbol, count]) => [
          symbol.length > 100 ? `${symbol.slice(0, 99)}…` : symbol,
          symbol === JIT_CODE ? "JIT-compiled JavaScript" : partOf(symbol),
          format(count),
        ]),
      ),
    );
  }
}
console.log(
  `node ${process.version}, valgrind callgrind${cacheSim ? " --cache-sim (L1 32 KiB, L2 1 MiB as the last level)" : ""}, node --predictable`,
);
