import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { STALL_KINDS } from "../../src/model/stalls.js";
import { ProcessStalls } from "../../src/runtime/process-stalls.js";
import { RuntimeMetrics } from "../../src/otel/runtime-metrics.js";
import { TaskJourneys } from "../../src/index.js";
import { internalsOf } from "../../src/internal.js";

const MAJOR = STALL_KINDS.indexOf("major");
const MINOR = STALL_KINDS.indexOf("minor");
const EVENT_LOOP = STALL_KINDS.indexOf("event-loop");

const stopping: Array<{ stop?: () => void; shutdown?: () => Promise<void> }> = [];
afterEach(async () => {
  for (const item of stopping.splice(0)) {
    item.stop?.();
    await item.shutdown?.();
  }
});

describe("ProcessStalls", () => {
  it("records a late probe tick as an event-loop stall from when the tick was due", () => {
    const stalls = new ProcessStalls({ clock: () => 50, capacity: 8, resolutionMs: 20, thresholdMs: 10 });
    stalls.tick(20); // on time (the probe starts at 0 here)
    stalls.tick(45); // due at 40, 5 ms late: under the threshold
    expect(stalls.ring.size).toBe(0);
    stalls.tick(100); // due at 65, 35 ms late: the loop was blocked from 65 to 100
    expect(stalls.ring.size).toBe(1);
    // Wherever the performance clock sits against the recorder's, the stall is 35 ms long.
    const all = stalls.ring.overlap(-1e12, 1e12);
    expect(all[EVENT_LOOP]).toBeCloseTo(0.035, 6);
    // The ticks' lateness is the event-loop delay of the gauges: 0, 5 and 35 ms.
    const delay = stalls.eventLoopDelay()!;
    expect(delay.max).toBeCloseTo(0.035, 4);
    expect(delay.p50).toBeCloseTo(0.005, 4);
    expect(delay.mean).toBeCloseTo(0.04 / 3, 4);
    // Read once per collection: the next interval starts empty.
    expect(stalls.eventLoopDelay()).toBeUndefined();
  });

  it("ticks every idleResolutionMs while nothing is in flight, at the full rate again once something is", () => {
    let busy = false;
    const stalls = new ProcessStalls({
      clock: () => 0,
      capacity: 8,
      resolutionMs: 20,
      thresholdMs: 10,
      busy: () => busy,
      idleResolutionMs: 1000,
    });
    expect(stalls.intervalMs).toBe(20);
    stalls.tick(20); // on time; nothing in flight: the next tick is due a second later
    expect(stalls.intervalMs).toBe(1000);
    stalls.tick(1025); // due at 1020: 5 ms late, on time for the slow period
    expect(stalls.ring.size).toBe(0);
    busy = true;
    stalls.tick(2080); // due at 2025: 55 ms late, a stall even while idle; work again: 20 ms
    expect(stalls.ring.size).toBe(1);
    expect(stalls.ring.overlap(-1e12, 1e12)[EVENT_LOOP]).toBeCloseTo(0.055, 6);
    expect(stalls.intervalMs).toBe(20);
    stalls.tick(2100); // on time at the full rate
    expect(stalls.ring.size).toBe(1);
    expect(stalls.eventLoopDelay()!.max).toBeCloseTo(0.055, 4);
  });

  it("a TaskJourneys' probe is at the full rate only while journeys are live", async () => {
    const journeys = new TaskJourneys({ role: "worker", sampling: { ratio: 0 } });
    stopping.push(journeys);
    const stalls = internalsOf(journeys)!.processStalls!;
    journeys.transition("x-1", "released", "waiting");
    stalls.tick(performance.now());
    expect(stalls.intervalMs).toBe(20);
    journeys.transition("x-1", "waiting", "forgotten");
    stalls.tick(performance.now());
    expect(stalls.intervalMs).toBe(1000);
    // Work again: the full rate at once, not at the next idle tick, and its clock restarts there
    // (the idle period's lateness is not a stall).
    journeys.transition("x-2", "released", "waiting");
    expect(stalls.intervalMs).toBe(20);
    stalls.tick(performance.now());
    expect(stalls.ring.overlap(-1e12, 1e12)[EVENT_LOOP]).toBe(0);
  });

  it("stays at the full rate while tasks begin and end between its ticks, none live at the tick itself", () => {
    const journeys = new TaskJourneys({ role: "worker", sampling: { ratio: 0 } });
    stopping.push(journeys);
    const stalls = internalsOf(journeys)!.processStalls!;
    for (let index = 0; index < 5; index++) {
      journeys.transition(`x-${index}`, "released", "waiting");
      journeys.transition(`x-${index}`, "waiting", "forgotten");
      stalls.tick(performance.now());
      expect(stalls.intervalMs, `tick ${index}`).toBe(20);
    }
    // A tick with nothing begun since the last one: idle.
    stalls.tick(performance.now());
    expect(stalls.intervalMs).toBe(1000);
  });

  it("counts GC pauses per type into the v8js.gc.duration buckets, cumulative or delta", () => {
    const stalls = new ProcessStalls({ clock: () => 0, capacity: 8 });
    stalls.gc(MAJOR, 10, 62.5); // 0.0625 s: bucket (0.01, 0.1]
    stalls.gc(MAJOR, 100, 125); // 0.125 s: bucket (0.1, 1]
    stalls.gc(MINOR, 70, 1); // 0.001 s: bucket [0, 0.01]
    const delta = new RuntimeMetrics(stalls, true);
    const first = delta.produce([0, 0], [1, 0]).find((metric) => metric.descriptor.name === "v8js.gc.duration")!;
    expect(first.dataPointType).toBe(0);
    const byType = Object.fromEntries(first.dataPoints.map((point) => [point.attributes["v8js.gc.type"], point.value]));
    expect(byType.major).toEqual({
      buckets: { boundaries: [0.01, 0.1, 1, 10], counts: [0, 1, 1, 0, 0] },
      sum: 0.1875,
      count: 2,
    });
    expect(byType.minor).toEqual({
      buckets: { boundaries: [0.01, 0.1, 1, 10], counts: [1, 0, 0, 0, 0] },
      sum: 0.001,
      count: 1,
    });
    stalls.gc(MAJOR, 300, 12_000); // 12 s: the overflow bucket
    const second = delta.produce([1, 0], [2, 0]).find((metric) => metric.descriptor.name === "v8js.gc.duration")!;
    const major = second.dataPoints.find((point) => point.attributes["v8js.gc.type"] === "major")!;
    expect(major.value).toEqual({
      buckets: { boundaries: [0.01, 0.1, 1, 10], counts: [0, 0, 0, 0, 1] },
      sum: 12,
      count: 1,
    });
    const cumulative = new RuntimeMetrics(stalls, false)
      .produce([0, 0], [2, 0])
      .find((metric) => metric.descriptor.name === "v8js.gc.duration")!;
    expect(cumulative.dataPoints.find((point) => point.attributes["v8js.gc.type"] === "major")!.value).toMatchObject({
      count: 3,
    });
  });

  it("gives the nodejs.eventloop.delay gauges of a started watcher", async () => {
    const stalls = new ProcessStalls({ clock: () => performance.now() / 1000, capacity: 8, resolutionMs: 10 }).start();
    stopping.push(stalls);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const names = new RuntimeMetrics(stalls, false)
      .produce([0, 0], [1, 0])
      .map((metric) => metric.descriptor.name)
      .filter((name) => name.startsWith("nodejs."));
    expect(names).toEqual(
      ["min", "max", "mean", "stddev", "p50", "p90", "p99"].map((statistic) => `nodejs.eventloop.delay.${statistic}`),
    );
  });
});

describe("a real garbage collection", () => {
  it("shows as gc in the breakdown of the task it interrupted, and in v8js.gc.duration", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as (options?: { type: "major" | "minor" }) => void;
    const journeys = new TaskJourneys({ role: "worker" }); // the default clock: stalls watched
    stopping.push(journeys);
    journeys.transition("big-1", "released", "waiting");
    journeys.transition("big-1", "waiting", "ready");
    const ledger = journeys.execute("big-1");
    ledger.meter("deserialize", () => 0);
    // A million numbers made and dropped, then a full collection while the task executes, on
    // this thread but outside its metered activities (as while a pool thread computes it).
    const garbage = Array.from({ length: 200 }, () => new Array<number>(5000).fill(1));
    expect(garbage.length).toBe(200);
    gc();
    // PerformanceObserver delivers gc entries asynchronously: let it, before the task ends.
    await new Promise((resolve) => setTimeout(resolve, 50));
    ledger.end("memory");
    const executing = journeys.explain("big-1")!.children.find((node) => node.name === "executing")!;
    // Within the time no activity claimed (deserialize took little of it).
    const node = executing.children
      .find((child) => child.name === "other")
      ?.children.find((child) => child.name === "gc");
    expect(node, JSON.stringify(executing)).toBeDefined();
    expect(node!.seconds).toBeGreaterThan(0);
    expect(node!.children.map((child) => child.name)).toContain("major");
    const metrics = journeys.metricProducer.produce([0, 0], [1, 0]);
    const gcDuration = metrics.find((metric) => metric.descriptor.name === "v8js.gc.duration")!;
    expect(gcDuration.dataPoints.some((point) => point.attributes["v8js.gc.type"] === "major")).toBe(true);
  });

  it("is not watched with a custom clock unless asked for", async () => {
    const journeys = new TaskJourneys({ clock: () => 0 });
    stopping.push(journeys);
    expect(
      journeys.metricProducer
        .produce([0, 0], [1, 0])
        .map((metric) => metric.descriptor.name)
        .filter((name) => name.startsWith("v8js")),
    ).toEqual([]);
    expect(() => new TaskJourneys({ processStalls: "yes" as never })).toThrow(/processStalls/);
  });
});
