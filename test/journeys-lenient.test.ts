import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { diag } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { InvalidTransition, TaskJourneys } from "../src/index.js";
import type { Breakdown, BreakdownNode } from "../src/model/breakdown.js";
import { DROP_REASONS } from "../src/recorder/drop-reasons.js";
import { FakeClock } from "./helpers/clock.js";

/**
 * Lenient mode never throws into the host: random sequences of calls through the public API,
 * with values a scheduler bug or an attacker could pass, leave no exception, finite metric totals
 * and explain() trees of finite, non-negative seconds.
 */

function throwing(): never {
  throw new Error("hostile");
}

/** A Proxy every trap of which throws. */
const trap = new Proxy([], {
  get: throwing,
  has: throwing,
  ownKeys: throwing,
  getPrototypeOf: throwing,
  getOwnPropertyDescriptor: throwing,
});
const nullPrototype = Object.create(null) as object;
/** Revoked Proxies: every operation on one throws, Array.isArray() included. */
const revokedArray = (() => {
  const { proxy, revoke } = Proxy.revocable([], {});
  revoke();
  return proxy;
})();
const revokedObject = (() => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
})();
/** An array nested 100,000 deep: any recursion over it overflows the stack. */
const deepArray = (() => {
  let deep: unknown[] = [];
  for (let depth = 0; depth < 100_000; depth++) deep = [deep];
  return deep;
})();
const throwingConversions = { toString: throwing, valueOf: throwing, [Symbol.toPrimitive]: throwing };
const throwingGetters = Object.defineProperties(
  {},
  { then: { get: throwing }, length: { get: throwing }, name: { get: throwing }, message: { get: throwing } },
);

const HOSTILE: unknown[] = [
  undefined,
  null,
  10n,
  Symbol("s"),
  trap,
  revokedArray,
  revokedObject,
  deepArray,
  nullPrototype,
  throwingConversions,
  throwingGetters,
  Number.NaN,
  Infinity,
  -Infinity,
  -1,
  0,
  1.5,
  Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER + 2,
  Date.now(),
  "12",
  "",
  "__proto__",
  "constructor",
  "toString",
  "x".repeat(5000),
  -0,
  2 ** 53,
  [trap],
  [revokedObject],
  [1, [2, Symbol("t")]],
  () => 1,
];

const KEYS = ["x-1", "x-2", "y-1", ["z-1", 0], 7];
const STATES = [
  "released",
  "waiting",
  "ready",
  "executing",
  "memory",
  "error",
  "fetch",
  "flight",
  "missing",
  "cancelled",
  "processing",
];
const OUTCOMES = ["memory", "error", "cancelled", "ok", "busy", "missing", "failed"];
const ACTIVITIES = ["deserialize", "network", "thread-cpu", "constructor", "__proto__", "toString"];
const UNITS = ["seconds", "bytes", "count", "__proto__", "constructor"];

/**
 * A hostile value by its index: fast-check inspects the values it generates (for cloning and
 * printing), which the hostile ones would not survive. Resolved by `real()` when a call is made.
 */
class Hostile {
  constructor(readonly index: number) {}
  toString(): string {
    return `HOSTILE[${this.index}]`;
  }
  toJSON(): string {
    return this.toString();
  }
}
const real = (value: unknown): unknown => (value instanceof Hostile ? HOSTILE[value.index] : value);
const hostile = fc.integer({ min: 0, max: HOSTILE.length - 1 }).map((index) => new Hostile(index));
const key = fc.oneof(fc.constantFrom<unknown>(...KEYS), hostile);
const state = fc.oneof({ weight: 4, arbitrary: fc.constantFrom<unknown>(...STATES) }, hostile);
const time = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 20, noNaN: true }) },
  hostile,
);
const activity = fc.oneof({ weight: 3, arbitrary: fc.constantFrom<unknown>(...ACTIVITIES) }, hostile);
const value = fc.oneof({ weight: 2, arbitrary: fc.double({ min: 0, max: 5, noNaN: true }) }, hostile);
const unit = fc.oneof({ weight: 3, arbitrary: fc.constantFrom<unknown>(...UNITS) }, hostile);
const outcome = fc.oneof({ weight: 3, arbitrary: fc.constantFrom<unknown>(...OUTCOMES) }, hostile);
const error = fc.oneof(fc.constant(new TypeError("no such file")), hostile);
/** Work: a function (sync, async, throwing, returning a hostile value) or something that is no function. */
const work = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<unknown>(
      () => 1,
      async () => 2,
      () => Promise.resolve(3),
      () => throwingGetters,
      () => trap,
      () => Promise.reject(new Error("task failed")),
    ),
  },
  hostile,
);
/** An array of keys, hostile ones resolved when the call is made. */
class KeyList {
  constructor(readonly keys: unknown[]) {}
}
const keys = fc.oneof(
  { weight: 3, arbitrary: fc.array(key, { maxLength: 3 }).map((list) => new KeyList(list)) },
  hostile,
);
const carrier = fc.oneof(
  fc.constant<unknown>({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }),
  hostile,
);

type Op =
  | { op: "transition"; key: unknown; from: unknown; to: unknown; at: unknown }
  | { op: "dependencies"; key: unknown; dependencies: unknown }
  | { op: "execute"; key: unknown; at: unknown }
  | { op: "gather"; peer: unknown; keys: unknown; bytes: unknown; at: unknown }
  | { op: "serve"; peer: unknown; keys: unknown; carrier: unknown }
  | { op: "meter"; on: "ledger" | "journeys"; activity: unknown; work: unknown }
  | { op: "digest"; activity: unknown; value: unknown; unit: unknown }
  | { op: "run"; work: unknown }
  | { op: "end"; outcome: unknown; error: unknown; at: unknown }
  | { op: "queued"; key: unknown; reason: unknown }
  | { op: "read"; key: unknown; state: unknown; carrier: unknown }
  | { op: "transfer"; carrier: unknown; q: unknown; ledger: unknown }
  | { op: "tick"; seconds: number; bad: unknown }
  | { op: "walk"; key: string };

/** The plain worker path a walk takes a key along, one step a walk; the fourth step is execute(). */
const WALK = ["released", "waiting", "ready", "executing", "execute", "memory"] as const;
/**
 * Ops with many walks: keys that go the plain way to their end, so that retired journeys are
 * reused (unsampled), between hostile calls (async work outliving its ledger, ended ledgers).
 */
const walks = (): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ op: fc.constant("walk" as const), key: fc.constantFrom("x-1", "x-2") }),
    },
    // No absurd clock here (a reading of Number.MAX_VALUE makes a state's time sum Infinity,
    // reuse or not): this property is about reuse; the ones below play absurd clocks.
    { weight: 2, arbitrary: op.filter((step) => step.op !== "tick" || step.bad === undefined) },
  );

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant("transition" as const), key, from: state, to: state, at: time }),
  },
  fc.record({ op: fc.constant("dependencies" as const), key, dependencies: keys }),
  { weight: 2, arbitrary: fc.record({ op: fc.constant("execute" as const), key, at: time }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("gather" as const),
      peer: fc.oneof(fc.constant<unknown>("tcp://peer"), hostile),
      keys,
      bytes: value,
      at: time,
    }),
  },
  fc.record({
    op: fc.constant("serve" as const),
    peer: fc.oneof(fc.constant<unknown>("tcp://peer"), hostile),
    keys,
    carrier,
  }),
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("meter" as const),
      on: fc.constantFrom("ledger" as const, "journeys" as const),
      activity,
      work,
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("digest" as const), activity, value, unit }) },
  fc.record({ op: fc.constant("run" as const), work }),
  { weight: 2, arbitrary: fc.record({ op: fc.constant("end" as const), outcome, error, at: time }) },
  fc.record({
    op: fc.constant("queued" as const),
    key,
    reason: fc.oneof(fc.constant<unknown>("local-saturated"), hostile),
  }),
  fc.record({ op: fc.constant("read" as const), key, state, carrier }),
  fc.record({
    op: fc.constant("transfer" as const),
    carrier,
    q: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), hostile),
    ledger: fc.oneof({ weight: 3, arbitrary: fc.constant<unknown>(undefined) }, hostile),
  }),
  fc.record({
    op: fc.constant("tick" as const),
    seconds: fc.double({ min: 0, max: 2, noNaN: true }),
    bad: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, hostile),
  }),
);

type AnyLedger = {
  meter(activity: unknown, work: unknown): unknown;
  digest(activity: unknown, value: unknown, unit: unknown): void;
  run(work: unknown): unknown;
  end(outcome: unknown, error: unknown, at: unknown): void;
};

/** Every seconds figure of a tree, checked finite and non-negative. */
function checkTree(breakdown: Breakdown): void {
  expect(Number.isFinite(breakdown.seconds) && breakdown.seconds >= 0, `explain() seconds ${breakdown.seconds}`).toBe(
    true,
  );
  const walk = (nodes: BreakdownNode[]): void => {
    for (const node of nodes) {
      expect(typeof node.name).toBe("string");
      expect(Number.isFinite(node.seconds) && node.seconds >= 0, `${node.name}: ${node.seconds}`).toBe(true);
      for (const amount of Object.values(node.quantities ?? {}))
        expect(Number.isFinite(amount), `${node.name} quantity ${amount}`).toBe(true);
      walk(node.children);
    }
  };
  walk(breakdown.children);
}

/** Every metric data point's numbers, checked finite. */
function checkMetrics(journeys: TaskJourneys): void {
  for (const metric of journeys.metricProducer.produce([0, 0], [1, 0])) {
    for (const point of metric.dataPoints) {
      const numbers =
        typeof point.value === "number"
          ? [point.value]
          : [point.value.sum ?? 0, point.value.count, point.value.min ?? 0, point.value.max ?? 0];
      for (const number of numbers)
        expect(
          Number.isFinite(number),
          `${metric.descriptor.name} ${JSON.stringify(point.attributes)}: ${number}`,
        ).toBe(true);
    }
  }
}

function resolve(value: unknown): unknown {
  return value instanceof KeyList ? value.keys.map(real) : real(value);
}

/**
 * Plays `ops`; returns what explain() and dropped() say at the end. `unsampled`: sampling off, so
 * retired journeys are reused (live-journeys.ts, recycle()) unless `listening` (any listener
 * stops reuse).
 */
async function play(
  ops: Op[],
  asyncContext: boolean,
  traced = false,
  strict = false,
  unsampled = false,
  listening = false,
): Promise<unknown> {
  const clock = new FakeClock(1);
  let badClock: unknown = undefined;
  const journeys = new TaskJourneys({
    clock: () => (badClock === undefined ? clock.now() : (badClock as number)),
    sampling: unsampled ? { ratio: 0 } : { ratio: 1, keepSlowerThan: 0 },
    asyncContext,
    strict,
    // Traced: parent(), inject(), the transfer links and serve()'s context read their arguments.
    ...(traced
      ? {
          tracerProvider: new BasicTracerProvider({
            spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })],
          }),
        }
      : {}),
  });
  if (listening) journeys.addListener({ journeyEnded: () => undefined });
  const ledgers: AnyLedger[] = [];
  const pending: unknown[] = [];
  const current = (): AnyLedger | undefined => ledgers[ledgers.length - 1];
  const walked = new Map<string, number>();
  for (const given of ops) {
    const step = Object.fromEntries(Object.entries(given).map(([name, value]) => [name, resolve(value)])) as Op;
    const call = (): void => {
      switch (step.op) {
        case "transition":
          journeys.transition(step.key as never, step.from as never, step.to as never, step.at as never);
          break;
        case "dependencies":
          journeys.dependencies(step.key as never, step.dependencies as never);
          break;
        case "execute":
          ledgers.push(journeys.execute(step.key as never, step.at as never) as unknown as AnyLedger);
          break;
        case "gather":
          ledgers.push(
            journeys.gather(
              step.peer as never,
              step.keys as never,
              step.bytes as never,
              step.at as never,
            ) as unknown as AnyLedger,
          );
          break;
        case "serve":
          ledgers.push(
            journeys.serve(step.peer as never, step.keys as never, step.carrier as never) as unknown as AnyLedger,
          );
          break;
        case "walk": {
          const at = walked.get(step.key) ?? 0;
          walked.set(step.key, at === WALK.length - 2 ? 0 : at + 1);
          if (WALK[at + 1] === "execute") ledgers.push(journeys.execute(step.key as never) as unknown as AnyLedger);
          else journeys.transition(step.key as never, WALK[at === 4 ? 3 : at] as never, WALK[at + 1] as never);
          break;
        }
        case "meter": {
          const ledger = current();
          const run = (): unknown =>
            step.on === "ledger" && ledger !== undefined
              ? ledger.meter(step.activity, step.work)
              : journeys.meter(step.activity as never, step.work as never);
          try {
            const result = run();
            if (result instanceof Hostile || ops.length < 0) pending.push(result);
            else pending.push(typeof step.work === "function" && HOSTILE.includes(result) ? undefined : result);
          } catch (thrown) {
            // Only the user's own work may throw, and it must have run: never taskjourney.
            expect(typeof step.work).toBe("function");
            expect(thrown).not.toBeInstanceOf(TypeError);
          }
          break;
        }
        case "digest":
          current()?.digest(step.activity, step.value, step.unit);
          break;
        case "run":
          {
            const result = current()?.run(step.work);
            pending.push(HOSTILE.includes(result) ? undefined : result);
          }
          break;
        case "end":
          current()?.end(step.outcome, step.error, step.at);
          break;
        case "queued":
          journeys.queued(step.key as never, step.reason as never);
          break;
        case "read":
          journeys.stats(step.state as never, step.state as never);
          journeys.stats("x", step.state as never);
          journeys.explain(step.key as never);
          journeys.inject(step.key as never, step.carrier as never);
          journeys.extract(step.carrier as never);
          journeys.parent(step.key as never, step.carrier as never);
          journeys.linkFrom(step.key as never, step.carrier as never);
          journeys.returned(step.key as never, step.carrier as never);
          journeys.describe(step.key as never, step.carrier as never);
          journeys.currentLedger();
          break;
        case "transfer": {
          // The ledger on top, or a hostile value in its place.
          const ledger = (step.ledger === undefined ? current() : step.ledger) as never;
          journeys.linkTransfer(ledger, step.carrier as never);
          journeys.injectTransfer(ledger, step.carrier as never);
          const stats = journeys.stats("x");
          // The documented error of a bad q, and no other.
          try {
            stats.quantile(step.q as number);
          } catch (thrown) {
            expect(thrown).toBeInstanceOf(RangeError);
            expect((thrown as Error).message).toMatch(/^quantile q must be a number in \[0, 1\], got /);
          }
          break;
        }
        case "tick":
          clock.advance(step.seconds);
          badClock = step.bad;
          break;
      }
    };
    if (!strict) call();
    else {
      // Strict: bad input throws InvalidTransition, and nothing else escapes (the user's own work aside).
      try {
        call();
      } catch (thrown) {
        if (!(thrown instanceof InvalidTransition) && step.op !== "meter" && step.op !== "run") throw thrown;
      }
    }
  }
  badClock = undefined;
  // Settle what the work left pending (its rejections are the user's, not ours).
  await Promise.allSettled(pending.filter((value) => value !== trap && value instanceof Promise));
  for (const ledger of ledgers) {
    try {
      ledger.end("memory", undefined, undefined);
    } catch (thrown) {
      // A gather or serve ledger takes no "memory": strict says so.
      if (!strict || !(thrown instanceof InvalidTransition)) throw thrown;
    }
  }
  checkMetrics(journeys);
  const explained: unknown[] = [];
  for (const k of [...KEYS, ...HOSTILE]) {
    const breakdown = journeys.explain(k as never);
    if (breakdown !== undefined) checkTree(breakdown);
    explained.push(breakdown);
  }
  for (const reason of Object.keys(journeys.dropped())) expect(Object.keys(DROP_REASONS)).toContain(reason);
  const dropped = journeys.dropped();
  await journeys.shutdown();
  return { explained, dropped };
}

describe("lenient mode never throws", () => {
  beforeEach(() => diag.disable());
  afterEach(() => diag.disable());

  it("survives them traced (a real tracer provider: carriers, contexts and transfer ledgers are read)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        await play(ops, true, true);
      }),
      { numRuns: 150 },
    );
  });

  it("strict: bad input throws InvalidTransition and nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        await play(ops, true, true, true);
      }),
      { numRuns: 100 },
    );
  });

  it("unsampled, retired journeys reused: explain() and the drops are what they are without reuse", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(walks(), { minLength: 20, maxLength: 80 }), async (ops) => {
        const reused = await play(ops, true, false, false, true, false);
        const fresh = await play(ops, true, false, false, true, true);
        expect(reused).toEqual(fresh);
        // Traced: the span bridge lets go of the journeys it did not keep (alone; not with another listener).
        const tracedReused = await play(ops, true, true, false, true, false);
        const tracedFresh = await play(ops, true, true, false, true, true);
        expect(tracedReused).toEqual(tracedFresh);
      }),
      { numRuns: 150 },
    );
  });

  for (const asyncContext of [true, false]) {
    it(`survives random hostile calls through the public API, with finite totals and sane explain() (asyncContext: ${asyncContext})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          await play(ops, asyncContext);
        }),
        { numRuns: 150 },
      );
    });
  }
});
