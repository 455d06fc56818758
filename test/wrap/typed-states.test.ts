/**
 * transition() is typed by the role: a misspelt state, or a state of the other role, does not
 * compile. `npm run typecheck` checks the `@ts-expect-error` lines below (an error that went away
 * fails it); at run time the same calls are counted drops.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { TaskJourneys, type SchedulerState, type StateOf, type WorkerState } from "../../src/index.js";

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
});
