/**
 * taskjourney's OTLP JSON lines file exporters: what `startTelemetry({ fileDirectory })` writes
 * through, and, made by `createFileSpanExporter()` / `createFileMetricExporter()`, what any SDK
 * setup (NodeSDK, a TracerProvider of your own) writes through, for the `taskjourney` command
 * to read. One export request per line, in OpenTelemetry's OTLP/JSON encoding (otlp-transformer's
 * serializers, loaded on first use as the other exporters are).
 */
import { constants } from "node:fs";
import { appendFile, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { AggregationTemporality, type PushMetricExporter, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { configurationError } from "../configuration.js";
import { load } from "./load-dependency.js";

/**
 * Opened without blocking: a named pipe (FIFO) at a file's path with no reader would otherwise
 * block open() in libuv's thread pool for as long as none comes, every export and shutdown waiting
 * on it and the process unable to exit by itself. Non-blocking, that open fails at once (ENXIO,
 * counted and told), as does a write to a full pipe (EAGAIN); a regular file is unaffected.
 */
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | NONBLOCK;
const READ_FLAGS = constants.O_RDONLY | NONBLOCK;

/** Appends lines to one file, in order, one write at a time. */
export class JsonLinesFile {
  private pending: Promise<void>;
  constructor(readonly path: string) {
    // Its directory made when missing (startTelemetry has made it; an exporter of
    // createFileSpanExporter() may be the first to write there).
    this.pending = mkdir(dirname(path), { recursive: true })
      .then(() => endsLine(path))
      .then(
        // A process stopped while writing left the file's last line cut off: appending to it would
        // glue this process's first request onto it, and lose both to a reader. A new line keeps the
        // broken one apart, for the taskjourney command to skip with a warning.
        (ended) => (ended ? undefined : appendFile(path, "\n", { flag: APPEND_FLAGS })),
        () => undefined,
      );
  }

  /**
   * Appends `bytes` (UTF-8, as the serializer encoded them) and a newline. Written as they are:
   * decoding them to a string for appendFile to encode again cost a worker ≈ 420 B a task of
   * allocation with 1% traces (bench cluster-instructions --allocations, Node 24).
   */
  append(bytes: Uint8Array): Promise<void> {
    const line = Buffer.allocUnsafe(bytes.length + 1);
    line.set(bytes);
    line[bytes.length] = NEWLINE;
    const written = this.pending.then(() => appendFile(this.path, line, { flag: APPEND_FLAGS }));
    this.pending = written.catch(() => undefined);
    return written;
  }

  flush(): Promise<void> {
    return this.pending;
  }
}

/** Whether the file at `path` is missing, empty or ends in a newline: a line appended begins a line. */
async function endsLine(path: string): Promise<boolean> {
  let file;
  try {
    file = await open(path, READ_FLAGS);
  } catch {
    return true;
  }
  try {
    const { size } = await file.stat();
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    await file.read(last, 0, 1, size - 1);
    return last[0] === NEWLINE;
  } finally {
    await file.close();
  }
}

export interface JsonSerializer<T> {
  serializeRequest(request: T): Uint8Array | undefined;
}

/** A serializer at hand (startTelemetry loaded it), or one loaded on the first export. */
export type SerializerSource<T> = JsonSerializer<T> | (() => Promise<JsonSerializer<T>>);

export async function jsonSerializers(why = "fileDirectory"): Promise<{
  traces: JsonSerializer<ReadableSpan[]>;
  metrics: JsonSerializer<ResourceMetrics>;
}> {
  // The OTLP JSON encoding of the OTLP/HTTP JSON exporters, from their own dependency.
  const transformer = await load(
    () => import("@opentelemetry/otlp-transformer"),
    "@opentelemetry/otlp-transformer",
    why,
  );
  return { traces: transformer.JsonTraceSerializer, metrics: transformer.JsonMetricsSerializer };
}

const NEWLINE = 0x0a;

function writeRequest<T>(
  file: JsonLinesFile,
  source: SerializerSource<T>,
  request: T,
  done: (result: ExportResult) => void,
): void {
  if (typeof source === "function") {
    // Every export waits for the same load, so their lines keep their order.
    source().then(
      (serializer) => writeRequest(file, serializer, request, done),
      (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
    );
    return;
  }
  const serializer = source;
  let bytes: Uint8Array | undefined;
  try {
    bytes = serializer.serializeRequest(request);
  } catch (error) {
    done({ code: ExportResultCode.FAILED, error: error as Error });
    return;
  }
  if (bytes === undefined) {
    done({ code: ExportResultCode.FAILED, error: new Error("OTLP JSON serialization failed") });
    return;
  }
  file.append(bytes).then(
    () => done({ code: ExportResultCode.SUCCESS }),
    (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
  );
}

/**
 * Spans as OTLP JSON lines, one export request per line. Why our own: OpenTelemetry JS has no
 * file exporter (the Collector's is in Go); this writes its format with otlp-transformer's encoding.
 */
export class FileSpanExporter implements SpanExporter {
  private stopped = false;
  constructor(
    private readonly file: JsonLinesFile,
    private readonly serializer: SerializerSource<ReadableSpan[]>,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("exporter is shut down") });
      return;
    }
    writeRequest(this.file, this.serializer, spans, resultCallback);
  }

  forceFlush(): Promise<void> {
    return this.file.flush();
  }

  shutdown(): Promise<void> {
    this.stopped = true;
    return this.file.flush();
  }
}

/** Metrics as OTLP JSON lines, one export request per line (our own for the reason above). */
export class FileMetricExporter implements PushMetricExporter {
  private stopped = false;
  constructor(
    private readonly file: JsonLinesFile,
    private readonly serializer: SerializerSource<ResourceMetrics>,
    private readonly temporality: AggregationTemporality,
  ) {}

  export(resourceMetrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("exporter is shut down") });
      return;
    }
    writeRequest(this.file, this.serializer, resourceMetrics, resultCallback);
  }

  selectAggregationTemporality(): AggregationTemporality {
    return this.temporality;
  }

  forceFlush(): Promise<void> {
    return this.file.flush();
  }

  shutdown(): Promise<void> {
    this.stopped = true;
    return this.file.flush();
  }
}

/** What `createFileSpanExporter()` takes. */
export interface FileSpanExporterOptions {
  /** The file to append OTLP/JSON trace requests to, one a line; its directory is made when missing. */
  path: string;
}

/** What `createFileMetricExporter()` takes. */
export interface FileMetricExporterOptions {
  /** The file to append OTLP/JSON metric requests to, one a line; its directory is made when missing. */
  path: string;
  /**
   * The temporality asked of the SDK's own instruments: "cumulative" (the default) or "delta", as
   * the journeys' `temporality` (their metric producer's data is written as it comes).
   */
  temporality?: "cumulative" | "delta";
}

/**
 * A SpanExporter appending OTLP/JSON lines to `options.path`, for any SDK setup (NodeSDK's
 * `traceExporter`, a BatchSpanProcessor's `exporter`); `taskjourney explain` and `report` read the
 * file. A write that fails fails its export (the SDK's processor tells it through `diag`).
 * Throws a TypeError naming the option when `options` is bad.
 */
export function createFileSpanExporter(options: FileSpanExporterOptions): SpanExporter {
  const path = checkedPath("createFileSpanExporter", options);
  return new FileSpanExporter(new JsonLinesFile(path), lazySerializer("createFileSpanExporter", "traces"));
}

/**
 * A PushMetricExporter appending OTLP/JSON lines to `options.path`, for a
 * PeriodicExportingMetricReader carrying `journeys.metricProducer`; `taskjourney report` reads the
 * file. Throws a TypeError naming the option when `options` is bad.
 */
export function createFileMetricExporter(options: FileMetricExporterOptions): PushMetricExporter {
  const path = checkedPath("createFileMetricExporter", options);
  const temporality = options.temporality ?? "cumulative";
  if (temporality !== "cumulative" && temporality !== "delta")
    configurationError("createFileMetricExporter", 'option "temporality"', '"cumulative" or "delta"', temporality);
  return new FileMetricExporter(
    new JsonLinesFile(path),
    lazySerializer("createFileMetricExporter", "metrics"),
    temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
  );
}

function checkedPath(call: string, options: { path: string }): string {
  if (options === null || typeof options !== "object") configurationError(call, "options", "{ path }", options);
  if (typeof options.path !== "string" || options.path === "")
    configurationError(call, 'option "path"', "a file path", options.path);
  return options.path;
}

/**
 * otlp-transformer's serializer of `signal`, loaded on first use (memoized): the factories stay
 * synchronous, as an SDK's configuration wants them. A failed load fails each export with its
 * error (the missing package named, as `load` words it).
 */
function lazySerializer<K extends "traces" | "metrics">(
  call: string,
  signal: K,
): () => Promise<Awaited<ReturnType<typeof jsonSerializers>>[K]> {
  let loaded: Promise<Awaited<ReturnType<typeof jsonSerializers>>[K]> | undefined;
  return () => (loaded ??= jsonSerializers(call).then((serializers) => serializers[signal]));
}
