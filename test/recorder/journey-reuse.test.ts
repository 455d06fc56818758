import { describe, expect, it } from "vitest";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";
import { JourneyDetail, type Journey } from "../../src/recorder/journey.js";
import { FakeClock } from "../helpers/clock.js";

// A retired journey is reused by the next one begun (live-journeys.ts, recycle()), only when
// nothing can reach it any more. Each test below pins one holder that must keep its journey.

function worker(clock: FakeClock) {
  return new TaskJourneys({ role: "worker", instance: "w1", clock: clock.now, sampling: { ratio: 0 } });
}

function liveJourney(journeys: TaskJourneys, key: string): Journey {
  return internalsOf(journeys)!.recorder.live.get(key)!;
}

/** released → waiting → ready → executing, `seconds` of `activity`, → memory. */
function plain(journeys: TaskJourneys, clock: FakeClock, key: string, activity: string, seconds: number): void {
  journeys.transition(key, "released", "waiting");
  clock.advance(1);
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  ledger.meter(activity, () => clock.advance(seconds));
  ledger.end("memory");
  journeys.transition(key, "executing", "memory");
}

function activitiesOf(journeys: TaskJourneys, key: string): Record<string, number> {
  const executing = journeys.explain(key)!.children.find((node) => node.name === "executing")!;
  return Object.fromEntries(executing.children.map((node) => [node.name, +node.seconds.toFixed(9)]));
}

describe("retired journeys reused", () => {
  it("a plain compute journey is reused by the next, and what explain() kept of it stays", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("a", "released", "waiting");
    const first = liveJourney(journeys, "a");
    journeys.transition("a", "waiting", "ready");
    journeys.transition("a", "ready", "executing");
    const ledger = journeys.execute("a");
    ledger.meter("load", () => clock.advance(2));
    ledger.meter("compute", () => clock.advance(3));
    ledger.end("memory");
    journeys.transition("a", "executing", "memory");
    const kept = journeys.explain("a");
    plain(journeys, clock, "b", "write", 7);
    expect(liveJourney(journeys, "b")).toBeUndefined(); // ended
    journeys.transition("c", "released", "waiting");
    // The same object, made new: a's visits and records are gone from it, b's too.
    expect(liveJourney(journeys, "c")).toBe(first);
    expect(first.key).toBe("c");
    expect(first.visitCount).toBe(1);
    expect(first.activities.length).toBe(0);
    expect(first.ended).toBe(false);
    expect(first.outcomeState).toBe(-1);
    expect(journeys.explain("a")).toEqual(kept);
    expect(activitiesOf(journeys, "a")).toEqual({ load: 2, compute: 3 });
    expect(activitiesOf(journeys, "b")).toEqual({ write: 7 });
    expect(journeys.explain("c")!.children.map((node) => node.name)).toEqual(["waiting"]);
  });

  it("never while a listener is registered: what it was handed stays as it was", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const ended: Journey[] = [];
    journeys.addListener({ journeyEnded: (journey) => ended.push(journey) });
    plain(journeys, clock, "a", "load", 2);
    plain(journeys, clock, "b", "write", 7);
    expect(ended.map((journey) => journey.key)).toEqual(["a", "b"]);
    expect(ended[0]).not.toBe(ended[1]);
    expect(ended[0].visitCount).toBe(4);
    expect(ended[0].activities[3 + 1]).toBe(3); // its record: [visit, id, parent, start, end…], start 1 + 2 s
    expect(ended[0].ended).toBe(true);
  });

  it("with traces on, an unsampled journey the span bridge did not keep is reused; one it kept is not", async () => {
    const clock = new FakeClock(0);
    const exporter = new InMemorySpanExporter();
    const journeys = new TaskJourneys({
      role: "worker",
      clock: clock.now,
      sampling: { ratio: 0, keepSlowerThan: 0.5, keepErrors: false },
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    });
    journeys.transition("a", "released", "waiting");
    const first = liveJourney(journeys, "a");
    journeys.transition("a", "waiting", "memory");
    journeys.transition("b", "released", "waiting");
    expect(liveJourney(journeys, "b")).toBe(first); // a: not kept (its prefix not judged yet)
    journeys.transition("b", "waiting", "memory");
    // 40 journeys of 1 s judge the prefix; then one of 100 s is slower than its median: kept.
    for (let index = 0; index < 40; index++) plain(journeys, clock, `p-${index}`, "write", 0);
    journeys.transition("p-999", "released", "waiting");
    const slow = liveJourney(journeys, "p-999");
    clock.advance(100);
    journeys.transition("p-999", "waiting", "memory");
    journeys.transition("next", "released", "waiting");
    expect(liveJourney(journeys, "next")).not.toBe(slow);
    expect(slow.key).toBe("p-999");
    expect(exporter.getFinishedSpans().some((span) => JSON.stringify(span.attributes).includes('"p-999"'))).toBe(true);
    await journeys.shutdown();
  });

  it("never while an async activity of its ended ledger is pending: it settles into the old records, not a new journey's", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("a", "released", "waiting");
    const first = liveJourney(journeys, "a");
    journeys.transition("a", "waiting", "ready");
    journeys.transition("a", "ready", "executing");
    let settleA!: () => void;
    const ledgerA = journeys.execute("a");
    const pendingA = ledgerA.meter("upload", () => new Promise<void>((resolve) => (settleA = resolve)));
    clock.advance(1);
    ledgerA.end("memory"); // upload cut at the ledger's end, 1 s
    journeys.transition("a", "executing", "memory");

    clock.set(10);
    journeys.transition("b", "released", "waiting");
    expect(liveJourney(journeys, "b")).not.toBe(first);
    journeys.transition("b", "waiting", "ready");
    journeys.transition("b", "ready", "executing");
    let settleB!: () => void;
    const ledgerB = journeys.execute("b");
    const pendingB = ledgerB.meter("download", () => new Promise<void>((resolve) => (settleB = resolve)));
    clock.set(11);
    settleA();
    await pendingA;
    clock.set(15);
    settleB();
    await pendingB;
    ledgerB.end("memory");
    journeys.transition("b", "executing", "memory");
    expect(activitiesOf(journeys, "a")).toEqual({ upload: 1 });
    // Reused, b's record at a's record's offset would have been closed by a's settlement at 11.
    expect(activitiesOf(journeys, "b")).toEqual({ download: 5 });
  });

  it("an ended ledger the caller kept is still counted as used after end, and writes nothing into the journey that reuses its own", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("a", "released", "waiting");
    const first = liveJourney(journeys, "a");
    journeys.transition("a", "waiting", "ready");
    journeys.transition("a", "ready", "executing");
    const ledgerA = journeys.execute("a");
    ledgerA.meter("load", () => clock.advance(2));
    ledgerA.end("memory");
    journeys.transition("a", "executing", "memory");

    journeys.transition("b", "released", "waiting");
    expect(liveJourney(journeys, "b")).toBe(first);
    journeys.transition("b", "waiting", "ready");
    journeys.transition("b", "ready", "executing");
    const ledgerB = journeys.execute("b");
    let ran = 0;
    expect(ledgerA.meter("late", () => ++ran)).toBe(1);
    ledgerA.digest("late", 1);
    ledgerA.run(() => journeys.meter("late", () => ++ran));
    ledgerA.end("memory");
    expect(ran).toBe(2);
    // meter(), digest() and end() counted; a meter() within its run() finds no open ledger, as before reuse.
    expect(journeys.dropped()).toEqual({ "ledger-ended": 3 });
    ledgerB.meter("write", () => clock.advance(3));
    ledgerB.end("memory");
    journeys.transition("b", "executing", "memory");
    expect(activitiesOf(journeys, "a")).toEqual({ load: 2 });
    expect(activitiesOf(journeys, "b")).toEqual({ write: 3 });
  });

  it("a fetch journey that served a dependent is not reused before the dependent apportions its waiting", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("x", "released", "waiting");
    journeys.dependencies("x", ["d"]);
    journeys.transition("d", "released", "fetch");
    const ledger = journeys.gather("tcp://peer:1", ["d"], { bytes: 100 });
    ledger.meter("network", () => clock.advance(2));
    ledger.end("ok");
    // d is in memory: its fetch journey ended, x still waits (on a local dependency, say).
    clock.advance(1);
    for (const key of ["p", "q", "r"]) plain(journeys, clock, key, "write", 1);
    journeys.transition("x", "waiting", "ready");
    const waiting = journeys.explain("x")!.children.find((node) => node.name === "waiting")!;
    expect(Object.fromEntries(waiting.children.map((node) => [node.name, +node.seconds.toFixed(9)]))).toEqual({
      network: 2,
      dependencies: 7,
    });
  });

  it("a dependent that ended leaves the dependency lists before it is reused", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    // Other dependents' lists first: an ending journey sweeps a few lists' worth (dependencies.ts),
    // so x stays listed under d after it ended.
    for (let index = 0; index < 10; index++) {
      journeys.transition(`w-${index}`, "released", "waiting");
      journeys.dependencies(`w-${index}`, [`e-${index}`]);
    }
    journeys.transition("x", "released", "waiting");
    journeys.dependencies("x", ["d"]);
    journeys.transition("x", "waiting", "memory"); // d came from elsewhere
    journeys.transition("p", "released", "waiting");
    journeys.transition("d", "released", "fetch");
    const ledger = journeys.gather("tcp://peer:1", ["d"], { bytes: 100 });
    ledger.meter("network", () => clock.advance(2));
    ledger.end("ok");
    clock.advance(1);
    journeys.transition("p", "waiting", "ready");
    // Reused for p while still listed under d, x's object would be found waiting there and given d's network time.
    const waiting = journeys.explain("p")!.children.find((node) => node.name === "waiting")!;
    expect(waiting.children.map((node) => node.name)).toEqual(["dependencies"]);
  });

  it("a reused journey no longer counts toward the computation its former self was begun under", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("a", "released", "waiting", { computation: "g1" });
    const first = liveJourney(journeys, "a");
    clock.advance(1);
    journeys.transition("a", "waiting", "memory");
    journeys.transition("b", "released", "waiting");
    expect(liveJourney(journeys, "b")).toBe(first);
    clock.advance(5);
    journeys.transition("b", "waiting", "memory");
    const [g1] = journeys.computations("g1");
    expect([g1.tasks, g1.live, g1.ended, g1.seconds]).toEqual([1, 0, { memory: 1 }, { waiting: 1 }]);
  });

  it("a dependent with dependencies, a waiting breakdown and quantities is reused, its detail reset, and what explain() kept of it stays", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("d", "released", "fetch");
    journeys.transition("x", "released", "waiting");
    journeys.dependencies("x", ["d"]);
    const first = liveJourney(journeys, "x");
    const gather = journeys.gather("tcp://peer:1", ["d"], { bytes: 100 });
    gather.meter("network", () => clock.advance(2));
    gather.end("ok");
    journeys.transition("x", "waiting", "ready");
    journeys.transition("x", "ready", "executing");
    const ledger = journeys.execute("x");
    ledger.meter("compute", () => clock.advance(1));
    ledger.digest("disk-read", 4096, "bytes");
    ledger.end("memory");
    journeys.transition("x", "executing", "memory");
    const kept = journeys.explain("x");
    journeys.transition("y", "released", "waiting");
    // The same object and its detail object, nothing of x's left in either.
    expect(liveJourney(journeys, "y")).toBe(first);
    expect(first.key).toBe("y");
    expect(first.dependencyIds).toBeUndefined();
    expect(first.waitBreakdown).toBeUndefined();
    expect(first.fetchedBy).toBeUndefined();
    expect(first.quantities).toBeUndefined();
    expect(journeys.explain("x")).toEqual(kept);
    expect(JSON.stringify(kept)).toContain('"quantities":{"bytes":4096}');
    const waiting = kept!.children.find((node) => node.name === "waiting")!;
    expect(waiting.children.map((node) => [node.name, node.seconds])).toEqual([["network", 2]]);
    // y waits for nothing it was told: its waiting goes to "dependencies", none of d's network.
    clock.advance(3);
    journeys.transition("y", "waiting", "memory");
    const yWaiting = journeys.explain("y")!.children.find((node) => node.name === "waiting")!;
    expect(yWaiting.children.map((node) => [node.name, node.seconds])).toEqual([["dependencies", 3]]);
  });

  it("a dependent a fetch noted is not reused while that fetch may still hand it its waiting", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("x", "released", "waiting");
    journeys.dependencies("x", ["d"]);
    const first = liveJourney(journeys, "x");
    journeys.transition("d", "released", "fetch");
    const gather = journeys.gather("tcp://peer:1", ["d"], { bytes: 100 }); // d in flight: x noted
    // x is let go before d arrives (released while waiting), and ends.
    journeys.transition("x", "waiting", "released");
    journeys.transition("p", "released", "waiting");
    // Reused for p, x's object would be in d's noted dependents, waiting: given d's network time.
    expect(liveJourney(journeys, "p")).not.toBe(first);
    gather.meter("network", () => clock.advance(2));
    gather.end("ok");
    clock.advance(1);
    journeys.transition("p", "waiting", "ready");
    const waiting = journeys.explain("p")!.children.find((node) => node.name === "waiting")!;
    expect(waiting.children.map((node) => [node.name, node.seconds])).toEqual([["dependencies", 3]]);
  });

  it("a journey of up to 24 activity records is reused, one of more is not (the spares' memory bounded)", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const run = (key: string, records: number) => {
      journeys.transition(key, "released", "waiting");
      const journey = liveJourney(journeys, key);
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      const ledger = journeys.execute(key);
      for (let index = 0; index < records; index++) ledger.meter(`part-${index}`, () => clock.advance(1));
      ledger.end("memory");
      journeys.transition(key, "executing", "memory");
      return journey;
    };
    const eighteen = run("a", 18);
    journeys.transition("b", "released", "waiting");
    expect(liveJourney(journeys, "b")).toBe(eighteen);
    journeys.transition("b", "waiting", "memory");
    const many = run("c", 25);
    journeys.transition("d", "released", "waiting");
    expect(liveJourney(journeys, "d")).not.toBe(many);
    expect(Object.keys(activitiesOf(journeys, "c"))).toHaveLength(25);
  });
});

describe("a reused journey's detail", () => {
  it("is reset to what a new detail holds, every field (the defaults are written in both places)", () => {
    const detail = new JourneyDetail();
    const fresh: Record<string, unknown> = { ...new JourneyDetail() };
    // Every field given a value other than its default.
    for (const field of Object.keys(fresh)) {
      const before = fresh[field];
      (detail as unknown as Record<string, unknown>)[field] =
        typeof before === "number" ? (Number.isNaN(before) ? 1 : before + 7) : typeof before === "string" ? "x" : [1];
    }
    expect({ ...detail }).not.toEqual(fresh);
    detail.reset();
    expect({ ...detail }).toEqual(fresh);
  });
});
