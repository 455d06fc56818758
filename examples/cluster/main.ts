/**
 * The cluster demo: `npm run demo` (or `npx tsx examples/cluster/main.ts --help`).
 *
 * Starts a scheduler (this process) and worker processes on loopback, runs a workload with a
 * progress bar, prints where every task's time went — the per-prefix table, the execute / gather
 * / wait breakdowns and `explain` of the slowest task — and writes OTLP JSON files and a
 * summary into ./taskjourney-out/, or exports to OTEL_EXPORTER_OTLP_ENDPOINT when set.
 */
import path from "node:path";
import { killChildren, runCluster, stopRun } from "./cluster.js";
import { HELP, parseOptions } from "./options.js";
import { otlpEndpoint } from "./telemetry.js";

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options === "help") {
    process.stdout.write(HELP);
    return;
  }
  const print = options.quiet ? () => {} : (text: string) => process.stdout.write(`${text}\n\n`);
  const summary = await runCluster(options, print);
  const result = Array.isArray(summary.result)
    ? `[${summary.result.map((x) => Number(x).toPrecision(10)).join(", ")}]`
    : summary.result === null
      ? `none: ${summary.failed.length} tasks failed (first ${summary.failed[0]}), ${summary.erred} erred in all`
      : String(summary.result);
  const out = path.relative(process.cwd(), path.resolve(options.outDir)) || ".";
  const lines = [
    `Result (${summary.workload}): ${result}`,
    `Run: ${summary.runSeconds.toFixed(2)} s for ${summary.tasks} tasks (${(summary.tasks / summary.runSeconds).toFixed(0)} tasks/s, ${summary.cpuSeconds.toFixed(2)} CPU s); ${summary.wallSeconds.toFixed(2)} s with start-up and shutdown`,
    `Scheduler: ${summary.decisions.total} decisions, ${summary.decisions.informed} with live duration statistics, ${summary.decisions.movedFromHolder} moved off the dependency holder, ${summary.decisions.queued} queued`,
  ];
  if (options.telemetry) {
    lines.push(
      `taskjourney: loaded from ${summary.taskjourney === "dist" ? "dist/ (the built package)" : "src/ through tsx (the taskjourney-source export condition)"}`,
    );
    lines.push(
      otlpEndpoint() === undefined
        ? `Telemetry: OTLP JSON in ${out}/otlp/ (traces-*.jsonl, metrics-*.jsonl)`
        : `Telemetry: exported to ${summary.destination}`,
    );
  }
  lines.push(`Summary: ${out}/summary.json, report: ${out}/report.txt and ${out}/report.html`);
  if (!options.quiet) process.stdout.write(`${lines.join("\n")}\n`);
  if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
}

// Never leave workers behind: they are killed on every way out of this process.
process.on("exit", () => killChildren());
/** The exit code a stopping signal asks for (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), once one came. */
let signalled: number | undefined;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    const code = signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 129;
    // The first signal stops the run as a worker's death does: everyone flushes (each for at most
    // its deadline) and the summary is written; a second one, or one before the run began, exits now.
    if (signalled === undefined && stopRun(`stopped by ${signal}`)) {
      signalled = code;
      return;
    }
    killChildren();
    process.exit(code);
  });
}
process.on("uncaughtException", (error) => {
  process.stderr.write(`${error.stack ?? String(error)}\n`);
  killChildren();
  process.exit(1);
});
process.on("unhandledRejection", (error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  killChildren();
  process.exit(1);
});

try {
  await main();
  process.exit(signalled ?? 0);
} catch (error) {
  process.stderr.write(`cluster: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.env.TASKJOURNEY_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ""}\n`);
  killChildren();
  process.exit(signalled ?? 1);
}
