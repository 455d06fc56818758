/**
 * One cluster worker, deterministically: replays a stimulus recorded from a real worker (the
 * compute-task and free-keys messages it got from the scheduler and the get_data requests it got
 * from peers, in order; examples/cluster/worker.ts writes them with TASKJOURNEY_STIMULUS set)
 * through the example's own Worker, WorkerState and SpillBuffer, with taskjourney instrumented as
 * the cluster does it (telemetry.ts, instrumentWorker) or not at all. What is not this worker is
 * faked, synchronously: the scheduler connection drops what it is sent, peers answer get_data at
 * once with arrays of the size the compute-task message announced, and the thread pool runs the
 * task function in this thread through tasks.mjs (so its thread CPU readings are counted too).
 *
 *   node bench/.cluster-replay.mjs <stimulus.jsonl> <off|on|metrics|loaded> <repetitions>
 *
 * The stimulus is replayed `repetitions` times under fresh keys (prefixes kept, as the cluster's
 * warm-up rounds do). bench/cluster-instructions.bench.ts runs this under valgrind with two
 * repetition counts: the difference cancels start-up, warm-up and the final export, which leaves
 * what the worker does per task, warm. Without valgrind it prints its own CPU time per task, and
 * with TASKJOURNEY_REPLAY_EACH=1 that of each repetition (on stderr): how long V8 takes to settle.
 * With TASKJOURNEY_REPLAY_ALLOCATIONS=<n> it samples the heap from repetition n on (V8's sampling
 * heap profiler, through the inspector, every 512 bytes allocated on average, collected objects
 * included) and adds the bytes allocated per task, in all and by allocating function, to its output.
 * With TASKJOURNEY_REPLAY_HEAP=<n> it adds the bytes allocated per task from repetition n on,
 * exactly (the heap's growth between collections, by V8's GCProfiler), and the collections.
 * With TASKJOURNEY_REPLAY_PROFILE=<n> it runs V8's CPU profiler (every 100 µs) from repetition n
 * on and adds the µs per task of each part (taskjourney, the OpenTelemetry SDK, the thread clock,
 * the host, garbage collection: bench/profile-parts.ts) and of taskjourney's functions to its output.
 * With TASKJOURNEY_REPLAY_SNAPSHOT=<n> it writes a heap snapshot after repetition n (V8 collects
 * garbage first) to the working directory, for bench/heap-kinds.ts: what the collector marks.
 * With TASKJOURNEY_REPLAY_JOURNEYS='{"retainedJourneys":0}' (any TaskJourneys options, as JSON)
 * the on and metrics modes run with those options too: what one feature costs a task.
 */
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { splitProfile, type CpuProfile, type ProfileSplit } from "./profile-parts.js";
import type { Message } from "../examples/cluster/transport.js";
import type { ComputeTaskMessage, ThreadTask } from "../examples/cluster/protocol.js";
import { SpillBuffer } from "../examples/cluster/spill.js";
import { startTelemetry } from "../examples/cluster/telemetry.js";
import { DEFAULT_WORKER_STATE_OPTIONS, WorkerState } from "../examples/cluster/worker-state.js";
import { Worker, instrumentWorker } from "../examples/cluster/worker.js";
import runTask from "../examples/cluster/tasks.mjs";
import type { TaskJourneysOptions } from "../src/index.js";

/**
 * off: no telemetry. on: metrics and 1% traces, as the cluster runs. metrics: no traces at all
 * (the stimulus's sampled carriers replayed as not sampled, see unsampled()).
 * loaded: telemetry started as for on (the SDK loaded, its providers and TaskJourneys made) but
 * nothing instrumented: what a worker pays for having it in the process, not per task.
 */
export const MODES = ["off", "on", "metrics", "loaded"] as const;
export type ReplayMode = (typeof MODES)[number];

export interface StimulusLine {
  from: "scheduler" | "peer";
  message: Message;
}

export function readStimulus(file: string): StimulusLine[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as StimulusLine);
}

/** Compute tasks in a stimulus: the "per task" of the figures. */
export function computeTasks(stimulus: readonly StimulusLine[]): number {
  return stimulus.filter((line) => line.message.op === "compute-task").length;
}

/** The message with every key renamed, as the cluster's warm-up rounds rename them. */
function renamed(message: Message, suffix: string): Message {
  const rename = (key: string) => key + suffix;
  switch (message.op) {
    case "compute-task": {
      const task = message as ComputeTaskMessage;
      return {
        ...task,
        key: rename(task.key),
        // square's smoothing passes are pure arithmetic, the same with telemetry on or off: left out
        // (0 passes), they would only make valgrind take minutes longer. The values keep their sizes.
        args: task.args.map((arg, index) =>
          typeof arg === "object" ? { ref: rename(arg.ref) } : task.func === "square" && index === 1 ? 0 : arg,
        ),
        deps: task.deps.map((dep) => ({ ...dep, key: rename(dep.key) })),
      };
    }
    default:
      return { ...message, keys: (message.keys as string[]).map(rename) };
  }
}

/** Serialized arrays of a given byte size, as a peer's get_data reply carries them. */
const serializedOfSize = new Map<number, Uint8Array>();
function serialized(nbytes: number): Uint8Array {
  let bytes = serializedOfSize.get(nbytes);
  if (bytes === undefined) {
    bytes = v8.serialize(nbytes <= 8 ? 0 : new Float64Array(Math.floor(nbytes / 8)));
    serializedOfSize.set(nbytes, bytes);
  }
  return bytes;
}

/**
 * TASKJOURNEY_REPLAY_JOURNEYS: TaskJourneys options (JSON) over the cluster's, for what one
 * feature costs: `{"retainedJourneys":0}`, `{"processStalls":false}`, `{"traces":false}`.
 */
function journeyOptions(): Partial<TaskJourneysOptions> | undefined {
  const text = process.env.TASKJOURNEY_REPLAY_JOURNEYS;
  if (text === undefined || text === "") return undefined;
  const options = JSON.parse(text) as unknown;
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new TypeError(`TASKJOURNEY_REPLAY_JOURNEYS: a JSON object of TaskJourneys options, got ${text}`);
  return options as Partial<TaskJourneysOptions>;
}

/** A worker wired as Worker.start() wires it, with fakes for the scheduler, the peers and the pool. */
async function replayWorker(mode: ReplayMode, directory: string) {
  const worker = new Worker({
    scheduler: "tcp://scheduler",
    nthreads: 2,
    memoryLimit: 512 * 1024,
    spillDirectory: path.join(directory, "spill"),
    outDir: directory,
    telemetry: mode !== "off",
    traceRatio: mode === "metrics" ? "off" : 0.01,
    outgoingLimit: 2,
    verbose: false,
  });
  // The private fields Worker.start() sets, reached around TypeScript's `private`.
  const inside = worker as any;
  const nbytes = new Map<string, number>();
  inside.address = "tcp://127.0.0.1:1";
  inside.scheduler = { send() {}, reply() {}, close() {}, request: () => new Promise(() => {}) };
  const connection = {
    request: (request: Message) => {
      const data: Record<string, Uint8Array> = {};
      for (const key of request.keys as string[]) data[key] = serialized(nbytes.get(key) ?? 8);
      return Promise.resolve({ op: "data", status: "OK", data });
    },
    destroy() {},
  };
  inside.peers = { acquire: () => Promise.resolve(connection), release() {}, closeAll() {}, opened: 0, reused: 0 };
  inside.threads = { run: (task: ThreadTask) => Promise.resolve(runTask(task)), destroy: () => Promise.resolve() };
  if (mode !== "off") {
    inside.telemetry = await startTelemetry({
      role: "worker",
      instance: inside.address,
      outDir: directory,
      traceRatio: mode === "metrics" ? "off" : 0.01,
      journeys: journeyOptions(),
    });
    if (mode !== "loaded") inside.journeys = inside.telemetry.journeys;
  }
  inside.store = new SpillBuffer(512 * 1024, path.join(directory, "spill"));
  inside.state = new WorkerState(
    { ...DEFAULT_WORKER_STATE_OPTIONS, address: inside.address, nthreads: 2 },
    {
      execute: (task: unknown) => inside.runTask(task),
      gatherDep: (peer: string, tasks: unknown) => inside.fetch(peer, tasks),
      taskFinished: (task: unknown) => inside.taskFinished(task),
      taskErred: () => {},
      release: (key: string) => inside.store.delete(key),
      whoHas: () => {},
    },
  );
  if (inside.journeys !== undefined) instrumentWorker(worker, inside.state, inside.store, inside.journeys);
  const peer = { reply() {}, socket: { writableNeedDrain: false } };
  return {
    deliver(line: StimulusLine): void {
      if (line.from === "peer") return inside.handlePeer(peer, line.message);
      if (line.message.op === "compute-task")
        for (const dep of (line.message as ComputeTaskMessage).deps) nbytes.set(dep.key, dep.nbytes);
      inside.handleScheduler(line.message);
    },
    counters: () => ({ ...inside.state.counters, ...inside.store.counters, ...inside.counters }),
    async close(): Promise<void> {
      inside.state.close();
      await inside.telemetry?.shutdown();
      inside.store.close();
    },
  };
}

/** Bytes allocated per task, in all and by the function that allocated them ("name file:line"). */
export interface Allocations {
  bytesPerTask: number;
  sites: Record<string, number>;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** A sampled function's name: the package's files by their path under dist/ or src/, others by their base name. */
function siteName(frame: SamplingNode["callFrame"]): string {
  const url = frame.url;
  const under = /\/(?:dist|src)\/(.*)$/.exec(url);
  const file = under !== null ? under[1] : url === "" ? "(native)" : url.split("/").pop()!;
  return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
}

/** Starts V8's CPU profiler; the function returned stops it and splits its samples by part. */
async function profileCpu(): Promise<(tasks: number) => Promise<ProfileSplit>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return async (tasks) => {
    const { profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile };
    session.disconnect();
    return splitProfile(profile, tasks);
  };
}

/** Starts V8's sampling heap profiler; the function returned stops it and sums what it saw per site. */
async function sampleAllocations(): Promise<(tasks: number) => Promise<Allocations>> {
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async (tasks) => {
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: SamplingNode } };
    session.disconnect();
    const sites: Record<string, number> = {};
    let total = 0;
    // A native function (Map's delete, an array's push) is named with its caller: which Map it was.
    const walk = (node: SamplingNode, caller: string) => {
      const name = siteName(node.callFrame);
      if (node.selfSize > 0) {
        const site = node.callFrame.url === "" ? `${name} in ${caller}` : name;
        sites[site] = (sites[site] ?? 0) + node.selfSize / tasks;
        total += node.selfSize;
      }
      for (const child of node.children) walk(child, name);
    };
    walk(profile.head, "(root)");
    return { bytesPerTask: total / tasks, sites };
  };
}

/** Bytes allocated per task, exactly (the heap's growth between collections), and the collections. */
export interface HeapBytes {
  bytesPerTask: number;
  collections: number;
}

interface GcStatistics {
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

/**
 * Starts counting what is allocated; the function returned stops. The heap's used size grows by
 * exactly what is allocated until a collection, whose used size before and after V8's GCProfiler
 * reports: the sum of the growths between them is every byte allocated, deterministic for the same
 * sequence of allocations (no sampling). Objects outside V8's heap (ArrayBuffers' contents) are not in it.
 */
function countHeap(): (tasks: number) => HeapBytes {
  const gc = new v8.GCProfiler();
  gc.start();
  const start = v8.getHeapStatistics().used_heap_size;
  return (tasks) => {
    const end = v8.getHeapStatistics().used_heap_size;
    const statistics = (gc.stop()?.statistics ?? []) as GcStatistics[];
    let bytes = 0;
    let from = start;
    for (const collection of statistics) {
      bytes += collection.beforeGC.heapStatistics.usedHeapSize - from;
      from = collection.afterGC.heapStatistics.usedHeapSize;
    }
    bytes += end - from;
    return { bytesPerTask: bytes / tasks, collections: statistics.length };
  };
}

/**
 * The line as a cluster without traces would have sent it: the stimulus was recorded with 1% head
 * sampling, and a sampled parent in a compute-task or get_data carrier makes the worker's journey
 * a span tree even with no traces of its own (parent-based sampling). Done once, before the
 * repetitions, so that the mode's per-task figures do not include it.
 */
function unsampled(line: StimulusLine): StimulusLine {
  const text = JSON.stringify(line.message).replace(/("traceparent":"00-[0-9a-f]{32}-[0-9a-f]{16}-)01"/g, '$100"');
  return { ...line, message: JSON.parse(text) as Message };
}

/** Every pending promise reaction and I/O callback run: the fakes answer at once. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function replay(stimulus: readonly StimulusLine[], mode: ReplayMode, repetitions: number) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-replay-"));
  // Exports only at shutdown, whatever valgrind does to the wall clock: the same work in every run.
  process.env.OTEL_METRIC_EXPORT_INTERVAL = "86400000";
  process.env.OTEL_BSP_SCHEDULE_DELAY = "86400000";
  try {
    const worker = await replayWorker(mode, directory);
    const each = process.env.TASKJOURNEY_REPLAY_EACH !== undefined;
    const tasks = computeTasks(stimulus);
    const sampleFrom = Number(process.env.TASKJOURNEY_REPLAY_ALLOCATIONS ?? 0);
    let stopSampling: ((tasks: number) => Promise<Allocations>) | undefined;
    const snapshotAfter = Number(process.env.TASKJOURNEY_REPLAY_SNAPSHOT ?? 0);
    const profileFrom = Number(process.env.TASKJOURNEY_REPLAY_PROFILE ?? 0);
    let stopProfile: ((tasks: number) => Promise<ProfileSplit>) | undefined;
    const heapFrom = Number(process.env.TASKJOURNEY_REPLAY_HEAP ?? 0);
    let stopHeap: ((tasks: number) => HeapBytes) | undefined;
    for (let repetition = 0; repetition < repetitions; repetition++) {
      if (heapFrom > 0 && repetition === heapFrom - 1) stopHeap = countHeap();
      if (sampleFrom > 0 && repetition === sampleFrom - 1) stopSampling = await sampleAllocations();
      if (profileFrom > 0 && repetition === profileFrom - 1) stopProfile = await profileCpu();
      const suffix = `-${2_000_000 + repetition}`;
      const before = each ? process.cpuUsage() : undefined;
      for (const line of stimulus) {
        worker.deliver({ from: line.from, message: renamed(line.message, suffix) });
        await settle();
      }
      await settle();
      if (before !== undefined) {
        // The process's CPU (every thread: V8's compiler and GC helpers too) per task of this repetition.
        const used = process.cpuUsage(before);
        console.error(`repetition ${repetition + 1}: ${((used.user + used.system) / tasks).toFixed(1)} µs per task`);
      }
      if (repetition + 1 === snapshotAfter) console.error(`heap snapshot: ${v8.writeHeapSnapshot()}`);
    }
    const heap = stopHeap?.(tasks * (repetitions - heapFrom + 1));
    const allocations = await stopSampling?.(tasks * (repetitions - sampleFrom + 1));
    const profile = await stopProfile?.(tasks * (repetitions - profileFrom + 1));
    const counters = worker.counters();
    await worker.close();
    return { counters, allocations, profile, heap };
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [file, mode, count] = process.argv.slice(2);
  if (file === undefined || !(MODES as readonly string[]).includes(mode) || !(Number(count) > 0)) {
    console.error(`usage: cluster-replay <stimulus.jsonl> <${MODES.join("|")}> <repetitions>`);
    process.exit(2);
  }
  // Not kept beside the recorded lines: a second copy would be heap the other modes do not have.
  const stimulus = mode === "metrics" ? readStimulus(file).map(unsampled) : readStimulus(file);
  const started = process.cpuUsage();
  const { counters, allocations, profile, heap } = await replay(stimulus, mode as ReplayMode, Number(count));
  const used = process.cpuUsage(started);
  if (process.env.TASKJOURNEY_REPLAY_QUIET === undefined) {
    const tasks = computeTasks(stimulus) * Number(count);
    console.log(
      JSON.stringify({
        mode,
        tasks,
        cpuMicrosPerTask: (used.user + used.system) / tasks,
        counters,
        allocations,
        profile,
        heap,
      }),
    );
  }
}

if (/cluster-replay\.(ts|mjs)$/.test(process.argv[1] ?? "")) await main();
