import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { internalsOf } from "../../src/internal.js";
import { explainJourney } from "../../src/recorder/explain.js";
import type { Breakdown } from "../../src/model/breakdown.js";

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
    expect(() => new TaskJourneys({ retainedJourneys: 1e8 })).toThrow(/retention\.journeys/);
    expect(() => new TaskJourneys({ retainedJourneyBytes: -1 })).toThrow(/retention\.bytes/);
    const clock = new FakeClock(0);
    const before = process.memoryUsage().heapUsed;
    const journeys = worker(clock, { retainedJourneys: 1_000_000 });
    // A million preallocated slots would be 8 MB at once; the lazily grown ring holds one.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4_000_000);
    compute(journeys, clock, "inc-1");
    expect(journeys.explain("inc-1")).toBeDefined();
  });
});

describe("a kept journey, packed", () => {
  it("explains as it did when it ended: waits, nested and digested activities, quantities, failures, tuple keys", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, {});
    const recorder = internalsOf(journeys)!.recorder;
    const names = {
      prefix: (id: number) => recorder.prefixes.name(id),
      activity: (id: number) => recorder.activities.name(id),
      unit: (id: number) => recorder.units.name(id),
    };
    // The breakdown of each journey as it ends, from the journey object itself, before it is packed.
    const atEnd = new Map<string, Breakdown>();
    journeys.addListener({
      journeyEnded: (journey) => {
        const breakdown = explainJourney(journey, names, journeys.instance, clock.now(), recorder.machine);
        atEnd.set(breakdown.key, breakdown);
      },
    });
    // A dependency fetched after a failed attempt and a busy one, a compute journey waiting for it.
    journeys.transition("x-1", "released", "waiting");
    journeys.dependencies("x-1", ["d-1"]);
    journeys.transition("d-1", "released", "fetch");
    clock.advance(0.5);
    let gather = journeys.gather("tcp://peer:1", ["d-1"], 100);
    gather.meter("connect", () => clock.advance(0.25));
    gather.end("failed", new Error("connection reset") as never);
    gather = journeys.gather("tcp://peer:2", ["d-1"], 100);
    clock.advance(0.125);
    gather.end("busy");
    gather = journeys.gather("tcp://peer:3", ["d-1"], 100);
    gather.meter("network", () => clock.advance(1));
    gather.digest("network", 4096, "bytes");
    gather.end("ok");
    journeys.transition("x-1", "waiting", "ready");
    journeys.transition("x-1", "ready", "executing");
    let ledger = journeys.execute("x-1");
    ledger.meter("deserialize", () => {
      clock.advance(0.25);
      ledger.meter("disk-read", () => clock.advance(0.125));
    });
    clock.advance(2);
    ledger.digest("thread-cpu", 1.5);
    ledger.digest("spill", 1 << 20, "bytes");
    ledger.end("memory");
    // An execution that fails with an error, and a key that is a tuple.
    const tuple = ["sum-y", 3] as const;
    journeys.transition(tuple, "released", "waiting");
    journeys.transition(tuple, "waiting", "ready");
    journeys.transition(tuple, "ready", "executing");
    ledger = journeys.execute(tuple);
    clock.advance(1);
    ledger.end("error", new TypeError("bad input") as never);
    expect([...atEnd.keys()]).toEqual(["d-1", "x-1", "('sum-y', 3)"]);
    for (const [key, breakdown] of atEnd) {
      const explained = key.startsWith("(") ? journeys.explain(tuple) : journeys.explain(key);
      expect(explained, key).toEqual(breakdown);
    }
    // What was packed is what the breakdown shows.
    const flight = journeys.explain("d-1")!.children.filter((node) => node.name === "flight");
    expect(flight.map((node) => node.outcome)).toEqual(["failed", "busy", undefined]);
    expect(flight[0].error).toBe("Error: connection reset");
    expect(journeys.explain(tuple)!.failed).toBe(true);
  });
});

describe("the serves kept for explain()", () => {
  it("explain the same after they are kept, oldest out first past retainedJourneys, a failed one as one lump", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { retainedJourneys: 3 });
    compute(journeys, clock, "x-1");
    const servedAt: unknown[] = [];
    for (let i = 1; i <= 4; i++) {
      const ledger = journeys.serve(`tcp://peer:${i}`, ["x-1", `other-${i}`]);
      ledger.meter("serialize", () => {
        clock.advance(0.25 * i);
        ledger.meter("disk-read", () => clock.advance(0.125));
      });
      ledger.digest("network", 1000 * i, "bytes");
      clock.advance(1);
      if (i === 4) ledger.end("failed", new Error("peer gone") as never);
      else ledger.end("ok");
      servedAt.push(journeys.explain("x-1")!.served!.at(-1));
    }
    const served = journeys.explain("x-1")!.served!;
    // Three kept, oldest first; each as explain() showed it when it had just ended.
    expect(served.map((node) => node.name)).toEqual(["serve tcp://peer:2", "serve tcp://peer:3", "serve tcp://peer:4"]);
    expect(served).toEqual(servedAt.slice(1));
    expect(served[0]).toEqual({
      name: "serve tcp://peer:2",
      seconds: 0.8125,
      quantities: { bytes: 1000 },
      children: [
        {
          name: "serialize",
          seconds: 0.3125,
          children: [
            { name: "disk-read", seconds: 0.0625, children: [] },
            { name: "other", seconds: 0.25, children: [] },
          ],
        },
        { name: "other", seconds: 0.5, children: [] },
      ],
    });
    expect(served[2].children).toEqual([{ name: "failed", seconds: 1.0625, children: [] }]);
    expect(journeys.explain("other-4")).toBeUndefined();
  });
});
