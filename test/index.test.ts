import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as main from "../src/index.js";
import * as report from "../src/report.js";

const REPORT_TOOLKIT = [
  "SpanIndex",
  "breakdownFromSpans",
  "breakdownsFromSpans",
  "decodeOtlpJson",
  "formatActivityTable",
  "formatPrefixTable",
  "formatReportTables",
  "readOtlpJsonFile",
  "renderHtmlReport",
  "readTelemetryFiles",
  "readBackends",
  "reportDataFrom",
  "reportDataFromTelemetry",
];

/** The errors the toolkit throws, each with its code; two are the main entry's too (the same classes). */
const REPORT_ERRORS = [
  "BackendError",
  "InvalidArgumentError",
  "InvalidDataError",
  "OtlpJsonError",
  "OutOfRangeError",
  "UnknownStateError",
];

/** The src/ files `entry` imports, directly or not (static imports and re-exports of relative paths). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Doc comments (the entries' @example code has semicolons) are no imports.
    const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    for (const [, specifier] of text.matchAll(/^(?:import|export)[^;]*?from "(\.{1,2}\/[^"]+)";/gms)) {
      if (!specifier.includes("/")) continue;
      visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")));
    }
  };
  visit(fileURLToPath(new URL(entry, import.meta.url)));
  return seen;
}

describe("the package entries", () => {
  it("taskjourney exports what instrumenting needs, and not the report toolkit (which would load in every instrumented process)", () => {
    const instrumenting = [
      "DASK_SCHEDULER_MACHINE",
      "DASK_WORKER_MACHINE",
      "defineMachine",
      "EXECUTE_ACTIVITIES",
      "EXECUTE_OUTCOMES",
      "GATHER_ACTIVITIES",
      "AlreadyWrappedError",
      "InvalidArgumentError",
      "InvalidOptionError",
      "InvalidTransition",
      "OutOfRangeError",
      "SCHEDULER_STATES",
      "TERMINAL_STATES",
      "TRANSFER_OUTCOMES",
      "TaskJourneys",
      "VERSION",
      "WORKER_STATES",
      "formatBreakdown",
      "formatBytes",
      "formatSeconds",
      "instrument",
      "isKey",
      "keySplit",
      "keySplitGroup",
      "keyToText",
      "semconv",
      "wrap",
    ];
    expect(Object.keys(main).sort()).toEqual(instrumenting.sort());
    // Internals are not there.
    for (const name of ["DEFAULT_OPTIONS", "DurationStatistics", "ExponentialHistogram", "TaskMetricProducer"])
      expect(name in main).toBe(false);
  });

  it("taskjourney/report exports the toolkit", () => {
    expect(Object.keys(report).sort()).toEqual([...REPORT_TOOLKIT, ...REPORT_ERRORS].sort());
    expect(report.InvalidArgumentError).toBe(main.InvalidArgumentError);
    for (const name of REPORT_TOOLKIT) expect(name in main).toBe(false);
  });

  it("an instrumented process loads no report code: the main entry reaches only the text formatting explain() uses", () => {
    // The report toolkit once came along as re-exports: 0.8 MB more heap in every worker, which
    // each full garbage collection marks again (node --expose-gc, heapUsed after importing dist/).
    const files = [...reachable("../src/index.ts")].map((file) =>
      path.relative(fileURLToPath(new URL("../src/", import.meta.url)), file),
    );
    // arguments.ts: formatBreakdown's argument guard (no dependency beyond model/show.ts); lumps.ts:
    // how its trees name a lump, "failed (lump)" (no dependency beyond model/activities.ts).
    expect(files.filter((file) => file.startsWith("report")).sort()).toEqual([
      "report/arguments.ts",
      "report/format.ts",
      "report/lumps.ts",
      "report/terminal.ts",
    ]);
    expect(files.length).toBeGreaterThan(40);
  });

  it("package.json maps taskjourney/report to the built report entry, beside taskjourney/sdk", () => {
    const { exports } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      exports: Record<string, unknown>;
    };
    expect(exports["./report"]).toMatchObject({ types: "./dist/report.d.ts", import: "./dist/report.js" });
    expect(exports["./sdk"]).toMatchObject({ types: "./dist/sdk.d.ts", import: "./dist/sdk.js" });
  });
});
