/**
 * The messages between the scheduler and the workers, and among workers. All go through
 * transport.ts (length-prefixed v8.serialize frames over TCP).
 *
 * worker → scheduler   register (request), task-finished, task-erred, add-keys, who-has (request)
 * scheduler → worker   compute-task, free-keys, cpu (request), summary (request), close
 * worker → worker      get_data (request) → { status: "OK", data, carriers } | { status: "busy" }
 *                      (the scheduler uses get_data too, to fetch the final result)
 */
import type { MessagePort } from "node:worker_threads";
import type { Breakdown, ComputationTotals } from "../../src/index.js";
import type { Value } from "./functions.mjs";
import type { Arg } from "./workloads.js";

/** What the worker posts to a thread (tasks.mjs). */
export interface ThreadTask {
  func: string;
  args: unknown[];
  /** Measure the thread's CPU time (two readings of the thread's CPU clock, ~1 µs each; see tasks.mjs). */
  measure?: boolean;
  /** Present for functions that may secede: the thread says "secede" through it. */
  port?: MessagePort;
}

/** What a thread answers (tasks.mjs). */
export interface ThreadResult {
  value: Value;
  /** Seconds from the function's start to its return, in the thread. */
  wall: number;
  /** Seconds on CPU of this thread over the same span (until secede, if it seceded); undefined if unknown. */
  cpu: number | undefined;
  /** Seconds from the function's start to its secede() call, if it seceded. */
  secededAfter: number | undefined;
}

export interface RegisterMessage {
  op: "register";
  address: string;
  nthreads: number;
  pid: number;
  memoryLimit: number;
  [field: string]: unknown;
}

export interface ComputeTaskMessage {
  op: "compute-task";
  key: string;
  func: string;
  args: Arg[];
  priority: number;
  deps: Array<{ key: string; who: string[]; nbytes: number }>;
  /** W3C trace context of the scheduler's journey of the key, when it is traced. */
  carrier?: Record<string, string>;
  /** The computation (graph submission) the key belongs to, as Dask's compute-task carries its span id. */
  computation?: string;
  [field: string]: unknown;
}

export interface TaskFinishedMessage {
  op: "task-finished";
  key: string;
  nbytes: number;
  /** W3C trace context of the worker's journey of the key, back with the result. */
  carrier?: Record<string, string>;
  [field: string]: unknown;
}

export interface GetDataReply {
  op: "data";
  status: "OK" | "busy";
  /** Serialized values by key (v8.serialize bytes, straight from a spill file when spilled). */
  data?: Record<string, Uint8Array>;
  /** Trace context of the producing journey of each key, when it is traced. */
  carriers?: Record<string, Record<string, string>>;
  /** Trace context of the serving worker's get_data span, when the transfer is traced. */
  serveCarrier?: Record<string, string>;
  /** Keys whose values are deflated (above the worker's COMPRESS_ABOVE). */
  compressed?: string[];
  [field: string]: unknown;
}

/** An OTLP exponential histogram data point, compacted. */
export interface HistogramData {
  count: number;
  sum: number;
  scale: number;
  zeroCount: number;
  offset: number;
  counts: number[];
  min: number;
  max: number;
}

/** What taskjourney measured on one process, read back from its metric producer. */
export interface TelemetryTotals {
  /** task.state.duration by (prefix, state). */
  durations: Array<{ prefix: string; state: string; histogram: HistogramData }>;
  /** task.state.time by (prefix, state), seconds. */
  stateSeconds: Array<{ prefix: string; state: string; seconds: number }>;
  /** task.execute.time by activity. */
  execute: Record<string, number>;
  /** task.execute.size by activity, bytes. */
  executeBytes: Record<string, number>;
  /** task.gather.time by activity. */
  gather: Record<string, number>;
  /** task.wait.time by (dependent prefix, activity). */
  wait: Array<{ prefix: string; activity: string; seconds: number }>;
  /** task.gather.size by transfer outcome, bytes. */
  gatherBytes: Record<string, number>;
  /** task.serve.time by activity: get_data requests answered for peers. */
  serve?: Record<string, number>;
  /** task.serve.size by outcome, bytes. */
  serveBytes?: Record<string, number>;
  /** v8js.gc.duration: pauses and seconds by GC type. */
  gc?: Record<string, { count: number; seconds: number }>;
  /** taskjourney.dropped by reason. */
  dropped: Record<string, number>;
  /** Each computation's totals (`journeys.computations()`): one per graph submission. */
  computations?: ComputationTotals[];
}

export interface SlowJourney {
  key: string;
  seconds: number;
  breakdown: Breakdown | undefined;
  /** Whether its worker exported its journey's trace (head-sampled, or kept at its end as slow). */
  traced?: boolean;
}

export interface WorkerSummary {
  address: string;
  pid: number;
  nthreads: number;
  /** CPU seconds of the whole process (its threads included) from its first task to the summary. */
  cpuSeconds: number;
  counters: Record<string, number>;
  telemetry: TelemetryTotals | undefined;
  /** The slowest compute journeys on this worker, slowest first. */
  slowest: SlowJourney[];
  /** The slowest compute journey whose trace this worker exported, when any was. */
  slowestTraced?: SlowJourney;
}
