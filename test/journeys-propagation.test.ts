/**
 * `journeys.propagation`: trace context by side (sender / receiver), and the seven facade verbs of
 * 0.1 it replaces, still working alike for one minor release, each told once per process.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diag, trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { forgetDeprecationsTold } from "../src/recorder/deprecations.js";
import type { GatherLedger, TraceCarrier } from "../src/index.js";
import { captureDiag } from "./helpers/diag.js";
import { harness, render } from "./otel/spans/helpers.js";

type Form = "propagation" | "verbs";

/** The deprecation warnings of calls (the harness's own flat options are told too, apart). */
const deprecatedCalls = (told: string[]): string[] =>
  told.filter((message) => /journeys\.\w+\(.*is deprecated/.test(message));

/**
 * A task's round trip with every propagation call: scheduler → worker (compute-task), the worker's
 * result back, its data fetched by a second worker (get_data request and reply), written either
 * through `journeys.propagation` or through the deprecated verbs.
 */
function roundTrip(form: Form): { tree: string[]; extracted: string | undefined; returns: boolean[] } {
  const exporter = new InMemorySpanExporter();
  const scheduler = harness({ role: "scheduler", instance: "tcp://scheduler:8786" }, exporter);
  const worker = harness({ sampling: { ratio: 0 } }, exporter, scheduler.clock);
  const peer = harness({ instance: "tcp://peer:2" }, exporter, scheduler.clock);
  const clock = scheduler.clock;
  const [s, w, p] = [scheduler.journeys, worker.journeys, peer.journeys];
  const returns: boolean[] = [];
  const call = {
    inject: (j: typeof s, key: string, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.sender.inject(key, carrier) : j.inject(key, carrier),
    continueFrom: (j: typeof s, key: string, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.receiver.continueFrom(key, carrier) : j.parent(key, carrier),
    resultFrom: (j: typeof s, key: string, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.receiver.resultFrom(key, carrier) : j.returned(key, carrier),
    dataFrom: (j: typeof s, key: string, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.receiver.dataFrom(key, carrier) : j.linkFrom(key, carrier),
    injectTransfer: (j: typeof s, ledger: GatherLedger, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.sender.injectTransfer(ledger, carrier) : j.injectTransfer(ledger, carrier),
    replyFrom: (j: typeof s, ledger: GatherLedger, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.receiver.replyFrom(ledger, carrier) : j.linkTransfer(ledger, carrier),
    extract: (j: typeof s, carrier: TraceCarrier) =>
      form === "propagation" ? j.propagation.receiver.extract(carrier) : j.extract(carrier),
  };

  s.transition("inc-1", "released", "waiting");
  clock.set(100.5);
  s.transition("inc-1", "waiting", "processing");
  const computeTask: TraceCarrier = {};
  returns.push(call.inject(s, "inc-1", computeTask));
  const extracted = call.extract(w, computeTask);
  clock.set(101);
  returns.push(call.continueFrom(w, "inc-1", computeTask));
  w.transition("inc-1", "released", "waiting");
  w.transition("inc-1", "waiting", "ready");
  w.transition("inc-1", "ready", "executing");
  clock.set(102);
  w.execute("inc-1").end("memory");
  const result: TraceCarrier = {};
  returns.push(call.inject(w, "inc-1", result));
  returns.push(call.resultFrom(s, "inc-1", result));
  s.transition("inc-1", "processing", "memory");

  // A second worker fetches inc-1 from the first: request and reply carriers.
  p.dependencies("sum-1", ["inc-1"]);
  p.transition("sum-1", "released", "waiting");
  p.transition("inc-1", "released", "fetch");
  clock.set(103);
  const gather = p.gather("tcp://w:1", ["inc-1"]);
  const request: TraceCarrier = {};
  returns.push(call.injectTransfer(p, gather, request));
  const serve = w.serve("tcp://peer:2", ["inc-1"], { context: request });
  const reply: TraceCarrier = {};
  returns.push(call.injectTransfer(w, serve as unknown as GatherLedger, reply));
  clock.set(103.5);
  serve.end("ok");
  returns.push(call.replyFrom(p, gather, reply));
  const data: TraceCarrier = {};
  returns.push(call.inject(w, "inc-1", data));
  returns.push(call.dataFrom(p, "inc-1", data));
  clock.set(104);
  gather.end("ok");
  p.transition("sum-1", "waiting", "ready");
  p.transition("sum-1", "ready", "executing");
  p.execute("sum-1").end("memory");
  p.transition("sum-1", "executing", "memory");
  const spanContext = extracted === undefined ? undefined : trace.getSpanContext(extracted)?.spanId;
  return { tree: render(exporter.getFinishedSpans()), extracted: spanContext, returns };
}

describe("journeys.propagation", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it("by side, makes the traces the verbs of 0.1 made, every call doing its part, telling nothing", () => {
    const told = captureDiag();
    const byPropagation = roundTrip("propagation");
    expect(deprecatedCalls(told)).toEqual([]);
    expect(byPropagation.returns).toEqual([true, true, true, false, true, true, true, true, true]);
    expect(byPropagation.extracted).toMatch(/^[0-9a-f]{16}$/);
    // continueFrom: the worker's journey nests under the scheduler's task span (one trace per task);
    // dataFrom: the fetched key's and its dependent's task spans link to the producer's journey;
    // injectTransfer and replyFrom: get_data under gather_dep, and gather_dep linked back to it.
    expect(byPropagation.tree).toEqual([
      "task inc [inc-1@scheduler] 100-102",
      "  waiting 100-100.5",
      "  processing 100.5-102",
      "  task inc [inc-1@worker] 101-102 → processing",
      "    ready 101-101",
      "    waiting 101-101",
      "    executing 101-102",
      "task inc [inc-1@worker] 102-104 → task inc [inc-1@worker]",
      "  fetch 102-103",
      "  flight 103-104 → gather_dep [tcp://w:1 ok]",
      "task sum [sum-1@worker] 102-104 → task inc [inc-1@worker]",
      "  waiting 102-104 → gather_dep [tcp://w:1 ok]",
      "    gather_dep [tcp://w:1 ok] CLIENT 103-104 → get_data",
      "      get_data SERVER 103-103.5",
      "  executing 104-104",
      "  ready 104-104",
    ]);
    const byVerbs = roundTrip("verbs");
    expect(byVerbs.tree).toEqual(byPropagation.tree);
    expect(byVerbs.returns).toEqual(byPropagation.returns);
  });

  it("is one frozen object, made once, its sides frozen", () => {
    const { journeys } = harness();
    expect(journeys.propagation).toBe(journeys.propagation);
    expect(Object.isFrozen(journeys.propagation)).toBe(true);
    expect(Object.isFrozen(journeys.propagation.sender)).toBe(true);
    expect(Object.isFrozen(journeys.propagation.receiver)).toBe(true);
    expect(Object.keys(journeys.propagation.sender)).toEqual(["inject", "injectTransfer", "handOff"]);
    expect(Object.keys(journeys.propagation.receiver)).toEqual([
      "extract",
      "continueFrom",
      "resultFrom",
      "dataFrom",
      "replyFrom",
    ]);
  });

  it("counts a carrier that throws under the call's new name (invalid-carrier)", () => {
    const told = captureDiag();
    const { journeys } = harness();
    journeys.transition("a-1", "released", "waiting");
    const hostile = new Proxy(
      {},
      {
        set: () => {
          throw new Error("frozen");
        },
        get: () => {
          throw new Error("no");
        },
      },
    );
    expect(journeys.propagation.sender.inject("a-1", hostile as TraceCarrier)).toBe(false);
    expect(journeys.dropped()).toEqual({ "invalid-carrier": 1 });
    expect(told.join("\n")).toContain("propagation.sender.inject() could not read or write its carrier");
  });
});

describe("the producer's calls by side", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it("sender.handOff() writes the hand-off carrier; receiver.continueFrom() takes the attempt (a bad one is counted)", () => {
    const told = captureDiag();
    const { journeys } = harness();
    journeys.transition("h-1", "released", "waiting", { at: 100 });
    const carrier: Record<string, string> = {};
    expect(journeys.propagation.sender.handOff("h-1", carrier, { at: 101 })).toBe(true);
    expect(carrier.tracestate).toMatch(/^taskjourney-handoff=/);
    const consumer = harness();
    expect(consumer.journeys.propagation.receiver.continueFrom("h-1", carrier, { attempt: 0 })).toBe(true);
    expect(consumer.journeys.dropped()).toEqual({ "invalid-value": 1 });
    expect(told.join("\n")).toContain("continueFrom() given attempt 0, not an integer >= 1");
    expect(deprecatedCalls(told)).toEqual([]);
  });

  it("journeys.parent(…, { attempt }) still works, told once as deprecated", () => {
    const told = captureDiag();
    const consumer = harness();
    expect(consumer.journeys.parent("h-3", {}, { attempt: 0.5 })).toBe(false);
    expect(consumer.journeys.parent("h-4", {}, { attempt: 2 })).toBe(false);
    // The attempt reached the receiver's call: 0.5 counted, 2 taken.
    expect(consumer.journeys.dropped()).toEqual({ "invalid-value": 1 });
    expect(deprecatedCalls(told).map((message) => message.split(" is deprecated")[0])).toEqual([
      "taskjourney: journeys.parent(key, carrier)",
    ]);
  });

  it("has no journeys.handOff(): the alias was never released (propagation.sender.handOff is the call)", () => {
    const { journeys } = harness();
    expect("handOff" in journeys).toBe(false);
  });
});

describe("the propagation verbs of 0.1 (deprecated)", () => {
  beforeEach(() => forgetDeprecationsTold());
  afterEach(() => diag.disable());

  it("each is told once per process, naming its journeys.propagation call", () => {
    const told = captureDiag();
    roundTrip("verbs");
    roundTrip("verbs");
    expect(deprecatedCalls(told).map((message) => message.split(" instead.")[0])).toEqual([
      "taskjourney: journeys.inject(key, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.sender.inject(key, carrier)",
      "taskjourney: journeys.extract(carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.receiver.extract(carrier)",
      "taskjourney: journeys.parent(key, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.receiver.continueFrom(key, carrier)",
      "taskjourney: journeys.returned(key, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.receiver.resultFrom(key, carrier)",
      "taskjourney: journeys.injectTransfer(ledger, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.sender.injectTransfer(ledger, carrier)",
      "taskjourney: journeys.linkTransfer(ledger, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.receiver.replyFrom(ledger, carrier)",
      "taskjourney: journeys.linkFrom(key, carrier) is deprecated and will be removed in the next minor release; write journeys.propagation.receiver.dataFrom(key, carrier)",
    ]);
  });
});
