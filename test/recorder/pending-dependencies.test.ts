import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";
import { FakeClock } from "../helpers/clock.js";

// dependencies() told before a key's journey begins wait for it (dependencies.ts): the newest in a
// field of its own, the others in a Map. These pin that the split changes nothing callers see.

function worker(clock: FakeClock) {
  return new TaskJourneys({ role: "worker", instance: "w1", clock: clock.now, sampling: { ratio: 0 } });
}

function dependenciesOf(journeys: TaskJourneys, key: string): Array<string | number> | undefined {
  return internalsOf(journeys)!.recorder.live.get(key)!.dependencyIds;
}

describe("dependencies told before the journey begins", () => {
  it("attach to each key's journey, whichever begins first", () => {
    const journeys = worker(new FakeClock(0));
    journeys.dependencies("a", ["a-dep"]);
    journeys.dependencies("b", ["b-dep"]);
    journeys.dependencies("c", ["c-dep"]);
    for (const key of ["c", "a", "b"]) journeys.transition(key, "released", "waiting");
    expect(dependenciesOf(journeys, "a")).toEqual(["a-dep"]);
    expect(dependenciesOf(journeys, "b")).toEqual(["b-dep"]);
    expect(dependenciesOf(journeys, "c")).toEqual(["c-dep"]);
    journeys.transition("d", "released", "waiting");
    expect(dependenciesOf(journeys, "d")).toBeUndefined();
  });

  it("told again, the newest wins, and nothing of the older is left for the key's next journey", () => {
    const journeys = worker(new FakeClock(0));
    journeys.dependencies("a", ["old"]);
    journeys.dependencies("b", ["b-dep"]); // a's list moves aside for b's
    journeys.dependencies("a", ["new"]);
    journeys.transition("a", "released", "waiting");
    expect(dependenciesOf(journeys, "a")).toEqual(["new"]);
    journeys.transition("a", "waiting", "memory");
    journeys.transition("a", "memory", "released");
    journeys.transition("a", "released", "waiting");
    expect(dependenciesOf(journeys, "a")).toBeUndefined();
    journeys.transition("b", "released", "waiting");
    expect(dependenciesOf(journeys, "b")).toEqual(["b-dep"]);
  });

  it("over 100,000 keys waiting, the next is dropped and counted, the newest one counted among them", () => {
    const journeys = worker(new FakeClock(0));
    for (let index = 0; index < 100_000; index++) journeys.dependencies(`k-${index}`, ["d"]);
    expect(journeys.dropped()).toEqual({});
    journeys.dependencies("k-99999", ["e"]); // told again: replaces, no more keys
    expect(journeys.dropped()).toEqual({ "dependencies-overflow": 1 });
    journeys.dependencies("one-more", ["d"]);
    expect(journeys.dropped()).toEqual({ "dependencies-overflow": 2 });
    journeys.transition("k-0", "released", "waiting");
    journeys.transition("k-99999", "released", "waiting");
    expect(dependenciesOf(journeys, "k-0")).toEqual(["d"]);
    expect(dependenciesOf(journeys, "k-99999")).toEqual(["d"]);
  });

  it("a list with keys that are none holds only the keys, in order, no gap left for the others", () => {
    const journeys = worker(new FakeClock(0));
    journeys.dependencies("x", ["a", null as never, "b", { not: "a key" } as never]);
    journeys.transition("x", "released", "waiting");
    const ids = dependenciesOf(journeys, "x")!;
    expect(ids).toEqual(["a", "b"]);
    expect(ids.length).toBe(2);
    const ledger = journeys.gather("tcp://peer:1", ["p", undefined as never, "q"], 10);
    const carried = internalsOf(journeys)!.recorder.live.get("p")!.transfers![0].journeys;
    expect(carried.map((journey) => journey.key)).toEqual(["p", "q"]);
    expect(carried.length).toBe(2);
    ledger.end("ok");
  });
});
