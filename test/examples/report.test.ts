import { describe, expect, it } from "vitest";
import { ExponentialHistogram } from "../../src/model/statistics/index.js";
import { aggregate, histogramQuantile, mergeHistograms, slowestLine } from "../../examples/cluster/report.js";
import type { HistogramData, TelemetryTotals, WorkerSummary } from "../../examples/cluster/protocol.js";

function data(histogram: ExponentialHistogram): HistogramData {
  return {
    count: histogram.count,
    sum: histogram.sum,
    scale: histogram.scale,
    zeroCount: histogram.zeroCount,
    offset: histogram.positiveOffset,
    counts: histogram.positiveBucketCounts(),
    min: histogram.min,
    max: histogram.max,
  };
}

function exactQuantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

describe("merging workers' duration histograms", () => {
  it("merges histograms of different scales like one histogram of all the values", () => {
    const fast = Array.from({ length: 500 }, (_, i) => 0.001 + i * 0.00002);
    const slow = Array.from({ length: 300 }, (_, i) => 0.5 * 1.01 ** i);
    const a = new ExponentialHistogram();
    // A smaller histogram reaches a coarser scale.
    const b = new ExponentialHistogram({ maxSize: 40 });
    fast.forEach((value) => a.record(value));
    slow.forEach((value) => b.record(value));
    expect(a.scale).toBeGreaterThan(b.scale);
    const merged = mergeHistograms([data(a), data(b), data(new ExponentialHistogram())]);
    expect(merged.count).toBe(800);
    expect(merged.sum).toBeCloseTo(a.sum + b.sum, 9);
    expect(merged.scale).toBe(b.scale);
    expect(merged.min).toBe(0.001);
    expect(merged.max).toBe(slow[299]);
    expect(merged.counts.reduce((sum, count) => sum + count, 0)).toBe(800);
    const all = [...fast, ...slow];
    for (const q of [0.1, 0.5, 0.6, 0.9, 0.99]) {
      const bound = 2 ** (2 ** -merged.scale) - 1;
      expect(Math.abs(histogramQuantile(merged, q) / exactQuantile(all, q) - 1)).toBeLessThanOrEqual(bound);
    }
    expect(histogramQuantile(merged, 1)).toBe(slow[299]);
  });

  it("counts zeros and answers NaN for nothing", () => {
    const h = new ExponentialHistogram();
    [0, 0, 0, 1, 2].forEach((value) => h.record(value));
    expect(histogramQuantile(mergeHistograms([data(h)]), 0.5)).toBe(0);
    expect(histogramQuantile(mergeHistograms([]), 0.5)).toBeNaN();
  });
});

describe("the cluster report", () => {
  it("sums per-prefix state times and activities across workers and keeps the slowest journeys", () => {
    const h = new ExponentialHistogram();
    [0.01, 0.02, 0.03].forEach((value) => h.record(value));
    const totals = (seconds: number): TelemetryTotals => ({
      durations: [{ prefix: "square", state: "executing", histogram: data(h) }],
      stateSeconds: [
        { prefix: "square", state: "executing", seconds },
        { prefix: "square", state: "waiting", seconds: 2 * seconds },
        { prefix: "arange", state: "flight", seconds: 1 },
      ],
      execute: { "thread-cpu": seconds, other: 0.5 },
      executeBytes: { "disk-read": 4096 },
      gather: { network: 1 },
      wait: [{ prefix: "square", activity: "network", seconds: 0.25 }],
      gatherBytes: { ok: 1000 },
      dropped: {},
    });
    const worker = (address: string, seconds: number, slowest: number): WorkerSummary => ({
      address,
      pid: 1,
      nthreads: 2,
      cpuSeconds: 1,
      counters: { computed: 3 },
      telemetry: totals(seconds),
      slowest: [{ key: `square-${slowest}`, seconds: slowest, breakdown: undefined }],
    });
    const report = aggregate([worker("tcp://a:1", 1, 5), worker("tcp://b:2", 3, 7)], undefined);
    expect(report.rows.map((row) => row.prefix)).toEqual(["square", "arange"]);
    expect(report.rows[0]).toMatchObject({ count: 6, stateSeconds: { executing: 4, waiting: 8 } });
    expect(report.rows[0].p50).toBeCloseTo(0.02, 3);
    expect(report.rows[1]).toMatchObject({ count: 0, stateSeconds: { flight: 2 } });
    expect(report.rows[1].p50).toBeNaN();
    expect(report.execute).toEqual({ "thread-cpu": 4, other: 1 });
    expect(report.executeBytes).toEqual({ "disk-read": 8192 });
    expect(report.gather).toEqual({ network: 2 });
    expect(report.wait).toEqual({ network: 0.5 });
    expect(report.waitByPrefix).toEqual({ square: { network: 0.5 } });
    expect(report.gatherBytes).toEqual({ ok: 2000 });
    expect(report.slowest.map((slow) => slow.key)).toEqual(["square-7", "square-5"]);
    expect(report.durations).toHaveLength(1);
    expect(report.durations[0].histogram.count).toBe(6);
  });

  it("names the slowest task when its trace was exported, else says why not and names the slowest traced one", () => {
    const tree = (key: string) => ({
      key,
      prefix: "sum",
      instance: "tcp://a:1",
      seconds: 1,
      kind: "compute",
      outcome: "memory",
      children: [],
    });
    const journey = (key: string, seconds: number, traced?: boolean) => ({
      key,
      seconds,
      breakdown: tree(key),
      traced,
    });
    const worker = (
      address: string,
      slowest: ReturnType<typeof journey>[],
      slowestTraced?: ReturnType<typeof journey>,
    ): WorkerSummary => ({
      address,
      pid: 1,
      nthreads: 2,
      cpuSeconds: 1,
      counters: {},
      telemetry: undefined,
      slowest,
      ...(slowestTraced === undefined ? {} : { slowestTraced }),
    });
    // The slowest traced journey of all workers, whichever worker's list it is in.
    const report = aggregate(
      [
        worker("tcp://a:1", [journey("sum-9", 0.9, false), journey("sum-4", 0.4, true)], journey("sum-4", 0.4, true)),
        worker("tcp://b:2", [journey("sum-7", 0.7, false)], journey("sum-6", 0.6, true)),
      ],
      undefined,
    );
    expect(report.slowestTraced?.key).toBe("sum-6");
    const untraced = slowestLine({ ...report, traceRatio: 0.01 });
    expect(untraced.line).toBe(
      "Slowest task sum-9 (900.0 ms) was not traced: not head-sampled (--trace-ratio 0.01) nor kept as slow by its worker (slower than its prefix's p99 there, judged after 32 journeys, at most 1% of them); slowest traced task: sum-6 (600.0 ms) (explain):",
    );
    expect(untraced.breakdown?.key).toBe("sum-6");
    expect(slowestLine({ slowest: [journey("sum-9", 0.9, true)], traceRatio: 0.01 })).toEqual({
      line: "Slowest task: sum-9 (900.0 ms), among the exported traces (explain):",
    });
    expect(slowestLine({ slowest: [journey("sum-9", 0.9, false)], traceRatio: 0 }).line).toBe(
      "Slowest task: sum-9 (900.0 ms), not traced: not head-sampled (--trace-ratio 0) nor kept as slow by its worker (slower than its prefix's p99 there, judged after 32 journeys, at most 1% of them); no task's trace was exported (explain):",
    );
    expect(slowestLine({ slowest: [journey("sum-9", 0.9, false)], traceRatio: "off" }).line).toBe(
      "Slowest task: sum-9 (900.0 ms), not traced (--trace-ratio off) (explain):",
    );
  });
});
