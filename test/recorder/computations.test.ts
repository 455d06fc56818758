import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys, formatBreakdown } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { captureDiag } from "../helpers/diag.js";

afterEach(() => diag.disable());

function scheduler(clock: FakeClock, limits: { maxComputations?: number; maxLiveJourneys?: number } = {}) {
  return new TaskJourneys({
    role: "scheduler",
    runtime: { clock: clock.now },
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
    limits,
  });
}

/** Submits `keys` under `computation` (released → waiting) at the clock's now. */
function submit(journeys: TaskJourneys<"scheduler">, keys: string[], computation: string): void {
  for (const key of keys) journeys.transition(key, "released", "waiting", { computation });
}

describe("computations", () => {
  it("sums a computation's tasks, task-seconds by state, ends by state and wall span, on a fake clock", () => {
    const clock = new FakeClock(10);
    const journeys = scheduler(clock);
    submit(journeys, ["a-1", "a-2", "a-3"], "graph-1");
    clock.advance(1); // 11
    journeys.transition("a-1", "waiting", "processing");
    journeys.transition("a-2", "waiting", "processing");
    clock.advance(2); // 13
    journeys.transition("a-1", "processing", "memory");
    journeys.transition("a-2", "processing", "erred", { error: "boom" });
    // Untagged journeys count under no computation.
    journeys.transition("b-1", "released", "waiting");
    clock.advance(4); // 17
    const [live] = journeys.computations();
    expect(live).toEqual({
      name: "graph-1",
      tasks: 3,
      live: 1,
      ended: { memory: 1, erred: 1 },
      failed: 1,
      abandoned: 0,
      seconds: { waiting: 2, processing: 4 },
      start: 10,
      end: undefined,
      wall: 7,
    });
    journeys.transition("a-3", "waiting", "released");
    clock.advance(100);
    expect(journeys.computations("graph-1")).toEqual([
      {
        name: "graph-1",
        tasks: 3,
        live: 0,
        ended: { memory: 1, erred: 1, released: 1 },
        failed: 1,
        abandoned: 0,
        seconds: { waiting: 9, processing: 4 },
        start: 10,
        end: 17,
        wall: 7,
      },
    ]);
    expect(journeys.computations("nothing")).toEqual([]);
    expect(journeys.computations()).toHaveLength(1);
  });

  it("is read only by the move that begins a journey: a later move's computation changes nothing", () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock);
    journeys.transition("k", "released", "waiting", { computation: "first" });
    clock.advance(1);
    journeys.transition("k", "waiting", "processing", { computation: "second" });
    clock.advance(1);
    journeys.transition("k", "processing", "memory");
    expect(journeys.computations().map((c) => [c.name, c.tasks, c.seconds])).toEqual([
      ["first", 1, { waiting: 1, processing: 1 }],
    ]);
    // The key's next journey begins under the computation its first move gives.
    journeys.transition("k", "memory", "released");
    journeys.transition("k", "released", "waiting", { computation: "second" });
    expect(journeys.computations().map((c) => [c.name, c.tasks, c.live])).toEqual([
      ["first", 1, 0],
      ["second", 1, 1],
    ]);
  });

  it("explain() names the computation and its totals, live and after the journey ended", () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock);
    submit(journeys, ["x-1", "x-2"], "flow-7");
    clock.advance(2);
    journeys.transition("x-1", "waiting", "processing");
    clock.advance(1);
    journeys.transition("x-1", "processing", "memory");
    const breakdown = journeys.explain("x-1")!;
    expect(breakdown.computation).toBe("flow-7");
    expect(breakdown.computationTotals).toMatchObject({ tasks: 2, live: 1, failed: 0, wall: 3 });
    expect(formatBreakdown(breakdown).split("\n")[1]).toBe(
      "computation flow-7: 2 tasks (1 live), 3.0 s so far; task-seconds waiting 2.0 s, processing 1.0 s",
    );
    journeys.transition("y-1", "released", "waiting");
    expect(journeys.explain("y-1")!.computation).toBeUndefined();
  });

  it("retires the computation that finished first past limits.maxComputations, keeping the live ones", () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, { maxComputations: 2 });
    submit(journeys, ["a"], "c1");
    submit(journeys, ["b"], "c2");
    clock.advance(1);
    journeys.transition("b", "waiting", "released"); // c2 finished first
    journeys.transition("a", "waiting", "released"); // then c1
    submit(journeys, ["c"], "c3"); // retires c2
    expect(journeys.computations().map((c) => c.name)).toEqual(["c1", "c3"]);
    submit(journeys, ["d"], "c1"); // a finished computation taken up again is live again
    submit(journeys, ["e"], "c4"); // c1 and c3 live: nothing to retire
    expect(journeys.computations().map((c) => [c.name, c.tasks])).toEqual([
      ["c1", 2],
      ["c3", 1],
      ["other", 1],
    ]);
    expect(journeys.dropped()).toEqual({ "computation-limit": 1 });
    // A retired computation begun again starts from nothing.
    journeys.transition("c", "waiting", "released");
    submit(journeys, ["f"], "c2");
    expect(journeys.computations("c2")).toMatchObject([{ tasks: 1, seconds: {}, start: 1 }]);
    expect(journeys.computations().map((c) => c.name)).toEqual(["c1", "c2", "other"]);
  });

  it("tells the overflow once, naming the option, and a bad computation is counted and left out", () => {
    const told = captureDiag();
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, { maxComputations: 1 });
    submit(journeys, ["a"], "c1");
    submit(journeys, ["b"], "c2");
    submit(journeys, ["c"], "c3");
    journeys.transition("d", "released", "waiting", { computation: 42 as unknown as string });
    journeys.transition("e", "released", "waiting", { computation: "" });
    expect(journeys.dropped()).toEqual({ "computation-limit": 2, "invalid-computation": 2 });
    expect(told.filter((line) => line.includes("limits.maxComputations (1)"))).toHaveLength(1);
    expect(told.some((line) => line.includes("computation 42, not a non-empty string"))).toBe(true);
    expect(journeys.computations().map((c) => [c.name, c.tasks])).toEqual([
      ["c1", 1],
      ["other", 2],
    ]);
  });

  it("a journey evicted past limits.maxLiveJourneys leaves its computation as abandoned", () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, { maxLiveJourneys: 1 });
    submit(journeys, ["a"], "c1");
    clock.advance(2);
    submit(journeys, ["b"], "c1");
    expect(journeys.computations()).toMatchObject([{ tasks: 2, live: 1, abandoned: 1 }]);
  });

  it("stays bounded through 100,000 submissions: at most maxComputations kept", () => {
    const clock = new FakeClock(0);
    const journeys = scheduler(clock, { maxComputations: 8 });
    for (let graph = 0; graph < 100_000; graph++) {
      const key = `t-${graph}`;
      journeys.transition(key, "released", "waiting", { computation: `graph-${graph}` });
      clock.advance(1);
      journeys.transition(key, "waiting", "released");
    }
    const kept = journeys.computations();
    expect(kept.map((c) => c.name)).toEqual(Array.from({ length: 8 }, (_, i) => `graph-${99_992 + i}`));
    expect(journeys.dropped()).toEqual({});
  });

  it("limits.maxComputations is checked at construction", () => {
    expect(() => scheduler(new FakeClock(0), { maxComputations: 0 })).toThrow(
      'TaskJourneys: option "limits.maxComputations" must be an integer from 1 to 100000',
    );
    expect(() => new TaskJourneys({ maxComputations: 5 } as never)).toThrow(/unknown option "maxComputations"/);
  });
});
