import { decodeTraceRequest, type DecodedSpan } from "./otlp-json.js";
import { guarded } from "./arguments.js";
import { decodeMetricsRequest, type MetricPoint } from "./otlp-metrics.js";
import { expandInputs, MAX_ARRAY_NESTING, OtlpJsonError, readInputFile } from "./input-files.js";

/**
 * What a set of files and directories holds for the CLI and the report: spans and metrics from
 * OTLP/JSON requests (any mix of files, one request per line or one document per file), and
 * summaries (ReportData, or the cluster example's `summary.json`) from any other JSON document.
 */
export interface TelemetryFiles {
  /** The files read, directories expanded. */
  files: string[];
  spans: DecodedSpan[];
  /** taskjourney's metric points (other metrics are skipped). */
  metrics: MetricPoint[];
  /** Summaries: JSON objects with `prefixes` (ReportData) or `report` (the cluster example's), with the file they came from. */
  summaries: Array<{ file: string; summary: Record<string, unknown> }>;
  /** Files that held none of the above (e.g. an application's other JSON files in a directory). */
  unused: string[];
  /**
   * Lines skipped as requests cut off (a line that begins as one but is not JSON: a process stopped
   * while writing it), one message per file, naming it and them; the file's other requests are
   * read. A line that does not begin as a request refuses its file.
   */
  skipped: string[];
  /**
   * Lines skipped as byte-identical copies of lines read before (in that file or an earlier one:
   * an OTLP retry after a timeout leaves the same request twice in a Collector's file), one
   * message per file: read twice, every span of it would appear twice.
   */
  duplicates: string[];
}

export interface ReadTelemetryOptions {
  /** Refuse a file larger than this many bytes. Default 512 MiB. */
  maxBytes?: number;
  /** Decode metrics too (the report does; explain does not need them). Default true. */
  metrics?: boolean;
}

/** How an OTLP/JSON metrics request begins, as taskjourney's file exporter and the Collector's write it. */
const METRICS_REQUEST = '{"resourceMetrics"';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Reads `inputs` (files, and directories standing for their .json/.jsonl files), a piece at a
 * time. Throws an OtlpJsonError naming the file for one that is missing, too large or not JSON;
 * lines that are requests cut off are skipped and noted in `skipped`.
 */
export function readTelemetryFiles(inputs: readonly string[], options: ReadTelemetryOptions = {}): TelemetryFiles {
  return guarded(
    "readTelemetryFiles(inputs, options)",
    [
      ["inputs", "an array of file and directory names", inputs],
      ["options", "{ maxBytes?: number, metrics?: boolean }", options],
    ],
    () => {
      if (inputs.length === 0) throw new OtlpJsonError("no input files given");
      const files = expandInputs(inputs);
      const result: TelemetryFiles = {
        files,
        spans: [],
        metrics: [],
        summaries: [],
        unused: [],
        skipped: [],
        duplicates: [],
      };
      const seen = new Map<string, string>();
      const withMetrics = options.metrics ?? true;
      for (const file of files) {
        let used = false;
        const route = (document: unknown, where: string, depth = 0): void => {
          if (Array.isArray(document)) {
            // Bounded: a line of a million `[` overflowed the stack here.
            if (depth === MAX_ARRAY_NESTING)
              throw new OtlpJsonError(
                `${file}: ${where} nests arrays more than ${MAX_ARRAY_NESTING} deep; expected OTLP/JSON requests, one per line, or one JSON document holding a request or an array of them`,
              );
            for (const item of document) route(item, where, depth + 1);
            return;
          }
          if (!isRecord(document)) return;
          if ("resourceSpans" in document) {
            decodeTraceRequest(document, result.spans);
            used = true;
          } else if ("resourceMetrics" in document) {
            if (withMetrics) decodeMetricsRequest(document, result.metrics);
            used = true;
          } else if (Array.isArray(document.prefixes) || isRecord(document.report)) {
            result.summaries.push({ file, summary: document });
            used = true;
          }
        };
        // Without metrics (explain), a metrics request as the exporters write it is not even parsed,
        // and one cut off is no concern of this command's.
        const unwanted = withMetrics
          ? undefined
          : (line: string): boolean => {
              if (!line.startsWith(METRICS_REQUEST)) return false;
              used = true;
              return true;
            };
        const { skipped, duplicates } = readInputFile(file, route, {
          maxBytes: options.maxBytes,
          skipBroken: true,
          unwanted,
          seen,
        });
        if (skipped !== undefined) result.skipped.push(skipped);
        if (duplicates !== undefined) result.duplicates.push(duplicates);
        if (!used) result.unused.push(file);
      }
      return result;
    },
  );
}
