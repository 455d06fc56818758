import { describe, expect, it } from "vitest";
import { TaskJourneys, instrument, type Breakdown } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";

// The execute and gather wrappers end a call's ledger when its promise settles, through handlers
// kept for reuse for native promises (wrap/ledgers.ts, Settlement). These pin what reuse must not
// change: each call ends its own ledger, and a thenable that is no native promise gets its own.

function worker(clock: FakeClock) {
  return new TaskJourneys({ role: "worker", instance: "w1", clock: clock.now, sampling: { ratio: 0 } });
}

function executing(breakdown: Breakdown | undefined): [string | undefined, number] {
  const node = breakdown!.children.find((child) => child.name === "executing")!;
  return [breakdown!.outcome, +node.seconds.toFixed(9)];
}

/** Resolvers by key: each call's promise settles when the test says. */
class Runner {
  readonly settle = new Map<string, { resolve: (value: string) => void; reject: (error: unknown) => void }>();
  run(key: string): Promise<string> {
    return new Promise((resolve, reject) => this.settle.set(key, { resolve, reject }));
  }
}

/** A thenable that calls its fulfilment handler again when told: not a native promise. */
class Twice {
  private handler: ((value: unknown) => unknown) | undefined;
  then(onFulfilled: (value: unknown) => unknown): Twice {
    this.handler = onFulfilled;
    return this;
  }
  fulfil(value: unknown): void {
    try {
      this.handler!(value);
    } catch {
      // What the wrapper's handler throws (nothing here) is not this test's concern.
    }
  }
}

describe("settling wrapped calls", () => {
  it("calls settling out of order each end their own ledger, with their own outcome", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const runner = new Runner();
    instrument(runner, journeys, {
      execute: { method: "run", key: (key) => key, outcome: (result) => (result === "stop" ? "cancelled" : undefined) },
    });
    const pending: Array<Promise<unknown>> = [];
    for (const key of ["a", "b", "c"]) pending.push(runner.run(key).catch((error: unknown) => error));
    clock.advance(1);
    runner.settle.get("c")!.resolve("stop");
    await pending[2];
    clock.advance(1);
    runner.settle.get("a")!.reject(new RangeError("bad a"));
    await pending[0];
    // A fourth call takes a settlement put back by c or a: b's is still its own.
    const d = runner.run("d");
    clock.advance(1);
    runner.settle.get("b")!.resolve("ok");
    await pending[1];
    runner.settle.get("d")!.resolve("ok");
    await expect(d).resolves.toBe("ok");
    expect(executing(journeys.explain("a"))).toEqual(["error", 2]);
    expect(executing(journeys.explain("b"))).toEqual(["memory", 3]);
    expect(executing(journeys.explain("c"))).toEqual(["cancelled", 1]);
    expect(executing(journeys.explain("d"))).toEqual(["memory", 1]);
  });

  it("a thenable that calls its handler twice never ends another call's ledger", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const twice = new Twice();
    const runner = new Runner();
    const calls = {
      rogue: (_key: string) => twice as unknown as Promise<string>,
      run: (key: string) => runner.run(key),
    };
    instrument(calls, journeys, {
      execute: [
        { method: "rogue", key: (key) => key },
        { method: "run", key: (key) => key },
      ],
    });
    calls.rogue("a");
    clock.advance(1);
    twice.fulfil("ok"); // a ends, at 1 s
    const b = calls.run("b");
    clock.advance(1);
    // Had a's handlers been put back for reuse, b would hold them now, and this would end b at 2 s.
    twice.fulfil("ok");
    clock.advance(3);
    runner.settle.get("b")!.resolve("ok");
    await b;
    expect(executing(journeys.explain("a"))).toEqual(["memory", 1]);
    expect(executing(journeys.explain("b"))).toEqual(["memory", 4]);
  });
});
