/**
 * A worker's task state machine, after distributed/worker_state_machine.py, cut down to what
 * this example needs. It decides; the worker (worker.ts) acts: it runs tasks, transfers data and
 * talks to the scheduler, and reports back with `executeDone`, `gatherDepDone`, `secede`, ….
 *
 * Two journeys a key can take here:
 *   compute: released → waiting → ready → executing (→ long-running) → memory | error
 *   fetch:   released → fetch → flight → memory  (or flight → fetch when the peer is busy or
 *            the transfer failed, flight → missing when the peer did not have the key)
 * then memory → released → forgotten when the scheduler frees the key.
 *
 * Every state change goes through the one method `transition(task, to)`, and dependencies
 * arrive through `computeTask(event)`: that is where taskjourney's `instrument()` hooks in (see
 * worker.ts). Why a key waits in fetch is told to `observer.queued`. The state machine itself
 * knows nothing of telemetry.
 */
import { Heap } from "./heap.js";
import type { Arg } from "./workloads.js";
import type { ComputeTaskMessage } from "./protocol.js";

export type WorkerTaskState =
  | "released"
  | "waiting"
  | "fetch"
  | "missing"
  | "flight"
  | "ready"
  | "executing"
  | "long-running"
  | "memory"
  | "error"
  | "forgotten";

export interface WorkerTask {
  key: string;
  state: WorkerTaskState;
  /** Assigned to this worker for computing (else only fetched here). */
  compute: boolean;
  func: string;
  args: Arg[];
  priority: number;
  /** Trace context of the scheduler's journey, from the compute-task message. */
  carrier: Record<string, string> | undefined;
  /** The graph submission it was computed for, from the compute-task message (taskjourney's computation). */
  computation: string | undefined;
  dependencies: WorkerTask[];
  dependents: Set<WorkerTask>;
  waitingFor: Set<WorkerTask>;
  /** Peers known to hold the key (for fetching). */
  whoHas: Set<string>;
  nbytes: number;
  /** Why the key waits in fetch, as last told to the observer. */
  queuedReason: string | undefined;
  /** performance.now() ms when the task arrived, for finding the slowest journeys. */
  arrived: number;
}

/** A compute-task message as the state machine takes it. */
export type ComputeTaskEvent = Pick<
  ComputeTaskMessage,
  "key" | "func" | "args" | "priority" | "deps" | "carrier" | "computation"
>;

export type GatherOutcome = "ok" | "busy" | "missing" | "failed";

/** What the state machine tells besides its transitions. */
export interface WorkerStateObserver {
  /** `key` stays in fetch because of our own limits, or because every peer holding it is busy. */
  queued(key: string, reason: "local-saturated" | "remote-saturated"): void;
}

/** What the state machine asks the worker to do. */
export interface WorkerEffects {
  execute(task: WorkerTask): void;
  gatherDep(peer: string, tasks: WorkerTask[]): void;
  taskFinished(task: WorkerTask): void;
  taskErred(task: WorkerTask, error: string): void;
  release(key: string): void;
  whoHas(keys: string[]): void;
}

export interface WorkerStateOptions {
  address: string;
  nthreads: number;
  /** gather_dep calls in flight at once (Dask: transfer_incoming_count_limit). */
  transferIncomingCountLimit: number;
  /** Bytes in flight at once; one transfer is always allowed (Dask: transfer_incoming_bytes_limit). */
  transferIncomingBytesLimit: number;
  /** Bytes batched into one gather_dep from one peer (Dask: transfer_message_bytes_limit). */
  transferMessageBytesLimit: number;
  /** How long a peer that answered "busy" is left alone, ms. */
  busyRetryMs: number;
}

export const DEFAULT_WORKER_STATE_OPTIONS: Omit<WorkerStateOptions, "address" | "nthreads"> = {
  transferIncomingCountLimit: 4,
  transferIncomingBytesLimit: 512 * 1024,
  transferMessageBytesLimit: 256 * 1024,
  busyRetryMs: 20,
};

const noObserver: WorkerStateObserver = { queued() {} };

export class WorkerState {
  readonly tasks = new Map<string, WorkerTask>();
  observer: WorkerStateObserver = noObserver;
  executing = 0;
  longRunning = 0;
  /** Transfers in flight: their count, bytes and peers. */
  transfersInFlight = 0;
  bytesInFlight = 0;
  private readonly inFlightPeers = new Set<string>();
  private readonly busyPeers = new Set<string>();
  private readonly ready = new Heap<WorkerTask>();
  /** Keys to fetch, by priority; stale entries (no longer in fetch) are skipped. */
  private readonly dataNeeded = new Heap<WorkerTask>();
  private readonly timers = new Set<NodeJS.Timeout>();
  readonly counters = { computed: 0, erred: 0, seceded: 0, gathers: 0, busy: 0, failed: 0, missing: 0, keysFetched: 0 };

  constructor(
    readonly options: WorkerStateOptions,
    private readonly effects: WorkerEffects,
  ) {}

  // ---- events from the scheduler ----------------------------------------------------------------

  computeTask(event: ComputeTaskEvent): void {
    const task = this.ensure(event.key);
    if (task.state !== "released") return; // already known: a duplicate message
    task.compute = true;
    task.func = event.func;
    task.args = event.args;
    task.priority = event.priority;
    task.carrier = event.carrier;
    task.computation = event.computation;
    task.arrived = performance.now();
    this.transition(task, "waiting");
    for (const dep of event.deps) {
      const dependency = this.ensure(dep.key);
      task.dependencies.push(dependency);
      dependency.dependents.add(task);
      if (dependency.state === "memory") continue;
      task.waitingFor.add(dependency);
      if (dependency.state === "released") {
        dependency.nbytes = dep.nbytes;
        dependency.priority = task.priority;
        for (const peer of dep.who) if (peer !== this.options.address) dependency.whoHas.add(peer);
        this.transition(dependency, "fetch");
        this.dataNeeded.push(dependency, dependency.priority);
      } else if (dependency.priority > task.priority) {
        dependency.priority = task.priority;
      }
    }
    if (task.waitingFor.size === 0) this.makeReady(task);
    this.ensureCommunicating();
    this.ensureComputing();
  }

  freeKeys(keys: string[]): void {
    for (const key of keys) {
      const task = this.tasks.get(key);
      if (task === undefined) continue;
      if (task.state !== "memory" && task.state !== "error") continue;
      // Still needed by a local task that has not run yet: keep it.
      let needed = false;
      for (const dependent of task.dependents)
        if (dependent.state !== "memory" && dependent.state !== "error") needed = true;
      if (needed) continue;
      this.transition(task, "released");
      this.effects.release(key);
      this.forget(task);
    }
  }

  /** The scheduler's answer to `whoHas`: peers holding keys we found missing. */
  whoHasReply(who: Record<string, string[]>): void {
    const stillMissing: string[] = [];
    for (const [key, peers] of Object.entries(who)) {
      const task = this.tasks.get(key);
      if (task === undefined || task.state !== "missing") continue;
      for (const peer of peers) if (peer !== this.options.address) task.whoHas.add(peer);
      if (task.whoHas.size > 0) {
        this.transition(task, "fetch");
        this.dataNeeded.push(task, task.priority);
      } else {
        stillMissing.push(key);
      }
    }
    if (stillMissing.length > 0) this.later(100, () => this.effects.whoHas(stillMissing));
    this.ensureCommunicating();
  }

  // ---- events from the worker's own actions ----------------------------------------------------

  executeDone(key: string, result: { ok: true; nbytes: number } | { ok: false; error: string }): void {
    const task = this.tasks.get(key);
    if (task === undefined || (task.state !== "executing" && task.state !== "long-running")) return;
    if (task.state === "executing") this.executing--;
    else this.longRunning--;
    if (result.ok) {
      task.nbytes = result.nbytes;
      this.transition(task, "memory");
      this.counters.computed++;
      this.effects.taskFinished(task);
      this.dependencyArrived(task);
    } else {
      this.transition(task, "error");
      this.counters.erred++;
      this.effects.taskErred(task, result.error);
    }
    for (const dependency of task.dependencies) dependency.dependents.delete(task);
    this.ensureComputing();
  }

  /** The running task asked to leave the thread pool's count (Dask's `secede()`). */
  secede(key: string): void {
    const task = this.tasks.get(key);
    if (task === undefined || task.state !== "executing") return;
    this.executing--;
    this.longRunning++;
    this.counters.seceded++;
    this.transition(task, "long-running");
    this.ensureComputing();
  }

  gatherDepDone(
    peer: string,
    tasks: WorkerTask[],
    outcome: GatherOutcome,
    received: ReadonlyMap<string, number>,
  ): void {
    this.transfersInFlight--;
    this.inFlightPeers.delete(peer);
    for (const task of tasks) this.bytesInFlight -= task.nbytes;
    this.counters.gathers++;
    if (outcome === "busy") {
      this.counters.busy++;
      this.busyPeers.add(peer);
      this.later(this.options.busyRetryMs, () => {
        this.busyPeers.delete(peer);
        this.ensureCommunicating();
      });
    }
    if (outcome === "failed") this.counters.failed++;
    const missing: string[] = [];
    for (const task of tasks) {
      if (task.state !== "flight") continue;
      const nbytes = received.get(task.key);
      if (outcome === "ok" && nbytes !== undefined) {
        task.nbytes = nbytes;
        this.counters.keysFetched++;
        this.transition(task, "memory");
        this.dependencyArrived(task);
        continue;
      }
      if (outcome === "busy") {
        this.transition(task, "fetch");
        this.dataNeeded.push(task, task.priority);
        continue;
      }
      // Failed, or the peer did not have it: try the other holders, or ask the scheduler.
      task.whoHas.delete(peer);
      if (outcome === "failed" && task.whoHas.size > 0) {
        this.transition(task, "fetch");
        this.dataNeeded.push(task, task.priority);
        continue;
      }
      this.counters.missing++;
      this.transition(task, "missing");
      if (task.whoHas.size > 0) {
        this.transition(task, "fetch");
        this.dataNeeded.push(task, task.priority);
      } else {
        missing.push(task.key);
      }
    }
    if (missing.length > 0) this.effects.whoHas(missing);
    this.ensureCommunicating();
    this.ensureComputing();
  }

  /** Stops timers; the worker is going away. */
  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  // ---- decisions ------------------------------------------------------------------------------

  private ensureComputing(): void {
    while (this.executing < this.options.nthreads && this.ready.size > 0) {
      const task = this.ready.pop()!;
      if (task.state !== "ready") continue;
      this.executing++;
      this.transition(task, "executing");
      this.effects.execute(task);
    }
  }

  /**
   * Starts gather_dep calls for keys in fetch, most urgent first, batching the keys each peer
   * holds into one call, within the incoming limits. Keys left waiting are told to the observer
   * with the reason: our own limits ("local-saturated") or every holder already busy with us or
   * busy answering others ("remote-saturated").
   */
  private ensureCommunicating(): void {
    const options = this.options;
    const skipped: WorkerTask[] = [];
    while (this.dataNeeded.size > 0) {
      const task = this.dataNeeded.peek()!;
      if (task.state !== "fetch") {
        this.dataNeeded.pop();
        continue;
      }
      const saturated =
        this.transfersInFlight >= options.transferIncomingCountLimit ||
        (this.transfersInFlight > 0 && this.bytesInFlight + task.nbytes > options.transferIncomingBytesLimit);
      if (saturated) break;
      this.dataNeeded.pop();
      if (task.whoHas.size === 0) {
        this.transition(task, "missing");
        this.counters.missing++;
        this.effects.whoHas([task.key]);
        continue;
      }
      const peer = this.pickPeer(task);
      if (peer === undefined) {
        skipped.push(task);
        continue;
      }
      this.startGather(peer, task);
    }
    for (const task of skipped) {
      this.dataNeeded.push(task, task.priority);
      this.tellQueued(task, "remote-saturated");
    }
    if (this.dataNeeded.size > 0 && this.transfersInFlight > 0) {
      // Whatever is still in the heap waits for our own limits.
      for (const task of this.fetchTasks())
        if (task.queuedReason === undefined) this.tellQueued(task, "local-saturated");
    }
  }

  private pickPeer(task: WorkerTask): string | undefined {
    let choice: string | undefined;
    for (const peer of task.whoHas) {
      if (this.inFlightPeers.has(peer) || this.busyPeers.has(peer)) continue;
      // Spread load: prefer the peer that sorts first after a per-key rotation.
      if (choice === undefined || peer < choice !== ((task.priority & 1) === 1)) choice = peer;
    }
    return choice;
  }

  /** One gather_dep from `peer`: `first` and other keys that peer holds, up to the message limit. */
  private startGather(peer: string, first: WorkerTask): void {
    const batch = [first];
    let bytes = first.nbytes;
    const others: WorkerTask[] = [];
    for (const task of this.fetchTasks()) if (task !== first && task.whoHas.has(peer)) others.push(task);
    others.sort((a, b) => a.priority - b.priority);
    for (const task of others) {
      if (bytes + task.nbytes > this.options.transferMessageBytesLimit) break;
      batch.push(task);
      bytes += task.nbytes;
    }
    this.transfersInFlight++;
    this.bytesInFlight += bytes;
    this.inFlightPeers.add(peer);
    for (const task of batch) {
      task.queuedReason = undefined;
      this.transition(task, "flight");
    }
    this.effects.gatherDep(peer, batch);
  }

  private *fetchTasks(): Iterable<WorkerTask> {
    for (const task of this.tasks.values()) if (task.state === "fetch") yield task;
  }

  private tellQueued(task: WorkerTask, reason: "local-saturated" | "remote-saturated"): void {
    if (task.queuedReason === reason) return;
    task.queuedReason = reason;
    this.observer.queued(task.key, reason);
  }

  private dependencyArrived(dependency: WorkerTask): void {
    for (const dependent of dependency.dependents) {
      if (dependent.state !== "waiting") continue;
      dependent.waitingFor.delete(dependency);
      if (dependent.waitingFor.size === 0) this.makeReady(dependent);
    }
  }

  private makeReady(task: WorkerTask): void {
    this.transition(task, "ready");
    this.ready.push(task, task.priority);
  }

  // ---- bookkeeping ------------------------------------------------------------------------------

  private ensure(key: string): WorkerTask {
    let task = this.tasks.get(key);
    if (task === undefined) {
      task = {
        key,
        state: "released",
        compute: false,
        func: "",
        args: [],
        priority: 0,
        carrier: undefined,
        computation: undefined,
        dependencies: [],
        dependents: new Set(),
        waitingFor: new Set(),
        whoHas: new Set(),
        nbytes: 0,
        queuedReason: undefined,
        arrived: 0,
      };
      this.tasks.set(key, task);
    }
    return task;
  }

  private forget(task: WorkerTask): void {
    this.transition(task, "forgotten");
    this.tasks.delete(task.key);
  }

  /** The one place a task changes state. */
  transition(task: WorkerTask, to: WorkerTaskState): void {
    task.state = to;
    if (to !== "fetch") task.queuedReason = undefined;
  }

  private later(ms: number, work: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work();
    }, ms);
    this.timers.add(timer);
  }
}
