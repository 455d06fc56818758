/**
 * Where the cluster's own processes spend their CPU over the measured round (`cluster.bench.ts
 * --perf`): Linux perf samples every thread of every process on CPU time (`-e cpu-clock`), and
 * each sample goes to a part by its call chain.
 *
 * Why perf and not V8's profiler (`--cpu-prof`): the profiler's time per sample is the wall time
 * to the next sample, so a thread waiting for a core (ten busy threads on two cores here) is
 * charged to whatever it ran last; it sees only the main thread, not piscina's threads or V8's
 * concurrent marking and compiling; and its "(garbage collector)" hides which collector ran. A
 * trial run of both on the tiny-task cluster had the profiler's main threads at more CPU than
 * the whole processes used.
 *
 * The processes run with `--perf-basic-prof` (V8 writes /tmp/perf-<pid>.map, naming each
 * compiled function "JS:<tier>name url:line:col"), and perf records with CLOCK_MONOTONIC, the
 * clock of the marks each process writes at the scheduler's CPU readings
 * (examples/cluster/profile-marks.ts): marks 2·warmup and 2·warmup + 1 of the scheduler bound the
 * measured round.
 *
 * A sample's part is its leaf-most frame that has an owner: V8's collectors, V8's compilers and
 * parser, or a JavaScript function (its file: taskjourney's dist/ or src/, the OpenTelemetry SDK,
 * another package, the host: the example). Builtins, V8's runtime, natives and Node.js's own
 * JavaScript (`node:` urls) have none: their time is their caller's, as in profile-parts.ts. A chain
 * with no owner is "runtime, uncalled" (libuv, the event loop, Node.js's JavaScript run by it).
 * Needs perf (Debian's linux-perf) and a kernel that lets this user sample (root here).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

export const PERF_PARTS = [
  "taskjourney",
  "OpenTelemetry SDK",
  "other packages",
  "host (example)",
  "garbage collector",
  "V8 compiler and parser",
  "runtime, uncalled",
] as const;
export type PerfPart = (typeof PERF_PARTS)[number];
export const PERF_ROLES = ["scheduler", "scheduler threads", "workers", "workers' threads"] as const;
export type PerfRole = (typeof PERF_ROLES)[number];

/** Samples a second per thread: 8,000 tasks × 150 µs added is then ~2,400 samples of the difference. */
export const PERF_FREQUENCY = 2000;

export interface RoundPerf {
  /** µs of CPU per task, by who ran it (the main threads or the other threads) and by part. */
  parts: Record<PerfRole, Record<PerfPart, number>>;
  /**
   * µs per task by "<scheduler|workers> <part>: <function>": a JavaScript function as "name
   * file:line" (the file from dist/, src/, node_modules/ or examples/ on), and for a chain with no
   * owner its leaf-most frame outside the kernel (the collectors and compilers are in `parts` only).
   */
  functions: Record<string, number>;
  /** Samples inside the measured round. */
  samples: number;
}

/** The command that records `node args…` under perf into `dir`/perf.data. */
export function perfCommand(dir: string, nodeArgs: string[]): { command: string; args: string[] } {
  return {
    command: "perf",
    args: [
      "record",
      "-q",
      "-e",
      "cpu-clock",
      "-F",
      String(PERF_FREQUENCY),
      "-k",
      "CLOCK_MONOTONIC",
      "-g",
      "-o",
      path.join(dir, "perf.data"),
      "--",
      process.execPath,
      "--perf-basic-prof",
      ...nodeArgs,
    ],
  };
}

const GC =
  /^v8::internal::(Heap::|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkSweep|MinorMarkCompact|MinorGCJob|ConcurrentMarking|IncrementalMarking|Sweeper|MemoryReducer|ArrayBufferSweeper|GCTracer|HeapAllocator::AllocateRawWith|MarkingBarrier|ScavengeJob)/;
const COMPILER =
  /^v8::internal::(compiler::|maglev::|baseline::|OptimizingCompileDispatcher|OptimizedCompilationJob|Compiler::|Parser|ParserBase|parsing::|interpreter::BytecodeGenerator|Runtime_CompileLazy|Runtime_CompileOptimized|Deserializer|CodeSerializer)/;
const JS = /^JS:[*^~+]?(\S*) (\S+):(\d+):\d+$/;

/** The owner of one frame's symbol, with the function's name when it is JavaScript; undefined: its caller's. */
export function ownerOfFrame(symbol: string): { part: PerfPart; fn?: string } | undefined {
  if (GC.test(symbol)) return { part: "garbage collector" };
  if (COMPILER.test(symbol)) return { part: "V8 compiler and parser" };
  const js = JS.exec(symbol);
  if (js === null) return undefined;
  const [, name, url, line] = js;
  if (url.startsWith("node:")) return undefined;
  const file = /\/((?:node_modules|examples|bench|dist|src)\/.*)$/.exec(url)?.[1] ?? url;
  const fn = `${name || "(anonymous)"} ${file.replace(/^.*\/node_modules\//, "node_modules/")}:${line}`;
  if (url.includes("/@opentelemetry/")) return { part: "OpenTelemetry SDK", fn };
  if (url.includes("/node_modules/")) return { part: "other packages", fn };
  if (/\/(dist|src)\//.test(url) && !/\/(examples|bench)\//.test(url)) return { part: "taskjourney", fn };
  return { part: "host (example)", fn };
}

const zero = (): Record<PerfPart, number> =>
  Object.fromEntries(PERF_PARTS.map((part) => [part, 0])) as Record<PerfPart, number>;

/**
 * Reads `dir`/perf.data over the measured round (the scheduler's marks in `dir`), µs per task.
 * `pids`: the scheduler's and the workers' (the run's pids.json). Removes the perf data and the
 * perf maps V8 wrote.
 */
export async function readRoundPerf(
  dir: string,
  tasks: number,
  warmup: number,
  pids: { scheduler: number; workers: number[] },
): Promise<RoundPerf> {
  const marks = fs
    .readFileSync(path.join(dir, `marks-${pids.scheduler}.txt`), "utf8")
    .trim()
    .split("\n")
    .map(Number);
  if (marks.length < 2 * warmup + 2)
    throw new Error(`${dir}: the scheduler wrote ${marks.length} marks, the measured round needs ${2 * warmup + 2}`);
  const [from, to] = [marks[2 * warmup] / 1e6, marks[2 * warmup + 1] / 1e6];
  const script = spawn(
    "perf",
    [
      "script",
      "-i",
      path.join(dir, "perf.data"),
      "-F",
      "pid,tid,time,ip,sym",
      "--time",
      `${from.toFixed(6)},${to.toFixed(6)}`,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const exited = new Promise<number | null>((resolve) => script.once("close", resolve));
  const result = await splitPerfScript(readline.createInterface({ input: script.stdout }), tasks, pids);
  const code = await exited;
  if (code !== 0) throw new Error(`perf script on ${dir}/perf.data exited with ${code}`);
  // Each run's perf.data (~7 MB) and V8's maps (~1 MB a process) go once read: without the maps the
  // samples of compiled JavaScript cannot be named again, so the data would only fill the disk.
  for (const pid of [pids.scheduler, ...pids.workers]) fs.rmSync(`/tmp/perf-${pid}.map`, { force: true });
  fs.rmSync(path.join(dir, "perf.data"), { force: true });
  return result;
}

/**
 * Splits `perf script -F pid,tid,time,ip,sym` output (a header line per sample, then its call
 * chain leaf first, one frame a line) over `tasks`: each sample is 1/PERF_FREQUENCY s of CPU.
 */
export async function splitPerfScript(
  lines: AsyncIterable<string> | Iterable<string>,
  tasks: number,
  pids: { scheduler: number; workers: number[] },
): Promise<RoundPerf> {
  const result: RoundPerf = {
    parts: Object.fromEntries(PERF_ROLES.map((role) => [role, zero()])) as RoundPerf["parts"],
    functions: {},
    samples: 0,
  };
  const workers = new Set(pids.workers);
  const perSample = 1e6 / PERF_FREQUENCY / tasks;
  let role: PerfRole | undefined;
  let decided = false;
  /** The sample's leaf-most frame outside the kernel: what an unowned chain is named by. */
  let leaf: string | undefined;
  const settle = (owner: { part: PerfPart; fn?: string } | undefined) => {
    if (role === undefined) return;
    const part = owner?.part ?? "runtime, uncalled";
    result.parts[role][part] += perSample;
    const fn = owner === undefined ? (leaf ?? "(kernel)") : owner.fn;
    if (fn !== undefined) {
      const key = `${role.startsWith("scheduler") ? "scheduler" : "workers"} ${part}: ${fn}`;
      result.functions[key] = (result.functions[key] ?? 0) + perSample;
    }
    result.samples++;
  };
  for await (const line of lines) {
    const header = /^\s*(\d+)\/(\d+)\s+[\d.]+:\s*$/.exec(line);
    if (header !== null) {
      if (!decided) settle(undefined);
      const pid = Number(header[1]);
      const main = pid === Number(header[2]);
      role =
        pid === pids.scheduler
          ? main
            ? "scheduler"
            : "scheduler threads"
          : workers.has(pid)
            ? main
              ? "workers"
              : "workers' threads"
            : undefined;
      decided = false;
      leaf = undefined;
      continue;
    }
    if (decided || line.trim() === "") continue;
    // "\t    7fb2040dd631 JS:^transition file:///…/live-journeys.js:36:15": the address, then the symbol.
    const symbol = line.trim().replace(/^[0-9a-f]+ /, "");
    if (leaf === undefined && !/^\s*ffffffff/.test(line)) leaf = symbol.replace(/\(.*$/, "");
    const owner = ownerOfFrame(symbol);
    if (owner !== undefined) {
      settle(owner);
      decided = true;
    }
  }
  if (!decided) settle(undefined);
  return result;
}
