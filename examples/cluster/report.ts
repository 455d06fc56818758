/**
 * The end-of-run summary: each process reads back what taskjourney measured through its public
 * metric producer (the same numbers the OTLP metrics carry), the scheduler merges them across
 * workers — exponential histograms merge exactly, like a metrics backend would — and prints the
 * per-prefix table, the activity breakdowns and the explain tree of the slowest task.
 */
import type { ComputationTotals, TaskJourneys } from "../../src/index.js";
import { formatActivityTable, formatPrefixTable, type PrefixRow } from "../../src/report.js";
import { histogramQuantile, mergeHistograms } from "../../src/report/histograms.js";
import type { HistogramData, SlowJourney, TelemetryTotals, WorkerSummary } from "./protocol.js";
import { taskjourney } from "./taskjourney.js";

interface Point {
  attributes: Record<string, unknown>;
  value: unknown;
}

/** Reads the metrics of `journeys` as of now (cumulative) into plain, serializable totals. */
export async function readTotals(journeys: TaskJourneys): Promise<TelemetryTotals> {
  const { resourceMetrics } = await journeys.metricProducer.collect();
  const totals: TelemetryTotals = {
    durations: [],
    stateSeconds: [],
    execute: {},
    executeBytes: {},
    gather: {},
    wait: [],
    gatherBytes: {},
    serve: {},
    serveBytes: {},
    gc: {},
    dropped: {},
    computations: journeys.computations(),
  };
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const points = metric.dataPoints as unknown as Point[];
      for (const { attributes, value } of points) {
        const prefix = String(attributes["task.prefix"] ?? "");
        const state = String(attributes["task.state"] ?? "");
        const activity = String(attributes["task.activity"] ?? "");
        switch (metric.descriptor.name) {
          case "task.state.duration": {
            const h = value as {
              count: number;
              sum: number;
              scale: number;
              zeroCount: number;
              positive: { offset: number; bucketCounts: number[] };
              min?: number;
              max?: number;
            };
            totals.durations.push({
              prefix,
              state,
              histogram: {
                count: h.count,
                sum: h.sum,
                scale: h.scale,
                zeroCount: h.zeroCount,
                offset: h.positive.offset,
                counts: [...h.positive.bucketCounts],
                min: h.min ?? NaN,
                max: h.max ?? NaN,
              },
            });
            break;
          }
          case "task.state.time":
            totals.stateSeconds.push({ prefix, state, seconds: value as number });
            break;
          case "task.execute.time":
            totals.execute[activity] = (totals.execute[activity] ?? 0) + (value as number);
            break;
          case "task.execute.size":
            totals.executeBytes[activity] = (totals.executeBytes[activity] ?? 0) + (value as number);
            break;
          case "task.gather.time":
            totals.gather[activity] = (totals.gather[activity] ?? 0) + (value as number);
            break;
          case "task.wait.time":
            totals.wait.push({ prefix, activity, seconds: value as number });
            break;
          case "task.gather.size":
            totals.gatherBytes[String(attributes["transfer.outcome"])] = value as number;
            break;
          case "task.serve.time":
            totals.serve![activity] = (totals.serve![activity] ?? 0) + (value as number);
            break;
          case "task.serve.size":
            totals.serveBytes![String(attributes["transfer.outcome"])] = value as number;
            break;
          case "v8js.gc.duration": {
            const h = value as { count: number; sum: number };
            totals.gc![String(attributes["v8js.gc.type"])] = { count: h.count, seconds: h.sum };
            break;
          }
          case "taskjourney.dropped":
            totals.dropped[String(attributes["reason"])] = value as number;
            break;
        }
      }
    }
  }
  return totals;
}

// Merging and quantiles of exponential histograms are the report's own (taskjourney/report builds
// the same tables from any application's metric files); the example re-exports them for its tests.
export { histogramQuantile, mergeHistograms } from "../../src/report/histograms.js";

export interface ClusterReport {
  /** Worker journeys per prefix: quantiles of executing, time by state. */
  rows: PrefixRow[];
  /** Worker state durations per (prefix, state), merged across workers: any quantile, or a plot. */
  durations: Array<{ prefix: string; state: string; histogram: HistogramData }>;
  /** Scheduler time per prefix and state (queued, processing, …), when the scheduler was traced. */
  schedulerRows: PrefixRow[];
  execute: Record<string, number>;
  /** task.execute.size by activity: bytes read and written by executions (spill files). */
  executeBytes: Record<string, number>;
  gather: Record<string, number>;
  wait: Record<string, number>;
  waitByPrefix: Record<string, Record<string, number>>;
  gatherBytes: Record<string, number>;
  /** The serving side of transfers (get_data answered for peers), by activity, and its bytes by outcome. */
  serve: Record<string, number>;
  serveBytes: Record<string, number>;
  /** GC pauses across workers: seconds by GC type. */
  gc: Record<string, number>;
  dropped: Record<string, number>;
  /** The scheduler's computations (one per graph submission), as the report's Computations section reads them. */
  computations: Array<ComputationTotals & { from: "scheduler" }>;
  slowest: SlowJourney[];
  /** The slowest compute journey whose trace a worker exported (`traced`), when any was. */
  slowestTraced?: SlowJourney;
  /** The run's --trace-ratio, for saying why the slowest task was not traced. */
  traceRatio?: number | "off";
  workers: Array<{ address: string; pid: number; cpuSeconds: number; counters: Record<string, number> }>;
}

function add(into: Record<string, number>, key: string, value: number): void {
  into[key] = (into[key] ?? 0) + value;
}

function rowsOf(totals: TelemetryTotals[], measured: string): PrefixRow[] {
  const prefixes = new Map<string, { histograms: HistogramData[]; stateSeconds: Record<string, number> }>();
  const entry = (prefix: string) => {
    let found = prefixes.get(prefix);
    if (found === undefined) {
      found = { histograms: [], stateSeconds: {} };
      prefixes.set(prefix, found);
    }
    return found;
  };
  for (const total of totals) {
    for (const { prefix, state, histogram } of total.durations)
      if (state === measured) entry(prefix).histograms.push(histogram);
    for (const { prefix, state, seconds } of total.stateSeconds) add(entry(prefix).stateSeconds, state, seconds);
  }
  const rows: PrefixRow[] = [];
  for (const [prefix, { histograms, stateSeconds }] of prefixes) {
    const merged = mergeHistograms(histograms);
    rows.push({
      prefix,
      count: merged.count,
      p50: histogramQuantile(merged, 0.5),
      p90: histogramQuantile(merged, 0.9),
      p99: histogramQuantile(merged, 0.99),
      stateSeconds,
    });
  }
  // Prefixes that ran first come first; fetched-only prefixes (count 0) after them.
  return rows.sort((a, b) => (b.count > 0 ? 1 : 0) - (a.count > 0 ? 1 : 0));
}

function mergedDurations(
  totals: TelemetryTotals[],
): Array<{ prefix: string; state: string; histogram: HistogramData }> {
  const groups = new Map<string, { prefix: string; state: string; histograms: HistogramData[] }>();
  for (const total of totals) {
    for (const { prefix, state, histogram } of total.durations) {
      const id = `${prefix}\u0000${state}`;
      let group = groups.get(id);
      if (group === undefined) groups.set(id, (group = { prefix, state, histograms: [] }));
      group.histograms.push(histogram);
    }
  }
  return [...groups.values()].map(({ prefix, state, histograms }) => ({
    prefix,
    state,
    histogram: mergeHistograms(histograms),
  }));
}

export function aggregate(workers: readonly WorkerSummary[], scheduler: TelemetryTotals | undefined): ClusterReport {
  const totals = workers.flatMap((worker) => (worker.telemetry === undefined ? [] : [worker.telemetry]));
  const report: ClusterReport = {
    rows: rowsOf(totals, "executing"),
    durations: mergedDurations(totals),
    schedulerRows: scheduler === undefined ? [] : rowsOf([scheduler], "processing"),
    execute: {},
    executeBytes: {},
    gather: {},
    wait: {},
    waitByPrefix: {},
    gatherBytes: {},
    serve: {},
    serveBytes: {},
    gc: {},
    dropped: {},
    computations: (scheduler?.computations ?? []).map((computation) => ({ ...computation, from: "scheduler" })),
    slowest: workers
      .flatMap((worker) => worker.slowest)
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 5),
    ...slowestTracedOf(workers),
    workers: workers.map((worker) => ({
      address: worker.address,
      pid: worker.pid,
      cpuSeconds: worker.cpuSeconds,
      counters: worker.counters,
    })),
  };
  for (const total of [...totals, ...(scheduler === undefined ? [] : [scheduler])]) {
    for (const [reason, count] of Object.entries(total.dropped)) add(report.dropped, reason, count);
  }
  for (const total of totals) {
    for (const [activity, seconds] of Object.entries(total.execute)) add(report.execute, activity, seconds);
    for (const [activity, bytes] of Object.entries(total.executeBytes)) add(report.executeBytes, activity, bytes);
    for (const [activity, seconds] of Object.entries(total.gather)) add(report.gather, activity, seconds);
    for (const { prefix, activity, seconds } of total.wait) {
      add(report.wait, activity, seconds);
      add((report.waitByPrefix[prefix] ??= {}), activity, seconds);
    }
    for (const [outcome, bytes] of Object.entries(total.gatherBytes)) add(report.gatherBytes, outcome, bytes);
    for (const [activity, seconds] of Object.entries(total.serve ?? {})) add(report.serve, activity, seconds);
    for (const [outcome, bytes] of Object.entries(total.serveBytes ?? {})) add(report.serveBytes, outcome, bytes);
    for (const [type, { seconds }] of Object.entries(total.gc ?? {})) add(report.gc, type, seconds);
  }
  return report;
}

/** The text printed at the end of a run. */
export function formatReport(report: ClusterReport): string {
  const sections: string[] = [];
  sections.push(
    formatPrefixTable(report.rows, {
      states: statesOf(report.rows, ["waiting", "fetch", "flight", "missing", "ready", "executing", "long-running"]),
    }),
  );
  if (report.schedulerRows.length > 0) {
    sections.push(
      "On the scheduler (the duration column is processing: assignment to result):\n" +
        formatPrefixTable(report.schedulerRows, {
          durationOf: "processing",
          states: statesOf(report.schedulerRows, ["waiting", "queued", "no-worker", "processing"]),
        }),
    );
  }
  const executeBytes = Object.entries(report.executeBytes)
    .map(([activity, bytes]) => `${activity} ${taskjourney.formatBytes(bytes)}`)
    .join(", ");
  sections.push(formatActivityTable(`execute${executeBytes === "" ? "" : ` (${executeBytes})`}`, report.execute));
  const transferred = Object.entries(report.gatherBytes)
    .map(([outcome, bytes]) => `${taskjourney.formatBytes(bytes)} ${outcome}`)
    .join(", ");
  sections.push(formatActivityTable(`gather${transferred === "" ? "" : ` (${transferred})`}`, report.gather));
  const served = Object.entries(report.serveBytes)
    .map(([outcome, bytes]) => `${taskjourney.formatBytes(bytes)} ${outcome}`)
    .join(", ");
  if (Object.keys(report.serve).length > 0)
    sections.push(formatActivityTable(`serve (get_data for peers${served === "" ? "" : `: ${served}`})`, report.serve));
  sections.push(formatActivityTable("wait (dependencies)", report.wait));
  if (Object.keys(report.gc).length > 0)
    sections.push(formatActivityTable("GC pauses (v8js.gc.duration, all workers)", report.gc));
  const slowest = report.slowest[0];
  if (slowest !== undefined && slowest.breakdown !== undefined) {
    const { line, breakdown } = slowestLine(report);
    sections.push(`${line}\n${taskjourney.formatBreakdown(breakdown ?? slowest.breakdown)}`);
  }
  const counters = report.workers
    .map((worker) => {
      const c = worker.counters;
      return `  ${worker.address}  pid ${worker.pid}: ${c.computed ?? 0} computed, ${c.keysFetched ?? 0} fetched in ${c.gathers ?? 0} gather_dep (${c.busy ?? 0} busy), ${c.spilled ?? 0} spilled, ${c.unspilled ?? 0} unspilled, ${c.seceded ?? 0} seceded${compression(c)}`;
    })
    .join("\n");
  sections.push(`Workers:\n${counters}`);
  const dropped = Object.entries(report.dropped);
  if (dropped.length > 0)
    sections.push(`taskjourney dropped inputs: ${dropped.map(([reason, count]) => `${reason} ${count}`).join(", ")}`);
  if (report.computations.length > 0)
    sections.push(
      `Computations (the scheduler's; task-seconds by state):\n${report.computations
        .map((c) => {
          const seconds = Object.entries(c.seconds)
            .map(([state, value]) => `${state} ${taskjourney.formatSeconds(value)}`)
            .join(", ");
          return `  ${c.name}: ${c.tasks} tasks${c.failed > 0 ? `, ${c.failed} failed` : ""}${c.live > 0 ? `, ${c.live} live` : ""}, wall ${taskjourney.formatSeconds(c.wall)}; ${seconds}`;
        })
        .join("\n")}`,
    );
  return sections.join("\n\n");
}

/** The states of `preferred` that some row spent time in. */
function statesOf(rows: readonly PrefixRow[], preferred: readonly string[]): string[] {
  return preferred.filter((state) => rows.some((row) => (row.stateSeconds[state] ?? 0) > 0));
}

/** A worker's compression of get_data values, bytes in and out: "; compress 1.2 MiB → 300.0 KiB, decompress …". */
function compression(c: Record<string, number>): string {
  const part = (name: string, bytesIn: number | undefined, bytesOut: number | undefined) =>
    (bytesIn ?? 0) > 0
      ? `, ${name} ${taskjourney.formatBytes(bytesIn!)} → ${taskjourney.formatBytes(bytesOut ?? 0)}`
      : "";
  return part("compress", c.compressIn, c.compressOut) + part("decompress", c.decompressIn, c.decompressOut);
}

function slowestTracedOf(workers: readonly WorkerSummary[]): Pick<ClusterReport, "slowestTraced"> {
  let traced: SlowJourney | undefined;
  for (const worker of workers)
    if (worker.slowestTraced !== undefined && (traced === undefined || worker.slowestTraced.seconds > traced.seconds))
      traced = worker.slowestTraced;
  return traced === undefined ? {} : { slowestTraced: traced };
}

/**
 * The line over the slowest task's tree: the slowest task when its trace was exported (one can
 * look at it); else why it was not, and the slowest task whose trace was, whose tree follows.
 * `breakdown` is the tree to print when it is not the slowest's.
 */
export function slowestLine(report: Pick<ClusterReport, "slowest" | "slowestTraced" | "traceRatio">): {
  line: string;
  breakdown?: SlowJourney["breakdown"];
} {
  const slowest = report.slowest[0];
  const seconds = (journey: SlowJourney) => taskjourney.formatSeconds(journey.seconds);
  if (slowest.traced === true)
    return { line: `Slowest task: ${slowest.key} (${seconds(slowest)}), among the exported traces (explain):` };
  if (report.traceRatio === "off" || slowest.traced === undefined)
    return {
      line: `Slowest task: ${slowest.key} (${seconds(slowest)}), not traced (${report.traceRatio === "off" ? "--trace-ratio off" : "traces off"}) (explain):`,
    };
  const why = `not head-sampled (--trace-ratio ${report.traceRatio ?? "0.01"}) nor kept as slow by its worker (slower than its prefix's p99 there, judged after 32 journeys, at most 1% of them)`;
  const traced = report.slowestTraced;
  if (traced === undefined || traced.breakdown === undefined)
    return {
      line: `Slowest task: ${slowest.key} (${seconds(slowest)}), not traced: ${why}; no task's trace was exported (explain):`,
    };
  return {
    line: `Slowest task ${slowest.key} (${seconds(slowest)}) was not traced: ${why}; slowest traced task: ${traced.key} (${seconds(traced)}) (explain):`,
    breakdown: traced.breakdown,
  };
}
