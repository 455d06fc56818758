/**
 * `taskjourney/report`: the trace and report toolkit — rebuilding breakdowns from exported spans,
 * reading OTLP JSON files, the HTML report and the text tables. The CLI is built on it; code that
 * only instruments a scheduler needs the main entry alone.
 */
export { breakdownFromSpans, breakdownsFromSpans, SpanIndex } from "./report/from-trace.js";
export { decodeOtlpJson, readOtlpJsonFile } from "./report/otlp-json.js";
export { renderHtmlReport, reportDataFrom } from "./report/html.js";
export { readTelemetryFiles } from "./report/inputs.js";
export { readBackends } from "./report/from-backends.js";
export { reportDataFromTelemetry } from "./report/from-telemetry.js";
export { formatPrefixTable, formatActivityTable } from "./report/table.js";
export { formatReportTables } from "./report/text.js";
export {
  OtlpJsonError,
  BackendError,
  InvalidDataError,
  UnknownStateError,
  InvalidArgumentError,
  OutOfRangeError,
  type TaskJourneyErrorCode,
} from "./shared/errors.js";

export type { Breakdown, BreakdownNode } from "./model/breakdown.js";
export type { BreakdownFromSpansOptions, JourneyKind } from "./report/from-trace.js";
export type { DecodedSpan } from "./report/otlp-json.js";
export type { ReportData, ReportFailure, RenderOptions } from "./report/html.js";
export type { TelemetryFiles, ReadTelemetryOptions } from "./report/inputs.js";
export type { BackendsQuery, BackendsData } from "./report/from-backends.js";
export type { ReportFromTelemetryOptions } from "./report/from-telemetry.js";
export type { MetricPoint } from "./report/otlp-metrics.js";
export type { PrefixRow, PrefixTableOptions, ActivityTableOptions } from "./report/table.js";
