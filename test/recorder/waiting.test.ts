import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";

function worker(clock: FakeClock) {
  return new TaskJourneys({ role: "worker", instance: "w1", clock: clock.now, sampling: { ratio: 0 } });
}

function waitingOf(journeys: TaskJourneys, key: string): Record<string, number> {
  const waiting = journeys.explain(key)!.children.find((node) => node.name === "waiting")!;
  return Object.fromEntries(waiting.children.map((node) => [node.name, +node.seconds.toFixed(9)]));
}

describe("waiting-time breakdown", () => {
  it("a transfer of 3 keys serving 2 dependents shares its activities per key and per dependent", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    // x-1 needs a-1, a-2; y-1 needs a-2, a-3. One transfer carries all three keys.
    journeys.transition("x-1", "released", "waiting");
    journeys.dependencies("x-1", ["a-1", "a-2"]);
    journeys.transition("y-1", "released", "waiting");
    journeys.dependencies("y-1", ["a-2", "a-3"]);
    for (const key of ["a-1", "a-2", "a-3"]) journeys.transition(key, "released", "fetch");
    clock.advance(1); // queued in fetch for 1 s before the transfer starts
    const ledger = journeys.gather("tcp://peer:1", ["a-1", "a-2", "a-3"], 3000);
    ledger.meter("connect", () => clock.advance(0.6));
    ledger.meter("network", () => clock.advance(2.4));
    ledger.end("ok");
    journeys.transition("x-1", "waiting", "ready");
    journeys.transition("y-1", "waiting", "ready");
    // Both waited 4 s: 1 s queued (all their dependencies sat in fetch), then 3 s of transfer
    // whose mix was 20% connect, 80% network.
    expect(waitingOf(journeys, "x-1")).toEqual({ network: 2.4, queued: 1, connect: 0.6 });
    expect(waitingOf(journeys, "y-1")).toEqual({ network: 2.4, queued: 1, connect: 0.6 });
    // The dependency's own fetch journey carries a third of the transfer.
    const flight = journeys.explain("a-2")!.children.find((node) => node.name === "flight")!;
    expect(Object.fromEntries(flight.children.map((n) => [n.name, +n.seconds.toFixed(9)]))).toEqual({
      connect: 0.2,
      network: 0.8,
      other: 2,
    });
  });

  it("one local and one fetched dependency: the time not covered by fetches is `dependencies`", () => {
    const clock = new FakeClock(10);
    const journeys = worker(clock);
    journeys.transition("z-1", "released", "waiting");
    journeys.dependencies("z-1", ["local-1", "remote-1"]);
    journeys.transition("local-1", "released", "waiting");
    journeys.transition("remote-1", "released", "fetch");
    const ledger = journeys.gather("tcp://peer:1", ["remote-1"], 100);
    ledger.meter("network", () => clock.advance(2));
    ledger.end("ok");
    clock.advance(4);
    journeys.transition("local-1", "waiting", "ready");
    journeys.transition("local-1", "ready", "executing");
    journeys.transition("local-1", "executing", "memory");
    journeys.transition("z-1", "waiting", "ready");
    expect(waitingOf(journeys, "z-1")).toEqual({ dependencies: 4, network: 2 });
  });

  it("a dependency that went missing and was fetched again", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("r-1", "released", "waiting");
    journeys.dependencies("r-1", ["d-1"]);
    journeys.transition("d-1", "released", "fetch");
    let ledger = journeys.gather("tcp://peer:1", ["d-1"]);
    ledger.meter("connect", () => clock.advance(1));
    ledger.end("missing"); // flight → missing, the attempt lumped as "missing"
    clock.advance(3); // missing for 3 s until the scheduler names another holder
    journeys.transition("d-1", "missing", "fetch");
    clock.advance(0.5);
    ledger = journeys.gather("tcp://peer:2", ["d-1"], 500);
    ledger.meter("network", () => clock.advance(2));
    ledger.end("ok");
    journeys.transition("r-1", "waiting", "ready");
    expect(waitingOf(journeys, "r-1")).toEqual({ missing: 4, network: 2, queued: 0.5 });
    expect(journeys.dropped()).toEqual({});
  });

  it("a busy peer retried: the failed attempt is lumped as busy", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("r-1", "released", "waiting");
    journeys.dependencies("r-1", ["d-1"]);
    journeys.transition("d-1", "released", "fetch");
    journeys.queued("d-1", "remote-saturated");
    clock.advance(1);
    let ledger = journeys.gather("tcp://peer:1", ["d-1"]);
    ledger.meter("connect", () => clock.advance(0.5));
    ledger.end("busy"); // back to fetch
    clock.advance(1.5);
    ledger = journeys.gather("tcp://peer:1", ["d-1"], 10);
    ledger.meter("network", () => clock.advance(1));
    ledger.end("ok");
    journeys.transition("r-1", "waiting", "ready");
    expect(waitingOf(journeys, "r-1")).toEqual({ "queued (remote-saturated)": 1, queued: 1.5, busy: 0.5, network: 1 });
  });
});

describe("waiting-time breakdown when the caller reports no fetch state", () => {
  it("a gather() that starts the dependency's journey in flight still serves the waiting dependent", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("t-1", "released", "waiting");
    journeys.dependencies("t-1", ["d-1"]);
    clock.advance(1);
    const ledger = journeys.gather("tcp://peer:1", ["d-1"], 10);
    ledger.meter("network", () => clock.advance(3));
    ledger.end("ok");
    journeys.transition("t-1", "waiting", "ready");
    expect(waitingOf(journeys, "t-1")).toEqual({ dependencies: 1, network: 3 });
  });
});

describe("waiting-time breakdown, property", () => {
  it("always sums to the waiting time and no share is negative", () => {
    const dependency = fc.record({
      queued: fc.double({ min: 0, max: 5, noNaN: true }),
      attempts: fc.array(
        fc.record({
          outcome: fc.constantFrom("ok", "busy", "failed", "missing"),
          connect: fc.double({ min: 0, max: 2, noNaN: true }),
          network: fc.double({ min: 0, max: 5, noNaN: true }),
          after: fc.double({ min: 0, max: 2, noNaN: true }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      dependents: fc.subarray([0, 1, 2], { minLength: 1 }),
    });
    fc.assert(
      fc.property(
        fc.array(dependency, { minLength: 0, maxLength: 4 }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        (dependencies, tail) => {
          const clock = new FakeClock(0);
          const journeys = worker(clock);
          const dependents = ["t-0", "t-1", "t-2"];
          const starts = new Map<string, number>();
          dependents.forEach((key, index) => {
            clock.advance(0.1 * index);
            journeys.transition(key, "released", "waiting");
            starts.set(key, clock.seconds);
            journeys.dependencies(
              key,
              dependencies.flatMap((d, i) => (d.dependents.includes(index) ? [`d-${i}`] : [])),
            );
          });
          dependencies.forEach((d, i) => {
            const key = `d-${i}`;
            journeys.transition(key, "released", "fetch");
            clock.advance(d.queued);
            for (const attempt of d.attempts) {
              const ledger = journeys.gather("tcp://peer", [key], 1);
              ledger.meter("connect", () => clock.advance(attempt.connect));
              ledger.meter("network", () => clock.advance(attempt.network));
              const last = attempt === d.attempts[d.attempts.length - 1];
              ledger.end(last ? "ok" : (attempt.outcome as "ok"));
              if (!last && attempt.outcome === "ok") break;
              if (!last && attempt.outcome === "missing") journeys.transition(key, "missing", "fetch");
              clock.advance(attempt.after);
            }
          });
          clock.advance(tail);
          for (const key of dependents) {
            journeys.transition(key, "waiting", "ready");
            const waiting = journeys.explain(key)!.children.find((node) => node.name === "waiting")!;
            expect(waiting.seconds).toBeCloseTo(clock.seconds - starts.get(key)!, 9);
            const sum = waiting.children.reduce((total, node) => total + node.seconds, 0);
            if (waiting.seconds > 0) expect(Math.abs(sum - waiting.seconds)).toBeLessThan(1e-9);
            for (const node of waiting.children) expect(node.seconds).toBeGreaterThanOrEqual(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
