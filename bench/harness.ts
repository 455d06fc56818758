/**
 * A thin layer over mitata shared by the `bench/*.bench.ts` files: run cases side by side in one
 * process, report medians per operation and ratios between cases, and hand the results to
 * `bench/run.ts` (through the file named by TASKJOURNEY_BENCH_REPORT) for its summary table.
 *
 * A case is either a function mitata calls and batches itself, or a `manual` function that does
 * its own untimed setup, times its operations itself and returns the elapsed nanoseconds; either
 * may do `ops` operations per call, and the harness reports per operation.
 *
 * Options (flags after the file name, or environment variables):
 *   --cpu-time      TASKJOURNEY_BENCH_CLOCK=cpu   time samples with the process's CPU time, which a
 *                                                 busy machine inflates far less than wall time
 *   --interleaved   TASKJOURNEY_BENCH_MODE=interleaved   instead of mitata's one case after another,
 *                   rounds that take one sample of every case in turn, so interference from other
 *                   processes lands on all cases alike and the ratios stay meaningful
 *   --verbose       TASKJOURNEY_BENCH_VERBOSE=1   a line per case as it finishes
 *   TASKJOURNEY_BENCH_FILTER=<regexp>             only the cases whose names match
 */
import { writeFileSync } from "node:fs";
import { do_not_optimize, measure } from "mitata";

export { do_not_optimize };

export const timedWith: "wall" | "cpu" =
  process.argv.includes("--cpu-time") || process.env.TASKJOURNEY_BENCH_CLOCK === "cpu" ? "cpu" : "wall";

export const sampling: "mitata" | "interleaved" =
  process.argv.includes("--interleaved") || process.env.TASKJOURNEY_BENCH_MODE === "interleaved"
    ? "interleaved"
    : "mitata";

/**
 * Nanoseconds now, on the clock the samples are timed with (for `manual` cases). The CPU clock
 * has a resolution of 1 µs, so samples are batches of calls lasting a millisecond or so; it
 * counts every thread of the process (GC helpers included).
 */
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
  /** Does its own untimed setup, times its operations and returns the elapsed nanoseconds. */
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

export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  if (ns < 1_000) return `${ns.toFixed(1)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

/** Renders rows as an aligned plain-text table: the first `textColumns` columns left-aligned, the rest right-aligned. */
export function table(header: string[], rows: string[][], textColumns = 1): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (row: string[]): string =>
    row
      .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? "" : met ? "yes" : "NO";
}

export function ratioTarget(ratio: { max?: number; min?: number }): string {
  return ratio.max !== undefined ? `≤ ${ratio.max}×` : ratio.min !== undefined ? `≥ ${ratio.min}×` : "";
}

export function printSuite(result: SuiteResult, print: (line: string) => void = console.log): void {
  print(`\n== ${result.suite} (${result.runtime}) ==`);
  print(
    table(
      ["case", "median/op", "p25", "p75", "p99", "target", "met"],
      result.cases.map((c) => [
        c.name,
        formatNs(c.median),
        formatNs(c.p25),
        formatNs(c.p75),
        formatNs(c.p99),
        c.maxNs === undefined ? "" : `≤ ${formatNs(c.maxNs)}`,
        verdict(c.met),
      ]),
    ),
  );
  if (result.ratios.length > 0) {
    print("");
    print(
      table(
        ["ratio (of medians)", "value", "target", "met"],
        result.ratios.map((r) => [r.name, `${r.value.toFixed(2)}×`, ratioTarget(r), verdict(r.met)]),
      ),
    );
  }
  const facts = Object.entries(result.facts ?? {});
  if (facts.length > 0) {
    print("");
    print(
      table(
        ["fact", "value"],
        facts.map(([name, value]) => [name, String(value)]),
      ),
    );
  }
  for (const note of result.notes) print(note);
}

/** Hands the result to bench/run.ts when it started this process. */
export function report(result: SuiteResult): void {
  const path = process.env.TASKJOURNEY_BENCH_REPORT;
  if (path !== undefined && path !== "") writeFileSync(path, JSON.stringify(result, null, 2));
}

interface Samples {
  /** Nanoseconds per operation, one per sample, in any order. */
  perOp: number[];
}

/** mitata, one case after the other; fn cases are always batched (4,096 calls per sample). */
async function sampleWithMitata(benchCase: BenchCase): Promise<Samples> {
  const ops = benchCase.ops ?? 1;
  let stats: Awaited<ReturnType<typeof measure>>;
  if (benchCase.manual !== undefined) {
    const manual = benchCase.manual;
    stats = await measure(
      function* () {
        yield { manual };
      },
      { now: clockNs },
    );
  } else {
    // Left to itself mitata times a call taking more than a few µs one by one, below the CPU
    // clock's resolution and with the timer's own cost in every sample: so always batch.
    stats = await measure(benchCase.fn!, {
      now: clockNs,
      batch_threshold: Number.MAX_SAFE_INTEGER,
      warmup_threshold: Number.MAX_SAFE_INTEGER,
    });
  }
  return { perOp: stats.samples.map((sample) => sample / ops) };
}

/**
 * Rounds over all cases: each round takes one sample of every case in turn (a batch of calls
 * lasting about a millisecond), for `seconds` in all after a warm-up round.
 */
function sampleInterleaved(cases: BenchCase[], seconds: number): Samples[] {
  const batches = cases.map((benchCase) => {
    if (benchCase.manual !== undefined) return 1;
    // Warm up, then size the batch to about a millisecond.
    const fn = benchCase.fn!;
    for (let i = 0; i < 20_000; i++) fn();
    const t0 = performance.now();
    for (let i = 0; i < 1_000; i++) fn();
    const perCallMs = (performance.now() - t0) / 1_000;
    return Math.max(16, Math.min(65_536, Math.round(1 / Math.max(perCallMs, 1e-6))));
  });
  for (const benchCase of cases) if (benchCase.manual !== undefined) for (let i = 0; i < 8; i++) benchCase.manual();
  const samples: Samples[] = cases.map(() => ({ perOp: [] }));
  const deadline = performance.now() + seconds * 1000;
  const order = cases.map((_, c) => c);
  for (let round = 0; performance.now() < deadline || round < 30; round++) {
    // A fresh order every round: the garbage one case leaves is collected during whichever case
    // follows it, and a shuffled order spreads that over all of them instead of one neighbour.
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const c of order) {
      const benchCase = cases[c];
      const ops = benchCase.ops ?? 1;
      if (benchCase.manual !== undefined) {
        const elapsed = benchCase.manual();
        if (round > 0) samples[c].perOp.push(elapsed / ops);
        continue;
      }
      const fn = benchCase.fn!;
      const calls = batches[c];
      const t0 = clockNs();
      for (let i = 0; i < calls; i++) do_not_optimize(fn());
      const elapsed = clockNs() - t0;
      if (round > 0) samples[c].perOp.push(elapsed / calls / ops);
    }
  }
  return samples;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
}

/** Runs the cases side by side in this process, prints the table and reports the result. */
export async function runSuite(suite: Suite): Promise<SuiteResult> {
  if (typeof globalThis.gc !== "function") {
    console.warn("bench: run node with --expose-gc, so garbage is collected between cases");
  }
  const filter = process.env.TASKJOURNEY_BENCH_FILTER;
  const cases = suite.cases.filter((c) => filter === undefined || filter === "" || new RegExp(filter).test(c.name));
  for (const benchCase of cases) {
    if ((benchCase.fn === undefined) === (benchCase.manual === undefined)) {
      throw new TypeError(`bench case "${benchCase.name}" needs exactly one of fn and manual`);
    }
  }
  const verbose = process.argv.includes("--verbose") || process.env.TASKJOURNEY_BENCH_VERBOSE === "1";
  let sampled: Samples[];
  if (sampling === "interleaved") {
    globalThis.gc?.();
    sampled = sampleInterleaved(cases, Number(process.env.TASKJOURNEY_BENCH_SECONDS_PER_SUITE ?? 20));
  } else {
    sampled = [];
    for (const benchCase of cases) {
      sampled.push(await sampleWithMitata(benchCase));
      if (verbose) console.log(`${benchCase.name}: ${sampled[sampled.length - 1].perOp.length} samples`);
    }
  }
  const results: CaseResult[] = cases.map((benchCase, c) => {
    const sorted = [...sampled[c].perOp].sort((a, b) => a - b);
    const median = quantile(sorted, 0.5);
    return {
      name: benchCase.name,
      p25: quantile(sorted, 0.25),
      median,
      p75: quantile(sorted, 0.75),
      p99: quantile(sorted, 0.99),
      mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
      samples: sorted.length,
      maxNs: benchCase.maxNs,
      met: benchCase.maxNs === undefined ? undefined : median <= benchCase.maxNs,
    };
  });
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
    runtime: `node ${process.version} ${process.arch}; ${timedWith === "cpu" ? "CPU time" : "wall time"}; ${sampling === "interleaved" ? "interleaved rounds" : "mitata"}`,
    cases: results,
    ratios,
    notes: suite.notes ?? [],
    facts: suite.facts,
  };
  printSuite(result);
  report(result);
  return result;
}

/** The median of `values`; NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
