/**
 * The tiny-task cluster of issue 34, as `npm run bench` runs it: `cluster.bench.ts` on a reduction
 * of 8,005 tasks over 8-element arrays with no spilling (`--size 8000 --length 8 --memory-limit
 * inf`), off / metrics + 1% traces / metrics only (`--attribute`), 10 alternating rounds. The
 * scheduler's and workers' own work is then all a task costs (~250 µs of CPU), so what telemetry
 * adds per task stands clear of the noise, where the 2 ms tasks of `cluster.bench.ts`'s default
 * reduction hide it. Flags given after these override them (`--runs 3`, `--warmup 3`, `--perf DIR`).
 *
 *     npx tsx bench/cluster-tiny.bench.ts [cluster.bench.ts flags]
 */
process.argv.splice(
  2,
  0,
  ...["--suite", "cluster-tiny", "--size", "8000", "--length", "8", "--memory-limit", "inf", "--attribute"],
);
await import("./cluster.bench.js");
