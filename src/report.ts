/**
 * `taskjourney/report`: the trace and report toolkit — rebuilding breakdowns from exported spans,
 * reading OTLP JSON files, the HTML report and the text tables. The CLI is built on it; code that
 * only instruments a scheduler needs the main entry alone.
 *
 * Each export has a one-line doc, a stability tag and an `@example` (test/docs/api-tags.test.ts).
 * The toolkit is `@experimental` as a whole until 1.0: the report's data shapes may still change.
 */
export {
  /**
   * `explain()`'s `Breakdown` of a key, rebuilt from exported spans.
   * @experimental
   * @example
   * const breakdown = breakdownFromSpans(readOtlpJsonFile("traces.jsonl"), "inc-1");
   */
  breakdownFromSpans,
  /**
   * Every journey of a key (each retry, each fetch journey), rebuilt from exported spans.
   * @experimental
   * @example
   * const journeys = breakdownsFromSpans(readOtlpJsonFile("traces.jsonl"), "inc-1");
   */
  breakdownsFromSpans,
  /**
   * Exported spans indexed by trace and parent, for rebuilding many breakdowns.
   * @experimental
   * @example
   * const index = new SpanIndex(readOtlpJsonFile("traces.jsonl"));
   * const breakdown = breakdownFromSpans(index, "inc-1");
   */
  SpanIndex,
} from "./report/from-trace.js";
export {
  /**
   * Every span of an OTLP/JSON text (JSON lines, or one document).
   * @experimental
   * @example
   * const spans = decodeOtlpJson(fs.readFileSync("traces.json", "utf8"));
   */
  decodeOtlpJson,
  /**
   * Every span of an OTLP/JSON file, read a piece at a time, refusing one over `maxBytes`.
   * @experimental
   * @example
   * const spans = readOtlpJsonFile("traces.jsonl", { maxBytes: 64 * 1024 * 1024 });
   */
  readOtlpJsonFile,
} from "./report/otlp-json.js";
export {
  /**
   * The self-contained HTML page of a `ReportData`.
   * @experimental
   * @example
   * fs.writeFileSync("report.html", renderHtmlReport(reportDataFromTelemetry(readTelemetryFiles(["telemetry/"]))));
   */
  renderHtmlReport,
  /**
   * Checks a `ReportData` (or the cluster example's summary) read from JSON.
   * @experimental
   * @example
   * const data = reportDataFrom(JSON.parse(fs.readFileSync("summary.json", "utf8")));
   */
  reportDataFrom,
} from "./report/html.js";
export {
  /**
   * Reads OTLP/JSON files and directories: their spans, taskjourney's metric points and summaries.
   * @experimental
   * @example
   * const telemetry = readTelemetryFiles(["telemetry/"], { maxBytes: 512 * 1024 * 1024 });
   */
  readTelemetryFiles,
} from "./report/inputs.js";
export {
  /**
   * Reads spans from Jaeger's query API and taskjourney's metrics from Prometheus's, each request bounded in time and bytes.
   * @experimental
   * @example
   * const { spans, metrics } = await readBackends({ jaeger: "http://localhost:16686", prometheus: "http://localhost:9090", service: "worker", sinceMs: 3_600_000, limit: 100, timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024 });
   */
  readBackends,
} from "./report/from-backends.js";
export {
  /**
   * The report's data from what `readTelemetryFiles` read.
   * @experimental
   * @example
   * const data = reportDataFromTelemetry(readTelemetryFiles(["telemetry/"]), { slowest: 5 });
   */
  reportDataFromTelemetry,
} from "./report/from-telemetry.js";
export {
  /**
   * One per-prefix table (counts, duration quantiles, time per state), as text.
   * @experimental
   * @example
   * console.log(formatPrefixTable(data.prefixes));
   */
  formatPrefixTable,
  /**
   * One activity table (seconds per activity, with a total), as text.
   * @experimental
   * @example
   * console.log(formatActivityTable("execute", data.execute));
   */
  formatActivityTable,
} from "./report/table.js";
export {
  /**
   * The report page's tables as text.
   * @experimental
   * @example
   * console.log(formatReportTables(reportDataFromTelemetry(readTelemetryFiles(["telemetry/"]))));
   */
  formatReportTables,
} from "./report/text.js";
export {
  /**
   * An input file that cannot be read as telemetry (code `TJ_INVALID_INPUT`), naming the file.
   * @stable
   * @example
   * try { readTelemetryFiles(["missing.json"]); } catch (error) { if (error instanceof OtlpJsonError) console.error(error.message); }
   */
  OtlpJsonError,
  /**
   * A backend (Jaeger's or Prometheus's query API) that could not be asked or did not answer as its API does (code `TJ_BACKEND_FAILED`).
   * @stable
   * @example
   * try { await readBackends({ jaeger: "http://localhost:16686", sinceMs: 3_600_000, limit: 100, timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024 }); } catch (error) { if (error instanceof BackendError) console.error(error.message); }
   */
  BackendError,
  /**
   * Data read well but not of the shape a report needs (a `TypeError`, code `TJ_INVALID_DATA`).
   * @stable
   * @example
   * try { reportDataFrom({}); } catch (error) { console.log((error as InvalidDataError).code); } // "TJ_INVALID_DATA"
   */
  InvalidDataError,
  /**
   * A state asked for by name that the data does not have (a `TypeError`, code `TJ_UNKNOWN_STATE`).
   * @stable
   * @example
   * try { reportDataFromTelemetry(telemetry, { state: "active" }); } catch (error) { if (error instanceof UnknownStateError) console.error(error.message); }
   */
  UnknownStateError,
  /**
   * An argument a function cannot use (a `TypeError`, code `TJ_INVALID_ARGUMENT`).
   * @stable
   * @example
   * try { formatPrefixTable(data as never); } catch (error) { console.log((error as InvalidArgumentError).code); } // "TJ_INVALID_ARGUMENT"
   */
  InvalidArgumentError,
  /**
   * A number outside what a function accepts (a `RangeError`, code `TJ_OUT_OF_RANGE`).
   * @stable
   * @example
   * try { readOtlpJsonFile("traces.jsonl", { maxBytes: -1 }); } catch (error) { console.log((error as OutOfRangeError).code); } // "TJ_OUT_OF_RANGE"
   */
  OutOfRangeError,
  /**
   * Every error code taskjourney's errors carry, as a type.
   * @stable
   * @example
   * const code: TaskJourneyErrorCode = "TJ_INVALID_INPUT";
   */
  type TaskJourneyErrorCode,
} from "./shared/errors.js";

export type {
  /**
   * A journey's states and their activities, as `explain()` and `breakdownFromSpans()` return it.
   * @stable
   * @example
   * const breakdown: Breakdown | undefined = breakdownFromSpans(spans, "inc-1");
   */
  Breakdown,
  /**
   * One node of a `Breakdown`'s tree.
   * @stable
   * @example
   * const names = (nodes: BreakdownNode[]) => nodes.map((node) => node.name);
   */
  BreakdownNode,
} from "./model/breakdown.js";
export type {
  /**
   * Which journey of a key to rebuild: its kind and instance.
   * @experimental
   * @example
   * const options: BreakdownFromSpansOptions = { kind: "fetch", instance: "tcp://10.0.0.7:40001" };
   */
  BreakdownFromSpansOptions,
  /**
   * A journey's kind: compute, fetch or scheduler.
   * @experimental
   * @example
   * const kind: JourneyKind = "compute";
   */
  JourneyKind,
} from "./report/from-trace.js";
export type {
  /**
   * One span as read back from OTLP/JSON.
   * @experimental
   * @example
   * const keys = (spans: DecodedSpan[]) => spans.map((span) => span.attributes["task.key"]);
   */
  DecodedSpan,
} from "./report/otlp-json.js";
export type {
  /**
   * What the report shows: per-prefix rows, activity seconds, waits, slowest journeys, failures.
   * @experimental
   * @example
   * const data: ReportData = reportDataFromTelemetry(readTelemetryFiles(["telemetry/"]));
   */
  ReportData,
  /**
   * One failed task of a report: its key, prefix, instance and outcome.
   * @experimental
   * @example
   * const keys = (failures: ReportFailure[]) => failures.map((failure) => failure.key);
   */
  ReportFailure,
  /**
   * What `renderHtmlReport()` takes.
   * @experimental
   * @example
   * const options: RenderOptions = { inlineEcharts: false };
   */
  RenderOptions,
} from "./report/html.js";
export type {
  /**
   * What `readTelemetryFiles()` returns: files, spans, metric points, summaries, what was unused or skipped.
   * @experimental
   * @example
   * const telemetry: TelemetryFiles = readTelemetryFiles(["telemetry/"]);
   */
  TelemetryFiles,
  /**
   * What `readTelemetryFiles()` takes.
   * @experimental
   * @example
   * const options: ReadTelemetryOptions = { maxBytes: 64 * 1024 * 1024, metrics: false };
   */
  ReadTelemetryOptions,
} from "./report/inputs.js";
export type {
  /**
   * What `readBackends()` takes: the backends' base URLs, the service, how far back, and each request's bounds.
   * @experimental
   * @example
   * const query: BackendsQuery = { jaeger: "http://localhost:16686", sinceMs: 3_600_000, limit: 100, timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024 };
   */
  BackendsQuery,
  /**
   * What `readBackends()` returns: spans, metric points, the sources read and warnings.
   * @experimental
   * @example
   * const told = (data: BackendsData) => data.sources.join("\n");
   */
  BackendsData,
} from "./report/from-backends.js";
export type {
  /**
   * What `reportDataFromTelemetry()` takes.
   * @experimental
   * @example
   * const options: ReportFromTelemetryOptions = { title: "nightly run", slowest: 5 };
   */
  ReportFromTelemetryOptions,
} from "./report/from-telemetry.js";
export type {
  /**
   * One of taskjourney's metric points as read back from OTLP/JSON.
   * @experimental
   * @example
   * const names = (points: MetricPoint[]) => new Set(points.map((point) => point.metric));
   */
  MetricPoint,
} from "./report/otlp-metrics.js";
export type {
  /**
   * One row of a per-prefix table.
   * @experimental
   * @example
   * const prefixes = (rows: PrefixRow[]) => rows.map((row) => row.prefix);
   */
  PrefixRow,
  /**
   * What `formatPrefixTable()` takes.
   * @experimental
   * @example
   * const options: PrefixTableOptions = { states: ["waiting", "executing"], durationOf: "executing" };
   */
  PrefixTableOptions,
  /**
   * What `formatActivityTable()` takes.
   * @experimental
   * @example
   * const options: ActivityTableOptions = { indent: 4, total: false };
   */
  ActivityTableOptions,
} from "./report/table.js";
