import { describe, expect, it } from "vitest";
import { TaskJourneys, instrument, wrap } from "../../src/index.js";
import { ArgumentArrays } from "../../src/wrap/function.js";
import { FakeClock } from "../helpers/clock.js";

/**
 * The wrappers copy their arguments into arrays kept per arity and reused (ArgumentArrays), where
 * a rest parameter made one per call: what a reused array must never do is show one call's
 * arguments to another, keep an argument alive after its call, or change what the original sees.
 */
function worker(clock: FakeClock) {
  return new TaskJourneys({
    role: "worker",
    runtime: { clock: clock.now },
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
  });
}

describe("the wrappers' reused argument arrays", () => {
  it("a wrapped method called from inside itself and from its own extractor sees its own arguments", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const seen: string[] = [];
    const target = {
      transition(key: string, from: string, to: string, depth: number): string {
        seen.push(`${key}:${from}->${to}@${depth}`);
        // Re-entered while the outer call's array is out.
        if (depth === 0) this.transition(`${key}-inner`, "released", "waiting", 1);
        return `${key}/${to}`;
      },
    };
    const extracted: string[] = [];
    instrument(target, journeys, {
      transition: {
        method: "transition",
        key: (key: string, _from: string, _to: string, depth: number) => {
          // An extractor calling the wrapped method itself, once.
          if (depth === 0 && key === "b") target.transition("from-extractor", "released", "waiting", 2);
          extracted.push(key);
          return key;
        },
        from: (_key: string, from: string) => from,
        to: (_key: string, _from: string, to: string) => to,
      },
    });
    expect(target.transition("a", "released", "waiting", 0)).toBe("a/waiting");
    expect(target.transition("b", "released", "waiting", 0)).toBe("b/waiting");
    expect(seen).toEqual([
      "a:released->waiting@0",
      "a-inner:released->waiting@1",
      "from-extractor:released->waiting@2",
      "b:released->waiting@0",
      "b-inner:released->waiting@1",
    ]);
    expect(extracted).toEqual(["a", "a-inner", "from-extractor", "b", "b-inner"]);
    for (const key of ["a", "a-inner", "b", "b-inner", "from-extractor"]) expect(journeys.explain(key)).toBeDefined();
  });

  it("the original sees exactly the arguments given, 0 to 7 of them, call after call", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const lengths: number[] = [];
    const given: unknown[][] = [];
    const store = {
      read(...args: unknown[]): number {
        lengths.push(arguments.length);
        given.push(args);
        return args.length;
      },
    };
    instrument(store, journeys, { activities: [{ method: "read", activity: "disk-read" }] });
    const helper = wrap(function helper(...args: unknown[]) {
      return args.length;
    }, "helper");
    const calls = [[], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6, 7], [9], []];
    journeys.transition("k", "released", "waiting");
    journeys.transition("k", "waiting", "ready");
    journeys.transition("k", "ready", "executing");
    const ledger = journeys.execute("k");
    ledger.run(() => {
      for (const call of calls) {
        expect(store.read(...call)).toBe(call.length);
        expect(helper(...call)).toBe(call.length);
      }
      // undefined given is an argument: it counts.
      expect(store.read(undefined, undefined)).toBe(2);
    });
    ledger.end("memory");
    expect(lengths).toEqual([...calls.map((call) => call.length), 2]);
    expect(given).toEqual([...calls, [undefined, undefined]]);
  });

  it("keeps no argument alive after its call: the kept array is cleared", () => {
    const arrays = new ArgumentArrays();
    const args = arrays.take(2);
    const value = { big: true };
    args[0] = value;
    args[1] = "x";
    arrays.give(args);
    const again = arrays.take(2);
    expect(again).toBe(args);
    expect(again).toEqual([undefined, undefined]);
    // While one is out, another call gets an array of its own.
    expect(arrays.take(2)).not.toBe(again);
    expect(new ArgumentArrays(false).take(1)).not.toBe(new ArgumentArrays(false).take(1));
    const fresh = new ArgumentArrays(false);
    const first = fresh.take(1);
    fresh.give(first);
    expect(fresh.take(1)).not.toBe(first);
  });

  it("an outcome mapper still has its call's arguments when the call settles, after other calls", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    const mapped: unknown[][] = [];
    const releases: Array<() => void> = [];
    const target = {
      execute(key: string, payload: { n: number }): Promise<string> {
        void payload;
        return new Promise((resolve) => releases.push(() => resolve(key)));
      },
    };
    instrument(target, journeys, {
      execute: {
        method: "execute",
        key: (key: string) => key,
        outcome(this: unknown, _result: unknown, _error: unknown, args: unknown[]) {
          mapped.push([...args]);
          return undefined;
        },
      },
    });
    const keys = ["e-1", "e-2", "e-3"];
    for (const key of keys) {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
    }
    const pending = keys.map((key, n) => target.execute(key, { n }));
    for (const release of releases) release();
    expect(await Promise.all(pending)).toEqual(keys);
    expect(mapped).toEqual(keys.map((key, n) => [key, { n }]));
  });
});
