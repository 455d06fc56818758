import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { InvalidTransition, TaskJourneys } from "../../src/index.js";
import type { BreakdownNode } from "../../src/model/breakdown.js";
import { FakeClock } from "../helpers/clock.js";

beforeEach(() => diag.disable());
afterEach(() => diag.disable());

function worker(clock: FakeClock, options: ConstructorParameters<typeof TaskJourneys>[0] = {}): TaskJourneys {
  return new TaskJourneys({ clock: clock.now, sampling: { ratio: 0, keepSlowerThan: 0 }, ...options });
}

function executing(journeys: TaskJourneys, key: string): BreakdownNode {
  return journeys.explain(key)!.children.find((node) => node.name === "executing")!;
}

/** The seconds summed into task.state.time of (prefix, state). */
function stateTime(journeys: TaskJourneys, prefix: string, state: Parameters<TaskJourneys["stats"]>[1]): number {
  const stats = journeys.stats(prefix, state);
  return stats.count === 0 ? 0 : stats.mean * stats.count;
}

describe("hostile values in lenient mode", () => {
  it("gather() with BigInt bytes counts them and its end() moves the keys on", () => {
    const clock = new FakeClock(1);
    const journeys = worker(clock);
    journeys.transition("d-1", "released", "fetch");
    const ledger = journeys.gather("tcp://peer", ["d-1"], 10n as never);
    clock.advance(2);
    expect(() => ledger.end()).not.toThrow();
    expect(journeys.explain("d-1")?.outcome).toBe("memory");
    expect(journeys.dropped()).toEqual({ "invalid-value": 1 });
  });

  it("meter() after end() with a Symbol activity runs the work; meter(name, null) opens no record", () => {
    const clock = new FakeClock(1);
    const journeys = worker(clock);
    const ledger = journeys.execute("e-1");
    expect(ledger.meter("deserialize", null as never)).toBeUndefined();
    clock.advance(1);
    ledger.end("memory");
    let ran = false;
    expect(() => ledger.meter(Symbol("x") as never, () => (ran = true))).not.toThrow();
    expect(ran).toBe(true);
    expect(journeys.meter("deserialize", 42 as never)).toBeUndefined();
    // The record never opened: no activity claims the second.
    expect(executing(journeys, "e-1").children).toEqual([]);
    expect(journeys.dropped()).toEqual({ "invalid-work": 2, "ledger-ended": 1 });
  });

  it("stats() of an unknown state is empty and counted, and throws InvalidTransition when strict", () => {
    const journeys = worker(new FakeClock(1));
    // @ts-expect-error not a state (stats() is typed by the machine); at run time, an unknown-state drop
    expect(journeys.stats("x", "sleeping").count).toBe(0);
    expect(journeys.stats("x", Symbol("s") as never).count).toBe(0);
    expect(journeys.dropped()).toEqual({ "unknown-state": 2 });
    const strict = worker(new FakeClock(1), { strict: true });
    // @ts-expect-error as above
    expect(() => strict.stats("x", "sleeping")).toThrow(InvalidTransition);
  });

  it("activity, unit and peer names that are not strings are counted, never converted", () => {
    const clock = new FakeClock(1);
    const journeys = worker(clock);
    const ledger = journeys.execute("n-1");
    const hostileName = {
      toString: () => {
        throw new Error("no");
      },
    };
    ledger.meter(hostileName as never, () => clock.advance(1));
    ledger.digest("disk-read", 3, Object.create(null) as never);
    ledger.end("memory");
    expect(executing(journeys, "n-1").children).toEqual([{ name: "other", seconds: 1, children: [] }]);
    journeys.transition("n-2", "released", "fetch");
    journeys.gather(Symbol("peer") as never, ["n-2"]).end("ok");
    expect(journeys.dropped()).toEqual({ "invalid-name": 3 });
  });
});

describe("absurd values are counted, never summed", () => {
  it("a Date.now() in milliseconds as a time is clock-skew: the clock's reading is used", () => {
    const clock = new FakeClock(1000);
    const journeys = worker(clock);
    journeys.transition("t-1", "released", "waiting");
    clock.advance(2);
    journeys.transition("t-1", "waiting", "ready", Date.now());
    expect(stateTime(journeys, "t", "waiting")).toBe(2);
    expect(journeys.dropped()).toEqual({ "clock-skew": 1 });
  });

  it("a scheduler's own earlier timestamps within maxClockSkew are taken as given", () => {
    const clock = new FakeClock(100_000);
    const journeys = worker(clock);
    // A journey backdated by most of a day, then one by exactly maxClockSkew.
    journeys.transition("b-1", "released", "waiting", 100_000 - 80_000);
    journeys.transition("b-1", "waiting", "ready", 100_000 - 79_990);
    expect(stateTime(journeys, "b", "waiting")).toBe(10);
    const tight = worker(clock, { maxClockSkew: 60 });
    tight.transition("c-1", "released", "waiting", 100_000 - 60);
    tight.transition("c-1", "waiting", "ready", 100_000 - 61);
    expect(tight.dropped()).toEqual({ "clock-skew": 1 });
    expect(stateTime(tight, "c", "waiting")).toBe(60);
  });

  it("numeric strings, BigInts and Symbols as times are invalid-time, not stored", () => {
    const clock = new FakeClock(5);
    const journeys = worker(clock);
    journeys.transition("s-1", "released", "waiting", "3" as never);
    clock.advance(1);
    journeys.transition("s-1", "waiting", "ready", 10n as never);
    clock.advance(1);
    journeys.transition("s-1", "ready", "executing", Symbol("t") as never);
    expect(stateTime(journeys, "s", "waiting")).toBe(1);
    expect(stateTime(journeys, "s", "ready")).toBe(1);
    expect(journeys.dropped()).toEqual({ "invalid-time": 3 });
  });

  it("sizes beyond Number.MAX_SAFE_INTEGER and absurd seconds are invalid-value", () => {
    const clock = new FakeClock(1);
    const journeys = worker(clock);
    for (const key of ["g-1", "g-2"]) {
      journeys.transition(key, "released", "fetch");
      journeys.gather("tcp://peer", [key], Number.MAX_VALUE).end("ok");
    }
    const ledger = journeys.execute("q-1");
    ledger.digest("disk-read", Number.MAX_SAFE_INTEGER + 2, "bytes");
    ledger.digest("thread-cpu", 2 * 86_400);
    ledger.digest("disk-read", 4096, "bytes");
    clock.advance(1);
    ledger.end("memory");
    const gatherSize = journeys.metricProducer
      .produce([0, 0], [0, 0])
      .find((metric) => metric.descriptor.name === "task.gather.size");
    for (const point of gatherSize?.dataPoints ?? []) expect(point.value).toBe(0);
    expect(executing(journeys, "q-1").quantities).toBeUndefined();
    expect(JSON.stringify(journeys.explain("q-1"))).toContain('"quantities":{"bytes":4096}');
    expect(journeys.dropped()).toEqual({ "invalid-value": 4 });
  });

  it("a clock that turns NaN or throws is replaced by its last good reading", () => {
    let reading: unknown = 10;
    const journeys = new TaskJourneys({
      clock: () =>
        reading === "throw"
          ? (() => {
              throw new Error("clock");
            })()
          : (reading as number),
      sampling: { ratio: 0 },
    });
    journeys.transition("c-1", "released", "waiting");
    reading = 12;
    journeys.transition("c-1", "waiting", "ready");
    reading = Number.NaN;
    journeys.transition("c-1", "ready", "executing");
    reading = "throw";
    journeys.transition("c-1", "executing", "memory");
    reading = 13;
    const breakdown = journeys.explain("c-1")!;
    expect(breakdown.seconds).toBe(2);
    expect(breakdown.children.map((node) => [node.name, node.seconds])).toEqual([
      ["waiting", 2],
      ["ready", 0],
      ["executing", 0],
    ]);
    expect(journeys.dropped()).toEqual({ "invalid-clock": 2 });
  });

  // Number.MAX_VALUE is finite: summed into a state's time it overflowed to Infinity in
  // task.state.time before readings were bounded (the lenient property found it, seed -643209230).
  for (const failure of ["NaN", "a throw", "Number.MAX_VALUE"] as const) {
    it(`a clock that fails from its second reading (${failure}) constructs, and every bad reading is invalid-clock`, () => {
      let readings = 0;
      const journeys = new TaskJourneys({
        clock: () => {
          readings++;
          if (readings === 1) return 7;
          if (failure === "NaN") return Number.NaN;
          if (failure === "Number.MAX_VALUE") return Number.MAX_VALUE;
          throw new Error("clock broke");
        },
        sampling: { ratio: 0 },
      });
      expect(journeys.dropped()).toEqual({});
      journeys.transition("c-1", "released", "waiting");
      journeys.transition("c-1", "waiting", "ready");
      journeys.transition("c-1", "ready", "executing");
      journeys.transition("c-1", "executing", "memory");
      // Every reading after the first, at the construction's good one (7).
      expect(journeys.dropped()).toEqual({ "invalid-clock": 4 });
      expect(journeys.explain("c-1")!.seconds).toBe(0);
    });
  }

  it("a clock that fails at its first reading is refused at construction, naming the option and the failure", () => {
    const throwing = () => {
      throw new RangeError("no time source");
    };
    expect(() => new TaskJourneys({ clock: throwing })).toThrow(TypeError);
    expect(() => new TaskJourneys({ clock: throwing })).toThrow(
      'TaskJourneys: option "runtime.clock" must be a function returning seconds from 0 to 1e12, but it threw RangeError: no time source',
    );
    expect(() => new TaskJourneys({ clock: () => -1 })).toThrow(
      'TaskJourneys: option "runtime.clock" must be a function returning seconds from 0 to 1e12, got -1',
    );
  });

  it("activities and units named constructor, toString and __proto__ are names like any other", () => {
    const clock = new FakeClock(1);
    const journeys = worker(clock);
    const ledger = journeys.execute("p-1");
    for (const name of ["constructor", "toString", "__proto__"]) {
      ledger.meter(name, () => clock.advance(1));
      ledger.digest(name, 2, name);
      ledger.digest(name, 3, name);
    }
    ledger.end("memory");
    const nodes = executing(journeys, "p-1").children;
    expect(nodes.map((node) => [node.name, node.seconds, node.quantities?.[node.name]])).toEqual([
      ["constructor", 1, 5],
      ["toString", 1, 5],
      ["__proto__", 1, 5],
    ]);
    expect(journeys.dropped()).toEqual({});
  });
});
