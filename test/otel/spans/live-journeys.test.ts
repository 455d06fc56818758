import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys } from "../../../src/index.js";
import { internalsOf } from "../../../src/internal.js";
import { FakeClock } from "../../helpers/clock.js";
import { find, harness, render, taskSpan } from "./helpers.js";
import { captureDiag } from "../../helpers/diag.js";

afterEach(() => diag.disable());

describe("maxLiveJourneys", () => {
  it("evicts the journey that began first, in begin order, counted, told once", () => {
    const told = captureDiag();
    const clock = new FakeClock(100);
    const journeys = new TaskJourneys({
      role: "worker",
      runtime: { clock: clock.now },
      sampling: { ratio: 0 },
      limits: { maxLiveJourneys: 3 },
    });
    for (const key of ["a-1", "a-2", "a-3"]) {
      journeys.transition(key, "released", "waiting");
      clock.advance(1);
    }
    // a-1 ends normally: room for a-4 without eviction.
    journeys.transition("a-1", "waiting", "released");
    journeys.transition("a-4", "released", "waiting");
    expect(journeys.dropped()).toEqual({});
    // Now a-2, then a-3, are the oldest live ones.
    journeys.transition("a-5", "released", "waiting");
    journeys.transition("a-6", "released", "waiting");
    const live = internalsOf(journeys)!.recorder.live;
    expect([...live.keys()]).toEqual(["a-4", "a-5", "a-6"]);
    expect(journeys.dropped()).toEqual({ "live-journeys-limit": 2 });
    expect(told.filter((message) => message.includes("limits.maxLiveJourneys"))).toHaveLength(1);
    // An evicted journey is gone: no explain(), and its waiting visit is in no statistics.
    expect(journeys.explain("a-2")).toBeUndefined();
    expect(journeys.stats("a", "waiting").count).toBe(1);
    // Its key's later terminal transition is one of a key with no journey: nothing.
    journeys.transition("a-2", "waiting", "released");
    expect(journeys.dropped()).toEqual({ "live-journeys-limit": 2 });
  });

  it("a sampled journey evicted: its spans end where it was abandoned, marked unfinished and abandoned", () => {
    const { journeys, clock, exporter } = harness({ maxLiveJourneys: 2 });
    journeys.transition("x-1", "released", "waiting");
    clock.set(101);
    journeys.transition("x-1", "waiting", "ready");
    journeys.transition("y-1", "released", "waiting");
    clock.set(103);
    journeys.transition("z-1", "released", "waiting");

    const spans = exporter.getFinishedSpans();
    expect(render(spans)).toEqual(["task x [x-1@worker] 100-103", "  waiting 100-101", "  ready 101-103"]);
    const task = find(spans, taskSpan("x-1"));
    expect(task.attributes["taskjourney.unfinished"]).toBe(true);
    expect(task.attributes["taskjourney.abandoned"]).toBe("live-journeys-limit");
    expect(task.attributes["task.outcome"]).toBeUndefined();
  });

  it("an evicted journey's open execute() closes unsettled, and its later end() does nothing, uncounted", () => {
    const { journeys, clock, exporter } = harness({ maxLiveJourneys: 1 });
    journeys.transition("x-1", "released", "executing");
    const ledger = journeys.execute("x-1");
    ledger.meter("deserialize", () => clock.advance(0.5));
    clock.set(102);
    journeys.transition("y-1", "released", "waiting");
    expect(render(exporter.getFinishedSpans())).toEqual([
      "task x [x-1@worker] 100-102",
      "  executing 100-102",
      "    deserialize 100-100.5",
    ]);
    clock.set(103);
    ledger.end("memory");
    expect(journeys.dropped()).toEqual({ "live-journeys-limit": 1 });
    const recorder = internalsOf(journeys)!.recorder;
    const accumulators = recorder.accumulators;
    const cell = accumulators.activityCell(recorder.prefixes.find("x"), recorder.activityId("deserialize"));
    expect(accumulators.executeSeconds[cell]).toBe(0);
    expect([...recorder.live.keys()]).toEqual(["y-1"]);
  });

  it("a key evicted from a gather() in flight leaves it: the transfer's end moves the other key on", () => {
    const { journeys, clock, exporter } = harness({ maxLiveJourneys: 2 });
    journeys.transition("x-1", "released", "fetch");
    journeys.transition("x-2", "released", "fetch");
    const transfer = journeys.gather("tcp://peer:1", ["x-1", "x-2"], 100);
    clock.set(101);
    journeys.transition("w-1", "released", "waiting");
    clock.set(102);
    transfer.end("ok");
    expect(journeys.dropped()).toEqual({ "live-journeys-limit": 1 });
    const spans = exporter.getFinishedSpans();
    expect(find(spans, taskSpan("x-1")).attributes["taskjourney.abandoned"]).toBe("live-journeys-limit");
    expect(find(spans, taskSpan("x-2")).attributes["task.outcome"]).toBe("memory");
    expect(find(spans, (span) => span.name === "gather_dep").attributes["transfer.outcome"]).toBe("ok");
    expect([...internalsOf(journeys)!.recorder.live.keys()]).toEqual(["w-1"]);
  });

  it("stays at the cap under a steady stream of keys that never end, every eviction counted", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "worker",
      clock: clock.now,
      sampling: { ratio: 0 },
      maxLiveJourneys: 1000,
    });
    for (let i = 0; i < 50_000; i++) {
      journeys.transition(`leak-${i}`, "released", "waiting");
      // Every other key also ends, from the middle of the list.
      if (i % 2 === 1) journeys.transition(`leak-${i - 1}`, "waiting", "released");
    }
    // At the cap each begin evicts the oldest odd key, and the even key's end then frees one
    // place: 999 live, the newest odd keys; of 50,000 begun, 25,000 ended, the rest evicted.
    const live = internalsOf(journeys)!.recorder.live;
    expect(live.size).toBe(999);
    expect([...live.keys()][0]).toBe("leak-48003");
    expect([...live.keys()].at(-1)).toBe("leak-49999");
    expect(journeys.dropped()).toEqual({ "live-journeys-limit": 50_000 - 25_000 - 999 });
  });
});
