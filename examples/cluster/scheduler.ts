/**
 * The scheduler: holds the task graph, tracks each key's scheduler state (released, waiting,
 * queued, no-worker, processing, memory, erred), and assigns tasks whose dependencies are in
 * memory to workers.
 *
 * Assignment, in the spirit of Dask's `decide_worker` + `worker_objective`:
 *   - only workers with fewer than ceil(nthreads × saturation) tasks processing are candidates;
 *     with none, the task is queued (or no-worker, when no worker is connected);
 *   - each candidate's expected start = its occupancy / nthreads + the dependency bytes it lacks /
 *     bandwidth, where occupancy is the sum of the estimated durations of its processing tasks;
 *   - the worker holding the most dependency bytes is preferred, unless it would start the task
 *     later than the earliest candidate by more than the task's p90 duration.
 * Durations come from live statistics: `journeys.stats(prefix, "processing")` — mean for
 * occupancy, quantile(0.9) for the move-away margin — once a prefix has 3 finished tasks; before
 * that, a default. A prefix's estimate is read again at most every 100 ms (a reading copies the
 * prefix's histogram, too dear to do per decision). With telemetry off the scheduler keeps the same statistics itself with
 * taskjourney's own DurationStatistics, so decisions are made alike in both modes.
 *
 * Telemetry (`instrumentScheduler`): `instrument()` on the `transition` method records every
 * scheduler state change; the compute-task message carries `journeys.propagation.sender.inject(key)` — the context
 * of the key's task span, naming the processing span for a link — so the worker's journey nests
 * under it; task-finished / task-erred bring the worker's back for `journeys.propagation.receiver.resultFrom(key)`.
 */
import type { DurationStats, TaskJourneys, TraceCarrier, Unwrap } from "../../src/index.js";
// Not part of the package's API: the statistics taskjourney keeps, used here by path so that
// decisions with telemetry off are made exactly as with it on.
import { DurationStatistics } from "../../src/model/statistics/index.js";
import { taskjourney } from "./taskjourney.js";
import { Heap } from "./heap.js";
import { gcSoFar, partOff, type GcTotals } from "./parts.js";
import { profileMark } from "./profile-marks.js";
import type {
  ComputeTaskMessage,
  GetDataReply,
  RegisterMessage,
  TaskFinishedMessage,
  WorkerSummary,
} from "./protocol.js";
import { Connection, connect, listen, type Message } from "./transport.js";
import { priorities, type Graph, type TaskSpec } from "./workloads.js";
import v8 from "node:v8";
import type { Server } from "node:net";

// Benchmark switches (parts.ts), read once: trace carriers in compute-task and task-finished; the
// duration estimates read from journeys.stats (off with the scheduler's instrument(), whose
// transitions feed those statistics: the scheduler then keeps its own, as with telemetry off).
const CARRIERS = !partOff("carriers");
const JOURNEY_STATS = !partOff("scheduler-instrument");

export type SchedulerTaskState =
  "released" | "waiting" | "queued" | "no-worker" | "processing" | "memory" | "erred" | "forgotten";

interface WorkerInfo {
  address: string;
  connection: Connection;
  nthreads: number;
  pid: number;
  processing: Set<SchedulerTask>;
  /** Sum of the estimated durations of the tasks processing there, seconds. */
  occupancy: number;
  hasWhat: Set<SchedulerTask>;
}

export interface SchedulerTask {
  spec: TaskSpec;
  key: string;
  prefix: string;
  state: SchedulerTaskState;
  priority: number;
  dependencies: SchedulerTask[];
  dependents: SchedulerTask[];
  waitingOn: number;
  dependentsDone: number;
  whoHas: Set<WorkerInfo>;
  nbytes: number;
  processingOn: WorkerInfo | undefined;
  /** The duration estimate charged to the worker's occupancy. */
  estimate: number;
  /** performance.now() ms when processing began (for the statistics kept without telemetry). */
  processingSince: number;
  /** The graph submission it came with: taskjourney's computation (what Dask calls a span). */
  computation: string;
}

export interface Estimate {
  mean: number;
  p90: number;
  /** Finished tasks the statistics are based on. */
  count: number;
  /** Whether live statistics were used (else the default). */
  informed: boolean;
}

export interface Decision {
  key: string;
  worker: string;
  estimate: Estimate;
  /** Dependency bytes held by the chosen worker, and in total. */
  heldBytes: number;
  dependencyBytes: number;
  /** Whether the worker holding the most dependency bytes was passed over. */
  movedFromHolder: boolean;
  /** Expected start on the chosen worker and on the earliest candidate, seconds from now. */
  start: number;
  earliest: number;
}

export interface DecisionStats {
  total: number;
  /** Decisions that used live duration statistics. */
  informed: number;
  /** Decisions that passed over the dependency holder. */
  movedFromHolder: number;
  /** Times a ready task was queued because all workers were full. */
  queued: number;
  /** Times a ready task waited for any worker to connect. */
  noWorker: number;
  /** A few decisions in full, for the summary. */
  samples: Decision[];
}

export interface SchedulerOptions {
  journeys?: TaskJourneys;
  /** Tasks per thread a worker may hold before tasks queue. Default 1.5. */
  saturation?: number;
  /** Duration assumed for a prefix without statistics yet, seconds. Default 0.05. */
  defaultDuration?: number;
  /** Bytes per second assumed for transfers. Default 100 MB/s (Dask's default). */
  bandwidth?: number;
  /** How long a prefix's duration estimate is reused before the statistics are read again, ms. Default 100. */
  estimateRefreshMs?: number;
  /**
   * When a task fails, err it and every task that depends on it (as Dask does) and compute the
   * rest; compute() resolves once every task is in memory or erred (with undefined when the root
   * erred). Default false: the first failure rejects compute().
   */
  keepGoing?: boolean;
  /** Log every decision through `log`. */
  verbose?: boolean;
  log?: (line: string) => void;
}

export class Scheduler {
  address = "";
  readonly workers = new Map<string, WorkerInfo>();
  readonly decisions: DecisionStats = {
    total: 0,
    informed: 0,
    movedFromHolder: 0,
    queued: 0,
    noWorker: 0,
    samples: [],
  };
  /** Called as tasks reach memory (or err, with keepGoing). */
  onProgress: (done: number, total: number) => void = () => {};
  /** Tasks that raised on a worker, in the order their failures arrived. */
  readonly failures: Array<{ key: string; error: string }> = [];
  /** Tasks erred: those that raised and those erred because a dependency did. */
  erred = 0;
  private server: Server | undefined;
  private journeys: TaskJourneys | undefined;
  /** An empty carrier for the next compute-task (see assign): replaced only when inject() filled it. */
  private carrier: TraceCarrier = {};
  private readonly saturation: number;
  private readonly defaultDuration: number;
  private readonly bandwidth: number;
  private readonly log: (line: string) => void;
  private readonly verbose: boolean;
  private readonly keepGoing: boolean;
  private readonly tasks = new Map<string, SchedulerTask>();
  private readonly queue = new Heap<SchedulerTask>();
  private readonly noWorker = new Heap<SchedulerTask>();
  private readonly ownStatistics = new Map<string, DurationStatistics>();
  private readonly estimates = new Map<string, { estimate: Estimate; at: number }>();
  private readonly finishedByPrefix = new Map<string, number>();
  private readonly estimateRefreshMs: number;
  private workerWaiters: Array<() => boolean> = [];
  private done = 0;
  /** Graphs submitted so far: each one is a computation, `graph-<n>`. */
  private submissions = 0;
  private run: { root: SchedulerTask; resolve: (value: unknown) => void; reject: (error: Error) => void } | undefined;

  constructor(options: SchedulerOptions = {}) {
    this.journeys = options.journeys;
    this.saturation = options.saturation ?? 1.5;
    this.defaultDuration = options.defaultDuration ?? 0.05;
    this.bandwidth = options.bandwidth ?? 100e6;
    this.estimateRefreshMs = options.estimateRefreshMs ?? 100;
    this.verbose = options.verbose ?? false;
    this.keepGoing = options.keepGoing ?? false;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  async start(): Promise<string> {
    const { server, address } = await listen((connection) => {
      connection.onMessage = (message) => this.handle(connection, message);
      connection.onClose = () => this.lost(connection);
    });
    this.server = server;
    this.address = address;
    return address;
  }

  /** Records this scheduler's journeys there from now on (its address is known only after start()). */
  useJourneys(journeys: TaskJourneys): void {
    this.journeys = journeys;
  }

  /** Resolves once `count` workers have registered. */
  waitForWorkers(count: number, timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.workers.size} of ${count} workers registered within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = () => {
        if (this.workers.size >= count) {
          clearTimeout(timer);
          resolve();
          return true;
        }
        return false;
      };
      if (!check()) this.workerWaiters.push(check);
    });
  }

  /** Submits `graph` and resolves with the value of its root key (see `keepGoing` for failures). */
  compute(graph: Graph): Promise<unknown> {
    if (this.run !== undefined) throw new Error("one graph at a time");
    const order = priorities(graph);
    const computation = `graph-${++this.submissions}`;
    for (const spec of graph.tasks) {
      this.tasks.set(spec.key, {
        spec,
        key: spec.key,
        prefix: taskjourney.keySplit(spec.key),
        state: "released",
        priority: order.get(spec.key)!,
        dependencies: [],
        dependents: [],
        waitingOn: 0,
        dependentsDone: 0,
        whoHas: new Set(),
        nbytes: 0,
        processingOn: undefined,
        estimate: 0,
        processingSince: 0,
        computation,
      });
    }
    for (const task of this.tasks.values()) {
      for (const dep of task.spec.deps) {
        const dependency = this.tasks.get(dep);
        if (dependency === undefined) throw new Error(`${task.key} depends on ${dep}, which is not in the graph`);
        task.dependencies.push(dependency);
        dependency.dependents.push(task);
      }
      task.waitingOn = task.dependencies.length;
    }
    const root = this.tasks.get(graph.root)!;
    const result = new Promise<unknown>((resolve, reject) => (this.run = { root, resolve, reject }));
    const ready: SchedulerTask[] = [];
    for (const task of this.tasks.values()) {
      this.transition(task, "waiting");
      if (task.waitingOn === 0) ready.push(task);
    }
    for (const task of ready.sort((a, b) => a.priority - b.priority)) this.schedule(task);
    return result;
  }

  /**
   * Forgets the finished graph: its result is freed on the worker holding it and every task is
   * forgotten, so that another graph (with keys of its own) can be computed next.
   */
  forget(): void {
    const run = this.run;
    if (run === undefined) return;
    this.run = undefined;
    for (const task of this.tasks.values()) if (task.state === "memory") this.release(task);
    for (const task of this.tasks.values())
      if (task.state === "released" || task.state === "erred") this.transition(task, "forgotten");
    this.tasks.clear();
    this.done = 0;
    this.erred = 0;
  }

  /** CPU seconds used so far by every process of the cluster (threads included): this one and each worker. */
  async cpuSeconds(): Promise<number> {
    return (await this.usage()).cpuSeconds;
  }

  /**
   * CPU seconds so far of every process (threads included), and, when the processes count their
   * garbage collections (TASKJOURNEY_CLUSTER_GC=1, parts.ts), their collections and pauses summed.
   */
  async usage(): Promise<{ cpuSeconds: number; gc: GcTotals | undefined }> {
    profileMark();
    const own = process.cpuUsage();
    const ownGc = gcSoFar();
    const workers = await Promise.all(
      [...this.workers.values()].map(async (worker) => {
        const reply = await worker.connection.request({ op: "cpu" });
        return { cpuSeconds: reply.cpuSeconds as number, gc: reply.gc as GcTotals | undefined };
      }),
    );
    let gc = ownGc;
    for (const worker of workers)
      if (gc !== undefined && worker.gc !== undefined)
        gc = {
          count: gc.count + worker.gc.count,
          major: gc.major + worker.gc.major,
          seconds: gc.seconds + worker.gc.seconds,
        };
    return {
      cpuSeconds: (own.user + own.system) / 1e6 + workers.reduce((sum, worker) => sum + worker.cpuSeconds, 0),
      gc,
    };
  }

  /**
   * Asks every worker for its end-of-run summary. With `timeoutMs` (a run that failed half way),
   * only the summaries of the workers that answered within it, and no failure for those that did not.
   */
  async summaries(timeoutMs?: number): Promise<WorkerSummary[]> {
    const ask = async (worker: WorkerInfo) => {
      const reply = await worker.connection.request({ op: "summary" });
      return reply.summary as WorkerSummary;
    };
    if (timeoutMs === undefined) return Promise.all([...this.workers.values()].map(ask));
    const answers = await Promise.all(
      [...this.workers.values()].map(
        (worker) =>
          new Promise<WorkerSummary | undefined>((resolve) => {
            const timer = setTimeout(() => resolve(undefined), timeoutMs);
            ask(worker).then(
              (summary) => {
                clearTimeout(timer);
                resolve(summary);
              },
              () => {
                clearTimeout(timer);
                resolve(undefined);
              },
            );
          }),
      ),
    );
    return answers.filter((summary) => summary !== undefined);
  }

  /** Tells every worker to flush its telemetry and exit; stops listening. */
  close(): void {
    for (const worker of this.workers.values()) {
      try {
        worker.connection.send({ op: "close" });
      } catch {
        // already gone
      }
    }
    this.server?.close();
  }

  /**
   * The duration estimate of a prefix: live statistics once there are a few, else the default.
   * Read from the statistics at most every `estimateRefreshMs` per prefix (a reading copies the
   * prefix's histogram), and at once when a prefix first has enough finished tasks.
   */
  estimate(prefix: string): Estimate {
    const now = performance.now();
    const finished = this.finishedByPrefix.get(prefix) ?? 0;
    const cached = this.estimates.get(prefix);
    if (
      cached !== undefined &&
      now - cached.at < this.estimateRefreshMs &&
      (cached.estimate.informed || finished < 3)
    ) {
      return cached.estimate;
    }
    const estimate = this.readEstimate(prefix);
    this.estimates.set(prefix, { estimate, at: now });
    return estimate;
  }

  private readEstimate(prefix: string): Estimate {
    let stats: DurationStats | undefined;
    if (this.journeys !== undefined && JOURNEY_STATS) stats = this.journeys.stats(prefix, "processing");
    else stats = this.ownStatistics.get(prefix)?.snapshot();
    if (stats !== undefined && stats.count >= 3) {
      return { mean: stats.mean, p90: stats.quantile(0.9), count: stats.count, informed: true };
    }
    return { mean: this.defaultDuration, p90: 2 * this.defaultDuration, count: stats?.count ?? 0, informed: false };
  }

  // ---- messages ---------------------------------------------------------------------------------

  private handle(connection: Connection, message: Message): void {
    switch (message.op) {
      case "register": {
        const register = message as RegisterMessage;
        const worker: WorkerInfo = {
          address: register.address,
          connection,
          nthreads: register.nthreads,
          pid: register.pid,
          processing: new Set(),
          occupancy: 0,
          hasWhat: new Set(),
        };
        this.workers.set(worker.address, worker);
        connection.reply(message, { op: "registered" });
        this.workerWaiters = this.workerWaiters.filter((waiter) => !waiter());
        this.drainNoWorker();
        break;
      }
      case "task-finished":
        this.taskFinished(message as TaskFinishedMessage, connection);
        break;
      case "task-erred":
        this.taskErred(
          message.key as string,
          message.error as string,
          connection,
          message.carrier as Record<string, string> | undefined,
        );
        break;
      case "add-keys": {
        const worker = this.workerOf(connection);
        if (worker === undefined) break;
        for (const key of message.keys as string[]) {
          const task = this.tasks.get(key);
          if (task === undefined || task.state !== "memory") continue;
          task.whoHas.add(worker);
          worker.hasWhat.add(task);
        }
        break;
      }
      case "who-has": {
        const who: Record<string, string[]> = {};
        for (const key of message.keys as string[])
          who[key] = [...(this.tasks.get(key)?.whoHas ?? [])].map((worker) => worker.address);
        connection.reply(message, { op: "who-has", who });
        break;
      }
    }
  }

  private workerOf(connection: Connection): WorkerInfo | undefined {
    for (const worker of this.workers.values()) if (worker.connection === connection) return worker;
    return undefined;
  }

  private lost(connection: Connection): void {
    const worker = this.workerOf(connection);
    if (worker === undefined) return;
    this.workers.delete(worker.address);
    if (this.run !== undefined && this.run.root.state !== "memory") {
      this.run.reject(new Error(`worker ${worker.address} (pid ${worker.pid}) disconnected during the run`));
    }
  }

  private taskFinished(message: TaskFinishedMessage, connection: Connection): void {
    const task = this.tasks.get(message.key);
    const worker = this.workerOf(connection);
    if (task === undefined || worker === undefined || task.state !== "processing") return;
    // The result's carrier: a worker journey kept at its end keeps this one, before it ends.
    if (this.journeys !== undefined && CARRIERS && message.carrier !== undefined)
      this.journeys.propagation.receiver.resultFrom(task.key, message.carrier as Record<string, string>);
    worker.processing.delete(task);
    worker.occupancy = Math.max(0, worker.occupancy - task.estimate);
    task.processingOn = undefined;
    task.nbytes = message.nbytes;
    task.whoHas.add(worker);
    worker.hasWhat.add(task);
    if (this.journeys === undefined || !JOURNEY_STATS) {
      let statistics = this.ownStatistics.get(task.prefix);
      if (statistics === undefined) this.ownStatistics.set(task.prefix, (statistics = new DurationStatistics()));
      statistics.record((performance.now() - task.processingSince) / 1000);
    }
    this.transition(task, "memory");
    this.finishedByPrefix.set(task.prefix, (this.finishedByPrefix.get(task.prefix) ?? 0) + 1);
    this.done++;
    this.onProgress(this.done + this.erred, this.tasks.size);
    const ready: SchedulerTask[] = [];
    // An erred dependent (another of its dependencies failed, with keepGoing) never runs.
    for (const dependent of task.dependents)
      if (--dependent.waitingOn === 0 && dependent.state === "waiting") ready.push(dependent);
    for (const dependency of task.dependencies) {
      if (++dependency.dependentsDone === dependency.dependents.length) this.release(dependency);
    }
    const run = this.run;
    if (run !== undefined && task === run.root) {
      void this.fetchResult(task).then(run.resolve, run.reject);
      return;
    }
    if (run !== undefined && run.root.state === "erred" && this.done + this.erred === this.tasks.size) {
      run.resolve(undefined);
      return;
    }
    for (const dependent of ready.sort((a, b) => a.priority - b.priority)) this.schedule(dependent);
    this.drainQueue();
  }

  private taskErred(key: string, error: string, connection: Connection, carrier?: Record<string, string>): void {
    const task = this.tasks.get(key);
    const worker = this.workerOf(connection);
    if (task === undefined || task.state !== "processing") return;
    if (this.journeys !== undefined && CARRIERS && carrier !== undefined)
      this.journeys.propagation.receiver.resultFrom(key, carrier);
    if (worker !== undefined) {
      worker.processing.delete(task);
      worker.occupancy = Math.max(0, worker.occupancy - task.estimate);
    }
    task.processingOn = undefined;
    this.transition(task, "erred");
    this.erred++;
    this.failures.push({ key, error });
    const run = this.run;
    if (!this.keepGoing) {
      run?.reject(new Error(`task ${key} failed on ${worker?.address ?? "?"}: ${error}`));
      return;
    }
    // Its dependents can never run: they err too, transitively (Dask's exception blame). They
    // all wait, since one of their dependencies was never in memory.
    const blamed = [...task.dependents];
    while (blamed.length > 0) {
      const dependent = blamed.pop()!;
      if (dependent.state !== "waiting") continue;
      this.transition(dependent, "erred");
      this.erred++;
      blamed.push(...dependent.dependents);
    }
    this.onProgress(this.done + this.erred, this.tasks.size);
    // A root in memory resolved the run already (taskFinished).
    if (run !== undefined && run.root.state === "erred" && this.done + this.erred === this.tasks.size) {
      run.resolve(undefined);
      return;
    }
    this.drainQueue();
  }

  // ---- decisions ----------------------------------------------------------------------------------

  /** A task whose dependencies are all in memory: to a worker, or queued until one has room. */
  private schedule(task: SchedulerTask): void {
    if (this.workers.size === 0) {
      this.decisions.noWorker++;
      this.transition(task, "no-worker");
      this.noWorker.push(task, task.priority);
      return;
    }
    const queuedFirst = this.queue.size > 0 && this.queue.peek()!.priority < task.priority;
    if (!queuedFirst && this.decide(task)) return;
    this.decisions.queued++;
    this.transition(task, "queued");
    this.queue.push(task, task.priority);
  }

  private drainQueue(): void {
    while (this.queue.size > 0) {
      const task = this.queue.peek()!;
      if (!this.decide(task)) return;
      this.queue.pop();
    }
  }

  private drainNoWorker(): void {
    while (this.noWorker.size > 0) {
      const task = this.noWorker.pop()!;
      if (!this.decide(task)) {
        this.transition(task, "queued");
        this.queue.push(task, task.priority);
      }
    }
  }

  private full(worker: WorkerInfo): boolean {
    return worker.processing.size >= Math.ceil(worker.nthreads * this.saturation);
  }

  /** Picks a worker and sends the task there; false when every worker is full. */
  private decide(task: SchedulerTask): boolean {
    let dependencyBytes = 0;
    for (const dependency of task.dependencies) dependencyBytes += dependency.nbytes;
    let holder: { worker: WorkerInfo; held: number; start: number } | undefined;
    let earliest: { worker: WorkerInfo; held: number; start: number } | undefined;
    for (const worker of this.workers.values()) {
      if (this.full(worker)) continue;
      let held = 0;
      for (const dependency of task.dependencies) if (dependency.whoHas.has(worker)) held += dependency.nbytes;
      const start = worker.occupancy / worker.nthreads + (dependencyBytes - held) / this.bandwidth;
      const candidate = { worker, held, start };
      if (holder === undefined || held > holder.held || (held === holder.held && start < holder.start))
        holder = candidate;
      if (earliest === undefined || start < earliest.start) earliest = candidate;
    }
    if (holder === undefined || earliest === undefined) return false;
    const estimate = this.estimate(task.prefix);
    const moved = holder.held > 0 && holder.start - earliest.start > estimate.p90;
    const chosen = moved ? earliest : holder;
    const decision: Decision = {
      key: task.key,
      worker: chosen.worker.address,
      estimate,
      heldBytes: chosen.held,
      dependencyBytes,
      movedFromHolder: moved,
      start: chosen.start,
      earliest: earliest.start,
    };
    this.noteDecision(decision);
    this.assign(task, chosen.worker, estimate.mean);
    return true;
  }

  private noteDecision(decision: Decision): void {
    const stats = this.decisions;
    stats.total++;
    if (decision.estimate.informed) stats.informed++;
    if (decision.movedFromHolder) stats.movedFromHolder++;
    if (stats.samples.length < 10 || (decision.movedFromHolder && stats.samples.length < 20))
      stats.samples.push(decision);
    if (this.verbose) {
      const e = decision.estimate;
      const source = e.informed ? `stats of ${e.count}` : "default";
      this.log(
        `assign ${decision.key} → ${decision.worker}: est mean ${(e.mean * 1000).toFixed(1)} ms, p90 ${(e.p90 * 1000).toFixed(1)} ms (${source}); ` +
          `holds ${decision.heldBytes} of ${decision.dependencyBytes} dep bytes; start ${(decision.start * 1000).toFixed(1)} ms` +
          (decision.movedFromHolder
            ? ` (moved off the holder: earliest ${(decision.earliest * 1000).toFixed(1)} ms)`
            : ""),
      );
    }
  }

  private assign(task: SchedulerTask, worker: WorkerInfo, estimate: number): void {
    task.processingOn = worker;
    task.estimate = estimate;
    task.processingSince = performance.now();
    worker.processing.add(task);
    worker.occupancy += estimate;
    this.transition(task, "processing");
    const message: ComputeTaskMessage = {
      op: "compute-task",
      key: task.key,
      func: task.spec.func,
      args: task.spec.args,
      priority: task.priority,
      computation: task.computation,
      deps: task.dependencies.map((dependency) => ({
        key: dependency.key,
        who: [...dependency.whoHas].map((holder) => holder.address),
        nbytes: dependency.nbytes,
      })),
    };
    // Every task gets a carrier: the traced (1 in 100) sampled, the rest with the ids their journey
    // here will have if it is kept at its end (slow or failed), so that the worker's journey, kept
    // too, nests under it. Through taskjourney/sdk's provider, those ids cost no span. When inject()
    // returns false it wrote nothing, and the same empty carrier serves the next task.
    if (this.journeys !== undefined && CARRIERS && this.journeys.propagation.sender.inject(task.key, this.carrier)) {
      message.carrier = this.carrier as Record<string, string>;
      this.carrier = {};
    }
    worker.connection.send(message);
  }

  /** Frees a key all of whose dependents are in memory: the workers holding it drop it. */
  private release(task: SchedulerTask): void {
    if (task.state !== "memory" || task === this.run?.root) return;
    const byWorker = [...task.whoHas];
    task.whoHas.clear();
    for (const worker of byWorker) {
      worker.hasWhat.delete(task);
      worker.connection.send({ op: "free-keys", keys: [task.key] });
    }
    this.transition(task, "released");
  }

  private async fetchResult(task: SchedulerTask): Promise<unknown> {
    const holder = [...task.whoHas][0];
    const connection = await connect(holder.address);
    try {
      const reply = await connection.request<GetDataReply>({ op: "get_data", keys: [task.key], who: this.address });
      const bytes = reply.data?.[task.key];
      if (reply.status !== "OK" || bytes === undefined)
        throw new Error(`${holder.address} did not return ${task.key} (${reply.status})`);
      return v8.deserialize(bytes);
    } finally {
      connection.close();
    }
  }

  /** The one place a task changes state (instrumented by `instrumentScheduler`). */
  transition(task: SchedulerTask, to: SchedulerTaskState): void {
    task.state = to;
  }
}

/**
 * Hooks taskjourney into a scheduler: its transitions are recorded through `instrument()`, and it
 * reads its duration estimates from `journeys.stats` and injects trace context into compute-task.
 */
export function instrumentScheduler(scheduler: Scheduler, journeys: TaskJourneys): Unwrap {
  scheduler.useJourneys(journeys);
  // Benchmark switch (parts.ts): the scheduler's transitions not recorded (carriers still go).
  if (!JOURNEY_STATS) return () => {};
  return taskjourney.instrument(scheduler, journeys, {
    transition: {
      method: "transition",
      key: (task) => task.key,
      from: (task) => task.state,
      to: (_task, to) => to,
      // Its graph submission, on the move that begins the journey only (released → waiting).
      computation: (task, to) => (task.state === "released" && to === "waiting" ? task.computation : undefined),
    },
  });
}
