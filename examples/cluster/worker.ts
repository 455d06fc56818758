/**
 * A worker process: `fork`ed by main.ts with its configuration in TASKJOURNEY_WORKER. It serves
 * its data to peers on a TCP port of its own, registers with the scheduler, and runs what the
 * scheduler sends on a piscina thread pool, fetching dependencies from peers and spilling to disk
 * above its memory limit.
 *
 * Telemetry, when on, goes through taskjourney's public API only:
 *   - the state machine's transitions, dependencies and fetch-queue reasons → journeys.transition
 *     / dependencies / queued (an observer, see `observe`);
 *   - each task run → an execute ledger: unspill (disk-read, deserialize) and spills
 *     (serialize, disk-write) metered ambiently by the store, the thread's times digested;
 *   - each gather_dep → a gather ledger: connect, network (with the bytes), deserialize, and the
 *     spills its data causes.
 */
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import type { ExecuteLedger, GatherLedger, TaskJourneys } from "../../src/index.js";
import { SECEDING, sizeOf } from "./functions.js";
import type { ComputeTaskMessage, GetDataReply, SlowJourney, WorkerSummary } from "./protocol.js";
import { injectProducer, linkProducers, parentFromScheduler } from "./propagation.js";
import { readTotals } from "./report.js";
import { SpillBuffer, type Meter } from "./spill.js";
import type { ThreadResult, ThreadTask } from "./tasks.js";
import { startTelemetry, type Telemetry } from "./telemetry.js";
import { Connection, ConnectionPool, connect, listen, type Message } from "./transport.js";
import { DEFAULT_WORKER_STATE_OPTIONS, WorkerState, type GatherOutcome, type WorkerTask, type WorkerStateObserver } from "./worker-state.js";

export interface WorkerConfig {
  scheduler: string;
  nthreads: number;
  /** Bytes in memory before spilling. */
  memoryLimit: number;
  /** A directory for this worker's spill files (removed at exit). */
  spillDirectory: string;
  outDir: string;
  telemetry: boolean;
  traceRatio: number;
  /** get_data requests served at once before answering "busy". */
  outgoingLimit: number;
  verbose: boolean;
}

/** Tells taskjourney what the state machine does. */
export function observe(journeys: TaskJourneys): WorkerStateObserver {
  return {
    transition: (key, from, to) => journeys.transition(key, from, to),
    dependencies: (key, dependencies) => journeys.dependencies(key, dependencies),
    queued: (key, reason) => journeys.queued(key, reason),
  };
}

const unmetered: Meter = (_activity, work) => work();
const SLOWEST_KEPT = 3;

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
  private readonly slowest: SlowJourney[] = [];
  private readonly counters = { servedGetData: 0, answeredBusy: 0 };

  constructor(private readonly config: WorkerConfig) {}

  async start(): Promise<void> {
    const { server, address } = await listen((connection) => {
      connection.onMessage = (message) => this.handlePeer(connection, message);
    });
    this.server = server;
    this.address = address;
    if (this.config.telemetry) {
      this.telemetry = startTelemetry({ role: "worker", instance: address, outDir: this.config.outDir, traceRatio: this.config.traceRatio });
      this.journeys = this.telemetry.journeys;
    }
    const journeys = this.journeys;
    this.store = new SpillBuffer(
      this.config.memoryLimit,
      path.join(this.config.spillDirectory, address.replace(/\W+/g, "_")),
      journeys === undefined ? unmetered : (activity, work) => journeys.meter(activity, work),
    );
    this.threads = new Piscina({
      filename: new URL("./tasks.ts", import.meta.url).href,
      minThreads: this.config.nthreads,
      // Room for seceded tasks, which keep their thread but stop counting against nthreads.
      maxThreads: this.config.nthreads + 8,
      idleTimeout: 60_000,
    });
    this.state = new WorkerState({ ...DEFAULT_WORKER_STATE_OPTIONS, address, nthreads: this.config.nthreads }, {
      execute: (task) => void this.execute(task),
      gatherDep: (peer, tasks) => void this.gatherDep(peer, tasks),
      taskFinished: (task) => this.taskFinished(task),
      taskErred: (task, error) => this.scheduler.send({ op: "task-erred", key: task.key, error }),
      release: (key) => this.store.delete(key),
      whoHas: (keys) => void this.whoHas(keys),
    });
    if (journeys !== undefined) this.state.observer = observe(journeys);
    // Start every thread before taking work: a thread loads the task module (through tsx) first.
    await Promise.all(Array.from({ length: this.config.nthreads }, () => this.threads.run({ func: "poll", args: [0, 20] } satisfies ThreadTask)));
    this.scheduler = await connect(this.config.scheduler);
    this.scheduler.onMessage = (message) => this.handleScheduler(message);
    this.scheduler.onClose = () => {
      if (!this.closing) this.die("lost the scheduler connection");
    };
    await this.scheduler.request({ op: "register", address, nthreads: this.config.nthreads, pid: process.pid, memoryLimit: this.config.memoryLimit });
    this.log(`ready, ${this.config.nthreads} threads, memory limit ${this.config.memoryLimit} bytes`);
  }

  // ---- messages ---------------------------------------------------------------------------------

  private handleScheduler(message: Message): void {
    switch (message.op) {
      case "compute-task": {
        const task = message as ComputeTaskMessage;
        if (this.journeys !== undefined) parentFromScheduler(this.journeys, task.key, task.carrier);
        this.state.computeTask(task);
        break;
      }
      case "free-keys":
        this.state.freeKeys(message.keys as string[]);
        break;
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
    if (this.outgoing >= this.config.outgoingLimit) {
      this.counters.answeredBusy++;
      connection.reply(message, { op: "data", status: "busy" });
      return;
    }
    this.outgoing++;
    this.counters.servedGetData++;
    const data: Record<string, Uint8Array> = {};
    const carriers: Record<string, Record<string, string>> = {};
    for (const key of message.keys as string[]) {
      const bytes = this.store.serialized(key);
      if (bytes === undefined) continue;
      data[key] = bytes;
      if (this.journeys !== undefined) {
        const carrier = injectProducer(this.journeys, key);
        if (carrier !== undefined) carriers[key] = carrier;
      }
    }
    connection.reply(message, { op: "data", status: "OK", data, carriers } satisfies GetDataReply);
    // The transfer counts until the socket has taken all of it.
    if (connection.socket.writableNeedDrain) connection.socket.once("drain", () => this.outgoing--);
    else this.outgoing--;
  }

  // ---- what the state machine asks for ---------------------------------------------------------

  private async execute(task: WorkerTask): Promise<void> {
    const ledger: ExecuteLedger | undefined = this.journeys?.execute(task.key);
    const run = async (): Promise<number> => {
      // Dependencies from the store: spilled ones are read back (metered as unspill).
      const args = task.args.map((arg) => {
        if (typeof arg !== "object") return arg;
        const value = this.store.get(arg.ref);
        if (value === undefined) throw new Error(`dependency ${arg.ref} of ${task.key} is not in memory`);
        return value;
      });
      const message: ThreadTask = { func: task.func, args };
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
      this.store.set(task.key, result.value, size);
      return size;
    };
    try {
      const nbytes = ledger === undefined ? await run() : await ledger.run(run);
      ledger?.end("memory");
      this.state.executeDone(task.key, { ok: true, nbytes });
      this.noteSlow(task);
    } catch (error) {
      ledger?.end("error");
      this.state.executeDone(task.key, { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }

  private async gatherDep(peer: string, tasks: WorkerTask[]): Promise<void> {
    const keys = tasks.map((task) => task.key);
    const ledger: GatherLedger | undefined = this.journeys?.gather(peer, keys);
    const meter: Meter = ledger === undefined ? unmetered : (activity, work) => ledger.meter(activity, work);
    const received = new Map<string, number>();
    const transfer = async (): Promise<GatherOutcome> => {
      let connection: Connection;
      try {
        connection = await meter("connect", () => this.peers.acquire(peer));
      } catch {
        return "failed";
      }
      let reply: GetDataReply;
      try {
        reply = await meter("network", () => connection.request<GetDataReply>({ op: "get_data", keys, who: this.address }));
      } catch {
        connection.destroy();
        return "failed";
      }
      this.peers.release(peer, connection);
      if (reply.status === "busy") return "busy";
      const data = reply.data ?? {};
      let bytes = 0;
      for (const key of keys) if (data[key] !== undefined) bytes += data[key].byteLength;
      ledger?.digest("network", bytes, "bytes");
      for (const key of keys) {
        const serialized = data[key];
        if (serialized === undefined) continue;
        const value = meter("deserialize", () => v8.deserialize(serialized));
        const size = sizeOf(value);
        this.store.set(key, value, size);
        received.set(key, size);
      }
      if (this.journeys !== undefined && reply.carriers !== undefined) linkProducers(this.journeys, reply.carriers);
      return received.size === 0 ? "missing" : "ok";
    };
    const outcome = ledger === undefined ? await transfer() : await ledger.run(transfer);
    ledger?.end(outcome);
    this.state.gatherDepDone(peer, tasks, outcome, received);
    if (received.size > 0) this.scheduler.send({ op: "add-keys", keys: [...received.keys()] });
  }

  private taskFinished(task: WorkerTask): void {
    this.scheduler.send({ op: "task-finished", key: task.key, nbytes: task.nbytes });
  }

  private async whoHas(keys: string[]): Promise<void> {
    try {
      const reply = await this.scheduler.request({ op: "who-has", keys });
      this.state.whoHasReply(reply.who as Record<string, string[]>);
    } catch (error) {
      if (!this.closing) this.log(`who-has failed: ${String(error)}`);
    }
  }

  /** Keeps the explain() of the slowest compute journeys, taken when they end. */
  private noteSlow(task: WorkerTask): void {
    const seconds = (performance.now() - task.arrived) / 1000;
    const slowest = this.slowest;
    if (slowest.length >= SLOWEST_KEPT && seconds <= slowest[slowest.length - 1].seconds) return;
    slowest.push({ key: task.key, seconds, breakdown: this.journeys?.explain(task.key) });
    slowest.sort((a, b) => b.seconds - a.seconds);
    if (slowest.length > SLOWEST_KEPT) slowest.pop();
  }

  private async summary(): Promise<WorkerSummary> {
    return {
      address: this.address,
      pid: process.pid,
      nthreads: this.config.nthreads,
      counters: {
        ...this.state.counters,
        ...this.store.counters,
        ...this.counters,
        connectionsOpened: this.peers.opened,
        connectionsReused: this.peers.reused,
      },
      telemetry: this.journeys === undefined ? undefined : await readTotals(this.journeys),
      slowest: this.slowest,
    };
  }

  // ---- the end ----------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.state.close();
    this.peers.closeAll();
    this.server.close();
    await this.threads.destroy();
    await this.telemetry?.shutdown();
    this.store.close();
    this.scheduler.close();
    process.exit(0);
  }

  die(reason: string): never {
    process.stderr.write(`worker ${this.address}: ${reason}; exiting\n`);
    this.store?.close();
    process.exit(1);
  }

  private log(line: string): void {
    if (this.config.verbose) process.stderr.write(`worker ${this.address}: ${line}\n`);
  }
}

/**
 * The thread's own times as execute activities: thread-cpu (on CPU), thread-noncpu (runnable but
 * not running, or blocked), seceded (after secede()), and executor (handing the task to the
 * thread and the result back, structured clone included). They add up to the pool call's time.
 */
function digestThreadTimes(ledger: ExecuteLedger, result: ThreadResult, poolSeconds: number): void {
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
  process.on("uncaughtException", (error) => {
    process.stderr.write(`worker ${worker.address}: ${error.stack ?? String(error)}\n`);
    worker.die("uncaught error");
  });
  await worker.start();
}

await main();
