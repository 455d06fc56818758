import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { diag, DiagLogLevel, type DiagLogger } from "@opentelemetry/api";
import { InvalidTransition, TaskJourneys, instrument, wrap, type Breakdown, type Key } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";
import { FakeClock } from "../helpers/clock.js";

function worker(clock: FakeClock, extra: object = {}) {
  return new TaskJourneys({
    role: "worker",
    instance: "tcp://10.0.0.7:40001",
    clock: clock.now,
    sampling: { ratio: 0 },
    ...extra,
  });
}

/** [name, seconds] pairs of a breakdown's states, or of one state's activities. */
function states(breakdown: Breakdown | undefined): Array<[string, number]> {
  return breakdown!.children.map((node) => [node.name, +node.seconds.toFixed(9)]);
}
function activities(breakdown: Breakdown | undefined, state: string): Array<[string, number]> {
  const node = breakdown!.children.find((child) => child.name === state)!;
  return node.children.map((child) => [child.name, +child.seconds.toFixed(9)]);
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** A worker-shaped class whose methods move a fake clock, so every duration is exact. */
class Worker {
  readonly log: string[] = [];
  constructor(readonly clock: FakeClock) {}

  transition(key: string, from: string, to: string): string {
    this.log.push(`${key}:${from}>${to}`);
    return to;
  }
  run(key: string, seconds: number): { key: string; value: number } {
    this.clock.advance(seconds);
    if (seconds < 0) throw new RangeError(`bad ${key}`);
    return { key, value: seconds };
  }
  async runAsync(
    key: string,
    seconds: number,
    status: "ok" | "cancelled" = "ok",
  ): Promise<{ key: string; status: string }> {
    await tick();
    this.clock.advance(seconds);
    if (seconds < 0) throw new RangeError(`bad ${key}`);
    return { key, status };
  }
  async gatherDep(peer: string, _keys: Set<string>, _nbytes: number): Promise<{ status: "ok" | "busy" }> {
    await tick();
    this.read(0.5);
    this.clock.advance(0.25);
    return { status: peer.includes("busy") ? "busy" : "ok" };
  }
  read(seconds: number): number {
    this.clock.advance(seconds);
    return seconds;
  }
  async unspill(seconds: number): Promise<number> {
    await tick();
    this.read(seconds);
    this.clock.advance(0.1);
    return seconds;
  }
}

const silent: DiagLogger = { error() {}, warn() {}, info() {}, debug() {}, verbose() {} };
let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
  diag.setLogger(
    { ...silent, warn: (message: string) => warnings.push(message) },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
});
afterEach(() => diag.disable());

describe("transition methods", () => {
  it("records each call's state change before the method runs, from one or several methods", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    class Table extends Worker {
      toReady(key: string): void {
        this.log.push(`${key} ready`);
      }
    }
    const w = new Table(clock);
    const unwrap = instrument(w, journeys, {
      transition: [
        { method: "transition", key: (key) => key, from: (_key, from) => from, to: (_key, _from, to) => to },
        { method: "toReady", key: (key) => (key === "skip-1" ? undefined : key), from: "waiting", to: "ready" },
      ],
    });
    expect(w.transition("inc-1", "released", "waiting")).toBe("waiting");
    clock.advance(2);
    w.toReady("inc-1");
    w.toReady("skip-1");
    clock.advance(3);
    w.transition("inc-1", "ready", "executing");
    clock.advance(1);
    w.transition("inc-1", "executing", "memory");
    expect(w.log).toEqual([
      "inc-1:released>waiting",
      "inc-1 ready",
      "skip-1 ready",
      "inc-1:ready>executing",
      "inc-1:executing>memory",
    ]);
    expect(states(journeys.explain("inc-1"))).toEqual([
      ["waiting", 2],
      ["ready", 3],
      ["executing", 1],
    ]);
    expect(journeys.explain("skip-1")).toBeUndefined();
    expect(journeys.dropped()).toEqual({});
    unwrap();
  });

  it("tells dependencies along with a transition, or from a method of their own", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    class Handler extends Worker {
      handleComputeTask(task: { key: string; deps: Set<string> }): void {
        this.transition(task.key, "released", "waiting");
      }
      addTask(key: string, deps: string[]): void {
        this.log.push(`${key} ${deps.length}`);
      }
    }
    const w = new Handler(clock);
    instrument(w, journeys, {
      transition: {
        method: "addTask",
        key: (key) => key,
        from: "released",
        to: "waiting",
        dependencies: (_key, deps) => deps,
      },
      dependencies: { method: "handleComputeTask", key: (task) => task.key, dependencies: (task) => task.deps },
    });
    w.addTask("add-1", ["x-1"]);
    w.handleComputeTask({ key: "add-2", deps: new Set(["x-1", "y-1"]) });
    // The recorder knows the dependencies: their transfer is apportioned to both dependents' waiting.
    instrument(w, journeys, {
      transition: { method: "transition", key: (k) => k, from: (_k, f) => f, to: (_k, _f, t) => t },
    });
    w.transition("add-2", "released", "waiting");
    w.transition("x-1", "released", "fetch");
    const transfer = journeys.gather("tcp://peer", ["x-1"], 10);
    clock.advance(4);
    transfer.meter("network", () => clock.advance(2));
    transfer.end("ok");
    journeys.transition("add-1", "waiting", "ready");
    journeys.transition("add-2", "waiting", "ready");
    // Both dependents were told their dependency: its transfer's network time is in their waiting.
    for (const key of ["add-1", "add-2"]) {
      const waiting = activities(journeys.explain(key), "waiting");
      expect(waiting).toContainEqual(["network", 2]);
      expect(waiting.reduce((sum, [, seconds]) => sum + seconds, 0)).toBeCloseTo(6, 9);
    }
  });
});

describe("execute methods", () => {
  it("opens the execute ledger per call and ends it at a sync return: memory", () => {
    const clock = new FakeClock(10);
    const journeys = worker(clock);
    class Reader extends Worker {
      override run(key: string, seconds: number) {
        this.read(0.25);
        return super.run(key, seconds);
      }
    }
    const w = new Reader(clock);
    instrument(w, journeys, {
      execute: { method: "run", key: (key) => key },
      activities: [{ method: "read", activity: "disk-read" }],
    });
    expect(w.run("inc-1", 1)).toEqual({ key: "inc-1", value: 1 });
    const breakdown = journeys.explain("inc-1");
    expect(breakdown!.outcome).toBe("memory");
    expect(states(breakdown)).toEqual([["executing", 1.25]]);
    expect(activities(breakdown, "executing")).toEqual([
      ["disk-read", 0.25],
      ["other", 1],
    ]);
  });

  it("ends with error when the method throws, and rethrows the very same error", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    instrument(w, journeys, { execute: { method: "run", key: (key) => key } });
    let caught: unknown;
    try {
      w.run("bad-1", -1);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as Error).message).toBe("bad bad-1");
    expect(journeys.explain("bad-1")!.outcome).toBe("error");
  });

  it("ends async methods at settlement: memory on resolve, error on rejection, cancelled from the mapper", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    instrument(w, journeys, {
      execute: {
        method: "runAsync",
        key: (key) => key,
        outcome: (result) => (result?.status === "cancelled" ? "cancelled" : undefined),
      },
    });
    const pending = w.runAsync("ok-1", 2);
    expect(pending).toBeInstanceOf(Promise);
    expect(journeys.explain("ok-1")!.outcome).toBeUndefined();
    await expect(pending).resolves.toEqual({ key: "ok-1", status: "ok" });
    expect(journeys.explain("ok-1")!.outcome).toBe("memory");
    expect(journeys.explain("ok-1")!.seconds).toBe(2);

    const error = await w.runAsync("bad-1", -1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(journeys.explain("bad-1")!.outcome).toBe("error");

    await w.runAsync("stop-1", 1, "cancelled");
    expect(journeys.explain("stop-1")!.outcome).toBe("cancelled");
  });

  it("keeps activities of overlapping executions on their own keys, across awaits and timers", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    /** User code deep inside a task: no ledger is passed to it. */
    async function load(seconds: number): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, seconds * 10));
      journeys.meter("deserialize", () => clock.advance(seconds));
    }
    class Pool {
      async execute(key: string, seconds: number): Promise<string> {
        await load(seconds);
        await new Promise<void>((resolve) => setImmediate(() => resolve()));
        journeys.meter("thread-cpu", () => clock.advance(seconds * 2));
        return key;
      }
    }
    const pool = new Pool();
    instrument(pool, journeys, { execute: { method: "execute", key: (key) => key } });
    const results = await Promise.all([pool.execute("a-1", 0.5), pool.execute("b-1", 1), pool.execute("c-1", 1.5)]);
    expect(results).toEqual(["a-1", "b-1", "c-1"]);
    for (const [key, seconds] of [
      ["a-1", 0.5],
      ["b-1", 1],
      ["c-1", 1.5],
    ] as const) {
      const executing = journeys.explain(key)!.children[0];
      const own = executing.children.filter((node) => node.name !== "other").map((node) => [node.name, node.seconds]);
      expect(own).toEqual([
        ["deserialize", seconds],
        ["thread-cpu", seconds * 2],
      ]);
    }
    // Outside any wrapped execution, meter() just runs the work and records nothing.
    expect(journeys.meter("deserialize", () => 42)).toBe(42);
    expect(journeys.dropped()).toEqual({});
  });

  it("nests activities metered inside an async activity method under it", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    instrument(w, journeys, {
      activities: [
        { method: "unspill", activity: "unspill" },
        { method: "read", activity: "disk-read" },
      ],
    });
    const target = { task: async () => w.unspill(0.3) };
    instrument(target, journeys, { execute: { method: "task", key: () => "z-1" } });
    await target.task();
    const executing = journeys.explain("z-1")!.children[0];
    expect(executing.children.map((node) => node.name)).toEqual(["unspill"]);
    const unspill = executing.children[0];
    expect(unspill.seconds).toBeCloseTo(0.4, 12);
    expect(unspill.children.map((node) => [node.name, +node.seconds.toFixed(9)])).toEqual([
      ["disk-read", 0.3],
      ["other", 0.1],
    ]);
  });
});

describe("gather methods", () => {
  it("opens a transfer ledger per call and ends it with the mapped outcome", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    instrument(w, journeys, {
      gather: {
        method: "gatherDep",
        peer: (peer) => peer,
        keys: (_peer, keys) => keys,
        nbytes: (_peer, _keys, nbytes) => nbytes,
        outcome: (result, error) => (error !== undefined ? undefined : result!.status),
      },
      activities: { method: "read", activity: "network" },
    });
    journeys.transition("x-1", "released", "fetch");
    journeys.transition("y-1", "released", "fetch");
    clock.advance(1);
    await expect(w.gatherDep("tcp://a", new Set(["x-1", "y-1"]), 100)).resolves.toEqual({ status: "ok" });
    const x = journeys.explain("x-1")!;
    expect(x.outcome).toBe("memory");
    expect(states(x)).toEqual([
      ["fetch", 1],
      ["flight", 0.75],
    ]);
    // x-1's share of the transfer: half of the 0.5 s metered as network by the wrapped read().
    const flight = activities(x, "flight");
    expect(flight[0]).toEqual(["network", 0.25]);
    expect(flight.reduce((sum, [, seconds]) => sum + seconds, 0)).toBeCloseTo(0.75, 9);

    journeys.transition("z-1", "released", "fetch");
    await w.gatherDep("tcp://busy", new Set(["z-1"]), 10);
    expect(journeys.explain("z-1")!.children.map((node) => node.name)).toEqual(["fetch", "flight", "fetch"]);
    expect(journeys.metricProducer).toBeDefined();
  });

  it("ends with failed when the gather rejects, and passes the rejection through", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const peer = {
      async gather(_peer: string, keys: string[]): Promise<void> {
        await tick();
        throw new Error(`lost ${keys.join(",")}`);
      },
    };
    instrument(peer, journeys, { gather: { method: "gather", peer: (p) => p, keys: (_p, keys) => keys } });
    await expect(peer.gather("tcp://a", ["x-1"])).rejects.toThrow("lost x-1");
    const x = journeys.explain("x-1")!;
    expect(x.children.map((node) => node.name)).toEqual(["flight", "fetch"]);
  });
});

describe("wrapped functions look and behave like the originals", () => {
  it("keeps this, arguments, results, sync vs async, name and length", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    instrument(w, journeys, {
      transition: { method: "transition", key: (k) => k, from: (_k, f) => f, to: (_k, _f, t) => t },
      execute: { method: "run", key: (k) => k },
      gather: { method: "gatherDep", peer: (p) => p, keys: (_p, k) => k },
      activities: [
        { method: "read", activity: "disk-read" },
        { method: "unspill", activity: "unspill" },
      ],
    });
    for (const name of ["transition", "run", "gatherDep", "read", "unspill", "runAsync"] as const) {
      const original = Worker.prototype[name];
      expect(w[name].name).toBe(original.name);
      expect(w[name].length).toBe(original.length);
      expect(w[name].constructor).toBe(original.constructor);
      expect(Object.keys(w)).toEqual(["clock", "log"]);
    }
    expect(Object.prototype.hasOwnProperty.call(w, "runAsync")).toBe(false);
    const result = w.run("inc-1", 0);
    expect(result).toEqual({ key: "inc-1", value: 0 });
    expect(w.read(3)).toBe(3); // sync stays sync outside a ledger...
    expect(w.run.call(w, "inc-2", 1).value).toBe(1); // ...and inside one.
    const borrowed = { clock, log: [] as string[] };
    expect(w.transition.call(borrowed as unknown as Worker, "k", "released", "waiting")).toBe("waiting");
    expect(borrowed.log).toEqual(["k:released>waiting"]);
  });

  it("keeps the identity of sync results, and async results settle to the same value and error", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const value = { big: new Array(3).fill(0) };
    const failure = new TypeError("nope");
    const target = {
      sync: (key: string) =>
        key === "bad"
          ? (() => {
              throw failure;
            })()
          : value,
      async later(key: string) {
        await tick();
        if (key === "bad") throw failure;
        return value;
      },
    };
    instrument(target, journeys, {
      execute: [
        { method: "sync", key: (k) => k },
        { method: "later", key: (k) => k + "-async" },
      ],
    });
    expect(target.sync("a")).toBe(value);
    expect(() => target.sync("bad")).toThrow(failure);
    expect(await target.later("b")).toBe(value);
    await expect(target.later("bad")).rejects.toBe(failure);
    expect(journeys.explain("bad")!.outcome).toBe("error");
    expect(journeys.explain("bad-async")!.outcome).toBe("error");
  });
});

describe("unwrap", () => {
  it("restores inherited methods by deleting the own property it added", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    const unwrap = instrument(w, journeys, { execute: { method: "run", key: (k) => k } });
    expect(Object.prototype.hasOwnProperty.call(w, "run")).toBe(true);
    const kept = w.run;
    unwrap();
    expect(Object.prototype.hasOwnProperty.call(w, "run")).toBe(false);
    expect(w.run).toBe(Worker.prototype.run);
    // A wrapper referenced elsewhere passes calls through, recording nothing.
    expect(kept.call(w, "late-1", 1)).toEqual({ key: "late-1", value: 1 });
    expect(journeys.explain("late-1")).toBeUndefined();
    unwrap(); // idempotent
    expect(w.run).toBe(Worker.prototype.run);
  });

  it("restores own methods and class prototypes with their exact property descriptors", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const before = Object.getOwnPropertyDescriptor(Worker.prototype, "run");
    const unwrapClass = instrument(Worker.prototype, journeys, { execute: { method: "run", key: (k) => k } });
    const w = new Worker(clock);
    w.run("proto-1", 1);
    expect(journeys.explain("proto-1")!.outcome).toBe("memory");
    unwrapClass();
    expect(Object.getOwnPropertyDescriptor(Worker.prototype, "run")).toEqual(before);

    const own = { step: (n: number) => n + 1 };
    Object.defineProperty(own, "frozenish", { value: () => 0, writable: true, enumerable: false, configurable: false });
    const ownBefore = Object.getOwnPropertyDescriptors(own);
    const unwrapOwn = instrument(own as typeof own & { frozenish: () => number }, journeys, {
      execute: { method: "step", key: (n) => `n-${n}` },
      activities: { method: "frozenish", activity: "x" },
    });
    expect(own.step(1)).toBe(2);
    expect(Object.getOwnPropertyDescriptor(own, "step")!.enumerable).toBe(true);
    unwrapOwn();
    expect(Object.getOwnPropertyDescriptors(own)).toEqual(ownBefore);
  });

  it("leaves a wrapper installed over its own in place, and stops recording", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const target = { run: (key: string) => key };
    const unwrap = instrument(target, journeys, { execute: { method: "run", key: (k) => k } });
    const ours = target.run;
    const theirs = (key: string) => ours(key).toUpperCase();
    target.run = theirs;
    unwrap();
    expect(target.run).toBe(theirs);
    expect(target.run("a-1")).toBe("A-1");
    expect(journeys.explain("a-1")).toBeUndefined();
  });
});

describe("configuration errors throw at instrument() time", () => {
  it("detects wrapping twice: the same object, a class and its instances, wrap() of a wrapper", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    const unwrap = instrument(w, journeys, { execute: { method: "run", key: (k) => k } });
    expect(() => instrument(w, journeys, { execute: { method: "run", key: (k) => k } })).toThrow(
      /"run" is already wrapped by taskjourney/,
    );
    unwrap();
    const unwrapClass = instrument(Worker.prototype, journeys, {
      activities: { method: "read", activity: "disk-read" },
    });
    try {
      expect(() =>
        instrument(new Worker(clock), journeys, { activities: { method: "read", activity: "disk-read" } }),
      ).toThrow(/already wrapped/);
    } finally {
      unwrapClass();
    }
    const fn = wrap(function helper() {}, "x");
    expect(() => wrap(fn, "y")).toThrow(/already wrapped/);
  });

  it("names the option that is wrong", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    const bad = (spec: unknown) => () => instrument(w, journeys, spec as never);
    expect(bad({})).toThrow(/names no method/);
    expect(bad({ execute: { method: "nope", key: () => "k" } })).toThrow(
      /spec.execute.method "nope" is not a method of the target/,
    );
    expect(bad({ execute: { method: "clock", key: () => "k" } })).toThrow(/"clock" is not a method/);
    expect(bad({ execute: { method: "run" } })).toThrow(/spec.execute.key must be a function/);
    expect(bad({ transition: [{ method: "transition", key: (k: string) => k, from: 3, to: "x" }] })).toThrow(
      /spec.transition\[0\].from must be a state name or a function/,
    );
    expect(bad({ activities: [{ method: "read" }] })).toThrow(
      /spec.activities\[0\].activity must be a non-empty string/,
    );
    expect(bad({ execute: { method: "run", key: () => "k" }, activities: { method: "run", activity: "x" } })).toThrow(
      /"run" is named twice, by spec.execute and spec.activities/,
    );
    expect(bad({ executes: {} })).toThrow(/unknown spec option "executes"/);
    expect(() =>
      instrument(Object.freeze({ run: () => 1 }), journeys, { execute: { method: "run", key: () => "k" } }),
    ).toThrow(/cannot be replaced/);
    const accessor = {
      get run() {
        return () => 1;
      },
    };
    expect(() => instrument(accessor, journeys, { execute: { method: "run", key: () => "k" } })).toThrow(
      /accessor property/,
    );
    expect(() => wrap(undefined as never, "x")).toThrow(/must be a function/);
    expect(() => wrap(() => 1, "")).toThrow(/activity must be a non-empty string/);
    // Nothing was installed by any failed call.
    expect(Object.prototype.hasOwnProperty.call(w, "run")).toBe(false);
  });

  it("installs nothing when a later method of the spec is bad", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    expect(() =>
      instrument(w, journeys, {
        execute: { method: "run", key: (k) => k },
        activities: { method: "missing" as never, activity: "x" },
      }),
    ).toThrow(/not a method/);
    expect(Object.getOwnPropertyNames(w)).toEqual(["clock", "log"]);
  });
});

describe("failures of extractors and mappers never reach the host", () => {
  it("counts them in taskjourney.dropped, tells diag once per kind, and lets the call proceed", async () => {
    const clock = new FakeClock(0);
    for (const strict of [false, true]) {
      warnings = [];
      const journeys = worker(clock, { strict });
      const w = new Worker(clock);
      instrument(w, journeys, {
        transition: {
          method: "transition",
          key: () => {
            throw new Error("key bug");
          },
          from: "released",
          to: "waiting",
        },
        execute: [
          {
            method: "run",
            key: (k) => k,
            outcome: () => {
              throw new Error("mapper bug");
            },
          },
          { method: "runAsync", key: (k) => k, outcome: () => "done" as never },
        ],
        gather: {
          method: "gatherDep",
          peer: () => {
            throw new Error("peer bug");
          },
          keys: (_p, k) => k,
        },
      });
      expect(w.transition("t-1", "released", "waiting")).toBe("waiting");
      expect(w.transition("t-2", "released", "waiting")).toBe("waiting");
      expect(w.run("r-1", 1).value).toBe(1);
      expect(journeys.explain("r-1")!.outcome).toBe("memory"); // the default outcome
      expect(w.run("r-2", 1).value).toBe(1);
      await expect(w.runAsync("a-1", 1)).resolves.toEqual({ key: "a-1", status: "ok" });
      await expect(w.gatherDep("tcp://a", new Set(["g-1"]), 1)).resolves.toEqual({ status: "ok" });
      expect(journeys.explain("t-1")).toBeUndefined();
      expect(journeys.explain("g-1")).toBeUndefined();
      expect(journeys.dropped()).toEqual({ "wrap-extractor-error": 6 });
      expect(warnings).toHaveLength(4);
      expect(warnings[0]).toMatch(
        /transition method "transition": the key extractor failed \(Error: key bug\); the call proceeds unrecorded/,
      );
      expect(
        warnings.some((w) =>
          w.includes(
            'execute method "runAsync": the outcome mapper failed (TypeError: returned "done", not one of memory, error, cancelled, released, rescheduled); ' +
              'the call is recorded with the default outcome ("memory" on success, "error" on failure).',
          ),
        ),
      ).toBe(true);
      expect(warnings.every((w) => w.includes('taskjourney.dropped{reason="wrap-extractor-error"}'))).toBe(true);
    }
  });

  it("counts extractors that return the wrong kind of value, and asks no further once the key is skipped", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { strict: true });
    const w = new Worker(clock);
    let asked = 0;
    instrument(w, journeys, {
      transition: {
        method: "transition",
        key: (key) => (key === "skip" ? undefined : key),
        from: (_key, from) => (from === "bad" ? (7 as never) : (asked++, from)),
        to: (_key, _from, to) => to,
      },
      gather: { method: "gatherDep", peer: (peer) => peer, keys: () => 42 as never, nbytes: () => "many" as never },
    });
    w.transition("skip", "released", "waiting");
    expect(asked).toBe(0);
    w.transition("x-1", "bad", "waiting");
    w.transition("x-2", "released", "waiting");
    expect(asked).toBe(1);
    await w.gatherDep("tcp://a", new Set(["g-1"]), 1);
    expect(journeys.dropped()).toEqual({ "wrap-extractor-error": 2 });
    expect(warnings.map((warning) => warning.split(";")[0])).toEqual([
      'taskjourney: transition method "transition": the from extractor failed (TypeError: returned 7, not a state name)',
      'taskjourney: gather method "gatherDep": the keys extractor failed (TypeError: returned 42, not an iterable of keys)',
    ]);
  });

  it("runs the call untouched when an extractor returns a Proxy whose traps throw, whatever field it fills", async () => {
    const throwing = () => {
      throw new Error("trap threw");
    };
    const hostile = () =>
      new Proxy({}, { get: throwing, has: throwing, ownKeys: throwing, getPrototypeOf: throwing }) as never;
    const fields: Array<[string, object]> = [
      [
        "transition.from",
        { transition: { method: "transition", key: (key: string) => key, from: hostile, to: "waiting" } },
      ],
      [
        "transition.at",
        {
          transition: { method: "transition", key: (key: string) => key, from: "released", to: "waiting", at: hostile },
        },
      ],
      [
        "transition.prefix",
        {
          transition: {
            method: "transition",
            key: (key: string) => key,
            from: "released",
            to: "waiting",
            prefix: hostile,
          },
        },
      ],
      ["dependencies", { dependencies: { method: "transition", key: (key: string) => key, dependencies: hostile } }],
      ["execute.prefix", { execute: { method: "runAsync", key: (key: string) => key, prefix: hostile } }],
      ["execute.at", { execute: { method: "runAsync", key: (key: string) => key, at: hostile } }],
      [
        "gather.peer",
        { gather: { method: "gatherDep", peer: hostile, keys: (_peer: string, keys: Set<string>) => keys } },
      ],
      ["gather.keys", { gather: { method: "gatherDep", peer: (peer: string) => peer, keys: hostile } }],
      [
        "gather.nbytes",
        {
          gather: {
            method: "gatherDep",
            peer: (peer: string) => peer,
            keys: (_peer: string, keys: Set<string>) => keys,
            nbytes: hostile,
          },
        },
      ],
    ];
    for (const [field, spec] of fields) {
      const clock = new FakeClock(0);
      const journeys = worker(clock);
      const w = new Worker(clock);
      instrument(w, journeys, spec as never);
      expect(w.transition("x-1", "released", "waiting"), field).toBe("waiting");
      await expect(w.runAsync("x-1", 1), field).resolves.toEqual({ key: "x-1", status: "ok" });
      await expect(w.gatherDep("tcp://a", new Set(["g-1"]), 1), field).resolves.toEqual({ status: "ok" });
      expect(w.log, field).toEqual(["x-1:released>waiting"]);
      expect(journeys.dropped(), field).toEqual({ "wrap-extractor-error": 1 });
    }
  });

  it("runs a metered call untouched, once, when taskjourney fails before it, sync or async", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    let reads = 0;
    const read = w.read.bind(w);
    w.read = (seconds: number) => (reads++, read(seconds));
    instrument(w, journeys, {
      execute: { method: "runAsync", key: (k) => k },
      activities: [
        { method: "read", activity: "disk-read" },
        { method: "unspill", activity: "unspill" },
      ],
    });
    // A bug inside taskjourney, injected where a metered call begins.
    const recorder = internalsOf(journeys)!.recorder;
    const activityId = recorder.activityId.bind(recorder);
    let broken = false;
    recorder.activityId = (name: string) => {
      if (broken) throw new Error("recorder bug");
      return activityId(name);
    };
    const ledger = journeys.execute("x-1");
    await ledger.run(async () => {
      broken = true;
      expect(w.read(0.5)).toBe(0.5);
      await expect(w.unspill(0.25)).resolves.toBe(0.25);
      broken = false;
      expect(w.read(0.125)).toBe(0.125);
    });
    expect(reads).toBe(3); // unspill's own read, and the one after the bug
    ledger.end();
    expect(activities(journeys.explain("x-1"), "executing")).toEqual([
      ["disk-read", 0.125],
      ["other", 0.85],
    ]);
    expect(journeys.dropped()).toEqual({ "wrap-internal-error": 3 });
    expect(warnings.map((warning) => warning.split(";")[0])).toEqual([
      'taskjourney: activity method "read" failed (Error: recorder bug)',
      'taskjourney: activity method "unspill" failed (Error: recorder bug)',
    ]);
  });

  it("with strict: true, lets the recorder's InvalidTransition through for the user's tests", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock, { strict: true });
    const w = new Worker(clock);
    instrument(w, journeys, {
      transition: { method: "transition", key: (k) => k, from: (_k, f) => f, to: (_k, _f, t) => t },
    });
    w.transition("x-1", "released", "waiting");
    expect(() => w.transition("x-1", "waiting", "flight")).toThrow(InvalidTransition);
  });
});

describe("wrap() of plain functions", () => {
  it("meters calls inside a wrapped execution as the activity, and nothing outside one", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const decode = wrap(function decode(this: { scale: number } | void, bytes: number, extra?: number) {
      clock.advance(bytes / 1000);
      return bytes * (this?.scale ?? 1) + (extra ?? 0);
    }, "deserialize");
    const readSpilled = wrap(async (seconds: number) => {
      await tick();
      clock.advance(seconds);
      return "data";
    }, "disk-read");
    expect(decode.name).toBe("decode");
    expect(decode.length).toBe(2);
    expect(decode(10)).toBe(10);
    expect(decode.call({ scale: 2 }, 10, 1)).toBe(21);
    const task = {
      async execute(key: string): Promise<string> {
        const data = await readSpilled(0.5);
        decode(250);
        return `${key}:${data}`;
      },
    };
    instrument(task, journeys, { execute: { method: "execute", key: (k) => k } });
    expect(await task.execute("inc-1")).toBe("inc-1:data");
    expect(activities(journeys.explain("inc-1"), "executing")).toEqual([
      ["disk-read", 0.5],
      ["deserialize", 0.25],
    ]);
  });
});

describe("types", () => {
  it("infers extractor arguments from the method name and rejects wrong extractors", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const w = new Worker(clock);
    const unwrap = instrument(w, journeys, {
      gather: {
        method: "gatherDep",
        peer(peer, keys, nbytes) {
          expectTypeOf(peer).toEqualTypeOf<string>();
          expectTypeOf(keys).toEqualTypeOf<Set<string>>();
          expectTypeOf(nbytes).toEqualTypeOf<number>();
          expectTypeOf(this).toEqualTypeOf<Worker>();
          return peer;
        },
        keys: (_peer, keys) => keys,
        outcome: (result) => {
          expectTypeOf(result).toEqualTypeOf<{ status: "ok" | "busy" } | undefined>();
          return result?.status;
        },
      },
    });
    unwrap();
    const check = (): void => {
      // @ts-expect-error run(key: string, seconds: number): a number is no key argument
      instrument(w, journeys, { execute: { method: "run", key: (key: number) => key } });
      // @ts-expect-error "nope" is not a method of Worker
      instrument(w, journeys, { execute: { method: "nope", key: () => "k" } });
      // @ts-expect-error "clock" is a property, not a method
      instrument(w, journeys, { execute: { method: "clock", key: () => "k" } });
      // @ts-expect-error "finished" is not an execute outcome
      instrument(w, journeys, { execute: { method: "run", key: (key) => key, outcome: () => "finished" } });
      // @ts-expect-error gather keys must be keys
      instrument(w, journeys, { gather: { method: "gatherDep", peer: (p) => p, keys: () => [{}] } });
      const key: Key = "k";
      instrument(w, journeys, {
        transition: { method: "transition", key: () => key, from: "released", to: (_k, _f, to) => to },
      });
    };
    expect(check).toBeTypeOf("function");
  });
});
