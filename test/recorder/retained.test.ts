import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";

/** A compute journey of `key` with `activities` metered activities of 1 s each while executing. */
function compute(journeys: TaskJourneys, clock: FakeClock, key: string, activities = 0) {
  journeys.transition(key, "released", "waiting");
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  for (let i = 0; i < activities; i++) ledger.meter(`step-${i % 4}`, () => clock.advance(1));
  ledger.end("memory");
}

function worker(clock: FakeClock, extra: object) {
  return new TaskJourneys({
    role: "worker",
    clock: clock.now,
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
    ...extra,
  });
}

describe("the journeys kept for explain()", () => {
  it("keeps the newest retainedJourneys, oldest out first", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { retainedJourneys: 3 });
    for (let i = 1; i <= 5; i++) compute(journeys, clock, `inc-${i}`);
    expect(["inc-1", "inc-2", "inc-3", "inc-4", "inc-5"].map((key) => journeys.explain(key) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it("is bounded by size too: large journeys push the oldest out, one larger than the budget is not kept", () => {
    const clock = new FakeClock(0);
    // 100 activities are 700 record numbers (5.6 KB) a journey: a 16 KiB budget holds two of them.
    const journeys = worker(clock, { retainedJourneys: 1000, retainedJourneyBytes: 16 * 1024 });
    for (let i = 1; i <= 4; i++) compute(journeys, clock, `big-${i}`, 100);
    expect(["big-1", "big-2", "big-3", "big-4"].map((key) => journeys.explain(key) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect(journeys.explain("big-4")!.seconds).toBe(100);
    compute(journeys, clock, "huge-1", 1000);
    expect(journeys.explain("huge-1")).toBeUndefined();
    // Keeping nothing of it evicted nothing either.
    expect(journeys.explain("big-4")).toBeDefined();
    // Small journeys still fit beside the large ones.
    compute(journeys, clock, "small-1");
    expect(journeys.explain("small-1")).toBeDefined();
  });

  it("rejects retainedJourneys past a million, naming the option, and allocates the ring as it fills", () => {
    expect(() => new TaskJourneys({ retainedJourneys: 1e8 })).toThrow(/retainedJourneys/);
    expect(() => new TaskJourneys({ retainedJourneyBytes: -1 })).toThrow(/retainedJourneyBytes/);
    const clock = new FakeClock(0);
    const before = process.memoryUsage().heapUsed;
    const journeys = worker(clock, { retainedJourneys: 1_000_000 });
    // A million preallocated slots would be 8 MB at once; the lazily grown ring holds one.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4_000_000);
    compute(journeys, clock, "inc-1");
    expect(journeys.explain("inc-1")).toBeDefined();
  });
});
