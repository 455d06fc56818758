/**
 * The report from what an application exported: two worker processes and a scheduler (not the
 * cluster example) run journeys on fake clocks through taskjourney/sdk into `fileDirectory`,
 * and the report rebuilt from those files must show the numbers the journeys recorded.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Breakdown } from "../../src/index.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { mergeHistograms, histogramQuantile } from "../../src/report/histograms.js";
import { runApplication } from "../helpers/application.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-from-telemetry-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

describe("reportDataFromTelemetry: an application's files", () => {
  let explained: Breakdown[];
  beforeAll(async () => {
    ({ explained } = await runApplication(path.join(directory, "cumulative"), "cumulative"));
    await runApplication(path.join(directory, "delta"), "delta");
  }, 60_000);

  for (const temporality of ["cumulative", "delta"] as const) {
    it(`per-prefix tables, breakdowns and the slowest journeys from the metrics and spans (${temporality})`, () => {
      const telemetry = readTelemetryFiles([path.join(directory, temporality)]);
      expect(telemetry.files.map((file) => path.basename(file))).toEqual([
        "metrics-scheduler-tcp_s_1.jsonl",
        "metrics-worker-tcp_w1_1.jsonl",
        "metrics-worker-tcp_w2_1.jsonl",
        "traces-scheduler-tcp_s_1.jsonl",
        "traces-worker-tcp_w1_1.jsonl",
        "traces-worker-tcp_w2_1.jsonl",
      ]);
      const data = reportDataFromTelemetry(telemetry, { title: "app" });
      expect(data.title).toBe("app");
      expect(data.description).toMatch(/^from the metrics of 3 processes and \d+ sampled journeys' spans, 6 files$/);
      // Dask's states: the page's defaults (executing / processing quantiles, lifecycle column order).
      expect([data.durationOf, data.schedulerDurationOf, data.states, data.schedulerStates]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      const inc = data.prefixes.find((row) => row.prefix === "inc")!;
      expect(inc.count).toBe(2);
      expect(inc.stateSeconds.executing).toBeCloseTo(6, 9);
      expect(inc.stateSeconds.waiting).toBeCloseTo(2, 9);
      expect(inc.stateSeconds.ready).toBeCloseTo(0.5, 9);
      // Quantiles of the two executions, 2 s and 4 s, from the histograms merged across the workers:
      // within the exponential histogram's relative error at the merged scale.
      expect(Math.abs(inc.p50 / 2 - 1)).toBeLessThan(1e-3);
      expect(Math.abs(inc.p99 / 4 - 1)).toBeLessThan(1e-3);
      expect(data.prefixes.find((row) => row.prefix === "x")!.stateSeconds.flight).toBeCloseTo(1, 9);
      expect(data.execute.deserialize).toBeCloseTo(0.25, 9);
      expect(data.execute.other).toBeCloseTo(1.75 + 4, 9);
      expect(data.gather.network).toBeCloseTo(1, 9);
      // The worker's waiting only: the scheduler's task.wait.time is not mixed in.
      expect(Object.keys(data.wait)).toEqual(["inc"]);
      expect(data.wait.inc.network).toBeCloseTo(1, 9);
      expect(data.schedulerPrefixes).toEqual([
        expect.objectContaining({
          prefix: "inc",
          count: 1,
          stateSeconds: expect.objectContaining({ processing: 3.5 }),
        }),
      ]);
      expect(data.slowest!.map((breakdown) => breakdown.key)).toEqual(["inc-2", "inc-1"]);
      if (temporality === "cumulative") {
        expect(data.slowest![0].children.map((node) => [node.name, node.seconds])).toEqual(
          explained[1].children.map((node) => [node.name, node.seconds]),
        );
        expect(data.slowest![1].children).toEqual(explained[0].children);
      }
    });
  }

  it("without metrics: the tables from the sampled journeys' spans, saying so", () => {
    const files = ["traces-worker-tcp_w1_1.jsonl", "traces-worker-tcp_w2_1.jsonl"].map((name) =>
      path.join(directory, "cumulative", name),
    );
    const data = reportDataFromTelemetry(readTelemetryFiles(files));
    expect(data.description).toMatch(
      /^from the spans of 3 sampled journeys \(no taskjourney metrics among the inputs: the tables count these journeys only\), 2 files$/,
    );
    const inc = data.prefixes.find((row) => row.prefix === "inc")!;
    expect([inc.count, inc.p50, inc.p90, inc.p99]).toEqual([2, 2, 4, 4]);
    expect(inc.stateSeconds.executing).toBeCloseTo(6, 9);
    expect(data.execute.deserialize).toBeCloseTo(0.25, 9);
    expect(data.gather.network).toBeCloseTo(1, 9);
    expect(data.wait.inc.network).toBeCloseTo(1, 9);
  });

  it("a summary among the inputs is taken as it is, the spans adding its slowest journeys", () => {
    const summary = path.join(directory, "summary.json");
    fs.writeFileSync(
      summary,
      JSON.stringify(
        {
          title: "from summary",
          generatedAt: "now",
          prefixes: [{ prefix: "p", count: 1, p50: 1, p90: 1, p99: 1, stateSeconds: { executing: 1 } }],
          execute: {},
          gather: {},
          wait: {},
        },
        null,
        2,
      ),
    );
    const data = reportDataFromTelemetry(readTelemetryFiles([summary, path.join(directory, "cumulative")]));
    expect(data.title).toBe("from summary");
    expect(data.prefixes.map((row) => row.prefix)).toEqual(["p"]);
    expect(data.slowest!.map((breakdown) => breakdown.key)).toEqual(["inc-2", "inc-1"]);
    expect(() => reportDataFromTelemetry(readTelemetryFiles([summary, summary]))).not.toThrow();
    const other = path.join(directory, "other.json");
    fs.copyFileSync(summary, other);
    expect(() => reportDataFromTelemetry(readTelemetryFiles([summary, other]))).toThrow(
      /several summaries among the inputs/,
    );
  });

  it("without metrics (explain), metrics requests are not parsed and one cut off is not told; the traces' are", () => {
    const killed = path.join(directory, "killed");
    fs.mkdirSync(killed, { recursive: true });
    for (const name of ["metrics-worker-tcp_w1_1.jsonl", "traces-worker-tcp_w1_1.jsonl"]) {
      const whole = fs.readFileSync(path.join(directory, "cumulative", name), "utf8");
      fs.writeFileSync(path.join(killed, name), `${whole}${whole.slice(0, 300)}`);
    }
    const withMetrics = readTelemetryFiles([killed]);
    expect(withMetrics.skipped).toHaveLength(2);
    const spansOnly = readTelemetryFiles([killed], { metrics: false });
    expect(spansOnly.metrics).toEqual([]);
    expect(spansOnly.spans.length).toBe(withMetrics.spans.length);
    expect(spansOnly.unused).toEqual([]);
    expect(spansOnly.skipped).toEqual([expect.stringContaining("traces-worker-tcp_w1_1.jsonl: line ")]);
  });
});

describe("mergeHistograms", () => {
  it("merges at the coarsest scale and bounds the buckets a crafted offset could ask for", () => {
    const merged = mergeHistograms([
      { count: 2, sum: 3, min: 1, max: 2, scale: 1, zeroCount: 0, offset: 0, counts: [1, 0, 1] },
      { count: 1, sum: 1, min: 1, max: 1, scale: 0, zeroCount: 0, offset: 0, counts: [1] },
    ]);
    expect(merged).toMatchObject({ count: 3, scale: 0, offset: 0, counts: [2, 1], min: 1, max: 2 });
    expect(histogramQuantile(merged, 0.5)).toBe(Math.min(Math.max(2 ** 0.5, 1), 2));
    const far = mergeHistograms([
      { count: 1, sum: 1, min: 1, max: 1, scale: 20, zeroCount: 0, offset: -1e9, counts: [1] },
      { count: 1, sum: 1, min: 1, max: 1, scale: 20, zeroCount: 0, offset: 1e9, counts: [1] },
      { count: 1, sum: 1, min: 1, max: 1, scale: 99, zeroCount: 0, offset: 0, counts: [1] },
    ]);
    expect(far.count).toBe(2);
    expect(far.counts.length).toBeLessThanOrEqual(4096);
    expect(far.counts.reduce((sum, count) => sum + count, 0)).toBe(2);
  });
});
