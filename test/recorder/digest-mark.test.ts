import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import type { Breakdown, BreakdownNode } from "../../src/model/breakdown.js";
import { FakeClock } from "../helpers/clock.js";
import { internalsOf } from "../../src/internal.js";

/**
 * `key` executing one activity `compute` of 4 s: a thread-cpu of 1 s (digested, or metered under
 * that name) first, then `load` metered for 2 s.
 */
function run(journeys: TaskJourneys, clock: FakeClock, key: string, digested: boolean) {
  journeys.transition(key, "released", "waiting");
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  ledger.meter("compute", () => {
    if (digested) {
      clock.advance(1);
      ledger.digest("thread-cpu", 1);
    } else ledger.meter("thread-cpu", () => clock.advance(1));
    ledger.meter("load", () => clock.advance(2));
    clock.advance(1);
  });
  return ledger;
}

/** The names and seconds under `compute` while executing. */
function underCompute(breakdown: Breakdown | undefined): Array<[string, number]> {
  const executing = breakdown!.children.find((node) => node.name === "executing")!;
  const compute = executing.children.find((node) => node.name === "compute")!;
  return compute.children.map((node: BreakdownNode) => [node.name, node.seconds]);
}

describe("a digested record, marked in the records themselves", () => {
  it("makes no JourneyDetail, and explain() tells it from an activity metered under its name, live and kept", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "worker",
      clock: clock.now,
      sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
    });
    const ledger = run(journeys, clock, "dig-1", true);
    // A list of the digested records lived in the journey's detail: one made per digesting journey.
    expect(internalsOf(journeys)!.recorder.live.get("dig-1")!.detail).toBeUndefined();
    // A thread digest is held back to the end of its level; a metered activity stays in order.
    const digested = [
      ["load", 2],
      ["thread-cpu", 1],
      ["other", 1],
    ];
    expect(underCompute(journeys.explain("dig-1"))).toEqual(digested);
    ledger.end("memory");
    run(journeys, clock, "met-1", false).end("memory");
    // Kept (RetainedJourneys, numbers in a Float64Array): the mark travels with the records.
    expect(underCompute(journeys.explain("dig-1"))).toEqual(digested);
    expect(underCompute(journeys.explain("met-1"))).toEqual([
      ["thread-cpu", 1],
      ["load", 2],
      ["other", 1],
    ]);
  });
});
