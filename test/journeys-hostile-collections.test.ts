import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys } from "../src/index.js";
import { harness } from "./otel/spans/helpers.js";

/**
 * Collections a host could hand over broken: a revoked Proxy (every operation on it throws, even
 * Array.isArray()) and a Proxy whose traps all throw. Every public call that takes one counts a
 * drop in lenient mode and never throws.
 */

beforeEach(() => diag.disable());
afterEach(() => diag.disable());

function throwing(): never {
  throw new Error("trap");
}

function revoked<T extends object>(target: T): T {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

function trapping<T extends object>(target: T): T {
  return new Proxy(target, {
    get: throwing,
    has: throwing,
    ownKeys: throwing,
    getPrototypeOf: throwing,
    getOwnPropertyDescriptor: throwing,
  });
}

const BROKEN: Array<[string, () => object]> = [
  ["a revoked Proxy of an array", () => revoked([])],
  ["a revoked Proxy of an object", () => revoked({})],
  ["a Proxy of an array whose traps throw", () => trapping(["k-1"])],
];

describe.each(BROKEN)("%s", (_name, make) => {
  it("given as keys to gather(), serve() and dependencies() is an invalid-key drop, never a throw", () => {
    const { journeys } = harness();
    const gathered = journeys.gather("tcp://peer", make() as never);
    const served = journeys.serve("tcp://peer", make() as never);
    journeys.dependencies("k-1", make() as never);
    expect(journeys.dropped()).toEqual({ "invalid-key": 3 });
    // What they hand back is a ledger that records nothing, safe to use.
    gathered.end("ok");
    served.end("ok");
    expect(journeys.explain("k-1")).toBeUndefined();
  });

  it("given as the ledger or context of linkTransfer() and injectTransfer() is an invalid-carrier drop", () => {
    const { journeys } = harness();
    journeys.transition("d-1", "released", "fetch");
    const gathered = journeys.gather("tcp://peer", ["d-1"]);
    expect(journeys.linkTransfer(make() as never, {})).toBe(false);
    expect(journeys.linkTransfer(gathered, make() as never)).toBe(false);
    expect(journeys.injectTransfer(make() as never, {})).toBe(false);
    expect(journeys.injectTransfer(gathered, make() as never)).toBe(false);
    expect(journeys.dropped()).toEqual({ "invalid-carrier": 4 });
    gathered.end("ok");
  });
});

describe("broken option objects are refused at construction, naming the option", () => {
  it.each([
    ["options", (broken: object) => broken],
    ["sampling", (broken: object) => ({ sampling: broken })],
    ["machine", (broken: object) => ({ machine: broken })],
    ["metrics\\.explicitBuckets", (broken: object) => ({ metrics: { explicitBuckets: broken } })],
    ["metrics\\.explicitBuckets", (broken: object) => ({ explicitBuckets: broken })],
    ["limits", (broken: object) => ({ limits: broken })],
    ["tracerProvider", (broken: object) => ({ tracerProvider: broken })],
    ["meterProvider", (broken: object) => ({ meterProvider: broken })],
  ])("%s", (option, options) => {
    for (const [, make] of BROKEN) {
      expect(() => new TaskJourneys(options(make()) as never)).toThrow(
        new RegExp(`^TaskJourneys: option "${option}" must be `),
      );
    }
  });

  it("createMetricProducer() given a broken options object names it", () => {
    const journeys = new TaskJourneys({ clock: () => 0 });
    for (const [, make] of BROKEN) {
      expect(() => journeys.createMetricProducer(make() as never)).toThrow(
        /^TaskJourneys: option "options" must be an object whose properties can be read/,
      );
    }
  });

  it("providers without getTracer() or getMeter(), and sampling that is no object, name their option", () => {
    expect(() => new TaskJourneys({ tracerProvider: {} as never })).toThrow(
      'TaskJourneys: option "tracerProvider" must be a TracerProvider (an object with getTracer()), got an object',
    );
    expect(() => new TaskJourneys({ meterProvider: {} as never })).toThrow(
      'TaskJourneys: option "meterProvider" must be a MeterProvider (an object with getMeter()), got an object',
    );
    // A ratio given where the sampling object goes was ignored without a word.
    expect(() => new TaskJourneys({ sampling: 0.1 as never })).toThrow(
      'TaskJourneys: option "sampling" must be an object: { ratio?, keepSlowerThan?, keepErrors? }, got 0.1',
    );
  });
});
