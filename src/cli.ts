#!/usr/bin/env node
/**
 * The `taskjourney` command: explain a task from a trace file, render the HTML report.
 * Exit codes: 0 done, 1 bad data (file missing or unreadable, key not found), 2 bad usage.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { VERSION } from "./version.js";
import { formatBreakdown } from "./report/format.js";
import { breakdownFromSpans, breakdownsFromSpans, decodeOtlpJson, renderHtmlReport, reportDataFrom, SpanIndex } from "./report.js";
import { keysInSpans } from "./report/from-trace.js";

export const USAGE = `taskjourney ${VERSION}: where every task's time goes

Usage:
  taskjourney explain <key> --from <spans.jsonl> [--json] [--all]
  taskjourney report --from <summary.json> [--out <report.html>] [--title <text>]
  taskjourney --help | --version

Commands:
  explain   Rebuild journeys.explain(<key>) from a trace file: OTLP/JSON lines as the
            OpenTelemetry Collector's file exporter writes them (or one OTLP/JSON request).
            Shows the key's worker compute journey (else its scheduler or fetch journey).
              --from <file>   the trace file (required)
              --all           every journey of the key: scheduler, compute, fetches
              --json          the Breakdown as JSON instead of the text tree
  report    Render a self-contained HTML report (tables and charts) from a summary JSON
            file (ReportData, e.g. the cluster example's taskjourney-out/summary.json).
              --from <file>   the summary JSON (required)
              --out <file>    where to write (default: <summary>.html beside it)
              --title <text>  the page title (default: the summary's title)

Exit status: 0 done, 1 bad or missing data (file, key), 2 bad usage.
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
export function main(argv: readonly string[], io: Io = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) }): number {
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
        return explain(rest, io);
      case "report":
        return report(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`taskjourney: ${error.message}\nRun "taskjourney --help" for usage.\n`);
      return 2;
    }
    if (error instanceof DataError) {
      io.err(`taskjourney: ${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    // parseArgs' own errors are usage errors.
    if (error instanceof TypeError && (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") === true) {
      io.err(`taskjourney: ${message}\nRun "taskjourney --help" for usage.\n`);
      return 2;
    }
    io.err(`taskjourney: ${message}\n`);
    return 1;
  }
}

function parse<T extends Record<string, { type: "string" | "boolean"; short?: string }>>(args: readonly string[], options: T) {
  return parseArgs({ args: [...args], options: { help: { type: "boolean", short: "h" }, ...options }, allowPositionals: true, strict: true });
}

function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") throw new DataError(`${what} ${file} does not exist`);
    if (code === "EISDIR") throw new DataError(`${what} ${file} is a directory`);
    throw new DataError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
}

function explain(args: readonly string[], io: Io): number {
  const { values, positionals } = parse(args, { from: { type: "string" }, json: { type: "boolean" }, all: { type: "boolean" } });
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError("explain needs a key: taskjourney explain <key> --from <file>");
  if (positionals.length > 1) throw new UsageError(`explain takes one key, got ${positionals.length}: ${positionals.map((key) => JSON.stringify(key)).join(" ")}`);
  if (values.from === undefined || values.from === "") throw new UsageError("explain needs --from <file>, the OTLP/JSON trace file");
  const key = positionals[0];
  const file = values.from;
  const text = readText(file, "trace file");
  let index: SpanIndex;
  try {
    index = new SpanIndex(decodeOtlpJson(text, file));
  } catch (error) {
    throw new DataError(error instanceof Error ? error.message : String(error));
  }
  const breakdowns = values.all === true ? breakdownsFromSpans(index, key) : [breakdownFromSpans(index, key)].filter((b) => b !== undefined);
  if (breakdowns.length === 0) {
    const { keys, total } = keysInSpans(index, 10);
    if (index.spans.length === 0) throw new DataError(`${file} holds no spans`);
    if (total === 0) throw new DataError(`${file} holds ${index.spans.length} spans but no taskjourney task span (a "task <prefix>" span with task.key)`);
    const listed = keys.map((found) => JSON.stringify(found)).join(", ");
    throw new DataError(`no journey of key ${JSON.stringify(key)} in ${file}; its ${total} task keys include ${listed}${total > keys.length ? ", …" : ""}`);
  }
  if (values.json === true) {
    io.out(`${JSON.stringify(values.all === true ? breakdowns : breakdowns[0], null, 2)}\n`);
  } else {
    io.out(`${breakdowns.map((breakdown) => `${breakdowns.length > 1 ? `[${breakdown.kind} journey]\n` : ""}${formatBreakdown(breakdown)}`).join("\n\n")}\n`);
  }
  return 0;
}

function report(args: readonly string[], io: Io): number {
  const { values, positionals } = parse(args, { from: { type: "string" }, out: { type: "string", short: "o" }, title: { type: "string" } });
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`report takes no positional arguments, got ${positionals.map((arg) => JSON.stringify(arg)).join(" ")}`);
  if (values.from === undefined || values.from === "") throw new UsageError("report needs --from <summary.json>");
  const file = values.from;
  const text = readText(file, "summary file");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DataError(`${file} is not JSON: ${(error as Error).message}`);
  }
  let data;
  try {
    data = reportDataFrom(json);
  } catch (error) {
    throw new DataError(`${file}: ${(error as Error).message}`);
  }
  if (values.title !== undefined) data.title = values.title;
  const out = values.out ?? path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.html`);
  try {
    fs.writeFileSync(out, renderHtmlReport(data));
  } catch (error) {
    throw new DataError(`cannot write ${out}: ${(error as Error).message}`);
  }
  io.out(`wrote ${out}\n`);
  return 0;
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

if (invokedDirectly()) process.exitCode = main(process.argv.slice(2));
