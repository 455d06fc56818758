/**
 * The demo's report.html: its summary with the timelines of its kept traces, read back from the
 * OTLP trace files every process has flushed by the time the summary is written (what `npx
 * taskjourney report summary.json otlp/` makes from the same files). Bounded: trace files over
 * MAX_TRACE_BYTES in all are not read, and the page is the summary's alone, as it is when the
 * spans went to an endpoint, or when the files cannot be read; stderr says which, and how to get
 * the timelines.
 */
import fs from "node:fs";
import path from "node:path";
import {
  readTelemetryFiles,
  renderHtmlReport,
  reportDataFrom,
  reportDataFromTelemetry,
  type ReportData,
} from "../../src/report.js";

/**
 * Trace bytes read for the page. A default run (2,003 tasks, --trace-ratio 0.01) writes 0.6 MiB,
 * its page made in 0.1 s; at --trace-ratio 1, 14 MiB, 1.3 s and 160 MiB of memory (measured on
 * this project's 2-core CI machine). Past 32 MiB the run's end would wait several seconds on it.
 */
export const MAX_TRACE_BYTES = 32 * 1024 * 1024;

/** What the page holds beyond the summary: the timelines drawn, or why there are none. */
export interface ReportPage {
  timelines: number;
  /** Why the trace files were not read (none, too large, unreadable), when they were not. */
  without?: string;
}

/**
 * Writes `<outDir>/report.html` from `<outDir>/summary.json` and the trace files in `<outDir>/otlp/`.
 * `warn` gets one line when there were trace files and the page could not have their timelines.
 */
export function writeReportPage(
  outDir: string,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  maxTraceBytes = MAX_TRACE_BYTES,
): ReportPage {
  const summaryFile = path.join(outDir, "summary.json");
  const summary: unknown = JSON.parse(fs.readFileSync(summaryFile, "utf8"));
  const traceDirectory = path.join(outDir, "otlp");
  let traceFiles: string[] = [];
  try {
    traceFiles = fs
      .readdirSync(traceDirectory)
      .filter((name) => name.startsWith("traces-") && name.endsWith(".jsonl"))
      .sort()
      .map((name) => path.join(traceDirectory, name));
  } catch {
    // No otlp/ directory: the spans went to an endpoint, or telemetry was off.
  }
  const bytes = traceFiles.reduce((sum, file) => sum + fs.statSync(file).size, 0);
  let data: ReportData;
  let without: string | undefined;
  const command = `npx taskjourney report ${path.relative(process.cwd(), summaryFile) || summaryFile} ${path.relative(process.cwd(), traceDirectory) || traceDirectory}`;
  if (traceFiles.length === 0) {
    data = reportDataFrom(summary);
    without = "no trace files";
  } else if (bytes > maxTraceBytes) {
    data = reportDataFrom(summary);
    without = `its trace files hold ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the ${(maxTraceBytes / 1024 / 1024).toFixed(0)} MiB read at the end of a run`;
  } else {
    try {
      const telemetry = readTelemetryFiles([summaryFile, ...traceFiles], { metrics: false });
      for (const line of [...telemetry.skipped, ...telemetry.duplicates]) warn(`cluster: report.html: ${line}`);
      data = reportDataFromTelemetry(telemetry);
    } catch (error) {
      data = reportDataFrom(summary);
      without = `its trace files could not be read (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  if (without !== undefined && traceFiles.length > 0)
    warn(`cluster: report.html has no timelines of the kept traces: ${without}; to draw them: ${command}`);
  fs.writeFileSync(path.join(outDir, "report.html"), renderHtmlReport(data));
  return { timelines: data.keptTraces?.timelines.length ?? 0, ...(without === undefined ? {} : { without }) };
}
