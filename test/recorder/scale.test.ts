import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";
import { FakeClock } from "../helpers/clock.js";

// The inputs that once made one call quadratic (issue 13), at sizes where that showed: the results
// must be right there. Their cost is measured by bench/scale.bench.ts, never timed here.

function worker(clock: FakeClock) {
  return new TaskJourneys({ role: "worker", clock: clock.now, sampling: { ratio: 0 } });
}

function waitingOf(journeys: TaskJourneys, key: string): Record<string, number> {
  const waiting = journeys.explain(key)!.children.find((node) => node.name === "waiting")!;
  return Object.fromEntries(waiting.children.map((node) => [node.name, +node.seconds.toFixed(6)]));
}

function fetchOne(journeys: TaskJourneys, clock: FakeClock, key: string): void {
  journeys.transition(key, "released", "fetch");
  const ledger = journeys.gather("tcp://peer:1", [key], 10);
  clock.advance(1);
  ledger.meter("network", () => clock.advance(1));
  ledger.end("ok");
}

describe("dependencies at scale", () => {
  it("a task leaving waiting after 4,000 fetched dependencies: each fetch's network and other, exactly", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const deps = Array.from({ length: 4000 }, (_, i) => `dep-${i}`);
    journeys.dependencies("sum-0", deps);
    journeys.transition("sum-0", "released", "waiting");
    for (const dep of deps) fetchOne(journeys, clock, dep);
    journeys.transition("sum-0", "waiting", "ready");
    expect(waitingOf(journeys, "sum-0")).toEqual({ network: 4000, other: 4000 });
    expect(journeys.dropped()).toEqual({});
  });

  it("300 dependents of the same 300 fetched dependencies each get 1/300 of every fetch, all of their wait", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const deps = Array.from({ length: 300 }, (_, i) => `dep-${i}`);
    for (let d = 0; d < 300; d++) {
      journeys.dependencies(`x-${d}`, deps);
      journeys.transition(`x-${d}`, "released", "waiting");
    }
    for (const dep of deps) fetchOne(journeys, clock, dep);
    for (let d = 0; d < 300; d++) journeys.transition(`x-${d}`, "waiting", "ready");
    // Apportioning fills the whole wait (600 s) from the fetches that served it, even though each
    // dependent's weight in them is 1/300.
    expect(waitingOf(journeys, "x-0")).toEqual({ network: 300, other: 300 });
    expect(waitingOf(journeys, "x-299")).toEqual({ network: 300, other: 300 });
  });

  it("a dependency answered busy 8,000 times: the wait is busy time, then the fetch", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.dependencies("sum-0", ["dep-0"]);
    journeys.transition("sum-0", "released", "waiting");
    journeys.transition("dep-0", "released", "fetch");
    for (let i = 0; i < 8000; i++) {
      const ledger = journeys.gather("tcp://peer:1", ["dep-0"]);
      clock.advance(1);
      ledger.end("busy");
      journeys.queued("dep-0", "remote-saturated");
      clock.advance(1);
    }
    const ledger = journeys.gather("tcp://peer:1", ["dep-0"]);
    ledger.meter("network", () => clock.advance(1));
    ledger.end("ok");
    journeys.transition("sum-0", "waiting", "ready");
    expect(waitingOf(journeys, "sum-0")).toEqual({ busy: 8000, "queued (remote-saturated)": 8000, network: 1 });
    // The dependency's own explain(): every flight its own attempt, busy, and the last one ok.
    const flights = journeys.explain("dep-0")!.children.filter((node) => node.name === "flight");
    expect(flights).toHaveLength(8001);
    expect(flights.filter((node) => node.outcome === "busy")).toHaveLength(8000);
    expect(flights.at(-1)!.outcome).toBeUndefined();
  });

  it("ended dependents leave the lists of dependencies: none is left once every journey ended", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    // 3,000 dependents of dependencies that are never fetched here (computed locally elsewhere).
    for (let d = 0; d < 3000; d++) {
      journeys.dependencies(`x-${d}`, [`a-${d}`, `b-${d % 7}`]);
      journeys.transition(`x-${d}`, "released", "waiting");
      journeys.transition(`x-${d}`, "waiting", "ready");
      const ledger = journeys.execute(`x-${d}`);
      ledger.end("memory");
    }
    const dependentsOf = (
      internalsOf(journeys)!.recorder as unknown as { deps: { dependentsOf: Map<unknown, unknown[]> } }
    ).deps.dependentsOf;
    let left = 0;
    for (const dependents of dependentsOf.values()) left += dependents.length;
    // The sweep trails the ends by a bounded amount: far fewer than the 6,000 entries made.
    expect(left).toBeLessThan(64);
  });
});

describe("explain() at scale", () => {
  it("an execution of 16,000 activity records, a quarter nested: sums by name at each level", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("x-0", "released", "waiting");
    journeys.transition("x-0", "waiting", "ready");
    const ledger = journeys.execute("x-0");
    const names = ["deserialize", "compute", "serialize", "compute"];
    for (let i = 0; i < 12_000; i++) {
      ledger.meter(names[i % 4], () => {
        clock.advance(1);
        if (i % 3 === 0) ledger.meter("disk-read", () => clock.advance(0.5));
      });
    }
    ledger.end("memory");
    const executing = journeys.explain("x-0")!.children.find((node) => node.name === "executing")!;
    expect(executing.seconds).toBe(14_000);
    const byName = Object.fromEntries(executing.children.map((node) => [node.name, node]));
    // deserialize: i % 4 === 0 (3,000 records, 1,000 of them with a nested disk-read: i % 12 === 0);
    // inside it, `other` is what those 1,000 left of their own time (records with nothing nested add none).
    expect(byName.deserialize.seconds).toBe(3000 + 500);
    expect(byName.deserialize.children.map((node) => [node.name, node.seconds])).toEqual([
      ["disk-read", 500],
      ["other", 1000],
    ]);
    expect(byName.compute.seconds).toBe(6000 + 1000);
    expect(byName.serialize.seconds).toBe(3000 + 500);
  });
});
