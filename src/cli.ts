#!/usr/bin/env node
/**
 * The `taskjourney` command: explain a task from trace files or Jaeger, render the HTML report
 * from files or Jaeger and Prometheus. Exit codes: 0 done, 1 bad data (file missing,
 * unreadable, too large or malformed, a backend that cannot be asked or answers amiss, key not
 * found), 2 bad usage. Everything printed that comes from a file or a backend is terminal-safe.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { VERSION } from "./version.js";
import { formatBreakdown, journeyLabel } from "./report/format.js";
import {
  breakdownFromSpans,
  breakdownsFromSpans,
  renderHtmlReport,
  reportDataFromTelemetry,
  SpanIndex,
} from "./report.js";
import { keysInSpans } from "./report/from-trace.js";
import type { DecodedSpan } from "./report/otlp-json.js";
import type { MetricPoint } from "./report/otlp-metrics.js";
import type { Breakdown } from "./model/breakdown.js";
import { computationsFromMetrics, computationTimes } from "./report/computations.js";
import { FAILED_STATES } from "./report/failures.js";
import { loadEcharts } from "./report/html.js";
import { DEFAULT_MAX_BYTES } from "./report/input-files.js";
import { readTelemetryFiles, type TelemetryFiles } from "./report/inputs.js";
import { readBackends } from "./report/from-backends.js";
import { checkBaseUrl, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_TIMEOUT_MS } from "./report/http-json.js";
import { terminalSafe, terminalSafeLines } from "./report/terminal.js";

/** The most traces read from Jaeger by default: a report's slowest and failed journeys, a key's journeys. */
const DEFAULT_LIMIT = { report: 1000, explain: 20 } as const;

export const USAGE = `taskjourney ${VERSION}: where every task's time goes

Usage:
  taskjourney explain <key> [--from] <file or directory>... [--json] [--all] [--max-bytes <n>]
  taskjourney explain <key> --jaeger <url> [--service <name>] [--since <time>] [--limit <n>] [--json] [--all]
  taskjourney report [--from] <file or directory>... [--out <report.html>] [--title <text>] [--state <name>] [--max-bytes <n>]
  taskjourney report --jaeger <url> --prometheus <url> [--service <name>] [--since <time>] [--limit <n>] [--out …]
  taskjourney --help | --version

Inputs (--from, repeatable, or as arguments: after the key for explain): OTLP/JSON files, one
request per line as the OpenTelemetry Collector's file exporter and taskjourney/sdk's
fileDirectory write them (traces-*.jsonl, metrics-*.jsonl), or one JSON document; a
directory stands for the .json/.jsonl files in it.

Commands:
  explain   Rebuild journeys.explain(<key>) from exported spans. Shows the key's worker
            compute journey (else its scheduler or fetch journey). Only journeys that
            became spans are there: sampled ones (sampling.ratio, 1% of keys by
            default), slow ones and failed ones.
              --all           every journey of the key: scheduler, compute, fetch journeys
              --json          the Breakdown as JSON instead of the text tree
  report    Write a self-contained HTML report (the failed tasks and why, tables, charts,
            the slowest journeys and their trees) from an application's exported
            metrics and spans, or from a summary JSON (ReportData, e.g. the cluster
            example's summary.json).
              --out <file>    where to write (default: report.html in the first input's
                              directory, or <summary>.html beside a lone summary file)
              --title <text>  the page title
              --state <name>  the state whose durations the per-prefix quantiles
                              show (default: Dask's executing / processing, else
                              the state the exported journeys end from, which is
                              a state machine's executing state)
  Both:       --max-bytes <n> refuse an input file larger than n bytes (default ${DEFAULT_MAX_BYTES}, 512 MiB),
                              or a backend's answer (default ${DEFAULT_MAX_ANSWER_BYTES}, 64 MiB)

Backends (instead of files, or beside them):
  --jaeger <url>      spans from Jaeger's query API (its UI's address, e.g. http://localhost:16686)
  --prometheus <url>  metrics from Prometheus' HTTP API (e.g. http://localhost:9090): the latest
                      sample of each series in the window, its total since its process started
  --service <name>    only this service.name (default: every service Jaeger lists, every series)
  --since <time>      traces begun, series sampled, within this long before now: 90s, 30m, 1h
                      (default), 2d
  --limit <n>         the most traces read from Jaeger (default ${DEFAULT_LIMIT.report} for report, ${DEFAULT_LIMIT.explain} for explain)
  --timeout <s>       the seconds one request may take, its whole answer read (default ${DEFAULT_TIMEOUT_MS / 1000});
                      all requests together, 10 times that

Exit status: 0 done, 1 bad or missing data (file, backend, key), 2 bad usage.
`;

/** A mistake in the command line: exit code 2. */
class UsageError extends Error {}
/** A problem with the data the command line names: exit code 1. */
class DataError extends Error {}

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs the command line `argv` (without node and script); returns the exit code. */
export async function main(
  argv: readonly string[],
  io: Io = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case undefined:
        io.err(USAGE);
        return 2;
      case "-h":
      case "--help":
      case "help":
        io.out(USAGE);
        return 0;
      case "-v":
      case "--version":
      case "version":
        io.out(`${VERSION}\n`);
        return 0;
      case "explain":
        return await explain(rest, io);
      case "report":
        return await report(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    // Messages can quote a file's contents (keys, names): terminal-safe like everything printed.
    const message = terminalSafe(error instanceof Error ? error.message : String(error));
    const parseArgsError =
      error instanceof TypeError && (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") === true;
    if (error instanceof UsageError || parseArgsError) {
      io.err(`taskjourney: ${message}\nRun "taskjourney --help" for usage.\n`);
      return 2;
    }
    io.err(`taskjourney: ${message}\n`);
    return 1;
  }
}

const COMMON = {
  help: { type: "boolean", short: "h" },
  from: { type: "string", multiple: true },
  "max-bytes": { type: "string" },
  jaeger: { type: "string" },
  prometheus: { type: "string" },
  service: { type: "string" },
  since: { type: "string" },
  limit: { type: "string" },
  timeout: { type: "string" },
} as const;

/** The window of traces and series read by default. */
const DEFAULT_SINCE = "1h";
/** The longest --since: 400 days. */
const MAX_SINCE_MS = 400 * 24 * 3600 * 1000;

type CommonValues = {
  [K in keyof typeof COMMON]?: (typeof COMMON)[K] extends { multiple: true }
    ? string[]
    : K extends "help"
      ? boolean
      : string;
};

function positiveInteger(option: string, value: string, max = Number.MAX_SAFE_INTEGER): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number <= 0 || number > max)
    throw new UsageError(`${option} takes a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

/** "90s", "30m", "1h", "2d" in milliseconds. */
function duration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const ms = match === null ? Number.NaN : Number(match[1]) * unit[match[2] as keyof typeof unit];
  if (!(ms >= 1000 && ms <= MAX_SINCE_MS))
    throw new UsageError(
      `--since takes a time from 1s to 400d such as 90s, 30m, 1h or 2d, got ${JSON.stringify(value)}`,
    );
  return ms;
}

function baseUrl(option: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return checkBaseUrl(option, value);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The backends named on the command line, their options checked; undefined when none is. */
function backendsOf(values: CommonValues, command: keyof typeof DEFAULT_LIMIT) {
  const jaeger = baseUrl("--jaeger", values.jaeger);
  const prometheus = command === "report" ? baseUrl("--prometheus", values.prometheus) : undefined;
  if (command === "explain" && values.prometheus !== undefined)
    throw new UsageError("explain reads spans: --jaeger <url>, not --prometheus");
  if (jaeger === undefined && prometheus === undefined) {
    for (const option of ["service", "since", "limit", "timeout"] as const)
      if (values[option] !== undefined)
        throw new UsageError(`--${option} is for --jaeger or --prometheus, and neither is given`);
    return undefined;
  }
  if (values.service !== undefined && values.service.trim() === "")
    throw new UsageError("--service takes a service.name, e.g. --service my-scheduler");
  return {
    jaeger,
    prometheus,
    service: values.service,
    sinceMs: duration(values.since ?? DEFAULT_SINCE),
    limit: values.limit === undefined ? DEFAULT_LIMIT[command] : positiveInteger("--limit", values.limit, 100_000),
    timeoutMs:
      values.timeout === undefined ? DEFAULT_TIMEOUT_MS : positiveInteger("--timeout", values.timeout, 3600) * 1000,
    maxBytes: values["max-bytes"] === undefined ? DEFAULT_MAX_ANSWER_BYTES : maxBytes(values["max-bytes"]),
  };
}

/** Reads the backends, any problem a data error; what may be missing is warned of. */
async function readFromBackends(query: Parameters<typeof readBackends>[0], io: Io) {
  let read;
  try {
    read = await readBackends(query);
  } catch (error) {
    throw new DataError(error instanceof Error ? error.message : String(error));
  }
  for (const warning of read.warnings) io.err(`taskjourney: warning: ${terminalSafe(warning)}\n`);
  return read;
}

function maxBytes(value: string | undefined): number {
  if (value === undefined) return DEFAULT_MAX_BYTES;
  const bytes = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(bytes) || bytes <= 0)
    throw new UsageError(`--max-bytes takes a positive whole number of bytes, got ${JSON.stringify(value)}`);
  return bytes;
}

/** The inputs read, any problem with them a data error; requests cut off, skipped, are warned of. */
function read(inputs: readonly string[], options: { maxBytes: number; metrics: boolean }, io: Io): TelemetryFiles {
  let telemetry: TelemetryFiles;
  try {
    telemetry = readTelemetryFiles(inputs, options);
  } catch (error) {
    throw new DataError(error instanceof Error ? error.message : String(error));
  }
  for (const skipped of [...telemetry.skipped, ...telemetry.duplicates])
    io.err(`taskjourney: warning: ${terminalSafe(skipped)}\n`);
  return telemetry;
}

/**
 * Each breakdown's computation's totals, from the task.computation.* metrics among the inputs
 * (the scheduler's where it exported them): tasks, failed, live, wall, task-seconds by state. Its
 * first start and last end are not in the metrics: they come from its task spans (epoch seconds;
 * the explained journey's own is one of them), the end only once no task is live.
 */
function withComputationTotals(
  breakdowns: Breakdown[],
  metrics: readonly MetricPoint[],
  tasks: readonly DecodedSpan[],
): void {
  if (metrics.length === 0 || !breakdowns.some((breakdown) => breakdown.computation !== undefined)) return;
  const rows = computationsFromMetrics(metrics, new Set(FAILED_STATES)) ?? [];
  for (const breakdown of breakdowns) {
    const row = rows.find((candidate) => candidate.name === breakdown.computation);
    if (row === undefined) continue;
    const { from: _from, ...totals } = row;
    // Always some: a breakdown's computation is its own task span's, one of `tasks`.
    const times = computationTimes(tasks, row.name)!;
    breakdown.computationTotals = {
      ...totals,
      abandoned: 0,
      start: times.start,
      end: row.live > 0 ? undefined : times.end,
    };
  }
}

async function explain(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { ...COMMON, json: { type: "boolean" }, all: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  const limit = maxBytes(values["max-bytes"]);
  if (positionals.length === 0) throw new UsageError("explain needs a key: taskjourney explain <key> --from <file>");
  // One key, first; what follows it are inputs, as report takes them (`explain inc-1 ./otlp`).
  const inputs = [...(values.from ?? []), ...positionals.slice(1)].filter((input) => input !== "");
  const backends = backendsOf(values, "explain");
  if (inputs.length === 0 && backends === undefined)
    throw new UsageError(
      "explain needs --from <file>, the OTLP/JSON trace files or their directory, or --jaeger <url>",
    );
  const key = positionals[0];
  const telemetry =
    inputs.length === 0
      ? { files: [] as string[], spans: [] as DecodedSpan[], metrics: [] as MetricPoint[] }
      : // The metrics too: a journey's computation's totals (task.computation.*), when they are among the inputs.
        read(inputs, { maxBytes: limit, metrics: true }, io);
  const sources: string[] = [...telemetry.files];
  if (backends !== undefined) {
    const fromBackends = await readFromBackends({ ...backends, key }, io);
    telemetry.spans.push(...fromBackends.spans);
    sources.push(...fromBackends.sources);
  }
  const where = sources.length === 1 ? sources[0] : `${sources.length} ${backends === undefined ? "files" : "inputs"}`;
  let index: SpanIndex;
  try {
    index = new SpanIndex(telemetry.spans);
  } catch (error) {
    throw new DataError(`${where}: ${(error as Error).message}`);
  }
  const breakdowns =
    values.all === true
      ? breakdownsFromSpans(index, key)
      : [breakdownFromSpans(index, key)].filter((b) => b !== undefined);
  if (breakdowns.length === 0) {
    const { keys, total } = keysInSpans(index, 10);
    const holds = `hold${sources.length === 1 ? "s" : ""}`;
    if (index.spans.length === 0)
      throw new DataError(
        backends?.jaeger !== undefined && inputs.length === 0
          ? `no trace holds task.key ${JSON.stringify(key)} in ${where}, begun in the last ${values.since ?? DEFAULT_SINCE}. ` +
              "Only journeys that became spans are there: sampled ones (sampling.ratio, 1% of keys by default), slow ones and failed ones " +
              "(and those a Collector's tail sampling kept); an older one needs a longer --since"
          : `${where} ${holds} no spans`,
      );
    if (total === 0)
      throw new DataError(
        `${where} ${holds} ${index.spans.length} spans but no taskjourney task span (a "task <prefix>" span with task.key)`,
      );
    const listed = keys.map((found) => JSON.stringify(found)).join(", ");
    throw new DataError(
      `no journey of key ${JSON.stringify(key)} in ${where}; its ${total} task keys include ${listed}${total > keys.length ? ", …" : ""}. ` +
        "Only journeys that became spans are there: sampled ones (sampling.ratio, 1% of keys by default), slow ones and failed ones; " +
        "sampling: { ratio: 1 } makes every journey a span",
    );
  }
  withComputationTotals(breakdowns, telemetry.metrics, index.tasks);
  if (values.json === true) {
    io.out(`${jsonSafe(JSON.stringify(values.all === true ? breakdowns : breakdowns[0], null, 2))}\n`);
  } else {
    const text = breakdowns
      .map(
        (breakdown, index) =>
          `${breakdowns.length > 1 ? `${journeyLabel(breakdown, index, breakdowns.length)}\n` : ""}${formatBreakdown(breakdown)}`,
      )
      .join("\n\n");
    io.out(`${terminalSafeLines(text)}\n`);
  }
  return 0;
}

/**
 * JSON with the characters JSON.stringify leaves raw but a terminal acts on (C1 controls,
 * DEL, bidi overrides) written as \u escapes: the same JSON value, safe to print.
 */
function jsonSafe(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

async function report(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { ...COMMON, out: { type: "string", short: "o" }, title: { type: "string" }, state: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  const limit = maxBytes(values["max-bytes"]);
  const inputs = [...(values.from ?? []), ...positionals].filter((input) => input !== "");
  const backends = backendsOf(values, "report");
  if (inputs.length === 0 && backends === undefined)
    throw new UsageError(
      "report needs --from <files or directories>: OTLP/JSON traces and metrics, or a summary.json; or --jaeger <url> and --prometheus <url>",
    );
  if (values.state !== undefined && values.state.trim() === "")
    throw new UsageError("--state takes a state's name, e.g. --state active");
  const telemetry: TelemetryFiles =
    inputs.length === 0
      ? { files: [], spans: [], metrics: [], summaries: [], unused: [], skipped: [], duplicates: [] }
      : read(inputs, { maxBytes: limit, metrics: true }, io);
  let described: string | undefined;
  if (backends !== undefined) {
    const fromBackends = await readFromBackends(backends, io);
    telemetry.spans.push(...fromBackends.spans);
    telemetry.metrics.push(...fromBackends.metrics);
    telemetry.files.push(...fromBackends.sources);
    const files = telemetry.files.length - fromBackends.sources.length;
    described = [...(files === 0 ? [] : [`${files} file${files === 1 ? "" : "s"}`]), ...fromBackends.sources].join(
      ", ",
    );
  }
  let data;
  try {
    data = reportDataFromTelemetry(telemetry, { title: values.title, state: values.state, inputs: described });
  } catch (error) {
    throw new DataError((error as Error).message);
  }
  const out = values.out ?? (inputs.length === 0 ? "report.html" : defaultOut(inputs[0], telemetry));
  if (loadEcharts() === null)
    io.err(
      "taskjourney: warning: ECharts is missing from this installation, so the report has its tables and trees but no charts\n",
    );
  try {
    fs.writeFileSync(out, renderHtmlReport(data));
  } catch (error) {
    throw new DataError(`cannot write ${out}: ${(error as Error).message}`);
  }
  io.out(`${terminalSafe(`wrote ${out}`)}\n`);
  return 0;
}

/** report.html in the first input's directory; beside a lone summary file, its name with .html. */
function defaultOut(first: string, telemetry: TelemetryFiles): string {
  let directory: boolean;
  try {
    directory = fs.statSync(first).isDirectory();
  } catch {
    directory = false;
  }
  if (directory) return path.join(first, "report.html");
  if (telemetry.files.length === 1 && telemetry.summaries.length === 1)
    return path.join(path.dirname(first), `${path.basename(first, path.extname(first))}.html`);
  return path.join(path.dirname(first), "report.html");
}

// Run when executed (as the bin, or `node --import tsx src/cli.ts`), not when imported.
function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(fs.realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (invokedDirectly()) process.exitCode = await main(process.argv.slice(2));
