/**
 * A thin layer over mitata shared by every `bench/*.bench.ts`: run cases side by side in one
 * process, report medians per operation and ratios between cases, and hand the results to
 * `bench/run.ts` (through the file named by TASKJOURNEY_BENCH_REPORT) for its summary table.
 *
 * A case is either a function mitata calls and batches itself, or a `manual` function that does
 * its own untimed setup, times its operations itself and returns the elapsed nanoseconds; either
 * may do `ops` operations per call, and the harness reports per operation.
 */
import { writeFileSync } from "node:fs";
import { do_not_optimize, measure } from "mitata";

export { do_not_optimize };

/**
 * What the samples are timed with: wall-clock time (default), or with `--cpu-time` (or
 * TASKJOURNEY_BENCH_CLOCK=cpu) the process's CPU time, which a busy machine inflates far less
 * than wall time (resolution 1 µs per sample of thousands of calls; GC helper threads count).
 */
export const timedWith: "wall" | "cpu" =
  process.argv.includes("--cpu-time") || process.env.TASKJOURNEY_BENCH_CLOCK === "cpu" ? "cpu" : "wall";

/** Nanoseconds now, on the clock the samples are timed with (for `manual` cases). */
export const clockNs: () => number =
  timedWith === "cpu"
    ? () => {
        const usage = process.cpuUsage();
        return (usage.user + usage.system) * 1000;
      }
    : () => performance.now() * 1e6;

export interface BenchCase {
  name: string;
  /** `ops` operations per call (default 1); mitata batches the calls. */
  fn?: () => unknown;
  /** Does its own untimed setup, times `ops` operations and returns the elapsed nanoseconds. */
  manual?: () => number;
  /** Operations per call of `fn` or `manual` (default 1); results are per operation. */
  ops?: number;
  /** Target: the median per operation should be at most this many nanoseconds. */
  maxNs?: number;
}

export interface BenchRatio {
  name: string;
  /** Median of case `numerator` divided by the median of case `denominator`. */
  numerator: string;
  denominator: string;
  /** Target: at most (e.g. journey / clock floor ≤ 1.5). */
  max?: number;
  /** Target: at least (e.g. plain OTel / taskjourney ≥ 5). */
  min?: number;
}

export interface CaseResult {
  name: string;
  /** Nanoseconds per operation. */
  p25: number;
  median: number;
  p75: number;
  p99: number;
  mean: number;
  samples: number;
  maxNs?: number;
  met?: boolean;
}

export interface RatioResult {
  name: string;
  value: number;
  max?: number;
  min?: number;
  met?: boolean;
}

export interface SuiteResult {
  suite: string;
  runtime: string;
  cases: CaseResult[];
  ratios: RatioResult[];
  /** Free-form lines printed under the suite's table. */
  notes: string[];
  /** Named values for bench/run.ts's summary (e.g. heap before/after). */
  facts?: Record<string, string | number>;
}

export interface Suite {
  name: string;
  cases: BenchCase[];
  ratios?: BenchRatio[];
  notes?: string[];
  facts?: Record<string, string | number>;
}

const TIME = (ns: number): string =>
  !Number.isFinite(ns) ? String(ns) : ns < 1_000 ? `${ns.toFixed(1)} ns` : ns < 1_000_000 ? `${(ns / 1_000).toFixed(2)} µs` : `${(ns / 1_000_000).toFixed(2)} ms`;

export function formatNs(ns: number): string {
  return TIME(ns);
}

/** Renders rows as an aligned plain-text table; numbers right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (row: string[]): string =>
    row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? "" : met ? "yes" : "NO";
}

export function printSuite(result: SuiteResult, print: (line: string) => void = console.log): void {
  print(`\n== ${result.suite} (${result.runtime}) ==`);
  print(
    table(
      ["case", "median/op", "p25", "p75", "p99", "target", "met"],
      result.cases.map((c) => [
        c.name,
        TIME(c.median),
        TIME(c.p25),
        TIME(c.p75),
        TIME(c.p99),
        c.maxNs === undefined ? "" : `≤ ${TIME(c.maxNs)}`,
        verdict(c.met),
      ]),
    ),
  );
  if (result.ratios.length > 0) {
    print("");
    print(
      table(
        ["ratio (of medians)", "value", "target", "met"],
        result.ratios.map((r) => [
          r.name,
          `${r.value.toFixed(2)}×`,
          r.max !== undefined ? `≤ ${r.max}×` : r.min !== undefined ? `≥ ${r.min}×` : "",
          verdict(r.met),
        ]),
      ),
    );
  }
  const facts = Object.entries(result.facts ?? {});
  if (facts.length > 0) {
    print("");
    print(table(["fact", "value"], facts.map(([name, value]) => [name, String(value)])));
  }
  for (const note of result.notes) print(note);
}

/** Hands the result to bench/run.ts when it started this process. */
export function report(result: SuiteResult): void {
  const path = process.env.TASKJOURNEY_BENCH_REPORT;
  if (path !== undefined && path !== "") writeFileSync(path, JSON.stringify(result, null, 2));
}

/** Runs the cases side by side in this process, prints the table and reports the result. */
export async function runSuite(suite: Suite): Promise<SuiteResult> {
  if (typeof globalThis.gc !== "function") {
    console.warn("bench: run node with --expose-gc so mitata can collect garbage between cases");
  }
  const filter = process.env.TASKJOURNEY_BENCH_FILTER;
  const cases = suite.cases.filter((c) => filter === undefined || filter === "" || new RegExp(filter).test(c.name));
  const verbose = process.argv.includes("--verbose") || process.env.TASKJOURNEY_BENCH_VERBOSE === "1";
  const results: CaseResult[] = [];
  for (const benchCase of cases) {
    let stats: Awaited<ReturnType<typeof measure>>;
    if (benchCase.manual !== undefined) {
      const manual = benchCase.manual;
      stats = await measure(
        function* () {
          yield { manual };
        },
        { now: clockNs },
      );
    } else if (benchCase.fn !== undefined) {
      // Always batched (4,096 calls per sample): left to itself mitata times slow calls one by
      // one, and single calls of a few µs are below the CPU clock's resolution.
      stats = await measure(benchCase.fn, {
        now: clockNs,
        batch_threshold: Number.MAX_SAFE_INTEGER,
        warmup_threshold: Number.MAX_SAFE_INTEGER,
      });
    } else {
      throw new TypeError(`bench case "${benchCase.name}" has neither fn nor manual`);
    }
    const ops = benchCase.ops ?? 1;
    const median = stats.p50 / ops;
    const result: CaseResult = {
      name: benchCase.name,
      p25: stats.p25 / ops,
      median,
      p75: stats.p75 / ops,
      p99: stats.p99 / ops,
      mean: stats.avg / ops,
      samples: stats.samples.length,
      maxNs: benchCase.maxNs,
      met: benchCase.maxNs === undefined ? undefined : median <= benchCase.maxNs,
    };
    results.push(result);
    if (verbose) {
      console.log(`${benchCase.name}: median ${TIME(median)}/op over ${stats.samples.length} samples (${stats.ticks} calls)`);
    }
  }
  const ratios: RatioResult[] = [];
  for (const ratio of suite.ratios ?? []) {
    const numerator = results.find((r) => r.name === ratio.numerator);
    const denominator = results.find((r) => r.name === ratio.denominator);
    if (numerator === undefined || denominator === undefined) continue;
    const value = numerator.median / denominator.median;
    const met =
      ratio.max === undefined && ratio.min === undefined
        ? undefined
        : (ratio.max === undefined || value <= ratio.max) && (ratio.min === undefined || value >= ratio.min);
    ratios.push({ name: ratio.name, value, max: ratio.max, min: ratio.min, met });
  }
  const result: SuiteResult = {
    suite: suite.name,
    runtime: `node ${process.version} ${process.arch}, ${timedWith === "cpu" ? "CPU time" : "wall time"}`,
    cases: results,
    ratios,
    notes: suite.notes ?? [],
    facts: suite.facts,
  };
  printSuite(result);
  report(result);
  return result;
}

