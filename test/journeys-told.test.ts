import { afterEach, describe, expect, it, vi } from "vitest";
import { diag } from "@opentelemetry/api";
import { defineMachine, InvalidTransition, TaskJourneys } from "../src/index.js";
import { KINDS_TOLD_PER_REASON } from "../src/recorder/failures.js";
import { RetainedJourneys } from "../src/recorder/retained.js";
import { captureDiag } from "./helpers/diag.js";
import { harness } from "./otel/spans/helpers.js";

/**
 * Calls that did nothing used to say nothing: parent() too late or with something that is no
 * carrier, inject() of a key never seen, a misspelt state after the first, a misspelt outcome.
 * Each kind is told once, naming the key, the value and what would be right.
 */

afterEach(() => diag.disable());

const SAMPLED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("parent() and inject() that do nothing say why, once", () => {
  it("parent() after the key's journey began: late-parent, naming the key and its state", () => {
    const messages = captureDiag();
    const { journeys } = harness();
    journeys.transition("k-1", "released", "waiting");
    expect(journeys.propagation.receiver.continueFrom("k-1", { traceparent: SAMPLED })).toBe(false);
    expect(journeys.propagation.receiver.continueFrom("k-1", { traceparent: SAMPLED })).toBe(false);
    expect(journeys.dropped()).toEqual({ "late-parent": 2 });
    expect(messages).toEqual([
      'taskjourney: dropped input (late-parent): continueFrom("k-1") after its journey here began (it is in waiting): too late to make the context its parent; ' +
        "a sampled one is linked from its task span instead. Call propagation.receiver.continueFrom() with the message's carrier before the key's first transition here. " +
        'Counted in taskjourney.dropped{reason="late-parent"}; further ones are counted silently.',
    ]);
  });

  it("parent() with something that is no carrier, or a traceparent that is not W3C: invalid-carrier, naming the value", () => {
    const messages = captureDiag();
    const { journeys } = harness();
    expect(journeys.propagation.receiver.continueFrom("k-1", "00-abc" as never)).toBe(false);
    expect(journeys.propagation.receiver.continueFrom("k-2", { traceparent: "garbage" })).toBe(false);
    // No traceparent: a sender that does not trace. No mistake, nothing told.
    expect(journeys.propagation.receiver.continueFrom("k-3", {})).toBe(false);
    expect(journeys.dropped()).toEqual({ "invalid-carrier": 2 });
    expect(messages).toEqual([
      'taskjourney: dropped input (invalid-carrier): continueFrom("k-1") given "00-abc", not a carrier (an object of headers) or a Context from extract(); nothing queued. ' +
        'Counted in taskjourney.dropped{reason="invalid-carrier"}; further ones are counted silently.',
    ]);
    // The second (a carrier with a bad traceparent) is another call's kind of the same reason:
    // its message, had it come first, names the header.
    const other = harness();
    const more = captureDiag();
    other.journeys.propagation.receiver.continueFrom("k-2", { traceparent: "garbage" });
    expect(more[0]).toContain(
      'continueFrom("k-2") given a carrier whose traceparent "garbage" is not a W3C one ("00-" 32 hex digits',
    );
  });

  it("inject() of a key with no journey here is told once (not counted: a journey that ended long ago is no mistake)", () => {
    const messages = captureDiag();
    const { journeys } = harness();
    const carrier: Record<string, string> = {};
    expect(journeys.propagation.sender.inject("nobody-1", carrier)).toBe(false);
    expect(journeys.propagation.sender.inject("nobody-2", carrier)).toBe(false);
    expect(carrier).toEqual({});
    expect(journeys.dropped()).toEqual({});
    expect(messages).toEqual([
      'taskjourney: inject("nobody-1") wrote nothing: no journey of this key here, live or among the last retention.journeys ended. ' +
        "propagation.sender.inject() names the key's journey in this process: call it while the key's journey is under way here (when sending the task on), or after it ended and was kept. Told once.",
    ]);
    // A journey that ended unkept is known: nothing to name, nothing told.
    const unkept = harness({ sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false } });
    const quiet = captureDiag();
    unkept.journeys.transition("k-1", "released", "waiting");
    unkept.journeys.transition("k-1", "waiting", "released");
    expect(unkept.journeys.propagation.sender.inject("k-1", {})).toBe(false);
    expect(quiet).toEqual([]);
    // Something that is no carrier: invalid-carrier.
    expect(journeys.propagation.sender.inject("k-1", "carrier" as never)).toBe(false);
    expect(journeys.dropped()).toEqual({ "invalid-carrier": 1 });
  });

  it("inject() of a key whose journey ended unkept asks the ring of kept journeys without rebuilding one", () => {
    // A worker injects into every task's result carrier after the task's journey ended: rebuilding
    // the kept journey as objects only to see that it exists cost ~6.7 KB a task (issue 34).
    const find = vi.spyOn(RetainedJourneys.prototype, "find");
    try {
      const quiet = captureDiag();
      const { journeys } = harness({ sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false } });
      journeys.transition("k-1", "released", "waiting");
      journeys.transition("k-1", "waiting", "released");
      expect(journeys.propagation.sender.inject("k-1", {})).toBe(false);
      expect(quiet).toEqual([]);
      expect(find).not.toHaveBeenCalled();
      // Still there for explain(), which does rebuild it.
      expect(journeys.explain("k-1")).toBeDefined();
      expect(find).toHaveBeenCalledTimes(1);
    } finally {
      find.mockRestore();
    }
  });
});

describe("a hand-off without spans says why it wrote nothing, once", () => {
  it("handOff() on journeys with no tracer provider returns false and tells once, naming tracerProvider", () => {
    const messages = captureDiag();
    const producer = new TaskJourneys({ role: "scheduler", runtime: { clock: () => 0 }, sampling: { ratio: 1 } });
    producer.transition("n-1", "released", "waiting");
    producer.transition("n-2", "released", "waiting");
    const carrier = {};
    expect(producer.propagation.sender.handOff("n-1", carrier)).toBe(false);
    expect(producer.propagation.sender.handOff("n-2", carrier)).toBe(false);
    expect(carrier).toEqual({});
    expect(producer.dropped()).toEqual({});
    expect(messages).toEqual([
      expect.stringMatching(
        /^taskjourney: propagation\.sender\.handOff\("n-1"\) wrote no carrier \(returned false\): these journeys make no spans .*new TaskJourneys\(\{ tracerProvider \}\)/,
      ),
    ]);
  });
});

describe("misspelt states and outcomes are each told, naming the key, the value and what is valid", () => {
  it("every distinct unknown state name is told once, with the key and the role's states", () => {
    const messages = captureDiag();
    const journeys = new TaskJourneys({ runtime: { clock: () => 0 } });
    journeys.transition("k-1", "released", "wating" as never);
    journeys.transition("k-2", "released", "wating" as never);
    journeys.transition("k-1", "released", "redy" as never);
    journeys.transition("k-1", "released", "processing" as never);
    expect(journeys.dropped()).toEqual({ "unknown-state": 3, "wrong-role-state": 1 });
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(
      /^taskjourney: dropped input \(unknown-state\): transition\("k-1", …\): unknown state "wating"; the worker's states are "released", "waiting", .*"memory".*\. Counted/,
    );
    expect(messages[1]).toContain('transition("k-1", …): unknown state "redy"; the worker\'s states are');
    expect(messages[2]).toContain(
      'transition("k-1", …): state "processing" is not a worker state; the worker\'s states are',
    );
  });

  it("distinct values told are bounded per reason: a stream of garbage names cannot flood stderr", () => {
    const messages = captureDiag();
    const journeys = new TaskJourneys({ runtime: { clock: () => 0 } });
    for (let index = 0; index < 100; index++) journeys.transition("k-1", "released", `state-${index}` as never);
    expect(journeys.dropped()).toEqual({ "unknown-state": 100 });
    expect(messages).toHaveLength(KINDS_TOLD_PER_REASON);
  });

  it("a misspelt outcome is told per value with the ledger's key and the outcomes it takes, recorded as success unless an error came with it", () => {
    const messages = captureDiag();
    const journeys = new TaskJourneys({ runtime: { clock: () => 0 }, sampling: { ratio: 0 } });
    journeys.execute("k-1").end("done" as never);
    journeys.execute("k-2").end("done" as never);
    journeys.execute("k-3").end("failed" as never, { error: new Error("boom") });
    journeys.transition("d-1", "released", "fetch");
    journeys.gather("tcp://peer", ["d-1"]).end("done" as never);
    expect(journeys.dropped()).toEqual({ "invalid-outcome": 4 });
    expect(["k-1", "k-2", "k-3"].map((key) => journeys.explain(key)!.outcome)).toEqual(["memory", "memory", "error"]);
    expect(journeys.explain("d-1")!.outcome).toBe("memory");
    // One message per distinct value (k-2's "done" is k-1's again).
    expect(messages).toEqual([
      'taskjourney: dropped input (invalid-outcome): the execute ledger of "k-1": end("done"): not an outcome it takes ("memory", "error", "cancelled", "released", "rescheduled"); ' +
        'recorded as "memory" (no error given: success, as end() without an outcome). Counted in taskjourney.dropped{reason="invalid-outcome"}; further ones are counted silently.',
      expect.stringContaining('the execute ledger of "k-3": end("failed"): not an outcome it takes ('),
      expect.stringContaining(
        'the gather ledger from "tcp://peer": end("done"): not an outcome it takes ("ok", "busy", "missing", "failed", "cancelled"); recorded as "ok"',
      ),
    ]);
  });

  it("on a machine of one's own: the state an unknown outcome records, and the executing state execute() needs, by the machine's names", () => {
    const messages = captureDiag();
    const steps = defineMachine({
      states: ["pending", "ready", "running", "done", "failed"],
      transitions: { pending: ["ready"], ready: ["running"], running: ["done", "failed"] },
      terminal: { success: "done", failure: "failed" },
      initial: "pending",
      executing: "running",
    });
    const journeys = new TaskJourneys({ role: "worker", machine: steps, runtime: { clock: () => 0 } });
    journeys.execute("s-1").end("finished" as never);
    journeys.execute("s-2").end("crashed" as never, { error: new Error("boom") });
    expect(["s-1", "s-2"].map((key) => journeys.explain(key)!.outcome)).toEqual(["done", "failed"]);
    expect(messages[0]).toContain('the execute ledger of "s-1": end("finished"): not an outcome it takes (');
    expect(messages[0]).toContain('recorded as "done" (no error given');
    expect(messages[1]).toContain('recorded as "failed" (an error given)');

    const bare = defineMachine({
      states: ["a", "b", "ok", "ko"],
      transitions: { a: ["b"], b: ["ok", "ko"] },
      terminal: { success: "ok", failure: "ko" },
      initial: "a",
    });
    const without = new TaskJourneys({ role: "worker", machine: bare, runtime: { clock: () => 0 } });
    without.execute("k-1").end("ok");
    without.gather("tcp://peer", ["k-2"]).end();
    expect(without.dropped()).toEqual({ "no-ledger-state": 2 });
    expect(messages[2]).toContain(
      'execute("k-1") with a state machine that declares no executing state: the ledger records nothing. Declare the state a run is in, defineMachine({ …, executing: "<state>" })',
    );
    expect(messages[3]).toContain('gather("tcp://peer", …) with a state machine that declares no transfer state');
    expect(messages[3]).toContain('transfer: { state: "<state>", retry: "<state>" }');
  });

  it("strict: the same mistakes throw InvalidTransition", () => {
    const { journeys } = harness({ strict: true });
    journeys.transition("k-1", "released", "waiting");
    expect(() => journeys.propagation.receiver.continueFrom("k-1", { traceparent: SAMPLED })).toThrow(
      InvalidTransition,
    );
    expect(() => journeys.propagation.receiver.continueFrom("k-2", 7 as never)).toThrow(InvalidTransition);
    expect(() => journeys.execute("k-3").end("done" as never)).toThrow(InvalidTransition);
    // Not a mistake for sure: told, never thrown.
    expect(journeys.propagation.sender.inject("nobody", {})).toBe(false);
  });
});
