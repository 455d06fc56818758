/**
 * A worker process: `fork`ed by main.ts with its configuration in TASKJOURNEY_WORKER. It serves
 * its data to peers on a TCP port of its own, registers with the scheduler, and runs what the
 * scheduler sends on a piscina thread pool, fetching dependencies from peers and spilling to disk
 * above its memory limit.
 *
 * Telemetry, when on, goes through taskjourney's public API only (see `instrumentWorker`):
 *   - `instrument()` on the state machine: its `transition` method, and `computeTask` for each
 *     task's dependencies; `journeys.queued` for why a key waits in fetch;
 *   - `instrument()` on this worker: `execute` is an execute ledger (the thread's own times are
 *     digested into it), `gatherDep` a gather ledger (connect, network with the bytes,
 *     deserialize);
 *   - `instrument()` on the data store: spill (serialize, disk-write) and unspill (disk-read,
 *     deserialize) as activities of whatever execution or transfer caused them, and the spill
 *     files' sizes digested into the same ledger as bytes (task.execute.size);
 *   - `journeys.serve` on each get_data request answered for a peer: a serve ledger (disk-read
 *     and serialize through the instrumented store, network until the socket took the reply);
 *   - trace context: `propagation.receiver.continueFrom` from the scheduler's compute-task carrier,
 *     `propagation.sender.inject` into task-finished / task-erred (the carrier back to the scheduler) and
 *     into get_data replies, and `propagation.receiver.dataFrom` on receiving those;
 *     `journeys.injectTransfer` of the gather_dep into the request and of the get_data into the
 *     reply, `journeys.linkTransfer` on receiving it.
 */
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import zlib from "node:zlib";
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import type { ActivityLedger, GatherLedger, TaskJourneys, TraceCarrier, Unwrap } from "../../src/index.js";
import { taskjourney } from "./taskjourney.js";
import { SECEDING, sizeOf } from "./functions.mjs";
import type {
  ComputeTaskMessage,
  GetDataReply,
  SlowJourney,
  ThreadResult,
  ThreadTask,
  WorkerSummary,
} from "./protocol.js";
import { readTotals } from "./report.js";
import { SPILL_ACTIVITIES, SpillBuffer } from "./spill.js";
import { gcSoFar, partOff } from "./parts.js";
import { profileMark } from "./profile-marks.js";
import { FLUSH_DEADLINE_MS, startTelemetry, type Telemetry } from "./telemetry.js";
import type { ExportErrorCount } from "../../src/sdk.js";
import { Connection, ConnectionPool, connect, listen, type Message } from "./transport.js";
import {
  DEFAULT_WORKER_STATE_OPTIONS,
  WorkerState,
  type ComputeTaskEvent,
  type GatherOutcome,
  type WorkerTask,
} from "./worker-state.js";

export interface WorkerConfig {
  scheduler: string;
  nthreads: number;
  /** Bytes in memory before spilling. */
  memoryLimit: number;
  /** A directory for this worker's spill files (removed at exit). */
  spillDirectory: string;
  outDir: string;
  telemetry: boolean;
  traceRatio: number | "off";
  /** get_data requests served at once before answering "busy". */
  outgoingLimit: number;
  verbose: boolean;
}

/** What a closing worker tells its parent (over the fork IPC channel) once its telemetry is flushed or the flush deadline passed. */
export interface FlushReport {
  op: "flushed";
  completed: boolean;
  exportErrors: ExportErrorCount[];
}

/** What one gather_dep brought: its outcome and the in-memory size of each key received. */
export interface GatherResult {
  outcome: GatherOutcome;
  received: Map<string, number>;
}

/**
 * Hooks taskjourney into a worker, its state machine and its store, with `instrument()` (the
 * objects' methods are wrapped in place; the returned function unwraps them all).
 */
export function instrumentWorker(
  worker: Worker,
  state: WorkerState,
  store: SpillBuffer,
  journeys: TaskJourneys,
): Unwrap {
  const unwraps = [
    taskjourney.instrument(state, journeys, {
      transition: {
        method: "transition",
        key: (task) => task.key,
        from: (task) => task.state,
        to: (_task, to) => to,
        // The graph submission, on the move that begins a compute journey only (fetches serve any):
        // every other move passes no options object.
        computation: (task) => (task.state === "released" && task.compute ? task.computation : undefined),
      },
      // Benchmark switch (parts.ts): no dependencies told.
      ...(partOff("worker-dependencies")
        ? {}
        : {
            dependencies: {
              method: "computeTask" as const,
              key: (event: ComputeTaskEvent) => event.key,
              dependencies: (event: ComputeTaskEvent) => event.deps.map((dep) => dep.key),
            },
          }),
    }),
    taskjourney.instrument(worker, journeys, {
      // Benchmark switches (parts.ts): the execute ledger, or the gather ledger and its activities, left out.
      ...(partOff("worker-execute") ? {} : { execute: { method: "execute", key: (task: WorkerTask) => task.key } }),
      ...(partOff("worker-transfers")
        ? {}
        : {
            gather: {
              method: "gatherDep",
              peer: (peer: string) => peer,
              keys: (_peer: string, tasks: WorkerTask[]) => tasks.map((task) => task.key),
              outcome: (result: GatherResult | undefined) => result?.outcome,
            },
            activities: [
              { method: "connectTo", activity: "connect" },
              { method: "requestData", activity: "network" },
              { method: "deserialize", activity: "deserialize" },
              { method: "compress", activity: "compress" },
              { method: "decompress", activity: "decompress" },
            ],
          }),
    }),
    // Benchmark switch (parts.ts): the store's activities left out.
    ...(partOff("worker-store") ? [] : [taskjourney.instrument(store, journeys, { activities: SPILL_ACTIVITIES })]),
  ];
  state.observer = { queued: (key, reason) => journeys.queued(key, reason) };
  // Spill file sizes, as quantities of the execution or transfer that caused the spill.
  store.onFileBytes = (activity, bytes) => journeys.currentLedger()?.digest(activity, bytes, "bytes");
  return () => {
    unwraps.forEach((unwrap) => unwrap());
    store.onFileBytes = () => {};
  };
}

const SLOWEST_KEPT = 3;

// Benchmark switches (parts.ts), read once: trace carriers in messages, the thread CPU readings,
// the worker's instrument() (and serve ledgers), the transfers' ledgers. All on unless
// TASKJOURNEY_CLUSTER_OFF names them.
const CARRIERS = !partOff("carriers");
const THREAD_CLOCK = !partOff("thread-clock");
const INSTRUMENT = !partOff("worker-instrument");
const SERVE_LEDGERS = INSTRUMENT && !partOff("worker-transfers");
/** get_data values above this many bytes go compressed (deflate), as Dask compresses large frames. */
export const COMPRESS_ABOVE = 16 * 1024;

export class Worker {
  address = "";
  private scheduler!: Connection;
  private state!: WorkerState;
  private store!: SpillBuffer;
  private threads!: Piscina;
  private server!: Awaited<ReturnType<typeof listen>>["server"];
  private telemetry: Telemetry | undefined;
  private journeys: TaskJourneys | undefined;
  private readonly peers = new ConnectionPool();
  private outgoing = 0;
  private closing = false;
  private dying = false;
  private readonly slowest: SlowJourney[] = [];
  private slowestTraced: SlowJourney | undefined;
  private readonly counters = {
    servedGetData: 0,
    answeredBusy: 0,
    explained: 0,
    // Bytes in and out of compress (serving) and decompress (fetching).
    compressIn: 0,
    compressOut: 0,
    decompressIn: 0,
    decompressOut: 0,
  };
  /** Process CPU time (all threads) when the first task arrived. */
  private cpuAtFirstTask: NodeJS.CpuUsage | undefined;
  /**
   * With TASKJOURNEY_STIMULUS=<directory>: the messages this worker receives (compute-task and
   * free-keys from the scheduler, get_data from peers) are appended to a file there, one JSON line
   * each, for bench/cluster-replay.ts to replay the same stimulus deterministically.
   */
  private readonly stimulus =
    process.env.TASKJOURNEY_STIMULUS === undefined
      ? undefined
      : path.join(process.env.TASKJOURNEY_STIMULUS, `worker-${process.pid}.jsonl`);

  constructor(private readonly config: WorkerConfig) {}

  async start(): Promise<void> {
    this.log(`modules loaded ${(performance.now() / 1000).toFixed(2)} s after process start`);
    const { server, address } = await listen((connection) => {
      connection.onMessage = (message) => this.handlePeer(connection, message);
    });
    this.server = server;
    this.address = address;
    if (this.config.telemetry) {
      this.telemetry = await startTelemetry({
        role: "worker",
        instance: address,
        outDir: this.config.outDir,
        traceRatio: this.config.traceRatio,
      });
      this.journeys = this.telemetry.journeys;
    }
    this.store = new SpillBuffer(
      this.config.memoryLimit,
      path.join(this.config.spillDirectory, address.replace(/\W+/g, "_")),
    );
    this.threads = new Piscina({
      filename: new URL("./tasks.mjs", import.meta.url).href,
      // Plain JavaScript: the threads need no TypeScript loader (tsx would cost ~1 s per thread).
      execArgv: [],
      minThreads: this.config.nthreads,
      // Room for seceded tasks, which keep their thread but stop counting against nthreads.
      maxThreads: this.config.nthreads + 8,
      idleTimeout: 60_000,
    });
    this.state = new WorkerState(
      { ...DEFAULT_WORKER_STATE_OPTIONS, address, nthreads: this.config.nthreads },
      {
        execute: (task) => this.runTask(task),
        gatherDep: (peer, tasks) => this.fetch(peer, tasks),
        taskFinished: (task) => this.taskFinished(task),
        taskErred: (task, error) =>
          this.scheduler.send({ op: "task-erred", key: task.key, error, ...this.resultCarrier(task.key) }),
        release: (key) => this.store.delete(key),
        whoHas: (keys) => void this.whoHas(keys),
      },
    );
    if (this.journeys !== undefined && INSTRUMENT) instrumentWorker(this, this.state, this.store, this.journeys);
    // Start every thread before taking work, so that the first tasks do not wait for thread start-up.
    await Promise.all(
      Array.from({ length: this.config.nthreads }, () =>
        this.threads.run({ func: "poll", args: [0, 20] } satisfies ThreadTask),
      ),
    );
    this.scheduler = await connect(this.config.scheduler);
    this.scheduler.onMessage = (message) => this.handleScheduler(message);
    this.scheduler.onClose = () => {
      if (!this.closing) this.die("lost the scheduler connection");
    };
    await this.scheduler.request({
      op: "register",
      address,
      nthreads: this.config.nthreads,
      pid: process.pid,
      memoryLimit: this.config.memoryLimit,
    });
    this.log(
      `ready ${(performance.now() / 1000).toFixed(2)} s after process start, ${this.config.nthreads} threads, memory limit ${this.config.memoryLimit} bytes`,
    );
  }

  // ---- messages ---------------------------------------------------------------------------------

  private handleScheduler(message: Message): void {
    if (this.stimulus !== undefined && (message.op === "compute-task" || message.op === "free-keys"))
      record(this.stimulus, "scheduler", message);
    switch (message.op) {
      case "compute-task": {
        const task = message as ComputeTaskMessage;
        this.cpuAtFirstTask ??= process.cpuUsage();
        // Before the key's first transition here, so that its journey nests under the scheduler's.
        if (this.journeys !== undefined && CARRIERS && task.carrier !== undefined)
          this.journeys.propagation.receiver.continueFrom(task.key, task.carrier);
        this.state.computeTask(task);
        break;
      }
      case "free-keys":
        this.state.freeKeys(message.keys as string[]);
        break;
      case "cpu": {
        profileMark();
        const used = process.cpuUsage();
        this.scheduler.reply(message, { op: "cpu", cpuSeconds: (used.user + used.system) / 1e6, gc: gcSoFar() });
        break;
      }
      case "summary":
        void this.summary().then((summary) => this.scheduler.reply(message, { op: "summary", summary }));
        break;
      case "close":
        void this.close();
        break;
    }
  }

  private handlePeer(connection: Connection, message: Message): void {
    if (message.op !== "get_data") return;
    if (this.stimulus !== undefined) record(this.stimulus, "peer", message);
    const keys = message.keys as string[];
    // The serving side of the peer's gather_dep (Dask's get-data-* activities): reading spilled
    // values back (disk-read) and serializing held ones, metered by the instrumented store, and
    // the socket taking the reply (network). A traced request carries its gather_dep's context.
    const ledger = SERVE_LEDGERS
      ? this.journeys?.serve(String(message.who), keys, {
          context: CARRIERS ? (message.carrier as TraceCarrier | undefined) : undefined,
        })
      : undefined;
    if (this.outgoing >= this.config.outgoingLimit) {
      this.counters.answeredBusy++;
      const busy: GetDataReply = { op: "data", status: "busy" };
      // A busy answer is a served request too: the requester's gather_dep links to it.
      const serveCarrier: TraceCarrier = {};
      if (ledger !== undefined && CARRIERS && this.journeys!.propagation.sender.injectTransfer(ledger, serveCarrier))
        busy.serveCarrier = serveCarrier;
      connection.reply(message, busy);
      ledger?.end("busy");
      return;
    }
    this.outgoing++;
    this.counters.servedGetData++;
    const data: Record<string, Uint8Array> = {};
    // Only keys whose journeys are traced have a carrier (about 1 in 100): no field, no object, otherwise.
    let carriers: Record<string, Record<string, string>> | undefined;
    let carrier: TraceCarrier = {};
    let bytes = 0;
    let compressed: string[] | undefined;
    within(ledger, () => {
      for (const key of keys) {
        let serialized: Uint8Array | undefined = this.store.serialized(key);
        if (serialized === undefined) continue;
        if (serialized.byteLength > COMPRESS_ABOVE) {
          serialized = this.compress(serialized);
          (compressed ??= []).push(key);
        }
        data[key] = serialized;
        bytes += serialized.byteLength;
        // inject() writes nothing when it returns false, so the same empty carrier serves the next key.
        if (this.journeys !== undefined && CARRIERS && this.journeys.propagation.sender.inject(key, carrier)) {
          (carriers ??= {})[key] = carrier as Record<string, string>;
          carrier = {};
        }
      }
    });
    const reply: GetDataReply = { op: "data", status: "OK", data };
    if (carriers !== undefined) reply.carriers = carriers;
    if (compressed !== undefined) reply.compressed = compressed;
    const serveCarrier: TraceCarrier = {};
    if (ledger !== undefined && CARRIERS && this.journeys!.propagation.sender.injectTransfer(ledger, serveCarrier))
      reply.serveCarrier = serveCarrier;
    const sending = performance.now();
    connection.reply(message, reply);
    const sent = () => {
      this.outgoing--;
      if (ledger === undefined) return;
      ledger.digest("network", (performance.now() - sending) / 1000);
      ledger.digest("network", bytes, "bytes");
      ledger.end(bytes === 0 ? "missing" : "ok");
    };
    // The transfer counts until the socket has taken all of it.
    if (connection.socket.writableNeedDrain) connection.socket.once("drain", sent);
    else sent();
  }

  // ---- what the state machine asks for ---------------------------------------------------------

  /** Runs a task the state machine made executing, then tells it how that went. */
  private runTask(task: WorkerTask): void {
    this.execute(task).then(
      (nbytes) => {
        this.state.executeDone(task.key, { ok: true, nbytes });
        this.noteSlow(task);
      },
      (error: unknown) =>
        this.state.executeDone(task.key, {
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
    );
  }

  /** One task run: arguments from the store (unspilling), the function on a thread, the result into the store. Returns its size. */
  async execute(task: WorkerTask): Promise<number> {
    // Taken before the first await: the ledger is ambient only synchronously (asyncContext: false).
    const ledger = this.journeys?.currentLedger();
    // --gc-every / --block-every: this process stalls as the task starts, outside any activity.
    if (task.func === "majorGc") forceMajorGc();
    else if (task.func === "blockLoop") blockEventLoop(task.args[0] as number);
    const args = task.args.map((arg) => {
      if (typeof arg !== "object") return arg;
      const value = this.store.get(arg.ref);
      if (value === undefined) throw new Error(`dependency ${arg.ref} of ${task.key} is not in memory`);
      return value;
    });
    const message: ThreadTask = { func: task.func, args, measure: this.journeys !== undefined && THREAD_CLOCK };
    const transferList = [];
    if (SECEDING.has(task.func)) {
      const channel = new MessageChannel();
      channel.port1.on("message", () => this.state.secede(task.key));
      channel.port1.unref();
      message.port = channel.port2;
      transferList.push(channel.port2);
    }
    const posted = performance.now();
    const result = (await this.threads.run(message, { transferList })) as ThreadResult;
    const poolSeconds = (performance.now() - posted) / 1000;
    // The secede message may still be on its way when the result arrives.
    if (result.secededAfter !== undefined) this.state.secede(task.key);
    if (ledger !== undefined) digestThreadTimes(ledger, result, poolSeconds);
    const size = sizeOf(result.value);
    // Spills this causes are charged to this execution.
    within(ledger, () => this.store.set(task.key, result.value, size));
    return size;
  }

  /** Fetches keys the state machine put in flight, then tells it how that went. */
  private fetch(peer: string, tasks: WorkerTask[]): void {
    this.gatherDep(peer, tasks).then(
      ({ outcome, received }) => {
        this.state.gatherDepDone(peer, tasks, outcome, received);
        if (received.size > 0) this.scheduler.send({ op: "add-keys", keys: [...received.keys()] });
      },
      () => this.state.gatherDepDone(peer, tasks, "failed", new Map()),
    );
  }

  /** One gather_dep: `tasks`' keys from `peer` in one get_data request, into the store. */
  async gatherDep(peer: string, tasks: WorkerTask[]): Promise<GatherResult> {
    // Taken before the first await (asyncContext: false); re-entered after each one.
    const ledger = this.journeys?.currentLedger();
    const keys = tasks.map((task) => task.key);
    const received = new Map<string, number>();
    let connection: Connection;
    try {
      connection = await this.connectTo(peer);
    } catch {
      return { outcome: "failed", received };
    }
    let reply: GetDataReply;
    // The gather_dep's trace context, for the serving peer's get_data span (traced transfers only).
    const carrier: TraceCarrier = {};
    const traced =
      ledger !== undefined &&
      CARRIERS &&
      this.journeys!.propagation.sender.injectTransfer(ledger as GatherLedger, carrier);
    try {
      reply = await within(ledger, () => this.requestData(connection, keys, traced ? carrier : undefined));
    } catch {
      connection.destroy();
      return { outcome: "failed", received };
    }
    this.peers.release(peer, connection);
    if (ledger !== undefined && CARRIERS && reply.serveCarrier !== undefined)
      this.journeys!.propagation.receiver.replyFrom(ledger as GatherLedger, reply.serveCarrier);
    if (reply.status === "busy") return { outcome: "busy", received };
    const data = reply.data ?? {};
    let bytes = 0;
    for (const key of keys) if (data[key] !== undefined) bytes += data[key].byteLength;
    ledger?.digest("network", bytes, "bytes");
    const compressed = reply.compressed === undefined ? undefined : new Set(reply.compressed);
    within(ledger, () => this.receive(keys, data, reply.carriers, received, compressed));
    return { outcome: received.size === 0 ? "missing" : "ok", received };
  }

  /** Deserializes and stores what a get_data reply brought (spills it causes go to the transfer). */
  private receive(
    keys: string[],
    data: Record<string, Uint8Array>,
    carriers: GetDataReply["carriers"],
    received: Map<string, number>,
    compressed: Set<string> | undefined,
  ): void {
    for (const key of keys) {
      let serialized = data[key];
      if (serialized === undefined) continue;
      if (compressed?.has(key) === true) serialized = this.decompress(serialized);
      const value = this.deserialize(serialized);
      const size = sizeOf(value);
      this.store.set(key, value, size);
      received.set(key, size);
      const carrier = carriers?.[key];
      if (this.journeys !== undefined && CARRIERS && carrier !== undefined)
        this.journeys.propagation.receiver.dataFrom(key, carrier);
    }
  }

  connectTo(peer: string): Promise<Connection> {
    return this.peers.acquire(peer);
  }

  requestData(connection: Connection, keys: string[], carrier?: TraceCarrier): Promise<GetDataReply> {
    return connection.request<GetDataReply>(
      carrier === undefined
        ? { op: "get_data", keys, who: this.address }
        : { op: "get_data", keys, who: this.address, carrier },
    );
  }

  /** Deflates a serialized value for a peer; the bytes in and out go to the ledger (compress) and the counters. */
  compress(bytes: Uint8Array): Uint8Array {
    const out = zlib.deflateRawSync(bytes, { level: 1 });
    this.counters.compressIn += bytes.byteLength;
    this.counters.compressOut += out.byteLength;
    const ledger = this.journeys?.currentLedger();
    ledger?.digest("compress", bytes.byteLength, "bytes-in");
    ledger?.digest("compress", out.byteLength, "bytes-out");
    return out;
  }

  /** Inflates a value a peer sent compressed. */
  decompress(bytes: Uint8Array): Uint8Array {
    const out = zlib.inflateRawSync(bytes);
    this.counters.decompressIn += bytes.byteLength;
    this.counters.decompressOut += out.byteLength;
    const ledger = this.journeys?.currentLedger();
    ledger?.digest("decompress", bytes.byteLength, "bytes-in");
    ledger?.digest("decompress", out.byteLength, "bytes-out");
    return out;
  }

  deserialize(bytes: Uint8Array): unknown {
    return v8.deserialize(bytes);
  }

  private taskFinished(task: WorkerTask): void {
    this.scheduler.send({ op: "task-finished", key: task.key, nbytes: task.nbytes, ...this.resultCarrier(task.key) });
  }

  /**
   * The second carrier of a task: its journey here, back to the scheduler with the result, so a
   * journey kept here at its end (failed, slow) keeps the scheduler's too (`returned()`).
   */
  private resultCarrier(key: string): { carrier?: TraceCarrier } {
    const carrier: TraceCarrier = {};
    return this.journeys !== undefined && CARRIERS && this.journeys.propagation.sender.inject(key, carrier)
      ? { carrier }
      : {};
  }

  private async whoHas(keys: string[]): Promise<void> {
    try {
      const reply = await this.scheduler.request({ op: "who-has", keys });
      this.state.whoHasReply(reply.who as Record<string, string[]>);
    } catch (error) {
      if (!this.closing) this.log(`who-has failed: ${String(error)}`);
    }
  }

  /**
   * Keeps the explain() of the slowest compute journeys, taken when they end, each with whether
   * its trace was exported, and apart the slowest whose trace was: the demo names a slowest task
   * one can look at in the traces, or says why it cannot.
   */
  private noteSlow(task: WorkerTask): void {
    const seconds = (performance.now() - task.arrived) / 1000;
    const slowest = this.slowest;
    const among = slowest.length < SLOWEST_KEPT || seconds > slowest[slowest.length - 1].seconds;
    const beyondTraced = this.slowestTraced === undefined || seconds > this.slowestTraced.seconds;
    if (!among && !beyondTraced) return;
    const traced = this.traced(task.key);
    if (!among && !traced) return;
    this.counters.explained++;
    const journey: SlowJourney = { key: task.key, seconds, breakdown: this.journeys?.explain(task.key), traced };
    if (traced && beyondTraced) this.slowestTraced = journey;
    if (!among) return;
    slowest.push(journey);
    slowest.sort((a, b) => b.seconds - a.seconds);
    if (slowest.length > SLOWEST_KEPT) slowest.pop();
  }

  /**
   * Whether the ended journey of `key` here was exported: inject() names an ended journey only
   * when it was kept (head-sampled, or kept at its end), and writes nothing for one that was not.
   */
  private traced(key: string): boolean {
    return this.journeys !== undefined && this.journeys.propagation.sender.inject(key, {});
  }

  private async summary(): Promise<WorkerSummary> {
    return {
      address: this.address,
      pid: process.pid,
      nthreads: this.config.nthreads,
      cpuSeconds: cpuSecondsSince(this.cpuAtFirstTask),
      counters: {
        ...this.state.counters,
        ...this.store.counters,
        ...this.counters,
        connectionsOpened: this.peers.opened,
        connectionsReused: this.peers.reused,
      },
      telemetry: this.journeys === undefined ? undefined : await readTotals(this.journeys),
      slowest: this.slowest.map((journey) => this.withTotalsNow(journey)),
      ...(this.slowestTraced === undefined ? {} : { slowestTraced: this.withTotalsNow(this.slowestTraced) }),
    };
  }

  /**
   * `journey` with its computation's totals as they are now. explain() gives them as they were
   * when it was called, at the journey's end, while the computation's other tasks still ran ("1
   * live", "so far"); the summary is read after the run, so its line says how the computation
   * ended. One no longer kept here (retired past limits.maxComputations) keeps the earlier totals.
   */
  private withTotalsNow(journey: SlowJourney): SlowJourney {
    const breakdown = journey.breakdown;
    if (breakdown?.computation === undefined || this.journeys === undefined) return journey;
    const [now] = this.journeys.computations(breakdown.computation);
    return now === undefined ? journey : { ...journey, breakdown: { ...breakdown, computationTotals: now } };
  }

  // ---- the end ----------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.state.close();
    this.peers.closeAll();
    this.server.close();
    await this.threads.destroy();
    // Bounded by FLUSH_DEADLINE_MS; the parent waits for this report (or the deadline and a
    // grace) before it would kill this process, so a flush is never cut short by a kill.
    const flushed = (await this.telemetry?.shutdown()) ?? { completed: true };
    const report: FlushReport = {
      op: "flushed",
      completed: flushed.completed,
      exportErrors: this.telemetry?.exportErrors() ?? [],
    };
    await new Promise<void>((resolve) => {
      try {
        if (process.send === undefined) resolve();
        else process.send(report, () => resolve());
      } catch {
        resolve(); // the parent is gone
      }
    });
    this.store.close();
    this.removeSpillRoot();
    this.scheduler.close();
    process.exit(0);
  }

  /**
   * Leaves without being told to (the scheduler or the parent gone, a signal, an uncaught error),
   * with code 1. What this process recorded is flushed first, as close() does, for at most
   * FLUSH_DEADLINE_MS (the telemetry's own bound; a backstop should it not keep it): a scheduler
   * killed half way must not take its workers' unexported spans and metrics with it. Once: a
   * second cause while flushing changes nothing.
   */
  die(reason: string): void {
    if (this.dying) return;
    this.dying = true;
    process.stderr.write(`worker ${this.address}: ${reason}; exiting\n`);
    const exit = (): never => {
      this.store?.close();
      this.removeSpillRoot();
      process.exit(1);
    };
    const telemetry = this.telemetry;
    if (telemetry === undefined) exit();
    try {
      // No new work while flushing: results could go nowhere.
      this.state?.close();
    } catch {
      // not started yet
    }
    setTimeout(exit, FLUSH_DEADLINE_MS + 1_000);
    void telemetry!.shutdown().finally(exit);
  }

  /** The parent removes the spill root at exit; if it died first, the last worker out does. */
  private removeSpillRoot(): void {
    try {
      fs.rmdirSync(this.config.spillDirectory);
    } catch {
      // not empty (another worker still uses it) or already gone
    }
  }

  private log(line: string): void {
    if (this.config.verbose) process.stderr.write(`worker ${this.address}: ${line}\n`);
  }
}

/** Appends one received message to the stimulus file (see Worker.stimulus). */
function record(file: string, from: "scheduler" | "peer", message: Message): void {
  fs.appendFileSync(file, `${JSON.stringify({ from, message })}\n`);
}

/** Runs `work` with `ledger` ambient, if there is one. */
function within<T>(ledger: ActivityLedger | undefined, work: () => T): T {
  return ledger === undefined ? work() : ledger.run(work);
}

function cpuSecondsSince(start: NodeJS.CpuUsage | undefined): number {
  if (start === undefined) return 0;
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/**
 * The thread's own times as execute activities: thread-cpu (on CPU), thread-noncpu (runnable but
 * not running, or blocked), seceded (after secede()), and executor (handing the task to the
 * thread and the result back, structured clone included). They add up to the pool call's time.
 */
function digestThreadTimes(ledger: ActivityLedger, result: ThreadResult, poolSeconds: number): void {
  const attached = result.secededAfter ?? result.wall;
  if (result.cpu !== undefined) {
    const cpu = Math.min(result.cpu, attached);
    ledger.digest("thread-cpu", cpu);
    ledger.digest("thread-noncpu", attached - cpu);
  } else {
    ledger.digest("thread-wall", attached);
  }
  if (result.secededAfter !== undefined) ledger.digest("seceded", result.wall - result.secededAfter);
  ledger.digest("executor", Math.max(0, poolSeconds - result.wall));
}

async function main(): Promise<void> {
  const raw = process.env.TASKJOURNEY_WORKER;
  if (raw === undefined) throw new Error("worker.ts is started by main.ts (TASKJOURNEY_WORKER is not set)");
  const config = JSON.parse(raw) as WorkerConfig;
  if (config.memoryLimit === null) config.memoryLimit = Infinity; // JSON has no Infinity
  fs.mkdirSync(config.spillDirectory, { recursive: true });
  const worker = new Worker(config);
  // The parent is gone (even killed with SIGKILL): never outlive it.
  process.on("disconnect", () => worker.die("parent process gone"));
  // Stopped from outside (Ctrl-C reaches the whole process group): flushed first, as above.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.on(signal, () => worker.die(`received ${signal}`));
  if (!process.connected) worker.die("parent process gone before this worker started");
  process.on("uncaughtException", (error) => {
    process.stderr.write(`worker ${worker.address}: ${error.stack ?? String(error)}\n`);
    worker.die("uncaught error");
  });
  await worker.start();
}

// Started by main.ts (TASKJOURNEY_WORKER set), or imported by bench/cluster-replay.ts for the Worker class.
if (process.env.TASKJOURNEY_WORKER !== undefined || /[\\/]worker\.ts$/.test(process.argv[1] ?? "")) await main();

/** A full (mark-compact) collection of this process's heap, over enough live objects to take a while. */
function forceMajorGc(): void {
  if (collectGarbage === undefined) {
    // gc() exists only with --expose-gc; set now, the flag makes it in a new context.
    v8.setFlagsFromString("--expose-gc");
    collectGarbage = vm.runInNewContext("gc") as () => void;
  }
  // Live objects are what a major GC marks: a few hundred thousand make its pause milliseconds long.
  const live = Array.from({ length: 300_000 }, (_, index) => ({ index }));
  collectGarbage();
  if (live.length === 0) throw new Error("unreachable");
}
let collectGarbage: (() => void) | undefined;

/** Holds this process's event loop for `milliseconds` (a synchronous spin, as a blocking call would). */
function blockEventLoop(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until) {
    // spin
  }
}
