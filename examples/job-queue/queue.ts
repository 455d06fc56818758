/**
 * A small job queue that knows nothing of taskjourney: jobs with parent/child dependencies (a
 * parent runs once its children completed, and reads their results), retries with backoff, and
 * workers running several jobs at once. Its ids are numbers as strings ("1", "2", …), its states
 * are its own (waiting-children, waiting, delayed, active, completed, failed), and it tells what
 * happens through hooks — the places `instrument.ts` maps onto taskjourney.
 */

export type JobState = "waiting-children" | "waiting" | "delayed" | "active" | "completed" | "failed";

export interface Job {
  readonly id: string;
  /** The job's kind, e.g. "fetch": what its handler is, and its natural prefix. */
  readonly name: string;
  readonly children: readonly string[];
  parent: string | undefined;
  state: JobState;
  attempts: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  /** Epoch milliseconds, as the queue stores them. */
  readonly createdAt: number;
  /** The flow it was added in (a parent and its children, added together), if any. */
  readonly flow: string | undefined;
  /** Free-form data that travels with the job (instrumentation puts its trace carriers here). */
  readonly data: Record<string, unknown>;
  result?: unknown;
  error?: string;
}

export interface JobSpec {
  name: string;
  children?: readonly string[];
  maxAttempts?: number;
  backoffMs?: number;
  data?: Record<string, unknown>;
  /** The flow the job belongs to: a parent and its children added together (BullMQ's FlowProducer). */
  flow?: string;
}

/** What the queue tells as it happens. */
export interface QueueHooks {
  added?(job: Job): void;
  /** A job with children: its last child completed; it is waiting for a worker now. */
  childrenDone?(job: Job): void;
  /** A worker took the job. */
  active?(job: Job, worker: string): void;
  completed?(job: Job): void;
  /** The attempt failed; `retry` says whether the job goes to `delayed` for another attempt. */
  failed?(job: Job, retry: boolean): void;
  /** The backoff of a failed attempt is over: the job is waiting again. */
  retrying?(job: Job): void;
}

export class JobQueue {
  readonly jobs = new Map<string, Job>();
  readonly hooks: QueueHooks = {};
  /** Jobs waiting for a worker, oldest first from `waitingHead` (a head index: see take()). */
  private readonly waiting: Array<Job | undefined> = [];
  private waitingHead = 0;
  private readonly takers: Array<(job: Job) => void> = [];
  private nextId = 1;
  private unfinished = 0;
  private settled: (() => void) | undefined;

  add(spec: JobSpec): Job {
    const children = spec.children ?? [];
    const job: Job = {
      id: String(this.nextId++),
      name: spec.name,
      children,
      parent: undefined,
      state: children.every((child) => this.jobs.get(child)?.state === "completed") ? "waiting" : "waiting-children",
      attempts: 0,
      maxAttempts: spec.maxAttempts ?? 1,
      backoffMs: spec.backoffMs ?? 0,
      createdAt: Date.now(),
      flow: spec.flow,
      data: { ...spec.data },
    };
    for (const child of children) this.jobs.get(child)!.parent = job.id;
    this.jobs.set(job.id, job);
    this.unfinished++;
    this.hooks.added?.(job);
    if (job.state === "waiting") this.enqueue(job);
    return job;
  }

  /** The results of a job's children (a parent's handler reads them). */
  childResults(job: Job): unknown[] {
    return job.children.map((child) => this.jobs.get(child)!.result);
  }

  /** The next waiting job, as soon as there is one. */
  take(): Promise<Job> {
    // Not waiting.shift(): with thousands of jobs waiting, V8 moves the whole array on every
    // shift while the garbage collector is marking (it cannot move the array's start then).
    if (this.waitingHead < this.waiting.length) {
      const job = this.waiting[this.waitingHead]!;
      this.waiting[this.waitingHead++] = undefined;
      if (this.waitingHead === this.waiting.length) this.waiting.length = this.waitingHead = 0;
      else if (this.waitingHead >= 1024 && this.waitingHead * 2 >= this.waiting.length) {
        this.waiting.splice(0, this.waitingHead);
        this.waitingHead = 0;
      }
      return Promise.resolve(job);
    }
    return new Promise((resolve) => this.takers.push(resolve));
  }

  activate(job: Job, worker: string): void {
    job.state = "active";
    job.attempts++;
    this.hooks.active?.(job, worker);
  }

  complete(job: Job, result: unknown): void {
    job.state = "completed";
    job.result = result;
    this.hooks.completed?.(job);
    this.finished();
    const parent = job.parent === undefined ? undefined : this.jobs.get(job.parent);
    if (
      parent?.state === "waiting-children" &&
      parent.children.every((child) => this.jobs.get(child)!.state === "completed")
    ) {
      parent.state = "waiting";
      this.hooks.childrenDone?.(parent);
      this.enqueue(parent);
    }
  }

  fail(job: Job, error: string): void {
    job.error = error;
    const retry = job.attempts < job.maxAttempts;
    job.state = retry ? "delayed" : "failed";
    this.hooks.failed?.(job, retry);
    if (!retry) {
      this.finished();
      return;
    }
    setTimeout(() => {
      job.state = "waiting";
      this.hooks.retrying?.(job);
      this.enqueue(job);
    }, job.backoffMs);
  }

  /** Resolves once every job added so far completed or failed for good. */
  drained(): Promise<void> {
    if (this.unfinished === 0) return Promise.resolve();
    return new Promise((resolve) => (this.settled = resolve));
  }

  private enqueue(job: Job): void {
    const taker = this.takers.shift();
    if (taker !== undefined) taker(job);
    else this.waiting.push(job);
  }

  private finished(): void {
    if (--this.unfinished === 0) this.settled?.();
  }
}

export type Handler = (job: Job, childResults: unknown[]) => Promise<unknown>;

/** Hooks of a worker around each job it runs. */
export interface WorkerHooks {
  /** The job was taken, before it runs. */
  starting?(job: Job): void;
  /** The job ran (resolved or threw), before the queue hears of it. */
  finished?(job: Job): void;
}

/** Runs jobs from the queue, `concurrency` at a time, by their name's handler. */
export class QueueWorker {
  readonly hooks: WorkerHooks = {};
  private stopped = false;

  constructor(
    readonly queue: JobQueue,
    readonly name: string,
    readonly concurrency: number,
    readonly handlers: Readonly<Record<string, Handler>>,
  ) {}

  start(): void {
    for (let slot = 0; slot < this.concurrency; slot++) void this.loop();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Runs one job's handler with its children's results. */
  async run(job: Job): Promise<unknown> {
    return this.handlers[job.name](job, this.readChildren(job));
  }

  /** Reads the children's results for a parent job (in a real queue: a round trip to its store). */
  readChildren(job: Job): unknown[] {
    return this.queue.childResults(job);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const job = await this.queue.take();
      if (this.stopped) return;
      this.queue.activate(job, this.name);
      this.hooks.starting?.(job);
      try {
        const result = await this.run(job);
        this.hooks.finished?.(job);
        this.queue.complete(job, result);
      } catch (error) {
        this.hooks.finished?.(job);
        this.queue.fail(job, error instanceof Error ? error.message : String(error));
      }
    }
  }
}
