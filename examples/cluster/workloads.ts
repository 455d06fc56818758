/**
 * Task graphs of the example: keys, the function each runs, its arguments (literals or
 * references to other keys' results). Keys look like Dask's ("sum-2-17"), so taskjourney's
 * keySplit gives the prefixes "arange", "square", "sum", …
 */
import { FUNCTIONS, SECEDING, type Value } from "./functions.mjs";

/** A literal argument (a number, or a function name for the fail / slow wrappers), or the result of another task. */
export type Arg = number | string | { ref: string };

export interface TaskSpec {
  key: string;
  func: string;
  args: Arg[];
  /** The keys referenced in `args`, each once, in order. */
  deps: string[];
}

export interface Graph {
  workload: Workload;
  description: string;
  tasks: TaskSpec[];
  /** The one key whose value is the result. */
  root: string;
}

export const WORKLOADS = ["reduction", "shuffle", "skewed"] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface WorkloadOptions {
  /** About how many tasks. */
  size: number;
  seed: number;
  /** Elements per array (reduction, shuffle). */
  length?: number;
}

function task(key: string, func: string, args: Arg[]): TaskSpec {
  const deps: string[] = [];
  for (const arg of args) if (typeof arg === "object" && !deps.includes(arg.ref)) deps.push(arg.ref);
  return { key, func, args, deps };
}

const ref = (key: string): Arg => ({ ref: key });

/** Reduces `inputs` in a tree of fan-in `fanIn` with `func`; returns the tasks and the last key. */
function tree(prefix: string, func: string, inputs: string[], fanIn: number, tasks: TaskSpec[]): string {
  let level = 0;
  let layer = inputs;
  while (layer.length > 1) {
    level++;
    const next: string[] = [];
    for (let start = 0; start < layer.length; start += fanIn) {
      const key = `${prefix}-${level}-${next.length}`;
      tasks.push(task(key, func, layer.slice(start, start + fanIn).map(ref)));
      next.push(key);
    }
    layer = next;
  }
  return layer[0];
}

/** arange-i → square-i → sum tree (fan-in 4, elementwise) → final-sum (a number). */
function reduction({ size, seed, length = 8192 }: WorkloadOptions): Graph {
  const leaves = Math.max(2, Math.round(size / (2 + 1 / 3)));
  const tasks: TaskSpec[] = [];
  const squares: string[] = [];
  for (let i = 0; i < leaves; i++) {
    tasks.push(task(`arange-${i}`, "arange", [i, length, seed]));
    tasks.push(task(`square-${i}`, "square", [ref(`arange-${i}`), 48]));
    squares.push(`square-${i}`);
  }
  const last = tree("sum", "add", squares, 4, tasks);
  tasks.push(task("final-sum", "total", [ref(last)]));
  return {
    workload: "reduction",
    description: `tree reduction of ${leaves} arrays of ${length} float64 (${((length * 8) / 1024).toFixed(0)} KiB each), fan-in 4`,
    tasks,
    root: "final-sum",
  };
}

/** part-i → split-i → getitem-i-j (all to all) → merge-j → checksum: a task-based shuffle. */
function shuffle({ size, seed, length = 4096 }: WorkloadOptions): Graph {
  const n = Math.max(2, Math.floor(Math.sqrt(Math.max(4, size - 3 * Math.sqrt(size)))));
  const tasks: TaskSpec[] = [];
  for (let i = 0; i < n; i++) {
    tasks.push(task(`part-${i}`, "arange", [i, length, seed]));
    tasks.push(task(`split-${i}`, "split", [ref(`part-${i}`), n]));
    for (let j = 0; j < n; j++) tasks.push(task(`getitem-${i}-${j}`, "getitem", [ref(`split-${i}`), j]));
  }
  const merged: string[] = [];
  for (let j = 0; j < n; j++) {
    const inputs: Arg[] = [];
    for (let i = 0; i < n; i++) inputs.push(ref(`getitem-${i}-${j}`));
    tasks.push(task(`merge-${j}`, "merge", inputs));
    merged.push(`merge-${j}`);
  }
  tasks.push(task("checksum", "checksum", merged.map(ref)));
  return {
    workload: "shuffle",
    description: `shuffle of ${n} partitions of ${length} float64 into ${n} sorted ranges (${n * n} pieces)`,
    tasks,
    root: "checksum",
  };
}

/** A standard normal from two uniforms (Box–Muller), deterministic in (seed, i). */
function normal(seed: number, i: number): number {
  const u = ((Math.imul(seed + 1, 2654435761) ^ Math.imul(i + 1, 40503)) >>> 0) / 4294967296;
  const v = ((Math.imul(i + 7, 2246822519) ^ Math.imul(seed + 3, 3266489917)) >>> 0) / 4294967296;
  return Math.sqrt(-2 * Math.log(Math.max(u, 1e-12))) * Math.cos(2 * Math.PI * v);
}

/**
 * Steps of `work` taken as a millisecond: about right for one core of a 2020s x86 machine. Fixed,
 * not measured, so that the graph (and its result) is the same on every run.
 */
const WORK_STEPS_PER_MS = 50_000;

/**
 * Independent tasks with lognormal durations (median about 8 ms of CPU, σ = 1), every 40th one a
 * "poll" that secedes and waits (median 60 ms), then a reduction of fan-in 8.
 */
function skewed({ size, seed }: WorkloadOptions): Graph {
  const count = Math.max(2, Math.round((size * 7) / 8));
  const tasks: TaskSpec[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < count; i++) {
    const factor = Math.exp(normal(seed, i));
    if (i % 40 === 39) {
      tasks.push(task(`poll-${i}`, "poll", [i, Math.round(60 * factor)]));
      outputs.push(`poll-${i}`);
    } else {
      tasks.push(task(`work-${i}`, "work", [i, Math.round(8 * factor * WORK_STEPS_PER_MS)]));
      outputs.push(`work-${i}`);
    }
  }
  const last = tree("collect", "collect", outputs, 8, tasks);
  return {
    workload: "skewed",
    description: `${count} tasks with lognormal durations (median 8 ms, σ 1; every 40th seceding), fan-in 8 reduction`,
    tasks,
    root: last,
  };
}

export function buildGraph(workload: Workload, options: WorkloadOptions): Graph {
  switch (workload) {
    case "reduction":
      return reduction(options);
    case "shuffle":
      return shuffle(options);
    case "skewed":
      return skewed(options);
  }
}

/**
 * Priorities like Dask's `order()`, simplified: a depth-first post-order from the root, so each
 * subtree finishes (and frees its inputs) before the next one starts. Lower runs first.
 */
export function priorities(graph: Graph): Map<string, number> {
  const byKey = new Map(graph.tasks.map((spec) => [spec.key, spec]));
  const order = new Map<string, number>();
  const stack: Array<{ key: string; next: number }> = [{ key: graph.root, next: 0 }];
  const entered = new Set<string>([graph.root]);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const deps = byKey.get(top.key)!.deps;
    if (top.next < deps.length) {
      const dep = deps[top.next++];
      if (!entered.has(dep)) {
        entered.add(dep);
        stack.push({ key: dep, next: 0 });
      }
      continue;
    }
    stack.pop();
    order.set(top.key, order.size);
  }
  for (const spec of graph.tasks) if (!order.has(spec.key)) order.set(spec.key, order.size);
  return order;
}

/** Evaluates the graph in this process, for checking a cluster's answer. */
export function evaluateLocally(graph: Graph): Value {
  const byKey = new Map(graph.tasks.map((spec) => [spec.key, spec]));
  const values = new Map<string, Value>();
  const evaluate = (key: string): Value => {
    const known = values.get(key);
    if (known !== undefined) return known;
    const spec = byKey.get(key)!;
    for (const dep of spec.deps) evaluate(dep);
    const args = spec.args.map((arg) => (typeof arg === "object" ? values.get(arg.ref)! : arg));
    const fn = FUNCTIONS[spec.func];
    const value = SECEDING.has(spec.func) ? fn(...args, { secede() {} }) : fn(...args);
    values.set(key, value);
    return value;
  };
  // Leaves first, iteratively, so deep graphs do not exhaust the stack.
  for (const [key] of [...priorities(graph)].sort((a, b) => a[1] - b[1])) evaluate(key);
  return values.get(graph.root)!;
}

/**
 * The graph again under keys of its own, for a warm-up round before the measured one: each key
 * gains a numeric word (`square-7` → `square-7-900001`), which key_split stops at, so prefixes, and
 * with them the statistics and metrics, are those of the measured graph's keys.
 */
export function renamedForRound(graph: Graph, round: number): Graph {
  const suffix = `-${WARMUP_KEY_BASE + round}`;
  const rename = (key: string) => key + suffix;
  return {
    ...graph,
    tasks: graph.tasks.map((spec) => ({
      key: rename(spec.key),
      func: spec.func,
      args: spec.args.map((arg) => (typeof arg === "object" ? { ref: rename(arg.ref) } : arg)),
      deps: spec.deps.map(rename),
    })),
    root: rename(graph.root),
  };
}

/** Far above any workload's own numbers, so a renamed key never equals a measured one. */
const WARMUP_KEY_BASE = 900_000;

/** Tasks made to fail or to be slow, for showing where failed and slow tasks' time goes. */
export interface Injected {
  /** Every Nth task (in graph order: N-1, 2N-1, …) raises instead of computing. */
  failEvery?: number;
  /** Every Nth task holds its thread `slowSeconds` before computing (a failing one stays failing). */
  slowEvery?: number;
  slowSeconds?: number;
  /** Every Nth task has its worker's main thread force a major GC as it starts (`majorGc`). */
  gcEvery?: number;
  /** Every Nth task has its worker's main thread block its event loop `blockSeconds` (default 0.06) as it starts (`blockLoop`). */
  blockEvery?: number;
  blockSeconds?: number;
}

/**
 * The graph with every `failEvery`-th task raising and every `slowEvery`-th task slow. Keys,
 * dependencies and prefixes stay; only the function changes (`fail` / `slow` in functions.mjs
 * wrap the original one), so a slow task's value is its usual one. Seceding tasks are left alone.
 */
export function withInjected(
  graph: Graph,
  { failEvery, slowEvery, slowSeconds = 2, gcEvery, blockEvery, blockSeconds = 0.06 }: Injected,
): Graph {
  if (failEvery === undefined && slowEvery === undefined && gcEvery === undefined && blockEvery === undefined)
    return graph;
  const every = (n: number | undefined, index: number) => n !== undefined && (index + 1) % n === 0;
  return {
    ...graph,
    tasks: graph.tasks.map((spec, index) => {
      if (SECEDING.has(spec.func)) return spec;
      if (every(failEvery, index)) return { ...spec, func: "fail", args: [spec.func, ...spec.args] };
      if (every(slowEvery, index))
        return { ...spec, func: "slow", args: [Math.round(slowSeconds * 1000), spec.func, ...spec.args] };
      if (every(gcEvery, index)) return { ...spec, func: "majorGc", args: [spec.func, ...spec.args] };
      if (every(blockEvery, index))
        return { ...spec, func: "blockLoop", args: [Math.round(blockSeconds * 1000), spec.func, ...spec.args] };
      return spec;
    }),
  };
}

/** The keys `withInjected` made failing and slow, in graph order. */
export function injectedKeys(graph: Graph): { failing: string[]; slow: string[]; gc: string[]; blocked: string[] } {
  return {
    failing: graph.tasks.filter((spec) => spec.func === "fail").map((spec) => spec.key),
    slow: graph.tasks.filter((spec) => spec.func === "slow").map((spec) => spec.key),
    gc: graph.tasks.filter((spec) => spec.func === "majorGc").map((spec) => spec.key),
    blocked: graph.tasks.filter((spec) => spec.func === "blockLoop").map((spec) => spec.key),
  };
}
