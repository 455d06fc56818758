import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { InvalidTransition, TaskJourneys } from "../../src/index.js";
import { TracerProvider as BasicTracerProvider } from "@opentelemetry/sdk-trace";
import { FakeClock } from "../helpers/clock.js";
import { DROP_REASONS } from "../../src/recorder/drop-reasons.js";
import { captureDiag } from "../helpers/diag.js";

afterEach(() => diag.disable());

describe("bad input in the hot path", () => {
  it("is counted by reason, reported once per reason, and never thrown", () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    const call = () => {
      journeys.transition("x-1", "released", "sleeping" as never); // unknown state (a cast: it does not compile)
      journeys.transition("x-1", "released", "processing"); // a scheduler state on a worker
      journeys.transition(null as never, "released", "waiting"); // not a key
      journeys.transition({ a: 1 } as never, "released", "waiting");
      journeys.transition("k".repeat(1_000_000), "released", "waiting"); // a 1 MB key
      journeys.transition("y-1", "ready", "executing"); // unknown key: repaired by starting there
      journeys.transition("y-1", "executing", "waiting"); // impossible: repaired by accepting it
      journeys.transition("y-1", "ready", "executing"); // mismatch: y-1 is waiting (the second time, executing: a duplicate)
      journeys.transition("z-1", "released", "waiting", Number.NaN);
      journeys.transition("z-1", "waiting", "ready", -Infinity);
      journeys.transition("z-1", "ready", "executing", Infinity);
    };
    expect(call).not.toThrow();
    call();
    expect(journeys.dropped()).toEqual({
      "unknown-state": 2,
      "wrong-role-state": 2,
      "invalid-key": 4,
      "key-too-long": 2,
      "unknown-key": 1,
      "impossible-transition": 2,
      "state-mismatch": 3,
      "duplicate-transition": 1,
      "invalid-time": 6,
    });
    const reported = messages.filter((m) => m.startsWith("taskjourney: dropped input"));
    expect(reported).toHaveLength(9);
    expect(reported.some((m) => m.includes("(key-too-long)") && m.includes("1000000 characters"))).toBe(true);
    // Every reason counted is one of the documented list.
    for (const reason of Object.keys(journeys.dropped())) expect(Object.keys(DROP_REASONS)).toContain(reason);
  });

  it("drops a bad state name after a good one of the same length (the state-name cache keeps only resolved ones)", () => {
    const journeys = new TaskJourneys({ clock: new FakeClock(0).now, sampling: { ratio: 0 } });
    journeys.transition("a-1", "released", "waiting");
    journeys.transition("a-1", "waiting", "ready");
    journeys.transition("a-1", "ready", "executing"); // "released" (8) and "executing" (9) resolved
    journeys.transition("a-1", "sleeping" as never, "memory"); // 8 letters, no state
    journeys.transition("a-1", "no-worker" as never, "memory"); // 9 letters, a scheduler state
    journeys.transition("a-1", ["exec", "uting"].join("") as never, "memory"); // a copy, not the literal
    expect(journeys.dropped()).toEqual({ "unknown-state": 1, "wrong-role-state": 1 });
    expect(journeys.stats("a", "executing").count).toBe(1);
  });

  it("repairs a journey so its time is still accounted", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("a-1", "released", "waiting");
    clock.advance(1);
    journeys.transition("a-1", "ready", "executing"); // missed waiting → ready
    clock.advance(2);
    journeys.transition("a-1", "executing", "memory");
    const breakdown = journeys.explain("a-1")!;
    expect(breakdown.children.map((n) => [n.name, n.seconds])).toEqual([
      ["waiting", 1],
      ["executing", 2],
    ]);
    expect(journeys.dropped()).toEqual({ "state-mismatch": 1 });
  });

  it("a move told twice is dropped as duplicate-transition, leaving one undivided visit", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    for (const [from, to] of [
      ["released", "waiting"],
      ["waiting", "ready"],
      ["ready", "executing"],
      ["executing", "memory"],
    ] as const) {
      journeys.transition("d-1", from, to);
      clock.advance(1);
      journeys.transition("d-1", from, to); // re-delivered a second later
      clock.advance(1);
    }
    expect(journeys.explain("d-1")!.children.map((n) => [n.name, n.seconds])).toEqual([
      ["waiting", 2],
      ["ready", 2],
      ["executing", 2],
    ]);
    expect(journeys.stats("d", "waiting").count).toBe(1);
    // The last one, memory again, is a key ending without a journey: ignored, as Dask's memory → released.
    expect(journeys.dropped()).toEqual({ "duplicate-transition": 3 });
  });

  it("a late move of a key whose journey ended is dropped as stale-transition: no journey begins, explain() keeps the ended one", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("s-1", "released", "waiting");
    journeys.transition("s-1", "waiting", "ready");
    clock.advance(1);
    journeys.transition("s-1", "ready", "executing");
    clock.advance(2);
    journeys.transition("s-1", "executing", "memory");
    clock.advance(1);
    journeys.transition("s-1", "ready", "executing"); // stale: delivered after the end
    journeys.transition("s-1", "waiting", "ready");
    journeys.transition("s-1", "executing", "memory"); // the same end again: harmless
    journeys.transition("s-1", "executing", "error"); // another end, late
    expect(journeys.dropped()).toEqual({ "stale-transition": 3 });
    const breakdown = journeys.explain("s-1")!;
    expect(breakdown.outcome).toBe("memory");
    expect(breakdown.seconds).toBe(3);
    expect(journeys.stats("s", "executing").count).toBe(1);
    // A key computed again begins a new journey from released, as Dask's released → waiting.
    journeys.transition("s-1", "memory", "released");
    journeys.transition("s-1", "released", "waiting");
    clock.advance(5);
    journeys.transition("s-1", "waiting", "ready");
    expect(journeys.explain("s-1")!.children.map((n) => [n.name, n.seconds])).toEqual([
      ["waiting", 5],
      ["ready", 0],
    ]);
    // A key never seen, in the middle of its life (instrumenting a running scheduler), begins one.
    journeys.transition("t-1", "ready", "executing");
    expect(journeys.dropped()).toEqual({ "stale-transition": 3, "unknown-key": 1 });
    expect(journeys.explain("t-1")!.children.map((n) => n.name)).toEqual(["executing"]);
  });

  it("ignores keys that end without a journey here, as Dask's released → forgotten", () => {
    const journeys = new TaskJourneys({ sampling: { ratio: 0 } });
    journeys.transition("m-1", "memory", "released");
    journeys.transition("m-1", "released", "forgotten");
    expect(journeys.dropped()).toEqual({});
    expect(journeys.explain("m-1")).toBeUndefined();
  });

  it("time running backwards is clamped to the state's start", () => {
    const clock = new FakeClock(5);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("b-1", "released", "waiting", 5);
    journeys.transition("b-1", "waiting", "ready", 4);
    journeys.transition("b-1", "ready", "executing", 6);
    journeys.transition("b-1", "executing", "memory", 7);
    expect(journeys.explain("b-1")!.children.map((n) => [n.name, n.seconds])).toEqual([
      ["waiting", 0],
      ["ready", 1],
      ["executing", 1],
    ]);
    expect(journeys.dropped()).toEqual({ "time-backwards": 1 });
  });

  it("ledgers survive misuse: end twice, meter after end, bad outcome, bad digest", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    const ledger = journeys.execute("e-1");
    ledger.digest("thread-cpu", Number.NaN);
    ledger.end("exploded" as never, new Error("exploded"));
    ledger.end("memory");
    expect(ledger.meter("late", () => 42)).toBe(42);
    // An outcome end() does not take, with an error: a failure.
    expect(journeys.explain("e-1")!.outcome).toBe("error");
    expect(journeys.dropped()).toEqual({ "invalid-value": 1, "invalid-outcome": 1, "ledger-ended": 2 });
    // The user's work still runs and its result or error passes through an invalid key's ledger.
    const none = journeys.execute(undefined as never);
    expect(none.meter("x", () => "result")).toBe("result");
    expect(() =>
      none.meter("x", () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
  });

  it("an empty activity name is metered as other and counted, like a name that is not a string", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("e-1", "released", "waiting");
    journeys.transition("e-1", "waiting", "ready");
    journeys.transition("e-1", "ready", "executing");
    const ledger = journeys.execute("e-1");
    ledger.meter("", () => clock.advance(2));
    ledger.meter(7 as never, () => clock.advance(1));
    ledger.end("memory");
    expect(journeys.dropped()).toEqual({ "invalid-name": 2 });
    const executing = journeys.explain("e-1")!.children.find((node) => node.name === "executing")!;
    expect(executing.seconds).toBe(3);
    expect(executing.children.map((node) => [node.name, node.seconds])).toEqual([["other", 3]]);
  });
});

describe("strict mode", () => {
  it("throws InvalidTransition carrying the key's recent story", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, strict: true, sampling: { ratio: 0 } });
    journeys.transition("s-1", "released", "waiting");
    clock.advance(1);
    journeys.transition("s-1", "waiting", "ready");
    let caught: unknown;
    try {
      journeys.transition("s-1", "released", "executing");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidTransition);
    const invalid = caught as InvalidTransition;
    expect(invalid.reason).toBe("state-mismatch");
    expect(invalid.story).toEqual(["waiting@0.000000", "ready@1.000000"]);
    expect(invalid.message).toContain("released → executing but the key is in ready");
    expect(() => journeys.transition("s-1", "waiting", "ready")).toThrow(
      "waiting → ready of a key already in ready (told twice?); ignored",
    );
    expect(() => journeys.transition("s-1", "ready", "nowhere" as never)).toThrow(InvalidTransition);
  });
});

describe("a listener that throws", () => {
  it.each([false, true])(
    "is counted as listener-error and told once, never thrown into the host (strict: %s)",
    (strict) => {
      const messages = captureDiag();
      const clock = new FakeClock(0);
      // A tracer provider that is not a no-op, so journeys are sampled and listeners told of them.
      const journeys = new TaskJourneys({
        clock: clock.now,
        strict,
        sampling: { ratio: 1 },
        tracerProvider: new BasicTracerProvider(),
      });
      const calls: string[] = [];
      journeys.addListener({
        journeyStarted: () => {
          calls.push("journeyStarted");
          throw new Error("exporter down");
        },
        stateEntered: () => {
          calls.push("stateEntered");
          throw new Error("exporter down");
        },
        journeyEnded: () => {
          calls.push("journeyEnded");
          throw new Error("exporter down");
        },
        transferStarted: () => {
          calls.push("transferStarted");
          throw new Error("exporter down");
        },
        transferEnded: () => {
          calls.push("transferEnded");
          throw new Error("exporter down");
        },
      });
      expect(() => {
        journeys.transition("a-1", "released", "waiting");
        journeys.transition("a-1", "waiting", "ready");
        journeys.transition("a-1", "ready", "executing");
        journeys.transition("a-1", "executing", "memory");
        journeys.transition("b-1", "released", "fetch");
        journeys.gather("tcp://peer:1", ["b-1"]).end("ok");
      }).not.toThrow();
      // Each listener call was made once, and the recording went on after each failure.
      expect(calls).toEqual([
        "journeyStarted",
        "stateEntered",
        "stateEntered",
        "journeyEnded",
        "journeyStarted",
        "stateEntered",
        "transferStarted",
        "journeyEnded",
        "transferEnded",
      ]);
      expect(journeys.dropped()).toEqual({ "listener-error": 9 });
      expect(journeys.stats("a", "ready").count).toBe(1);
      const told = messages.filter((m) => m.includes("listener-error"));
      expect(told).toEqual([
        'taskjourney: dropped input (listener-error): journeyStarted: exporter down. Counted in taskjourney.dropped{reason="listener-error"}; further ones are counted silently.',
      ]);
    },
  );
});

describe("shutdown", () => {
  it("is idempotent and stops recording", async () => {
    const journeys = new TaskJourneys({ sampling: { ratio: 0 } });
    const first = journeys.shutdown();
    expect(journeys.shutdown()).toBe(first);
    await first;
    journeys.transition("q-1", "released", "waiting");
    expect(journeys.explain("q-1")).toBeUndefined();
  });
});
