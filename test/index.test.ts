import { readFileSync } from "node:fs";
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
  "readOtlpJsonFile",
  "renderHtmlReport",
  "reportDataFrom",
];
/** Added to taskjourney/report after the main entry stopped taking report names. */
const REPORT_ONLY = ["readTelemetryFiles", "reportDataFromTelemetry"];

describe("the package entries", () => {
  it("taskjourney exports what instrumenting needs, and the report toolkit only as deprecated names", () => {
    const instrumenting = [
      "DASK_SCHEDULER_MACHINE",
      "DASK_WORKER_MACHINE",
      "defineMachine",
      "EXECUTE_ACTIVITIES",
      "EXECUTE_OUTCOMES",
      "GATHER_ACTIVITIES",
      "InvalidTransition",
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
    expect(Object.keys(main).sort()).toEqual([...instrumenting, ...REPORT_TOOLKIT].sort());
    // Internals are not there.
    for (const name of ["DEFAULT_OPTIONS", "DurationStatistics", "ExponentialHistogram", "TaskMetricProducer"])
      expect(name in main).toBe(false);
  });

  it("taskjourney/report exports the toolkit, and the main entry's deprecated names are the same values", () => {
    expect(Object.keys(report).sort()).toEqual([...REPORT_TOOLKIT, ...REPORT_ONLY].sort());
    for (const name of REPORT_TOOLKIT)
      expect(main[name as keyof typeof main]).toBe(report[name as keyof typeof report]);
  });

  it("package.json maps taskjourney/report to the built report entry, beside taskjourney/sdk", () => {
    const { exports } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      exports: Record<string, unknown>;
    };
    expect(exports["./report"]).toMatchObject({ types: "./dist/report.d.ts", import: "./dist/report.js" });
    expect(exports["./sdk"]).toMatchObject({ types: "./dist/sdk.d.ts", import: "./dist/sdk.js" });
  });
});
