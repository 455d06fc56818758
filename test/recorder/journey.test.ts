import { describe, expect, it } from "vitest";
import { TaskJourneys, formatBreakdown } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { internalsOf } from "../../src/internal.js";

function worker(clock: FakeClock, extra: object = {}) {
  return new TaskJourneys({
    role: "worker",
    instance: "tcp://10.0.0.7:40001",
    clock: clock.now,
    sampling: { ratio: 0 },
    ...extra,
  });
}

describe("a worker compute journey", () => {
  it("records time per state and per metered activity, with other as the remainder", () => {
    const clock = new FakeClock(100);
    const journeys = worker(clock);
    journeys.transition("inc-1", "released", "waiting");
    clock.advance(2);
    journeys.transition("inc-1", "waiting", "ready");
    clock.advance(3);
    journeys.transition("inc-1", "ready", "executing");
    const ledger = journeys.execute("inc-1");
    ledger.meter("disk-read", () => clock.advance(0.25));
    ledger.meter("thread-cpu", () => clock.advance(1));
    clock.advance(0.5);
    ledger.end("memory");

    const breakdown = journeys.explain("inc-1")!;
    expect(breakdown.seconds).toBeCloseTo(6.75, 12);
    expect(breakdown.outcome).toBe("memory");
    expect(breakdown.children.map((n) => [n.name, n.seconds])).toEqual([
      ["waiting", 2],
      ["ready", 3],
      ["executing", 1.75],
    ]);
    const executing = breakdown.children[2];
    expect(executing.children.map((n) => [n.name, n.seconds])).toEqual([
      ["disk-read", 0.25],
      ["thread-cpu", 1],
      ["other", 0.5],
    ]);
    expect(journeys.stats("inc").count).toBe(1);
    expect(journeys.stats("inc").mean).toBeCloseTo(1.75, 12);
    expect(journeys.stats("inc", "ready").mean).toBe(3);
    expect(formatBreakdown(breakdown)).toContain("inc-1 spent 6.8 s on worker tcp://10.0.0.7:40001");
  });

  it("keeps the bytes and counts digested in a visit on its activity's node, nested or not", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("x-1", "ready", "executing");
    const ledger = journeys.execute("x-1");
    await ledger.meter("unspill", async () => {
      ledger.meter("disk-read", () => clock.advance(0.25));
      ledger.digest("disk-read", 65536, "bytes");
      ledger.digest("disk-read", 4096, "bytes");
      ledger.digest("disk-read", 2, "count");
    });
    // Never timed: the quantity gets a node of its own, of no time.
    ledger.digest("disk-write", 1024, "bytes");
    ledger.digest("disk-write", 3, "records");
    clock.advance(0.75);
    ledger.end("memory");
    const executing = journeys.explain("x-1")!.children[0];
    expect(executing.children).toEqual([
      {
        name: "unspill",
        seconds: 0.25,
        children: [{ name: "disk-read", seconds: 0.25, children: [], quantities: { bytes: 69632, count: 2 } }],
      },
      { name: "other", seconds: 0.75, children: [] },
      { name: "disk-write", seconds: 0, children: [], quantities: { bytes: 1024, records: 3 } },
    ]);
    expect(formatBreakdown(journeys.explain("x-1")!)).toContain("disk-read  250.0 ms  68.0 KiB, 2 count");
  });

  it("adds only the bytes digested under network to a transfer's size", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("a-1", "released", "fetch");
    const transfer = journeys.gather("tcp://10.0.0.8:40001", ["a-1"], 1000);
    transfer.digest("network", 500, "bytes");
    // Spilled on receipt: bytes written to disk, not bytes that crossed the wire.
    transfer.digest("disk-write", 4096, "bytes");
    transfer.end("ok");
    const { resourceMetrics } = await journeys.metricProducer.collect();
    const size = resourceMetrics.scopeMetrics[0].metrics.find(
      (metric) => metric.descriptor.name === "task.gather.size",
    )!;
    expect(size.dataPoints.map((point) => [point.attributes["transfer.outcome"], point.value])).toEqual([["ok", 1500]]);
  });

  it("counts every visit in stats() and the metrics, read as they happen or after a thousand", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    for (let i = 1; i <= 1000; i++) {
      journeys.transition(`inc-${i}`, "released", "waiting");
      clock.advance(0.5);
      journeys.transition(`inc-${i}`, "waiting", "ready");
      if (i === 1 || i === 128 || i === 256) expect(journeys.stats("inc", "waiting").count).toBe(i);
    }
    const waiting = journeys.stats("inc", "waiting");
    expect([waiting.count, waiting.mean, waiting.min, waiting.max]).toEqual([1000, 0.5, 0.5, 0.5]);
    const { resourceMetrics } = await journeys.metricProducer.collect();
    const stateTime = resourceMetrics.scopeMetrics[0].metrics.find(
      (metric) => metric.descriptor.name === "task.state.time",
    )!;
    expect(stateTime.dataPoints.map((point) => [point.attributes["task.state"], point.value])).toEqual([
      ["waiting", 500],
    ]);
  });

  it("subtracts nested activities from their parent", async () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("x-1", "ready", "executing");
    const ledger = journeys.execute("x-1");
    await ledger.meter("unspill", async () => {
      clock.advance(0.1);
      await ledger.meter("disk-read", async () => {
        await Promise.resolve();
        clock.advance(0.3);
      });
      journeys.meter("deserialize", () => clock.advance(0.2));
      clock.advance(0.05);
    });
    ledger.end("memory");
    const executing = journeys.explain("x-1")!.children[0];
    expect(executing.name).toBe("executing");
    expect(executing.seconds).toBeCloseTo(0.65, 12);
    const unspill = executing.children[0];
    expect(unspill.name).toBe("unspill");
    expect(unspill.seconds).toBeCloseTo(0.65, 12);
    expect(unspill.children.map((n) => [n.name, +n.seconds.toFixed(9)])).toEqual([
      ["disk-read", 0.3],
      ["deserialize", 0.2],
      ["other", 0.15],
    ]);
  });
});

describe("waiting-time apportioning, the field checks", () => {
  function transfer(
    journeys: TaskJourneys,
    clock: FakeClock,
    peer: string,
    keys: string[],
    network: number,
    deserialize: number,
  ) {
    const ledger = journeys.gather(peer, keys, 1000);
    ledger.meter("network", () => clock.advance(network));
    ledger.meter("deserialize", () => clock.advance(deserialize));
    ledger.end("ok");
  }

  it("two large dependencies from one peer, one after the other: waiting 10 s = network 8 + deserialize 2", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1", "a-2"]);
    journeys.transition("a-1", "released", "fetch");
    journeys.transition("a-2", "released", "fetch");
    transfer(journeys, clock, "tcp://peer:1", ["a-1"], 4, 1);
    transfer(journeys, clock, "tcp://peer:1", ["a-2"], 4, 1);
    journeys.transition("sum-1", "waiting", "ready");
    const waiting = journeys.explain("sum-1")!.children[0];
    expect(waiting.seconds).toBe(10);
    expect(Object.fromEntries(waiting.children.map((n) => [n.name, n.seconds]))).toEqual({
      network: 8,
      deserialize: 2,
    });
  });

  it("two dependencies from two peers at once: waiting 5 s = network 4 + deserialize 1", () => {
    const clock = new FakeClock(0);
    const journeys = worker(clock);
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1", "a-2"]);
    journeys.transition("a-1", "released", "fetch");
    journeys.transition("a-2", "released", "fetch");
    const first = journeys.gather("tcp://peer:1", ["a-1"], 1000);
    const second = journeys.gather("tcp://peer:2", ["a-2"], 1000);
    first.digest("network", 4);
    second.digest("network", 4);
    clock.advance(5);
    first.digest("deserialize", 1);
    second.digest("deserialize", 1);
    first.end("ok");
    second.end("ok");
    journeys.transition("sum-1", "waiting", "ready");
    const waiting = journeys.explain("sum-1")!.children[0];
    expect(waiting.seconds).toBe(5);
    expect(Object.fromEntries(waiting.children.map((n) => [n.name, n.seconds]))).toEqual({
      network: 4,
      deserialize: 1,
    });
  });
});

describe("activity ids", () => {
  it("interns each seeded activity once, with other at id 0", () => {
    const journeys = new TaskJourneys({ sampling: { ratio: 0 } });
    const { activities } = internalsOf(journeys)!.recorder;
    const names = activities.names;
    expect(new Set(names).size).toBe(names.length);
    expect(activities.id("other")).toBe(0);
    expect(activities.id("deserialize")).toBe(names.indexOf("deserialize"));
  });
});
