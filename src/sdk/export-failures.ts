/**
 * Export failures of taskjourney/sdk: every failed export of spans or metrics is counted (items
 * lost, by signal and error type) and told through `diag.warn`, the first of each kind at once
 * and then at most once per `repeatMillis` with what was lost since. Export is never the hot
 * path: this runs once per export request, not per transition.
 */

export type Signal = "traces" | "metrics";

/** One kind of export failure: its signal, destination and error type, with what it lost. */
export interface ExportFailure {
  readonly signal: Signal;
  /** Where the export went: an OTLP URL or a file path. */
  readonly destination: string;
  /** `error.type` as the OpenTelemetry semantic conventions use it: an HTTP status ("500"), a network error code ("ECONNREFUSED"), "timeout", "retryable", … */
  readonly errorType: string;
  /** Spans or metric data points that did not reach the destination. */
  readonly items: number;
  /** Export requests that failed (0 for spans dropped before any export: `queue_full`). */
  readonly exports: number;
}

interface Kind {
  signal: Signal;
  destination: string;
  errorType: string;
  items: number;
  exports: number;
  /** Whether it was told yet; when last (`now()` milliseconds), and what it lost up to then. */
  told: boolean;
  toldAt: number;
  itemsTold: number;
  exportsTold: number;
}

/** The phrase each error type of the OTLP/HTTP exporters means, for the warning. */
const MEANING: Record<string, string> = {
  timeout: "no whole answer within the export timeout",
  retryable: "answered 429, 502, 503 or 504 (or not at all) on every attempt until the export timeout",
  concurrency_limit: "too many exports to it still pending",
  shutdown_deadline: "still under way when shutdown stopped waiting",
  queue_full:
    "the batch span processor's queue was full (maxQueueSize, OTEL_BSP_MAX_QUEUE_SIZE): spans ended faster than they were exported",
  ECONNREFUSED: "nothing listening",
  ECONNRESET: "connection reset",
  ENXIO: "a named pipe (FIFO) there with no process reading it",
  EAGAIN: "a named pipe (FIFO) there whose reader does not keep up",
};

/**
 * The `error.type` of a failed export, low-cardinality as the semantic conventions ask: the HTTP
 * status of an OTLPExporterError, a Node.js network error's code, "timeout", "retryable" (the
 * exporter gave up retrying 429 / 502 / 503 / 504), else the error's class name or "_OTHER".
 */
export function errorTypeOf(error: unknown): string {
  if (error === null || typeof error !== "object") return "_OTHER";
  const { code, status, message, name } = error as {
    code?: unknown;
    status?: unknown;
    message?: unknown;
    name?: unknown;
  };
  // An HTTP status: OTLPExporterError's `code`, ZipkinAnswerError's `status` (its `code` is a TJ_ one).
  for (const http of [code, status])
    if (typeof http === "number" && Number.isInteger(http) && http >= 100 && http <= 599) return String(http);
  if (typeof code === "string" && /^E[A-Z0-9_]+$/.test(code)) return code;
  const text = typeof message === "string" ? message : "";
  if (error instanceof ExportTimeout) return "timeout";
  if (error instanceof ShutdownDeadline) return "shutdown_deadline";
  if (error instanceof QueueFull) return "queue_full";
  if (/timed? ?out/i.test(text)) return "timeout";
  if (/retryable status/i.test(text)) return "retryable";
  if (/concurren(t|cy) (export )?limit/i.test(text)) return "concurrency_limit";
  return typeof name === "string" && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) && name !== "Error" ? name : "_OTHER";
}

/**
 * What an OTLP export still under way at its exporter's timeout failed with: no whole answer by
 * then, the headers and body of a 200 included (the connection is dropped).
 */
export class ExportTimeout extends Error {
  override name = "ExportTimeout";
  readonly code = "TJ_EXPORT_TIMEOUT";
  constructor(milliseconds: number) {
    super(`the request was not answered in whole within its ${milliseconds} ms; its connection was dropped`);
  }
}

/** What an export still under way when shutdown stopped waiting for it failed with. */
export class ShutdownDeadline extends Error {
  override name = "ShutdownDeadline";
  readonly code = "TJ_SHUTDOWN_DEADLINE";
  constructor(milliseconds: number) {
    super(`not finished when shutdown stopped waiting after ${milliseconds} ms`);
  }
}

/** What a span dropped on the batch span processor's full queue is counted as (error.type `queue_full`). */
export class QueueFull extends Error {
  override name = "QueueFull";
  readonly code = "TJ_QUEUE_FULL";
  constructor(maxQueueSize: number) {
    super(`its queue held maxQueueSize (${maxQueueSize}) spans not yet exported`);
  }
}

/** One export under way: settled once, by its exporter or by abandonPending(). */
export interface PendingExport {
  readonly signal: Signal;
  readonly destination: string;
  readonly items: number;
  settled: boolean;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return typeof error;
  }
}

export interface ExportFailuresOptions {
  /** Where warnings go: `diag.warn`, given by the caller. */
  tell: (message: string) => void;
  /** Milliseconds, for rate-limiting; default Date.now. */
  now?: () => number;
  /** The least time between two warnings of one kind; default one minute. */
  repeatMillis?: number;
}

export class ExportFailures {
  private readonly kinds = new Map<string, Kind>();
  private readonly pending = new Set<PendingExport>();
  private readonly tell: (message: string) => void;
  private readonly now: () => number;
  private readonly repeatMillis: number;

  constructor(options: ExportFailuresOptions) {
    this.tell = options.tell;
    this.now = options.now ?? Date.now;
    this.repeatMillis = options.repeatMillis ?? 60_000;
  }

  /** An export handed to an exporter; settle() it when the exporter reports. */
  begin(signal: Signal, destination: string, items: number): PendingExport {
    const pending: PendingExport = { signal, destination, items, settled: false };
    this.pending.add(pending);
    return pending;
  }

  /** The exporter's report of `pending`: a failure is recorded, unless abandonPending() already counted it. */
  settle(pending: PendingExport, error: unknown, failed: boolean): void {
    if (pending.settled) return;
    pending.settled = true;
    this.pending.delete(pending);
    if (failed) this.record(pending.signal, pending.destination, pending.items, error);
  }

  /**
   * At a shutdown whose deadline passed: every export still under way is counted as failed
   * (error.type shutdown_deadline), since the process may exit before it ends.
   */
  abandonPending(milliseconds: number): void {
    const error = new ShutdownDeadline(milliseconds);
    for (const pending of [...this.pending]) this.settle(pending, error, true);
  }

  /**
   * One failed export of `items` spans or data points to `destination` (`exports` 0: items lost
   * before any export, a full queue's). Never throws.
   */
  record(signal: Signal, destination: string, items: number, error: unknown, exports = 1): void {
    try {
      const errorType = errorTypeOf(error);
      const id = `${signal}\u0000${destination}\u0000${errorType}`;
      let kind = this.kinds.get(id);
      if (kind === undefined) {
        kind = {
          signal,
          destination,
          errorType,
          items: 0,
          exports: 0,
          told: false,
          toldAt: 0,
          itemsTold: 0,
          exportsTold: 0,
        };
        this.kinds.set(id, kind);
      }
      kind.items += items;
      kind.exports += exports;
      const now = this.now();
      if (!kind.told) {
        this.told(kind, now);
        const meaning = MEANING[errorType] === undefined ? "" : ` (${MEANING[errorType]})`;
        this.tell(
          `taskjourney: exporting ${signal} to ${destination} failed${meaning}: ${describeError(error)}; ${items} ${unit(signal, items)} lost. ` +
            `Counted in taskjourney.export.failures{signal="${signal}",error.type="${errorType}"}; further failures of this kind are told at most once every ${Math.round(this.repeatMillis / 1000)} s.`,
        );
      } else if (now - kind.toldAt >= this.repeatMillis) {
        const failedExports = kind.exports - kind.exportsTold;
        const lost = kind.items - kind.itemsTold;
        const seconds = Math.round((now - kind.toldAt) / 1000);
        this.told(kind, now);
        const failed = failedExports === 0 ? "" : `${failedExports} more failed exports, `;
        this.tell(
          `taskjourney: exporting ${signal} to ${destination} still fails (${errorType}): ${failed}${lost} ${unit(signal, lost)} lost in the last ${seconds} s.`,
        );
      }
    } catch {
      // Accounting must not become the exporter's failure.
    }
  }

  /**
   * At shutdown: what each kind lost since it was last told, told now, since the process may exit
   * before the next interval. Without this a run's stderr would say only what its first failure lost.
   */
  tellUntold(): void {
    for (const kind of this.kinds.values()) {
      const failedExports = kind.exports - kind.exportsTold;
      const lost = kind.items - kind.itemsTold;
      if (failedExports === 0 && lost === 0) continue;
      this.told(kind, this.now());
      const failed = failedExports === 0 ? "" : `${failedExports} more failed exports, `;
      this.tell(
        `taskjourney: exporting ${kind.signal} to ${kind.destination} failed (${kind.errorType}) until shutdown: ${failed}${lost} more ${unit(kind.signal, lost)} lost, ${kind.items} in all.`,
      );
    }
  }

  /** What failed so far, one entry per kind, in the order the kinds first failed. */
  failures(): ExportFailure[] {
    return [...this.kinds.values()].map(({ signal, destination, errorType, items, exports }) => ({
      signal,
      destination,
      errorType,
      items,
      exports,
    }));
  }

  /** Items lost by (signal, error type), summed over destinations: the points of taskjourney.export.failures. */
  totals(): Array<{ signal: Signal; errorType: string; items: number }> {
    const totals = new Map<string, { signal: Signal; errorType: string; items: number }>();
    for (const kind of this.kinds.values()) {
      const id = `${kind.signal}\u0000${kind.errorType}`;
      const total = totals.get(id);
      if (total === undefined) totals.set(id, { signal: kind.signal, errorType: kind.errorType, items: kind.items });
      else total.items += kind.items;
    }
    return [...totals.values()];
  }

  private told(kind: Kind, now: number): void {
    kind.told = true;
    kind.toldAt = now;
    kind.itemsTold = kind.items;
    kind.exportsTold = kind.exports;
  }
}

function unit(signal: Signal, count: number): string {
  if (signal === "traces") return count === 1 ? "span" : "spans";
  return count === 1 ? "metric data point" : "metric data points";
}
