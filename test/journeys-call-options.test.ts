/**
 * The trailing options objects of the facade's calls (`transition(key, from, to, { at, error,
 * prefix })`, `execute(key, { at, prefix })`, `gather(peer, keys, { bytes, at })`, `serve(peer,
 * keys, { context, at })`, a ledger's `end(outcome, { error, at })`), and the positional forms they
 * replace: still working for one minor release, each told once per process as deprecated.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys } from "../src/index.js";
import { forgetDeprecationsTold } from "../src/recorder/deprecations.js";
import { captureDiag } from "./helpers/diag.js";
import { FakeClock } from "./helpers/clock.js";

function setup(): { journeys: TaskJourneys<"worker">; clock: FakeClock; told: string[] } {
  const clock = new FakeClock(100);
  const journeys = new TaskJourneys({ role: "worker", clock: clock.now, timeOrigin: 0, traces: false });
  return { journeys, clock, told: captureDiag() };
}

const deprecations = (told: string[]): string[] => told.filter((message) => message.includes("is deprecated"));

/** One compute journey with its times given, an attempt that failed, then a retry that succeeds. */
function computeJourney(
  journeys: TaskJourneys<"worker">,
  form: "options" | "positional",
  key: string,
  error: Error,
): void {
  if (form === "options") {
    journeys.transition(key, "released", "waiting", { at: 1 });
    journeys.transition(key, "waiting", "ready", { at: 3 });
    const ledger = journeys.execute(key, { at: 4 });
    ledger.end("error", { error, at: 10 });
    journeys.transition(key, "error", "released", { at: 11 });
  } else {
    journeys.transition(key, "released", "waiting", 1);
    journeys.transition(key, "waiting", "ready", 3);
    const ledger = journeys.execute(key, 4);
    ledger.end("error", error, 10);
    journeys.transition(key, "error", "released", 11);
  }
}

describe("a call's trailing options object", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it("transition(key, from, to, { at, error }) records the time and the attempt's error, telling nothing", () => {
    const { journeys, told } = setup();
    journeys.transition("a-1", "released", "waiting", { at: 90 });
    journeys.transition("a-1", "waiting", "ready", { at: 92.5 });
    journeys.transition("a-1", "ready", "executing", { at: 93 });
    journeys.transition("a-1", "executing", "error", { at: 97, error: new Error("worker died") });
    const explained = journeys.explain("a-1")!;
    expect(explained.seconds).toBe(7);
    expect(explained.children.map((node) => [node.name, node.seconds, node.error])).toEqual([
      ["waiting", 2.5, undefined],
      ["ready", 0.5, undefined],
      ["executing", 4, "Error: worker died"],
    ]);
    expect(told).toEqual([]);
    expect(journeys.dropped()).toEqual({});
  });

  it("transition(…, { prefix }) and execute(key, { prefix }) name the journey they begin, keeping nothing per key", () => {
    const { journeys } = setup();
    journeys.transition("42", "released", "waiting", { prefix: "fetch-user" });
    journeys.execute("43", { prefix: "resize", at: 99 }).end("memory", { at: 100 });
    expect(journeys.explain("42")!.prefix).toBe("fetch-user");
    expect(journeys.explain("43")!.prefix).toBe("resize");
    expect(journeys.explain("43")!.seconds).toBe(1);
    // The hint was for that call only: the next journey of another id is key_split's.
    journeys.transition("44", "released", "waiting");
    expect(journeys.explain("44")!.prefix).toBe("44");
  });

  it("a prefix that is no non-empty string is counted (invalid-description) and left out", () => {
    const { journeys } = setup();
    journeys.transition("x-1", "released", "waiting", { prefix: 7 as never });
    journeys.execute("y-1", { prefix: "" });
    expect(journeys.explain("x-1")!.prefix).toBe("x");
    expect(journeys.explain("y-1")!.prefix).toBe("y");
    expect(journeys.dropped()).toEqual({ "invalid-description": 2 });
  });

  it("gather(peer, keys, { bytes, at }) and end(outcome, { error, at }): the transfer's times, bytes and error", () => {
    const { journeys, told } = setup();
    journeys.transition("d-1", "released", "fetch", { at: 50 });
    const transfer = journeys.gather("tcp://peer:1", ["d-1"], { bytes: 2048, at: 51 });
    transfer.end("failed", { error: new TypeError("reset"), at: 55 });
    const explained = journeys.explain("d-1")!;
    expect(explained.children.map((node) => [node.name, node.seconds, node.error])).toEqual([
      ["fetch", 1, undefined],
      ["flight", 4, "TypeError: reset"],
      // A failed transfer moves its key back to fetch, live until now (the clock reads 100).
      ["fetch", 45, undefined],
    ]);
    journeys.transition("d-2", "released", "fetch", { at: 60 });
    journeys.gather("tcp://peer:1", ["d-2"], { bytes: 2048, at: 61 }).end("ok", { at: 62 });
    const sizes = journeys.metricProducer
      .produce([0, 0], [0, 0])
      .filter((metric) => metric.descriptor.name === "task.gather.size")
      .flatMap((metric) => metric.dataPoints.map((point) => [point.attributes["transfer.outcome"], point.value]));
    expect(sizes).toEqual([
      ["ok", 2048],
      ["failed", 2048],
    ]);
    expect(deprecations(told)).toEqual([]);
  });

  it("serve(peer, keys, { at }) and its end(outcome, { at }): the serve's seconds", () => {
    const { journeys } = setup();
    journeys.transition("s-1", "released", "waiting", { at: 1 });
    journeys.transition("s-1", "waiting", "ready", { at: 1 });
    journeys.transition("s-1", "ready", "executing", { at: 1 });
    journeys.transition("s-1", "executing", "memory", { at: 2 });
    journeys.serve("tcp://peer:2", ["s-1"], { at: 20 }).end("ok", { at: 26 });
    expect(journeys.explain("s-1")!.served!.map((node) => [node.name, node.seconds])).toEqual([
      ["serve tcp://peer:2", 6],
    ]);
  });

  it("options that throw when read are counted (invalid-options) and the call recorded as if given none", () => {
    const { journeys, clock } = setup();
    const hostile = {
      get at(): number {
        throw new Error("no");
      },
    };
    journeys.transition("h-1", "released", "ready", hostile);
    clock.set(104);
    journeys.execute("h-1", hostile).end("memory", hostile);
    expect(journeys.explain("h-1")!.children.map((node) => [node.name, node.seconds])).toEqual([
      ["ready", 4],
      ["executing", 0],
    ]);
    expect(journeys.dropped()).toEqual({ "invalid-options": 3 });
  });
});

describe("the positional forms (deprecated): still recorded alike, each told once per process", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it("transition, execute and end given positionally record what the options object does", () => {
    const { journeys, told } = setup();
    computeJourney(journeys, "options", "n-1", new Error("boom"));
    expect(deprecations(told)).toEqual([]);
    computeJourney(journeys, "positional", "p-1", new Error("boom"));
    const shape = (key: string) => journeys.explain(key)!.children.map((node) => [node.name, node.seconds, node.error]);
    expect(shape("p-1")).toEqual(shape("n-1"));
    expect(shape("p-1")).toEqual([
      ["waiting", 2, undefined],
      ["ready", 1, undefined],
      ["executing", 6, "Error: boom"],
    ]);
  });

  it("each positional form is told once, naming the call and the form to write instead", () => {
    const { journeys, told } = setup();
    for (let round = 0; round < 3; round++) {
      const key = `t-${round}`;
      journeys.transition(key, "released", "waiting", 1);
      journeys.transition(key, "waiting", "ready", undefined, "a reason");
      journeys.execute(key, 2).end("memory", undefined, 3);
      journeys.transition(`f-${round}`, "released", "fetch", { at: 1 });
      journeys.gather("tcp://peer:1", [`f-${round}`], 1024, 4).end("failed", new Error("x"), 5);
      journeys.serve("tcp://peer:2", [key], { traceparent: "" }, 6).end("failed", new Error("y"));
    }
    expect(deprecations(told).map((message) => message.split(" is deprecated")[0])).toEqual([
      "taskjourney: transition(key, from, to, at, error)",
      "taskjourney: execute(key, at)",
      "taskjourney: execute ledger.end(outcome, error, at)",
      "taskjourney: gather(peer, keys, bytes, at)",
      "taskjourney: gather ledger.end(outcome, error, at)",
      "taskjourney: serve(peer, keys, context, at)",
      "taskjourney: serve ledger.end(outcome, error, at)",
    ]);
    expect(deprecations(told)[0]).toBe(
      "taskjourney: transition(key, from, to, at, error) is deprecated and will be removed in the next minor release; " +
        "write transition(key, from, to, { at, error }) instead. (Told once per process.)",
    );
  });

  it("a thrown Error, a plain thrown object, a carrier or a Context is a positional value, not options", () => {
    const { journeys, told } = setup();
    journeys.transition("e-1", "released", "waiting", { at: 1 });
    journeys.transition("e-1", "waiting", "ready", { at: 1 });
    // A thrown { code, message } with names other than error / at: the deprecated form's error.
    journeys.execute("e-1", { at: 2 }).end("error", { code: "E42", message: "disk full" }, 3);
    expect(journeys.explain("e-1")!.children.at(-1)!.error).toContain("disk full");
    expect(deprecations(told)).toHaveLength(1);
  });

  it("is told no more once per process, whichever TaskJourneys meets it again", () => {
    const first = setup();
    first.journeys.transition("a-1", "released", "waiting", 1);
    const second = new TaskJourneys({ role: "worker", clock: first.clock.now, timeOrigin: 0, traces: false });
    second.transition("a-1", "released", "waiting", 1);
    expect(deprecations(first.told)).toHaveLength(1);
  });
});
