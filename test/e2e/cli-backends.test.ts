/**
 * `taskjourney explain` and `report` reading the backends users run: a NodeSDK app
 * (test/fixtures/backends-app.ts), two processes of it, exports the same journeys over OTLP to the
 * real Collector (and from it to Jaeger and, by remote write, Prometheus) and to OTLP/JSON files;
 * then the command gives from `--jaeger` and `--prometheus` what it gives from the files:
 * each key's tree, and the report's tables, breakdowns, counts, failures and slowest journeys.
 *
 * Exact but for what Prometheus' data model does not keep: a native histogram holds at most
 * scale 8 and no min or max, so the report's quantiles are held to the files' histograms at
 * that scale without min and max (src/report/prometheus.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, runScript } from "../helpers/run.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBreakdown, type Breakdown, type ComputationTotals } from "../../src/index.js";
import { readBackends } from "../../src/report/from-backends.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import type { ExponentialBuckets, MetricPoint } from "../../src/report/otlp-metrics.js";
import { backendsEnv, pollUntil, promQuery } from "./helpers.js";

const APP = fileURLToPath(new URL("../fixtures/backends-app.ts", import.meta.url));
/** Its own service.name, so that nothing else in the backends (other tests, earlier runs) is read. */
const SERVICE = `taskjourney-e2e-cli-${process.pid}-${Date.now()}`;
const PROCESSES = [
  ["queue-1", "0"],
  ["queue-2", "100"],
] as const;

function runApp(
  cwd: string,
  args: readonly string[],
  endpoint: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")),
  );
  Object.assign(env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_SERVICE_NAME: SERVICE,
    // Remote write keeps cumulative series only (the SDK's default), said aloud.
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "cumulative",
  });
  return runScript(APP, args, { env, cwd, timeoutMs: 90_000 });
}

const cli = runCli;

/** A histogram as Prometheus keeps it: at most scale 8 (buckets merged, as a coarser scale's), no min or max. */
function asPrometheusKeepsIt(h: ExponentialBuckets): ExponentialBuckets {
  const shift = Math.max(0, h.scale - 8);
  const divisor = 2 ** shift;
  const low = Math.floor(h.offset / divisor);
  const counts: number[] = [];
  h.counts.forEach((count, i) => {
    const slot = Math.floor((h.offset + i) / divisor) - low;
    counts[slot] = (counts[slot] ?? 0) + count;
  });
  return {
    ...h,
    scale: h.scale - shift,
    offset: low,
    counts: Array.from(counts, (count) => count ?? 0),
    min: NaN,
    max: NaN,
  };
}

describe("explain and report from Jaeger and Prometheus give what they give from the files", () => {
  let cwd: string;
  let otlp: string;
  let jaeger: string;
  let prometheus: string;
  const explained: Record<string, Breakdown> = {};

  beforeAll(async () => {
    const env = backendsEnv();
    jaeger = env.JAEGER_QUERY_URL;
    prometheus = env.PROMETHEUS_URL;
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-cli-"));
    otlp = path.join(cwd, "otlp");
    for (const args of PROCESSES) {
      const result = await runApp(cwd, args, env.OTEL_EXPORTER_OTLP_ENDPOINT);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      Object.assign(explained, JSON.parse(result.stdout) as Record<string, Breakdown>);
    }
    expect(Object.keys(explained)).toHaveLength(24);
    // Every job's trace in Jaeger (after the Collector's tail-sampling wait), every series in Prometheus.
    await pollUntil(
      "every job's trace in Jaeger",
      async () => {
        const read = await readBackends({
          jaeger,
          service: SERVICE,
          sinceMs: 3_600_000,
          limit: 1000,
          timeoutMs: 10_000,
          maxBytes: 1 << 26,
        });
        return read.spans.filter((span) => span.name.startsWith("task ")).length === 24 ? true : undefined;
      },
      60_000,
    );
    const fromFiles = readTelemetryFiles([otlp]).metrics;
    for (const [metric, name] of [
      ["task.state.time", "task_state_time_seconds_total"],
      ["task.computation.tasks", "task_computation_tasks_total"],
    ]) {
      const series = fromFiles.filter((point) => point.metric === metric).length;
      await pollUntil(
        `the ${series} ${metric} series in Prometheus`,
        async () =>
          (await promQuery(prometheus, `last_over_time(${name}{service_name="${SERVICE}"}[1h])`)).length === series
            ? true
            : undefined,
        60_000,
      );
    }
  }, 240_000);
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it("explain <key> --jaeger prints each key's tree as from the files, and as the app's explain() gave it", async () => {
    // Spans only: Jaeger has no metrics, so its computation line has no totals (the trace files alone neither).
    const traces = PROCESSES.map(([instance]) => path.join(otlp, `traces-worker-${instance}.jsonl`));
    for (const key of Object.keys(explained)) {
      const fromFiles = await cli("explain", key, ...traces);
      const fromJaeger = await cli("explain", key, "--jaeger", jaeger, "--service", SERVICE);
      expect(fromJaeger.stderr, key).toBe("");
      expect(fromJaeger.code, key).toBe(0);
      expect(fromJaeger.stdout, key).toBe(fromFiles.stdout);
      expect(fromJaeger.stdout, key).toBe(`${formatBreakdown({ ...explained[key], computationTotals: undefined })}\n`);
      expect(fromJaeger.stdout, key).toContain(`\ncomputation ${explained[key].computation}\n`);
    }
    // And without --service: Jaeger's services are listed and each searched (other services' load-4, from other
    // runs against these backends, may be there too).
    const all = await cli("explain", "load-4", "--jaeger", jaeger, "--all", "--json");
    expect(all.code).toBe(0);
    const everywhere = JSON.parse(all.stdout) as Breakdown[];
    for (const breakdown of JSON.parse(
      (await cli("explain", "load-4", ...traces, "--all", "--json")).stdout,
    ) as Breakdown[])
      expect(everywhere).toContainEqual(breakdown);
  });

  it("explain from the files with their metrics: a computation of one process has the totals its explain() gave", async () => {
    for (const key of Object.keys(explained).filter((key) => explained[key].computation !== "batch-a")) {
      const fromFiles = await cli("explain", key, otlp);
      expect(fromFiles.code, key).toBe(0);
      expect(fromFiles.stdout, key).toBe(`${formatBreakdown(explained[key])}\n`);
      expect(fromFiles.stdout, key).toMatch(/\ncomputation queue-\d-b: 6 tasks/);
    }
  });

  it("report --jaeger --prometheus: the same tables, breakdowns, counts, failures and slowest journeys as from the files", async () => {
    const files = readTelemetryFiles([otlp]);
    const backends = await readBackends({
      jaeger,
      prometheus,
      service: SERVICE,
      sinceMs: 3_600_000,
      limit: 1000,
      timeoutMs: 10_000,
      maxBytes: 1 << 26,
    });
    expect(backends.warnings).toEqual([]);
    const options = { generatedAt: "now", title: "t" };
    const fromBackends = reportDataFromTelemetry(
      { ...backends, summaries: [], files: backends.sources },
      { ...options, inputs: backends.sources.join(", ") },
    );
    // The files' histograms as Prometheus keeps them; everything else as the files hold it.
    const kept: MetricPoint[] = files.metrics.map((point) =>
      point.exponential === undefined ? point : { ...point, exponential: asPrometheusKeepsIt(point.exponential) },
    );
    const fromFiles = reportDataFromTelemetry({ ...files, metrics: kept }, options);
    const { description: _backends, ...same } = fromBackends;
    const { description: _files, ...expected } = fromFiles;
    expect(JSON.parse(JSON.stringify(same))).toEqual(JSON.parse(JSON.stringify(expected)));
    // Timelines included, not vacuously: the kept traces (the 5 slowest jobs', the 4 failed ones'),
    // each drawn from the spans Jaeger returned as from the files, bar for bar, a lane per process.
    const timelines = fromBackends.keptTraces!.timelines;
    expect(timelines.length).toBeGreaterThanOrEqual(5);
    expect(timelines.every((timeline) => timeline.bars.length > 0)).toBe(true);
    expect(timelines.flatMap((timeline) => timeline.lanes.map((lane) => lane.name))).toContain("queue-2");
    // The Computations section, not vacuously: read back from task_computation_* in Prometheus, equal
    // (above) to the files' and to what the two processes' explain() said of each: batch-a summed
    // over both, each one's own as it said.
    // By computation, each process's totals (every key of it in that process says the same).
    const said = new Map<string, Map<string, ComputationTotals>>();
    for (const breakdown of Object.values(explained)) {
      const totals = breakdown.computationTotals!;
      const of = said.get(totals.name) ?? new Map<string, ComputationTotals>();
      of.set(breakdown.instance, totals);
      said.set(totals.name, of);
    }
    const sum = (records: Array<Record<string, number>>) => {
      const out: Record<string, number> = {};
      for (const record of records)
        for (const [name, value] of Object.entries(record)) out[name] = (out[name] ?? 0) + value;
      return out;
    };
    const expectedComputations = [...said.entries()]
      .map(([name, byProcess]) => [name, [...byProcess.values()]] as const)
      .map(([name, processes]) => ({
        name,
        tasks: processes.reduce((total, totals) => total + totals.tasks, 0),
        live: 0,
        failed: processes.reduce((total, totals) => total + totals.failed, 0),
        ended: sum(processes.map((totals) => totals.ended)),
        seconds: sum(processes.map((totals) => totals.seconds)),
        wall: Math.max(...processes.map((totals) => totals.wall)),
        from: "workers",
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect([...said.get("batch-a")!.keys()].sort()).toEqual(["queue-1", "queue-2"]);
    expect(expectedComputations.map(({ name, tasks }) => [name, tasks])).toEqual([
      ["batch-a", 12],
      ["queue-1-b", 6],
      ["queue-2-b", 6],
    ]);
    // Sums of eighths of a second, and walls between them: exact.
    expect(fromBackends.computations).toEqual(expectedComputations);
    // Under the names collector/README.md gives them.
    for (const name of [
      "task_computation_time_seconds_total",
      "task_computation_tasks_total",
      "task_computation_active",
      "task_computation_wall_seconds",
    ]) {
      const samples = await promQuery(prometheus, `last_over_time(${name}{service_name="${SERVICE}"}[1h])`);
      expect(samples.length, name).toBeGreaterThan(0);
      expect(new Set(samples.map((sample) => sample.metric.task_computation))).toEqual(
        new Set(["batch-a", "queue-1-b", "queue-2-b"]),
      );
    }
    expect(fromBackends.description).toBe(
      `from the metrics of 2 processes and 24 sampled journeys' spans, Jaeger at ${jaeger} (24 traces of service ${SERVICE}), Prometheus at ${prometheus} (${backends.metrics.length} series of service ${SERVICE})`,
    );
    // What the data holds: 24 jobs of 3 prefixes, 4 failed, each with why.
    expect(fromBackends.prefixes.map((row) => row.count).reduce((a, b) => a + b)).toBe(24);
    expect(fromBackends.failureCounts).toEqual({ "worker:error": 4 });
    expect(fromBackends.failures!.map((failure) => failure.error).sort()).toEqual([
      "Error: bad row 4 in queue-1",
      "Error: bad row 4 in queue-2",
      "Error: bad row 9 in queue-1",
      "Error: bad row 9 in queue-2",
    ]);

    // Unscaled, the quantiles are within one bucket of scale 8 of the files' (a factor 2^(1/256)).
    const exact = reportDataFromTelemetry(files, options);
    for (const [i, row] of fromBackends.prefixes.entries())
      for (const q of ["p50", "p90", "p99"] as const) {
        const ratio = row[q] / exact.prefixes[i][q];
        expect(ratio, `${row.prefix} ${q}`).toBeGreaterThan(2 ** (-1 / 256));
        expect(ratio, `${row.prefix} ${q}`).toBeLessThan(2 ** (1 / 256));
      }

    // The command writes the page from the backends alone.
    const out = path.join(cwd, "report.html");
    const result = await cli(
      "report",
      "--jaeger",
      jaeger,
      "--prometheus",
      prometheus,
      "--service",
      SERVICE,
      "--out",
      out,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const page = fs.readFileSync(out, "utf8");
    expect(page.includes('<td class="why">Error: bad row 9 in queue-2</td>')).toBe(true);
    expect(page).toContain(`<div class="chart timeline" id="chart-timeline-${timelines.length - 1}"></div>`);
  });
});
