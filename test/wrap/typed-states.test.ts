/**
 * transition() is typed by the role: a misspelt state, or a state of the other role, does not
 * compile. `npm run typecheck` checks the `@ts-expect-error` lines below (an error that went away
 * fails it); at run time the same calls are counted drops.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  defineMachine,
  instrument,
  TaskJourneys,
  type SchedulerState,
  type StateOf,
  type WorkerState,
} from "../../src/index.js";
import { startTelemetry } from "../../src/sdk.js";

/** A job queue's own machine; `defineMachine` gives its states as a type. */
const JOBS = defineMachine({
  states: ["added", "waiting", "active", "delayed", "completed", "failed"],
  transitions: {
    added: ["waiting"],
    waiting: ["active"],
    active: ["completed", "failed", "delayed"],
    delayed: ["waiting"],
  },
  terminal: { success: "completed", failure: "failed" },
  initial: "added",
  executing: "active",
});

describe("transition() typed by the role", () => {
  it("takes the role's states only", () => {
    const scheduler = new TaskJourneys({ role: "scheduler", sampling: { ratio: 0 } });
    const worker = new TaskJourneys({ role: "worker", sampling: { ratio: 0 } });
    scheduler.transition("a-1", "released", "waiting");
    worker.transition("a-1", "released", "waiting");
    // @ts-expect-error a misspelt state
    scheduler.transition("a-1", "waiting", "procesing");
    // @ts-expect-error a worker state on the scheduler
    scheduler.transition("a-1", "waiting", "executing");
    // @ts-expect-error a scheduler state on a worker
    worker.transition("a-1", "waiting", "processing");
    expect(scheduler.dropped()).toEqual({ "unknown-state": 1, "wrong-role-state": 1 });
    expect(worker.dropped()).toEqual({ "wrong-role-state": 1 });
  });

  it("a role not known statically takes either role's states", () => {
    expectTypeOf<Parameters<TaskJourneys["transition"]>[1]>().toEqualTypeOf<WorkerState | SchedulerState>();
    expectTypeOf<StateOf<"scheduler">>().toEqualTypeOf<SchedulerState>();
    const role = "worker" as "worker" | "scheduler";
    const journeys: TaskJourneys = new TaskJourneys({ role });
    journeys.transition("a-1", "released", "waiting");
    // @ts-expect-error not a state of either role
    journeys.transition("a-1", "released", "sleeping");
  });

  it("with a machine, takes that machine's states only", () => {
    const journeys = new TaskJourneys({ role: "scheduler", machine: JOBS, sampling: { ratio: 0 } });
    expectTypeOf<Parameters<typeof journeys.transition>[1]>().toEqualTypeOf<
      "added" | "waiting" | "active" | "delayed" | "completed" | "failed"
    >();
    journeys.transition(1, "added", "waiting");
    // @ts-expect-error a misspelt state of the machine
    journeys.transition(1, "waiting", "actve");
    // @ts-expect-error a Dask state is not one of this machine's
    journeys.transition(1, "waiting", "processing");
    journeys.transition(1, "waiting", "active");
    expect(journeys.dropped()).toEqual({ "unknown-state": 2 });
    // Journeys of any machine are journeys to instrument().
    const unwrap = instrument({ run() {} }, journeys, { execute: { method: "run", key: () => 1 } });
    unwrap();
  });

  it("instrument()'s fixed state names are typed by the journeys' machine; names read by an extractor are checked at run time", () => {
    const journeys = new TaskJourneys({ role: "scheduler", machine: JOBS, sampling: { ratio: 0 } });
    const queue = { start(_id: number) {}, run(_id: number) {}, finish(_id: number, _state: string) {} };
    instrument(queue, journeys, {
      transition: [
        { method: "start", key: (id) => id, from: "added", to: "waiting" },
        // @ts-expect-error a misspelt state of the machine
        { method: "run", key: (id) => id, from: "waiting", to: "actve" },
        { method: "finish", key: (id) => id, from: "active", to: (_id, state) => state },
      ],
    });
    queue.start(1);
    queue.run(1);
    queue.finish(1, "competed");
    expect(journeys.dropped()).toEqual({ "unknown-state": 2 });
    // Dask's states on Dask's journeys, as before.
    const worker = new TaskJourneys({ role: "worker", sampling: { ratio: 0 } });
    instrument({ start(_id: number) {} }, worker, {
      // @ts-expect-error a scheduler state on a worker's journeys
      transition: { method: "start", key: (id) => id, from: "waiting", to: "processing" },
    });
  });

  it("an execute ledger's end() and instrument()'s outcome mapper take the machine's states, typed; the mapper sees the call's arguments", async () => {
    const journeys = new TaskJourneys({ role: "scheduler", machine: JOBS, sampling: { ratio: 0 } });
    journeys.execute(1).end("completed");
    // @ts-expect-error a misspelt state of the machine
    journeys.execute(2).end("competed");
    expect(journeys.dropped()).toEqual({ "invalid-outcome": 1 });
    const worker = {
      async run(job: { id: number; attempts: number }) {
        job.attempts++;
        if (job.attempts < 3) throw new Error(`attempt ${job.attempts}`);
      },
    };
    const seen: number[] = [];
    instrument(worker, journeys, {
      execute: {
        method: "run",
        key: (job) => job.id,
        outcome: (_result, error, [job]) => {
          seen.push(job.attempts);
          return error === undefined ? "completed" : job.attempts < 2 ? "delayed" : "failed";
        },
      },
    });
    const job = { id: 3, attempts: 0 };
    journeys.transition(3, "added", "waiting");
    journeys.transition(3, "waiting", "active");
    await expect(worker.run(job)).rejects.toThrow("attempt 1");
    journeys.transition(3, "delayed", "waiting");
    journeys.transition(3, "waiting", "active");
    await expect(worker.run(job)).rejects.toThrow("attempt 2");
    expect(seen).toEqual([1, 2]);
    const explained = journeys.explain(3)!;
    expect(explained.outcome).toBe("failed");
    expect(explained.children.map((node) => [node.name, node.outcome, node.error])).toEqual([
      ["waiting", undefined, undefined],
      ["active", "error", "Error: attempt 1"],
      ["delayed", undefined, undefined],
      ["waiting", undefined, undefined],
      ["active", "error", "Error: attempt 2"],
    ]);
    instrument({ run: (_job: { id: number }) => {} }, new TaskJourneys({ role: "scheduler", machine: JOBS }), {
      // @ts-expect-error a mapper's misspelt state
      execute: { method: "run", key: (job) => job.id, outcome: () => "delayd" },
    });
    expect(journeys.dropped()).toEqual({ "invalid-outcome": 1 });
  });

  it("a machine declared inline is typed too, and a name that is not one of its states does not compile", () => {
    const journeys = new TaskJourneys({
      machine: {
        states: ["queued", "running", "done", "lost"],
        transitions: { queued: ["running"], running: ["done", "lost"] },
        terminal: { success: "done", failure: "lost" },
        initial: "queued",
      },
    });
    expectTypeOf<Parameters<typeof journeys.transition>[2]>().toEqualTypeOf<"queued" | "running" | "done" | "lost">();
    journeys.transition("a-1", "queued", "running");
    // @ts-expect-error not a state of the inline machine
    journeys.transition("a-1", "running", "finished");
    expect(journeys.dropped()).toEqual({ "unknown-state": 1 });
    defineMachine({
      states: ["queued", "running", "done"],
      // @ts-expect-error "runing" is not a state
      transitions: { queued: ["runing"] },
      terminal: { success: "done", failure: "done" },
    });
  });

  it("startTelemetry's journeys are typed by its role and journeys.machine, and so is stats()", async () => {
    const quiet = { registerGlobal: false, exporters: { traces: "none", metrics: "none" } } as const;
    const jobs = await startTelemetry({
      role: "scheduler",
      instance: "queue",
      ...quiet,
      journeys: { machine: JOBS, sampling: { ratio: 0 } },
    });
    expectTypeOf<Parameters<typeof jobs.journeys.transition>[1]>().toEqualTypeOf<
      "added" | "waiting" | "active" | "delayed" | "completed" | "failed"
    >();
    jobs.journeys.transition(1, "added", "waiting");
    // @ts-expect-error a misspelt state of the machine
    jobs.journeys.transition(1, "waiting", "actve");
    // @ts-expect-error stats() of a misspelt state
    expect(jobs.journeys.stats("fetch", "actve").count).toBe(0);
    expect(jobs.journeys.dropped()).toEqual({ "unknown-state": 2 });
    const dask = await startTelemetry({ role: "worker", instance: "w", ...quiet });
    expectTypeOf<Parameters<typeof dask.journeys.transition>[1]>().toEqualTypeOf<WorkerState>();
    await Promise.all([jobs.shutdown(), dask.shutdown()]);
  });
});
