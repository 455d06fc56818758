/**
 * The exporters startTelemetry builds, wrapped so that a failed export is counted and told
 * (ExportFailures) instead of being passed on. Passing FAILED on would only make the
 * BatchSpanProcessor or PeriodicExportingMetricReader hand it to the global error handler, a
 * `diag.error` line per failed batch (every 5 s, every metric interval: the noise rate-limiting
 * replaces), and reject forceFlush() and shutdown() into the host; neither retries on it, so
 * once counted here the export is done with, as far as they are concerned.
 */
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type {
  AggregationOption,
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { ExportTimeout, type ExportFailures, type Signal } from "./export-failures.js";

/**
 * Calls `inner` and reports to `resultCallback` once, counting a failure, a throw included. With
 * `answerAfterMillis`, an export still in flight then is answered, and counted when it ends: the
 * caller's own export timeout only stops its wait (the export goes on), so it would log a line
 * that says nothing was lost, and, with an interval shorter than a write, log it every time.
 * With `deadlineMillis` (an OTLP exporter's own timeout), an export still in flight then is
 * counted as a timeout and answered: what the exporter reports later changes nothing. The
 * exporter's own timeout is a socket's idle timeout, which an endpoint that sends a byte now and
 * then never lets fire; its connection is dropped at the same deadline by its agent
 * (deadline-agent.ts), whose timer, of the same duration and set later, runs after this one.
 */
function exportCounted(
  failures: ExportFailures,
  signal: Signal,
  destination: string,
  items: number,
  inner: (done: (result: ExportResult) => void) => void,
  resultCallback: (result: ExportResult) => void,
  answerAfterMillis: number | undefined,
  deadlineMillis: number | undefined,
): void {
  const pending = failures.begin(signal, destination, items);
  let settled = false;
  let answered = false;
  let answerTimer: ReturnType<typeof setTimeout> | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  const answer = (): void => {
    if (answered) return;
    answered = true;
    resultCallback({ code: ExportResultCode.SUCCESS });
  };
  const done = (result: ExportResult): void => {
    if (settled) return;
    settled = true;
    if (answerTimer !== undefined) clearTimeout(answerTimer);
    if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
    failures.settle(pending, result.error, result.code !== ExportResultCode.SUCCESS);
    answer();
  };
  try {
    inner(done);
  } catch (error) {
    done({ code: ExportResultCode.FAILED, error: error as Error });
  }
  if (settled) return;
  if (answerAfterMillis !== undefined && (deadlineMillis === undefined || answerAfterMillis < deadlineMillis)) {
    answerTimer = setTimeout(answer, answerAfterMillis);
    answerTimer.unref?.();
  }
  if (deadlineMillis !== undefined) {
    deadlineTimer = setTimeout(
      () => done({ code: ExportResultCode.FAILED, error: new ExportTimeout(deadlineMillis) }),
      deadlineMillis,
    );
    deadlineTimer.unref?.();
  }
}

export class CountedSpanExporter implements SpanExporter {
  /** Spans handed to export() so far: what left the batch span processor's queue (QueueCountedSpanProcessor). */
  handed = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly destination: string,
    private readonly failures: ExportFailures,
    /** The BatchSpanProcessor's exportTimeoutMillis: an export in flight longer is answered, and counted when it ends. */
    private readonly callerTimeoutMillis?: number,
    /** The inner exporter's own timeout, if it has one: an export in flight longer is counted as a timeout. */
    private readonly deadlineMillis?: number,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.handed += spans.length;
    exportCounted(
      this.failures,
      "traces",
      this.destination,
      spans.length,
      (done) => this.inner.export(spans, done),
      resultCallback,
      // The processor's timer starts before export() is called: ours must be due sooner.
      this.callerTimeoutMillis === undefined ? undefined : Math.max(1, Math.floor(this.callerTimeoutMillis * 0.9)),
      this.deadlineMillis,
    );
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** Data points in a collection: the items a metric export carries, as the semantic conventions count them. */
export function dataPointCount(resourceMetrics: ResourceMetrics): number {
  let count = 0;
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics) count += metric.dataPoints.length;
  return count;
}

export class CountedMetricExporter implements PushMetricExporter {
  // The inner exporter's choices, if it makes them (the reader's defaults otherwise).
  readonly selectAggregationTemporality?: (instrumentType: InstrumentType) => AggregationTemporality;
  readonly selectAggregation?: (instrumentType: InstrumentType) => AggregationOption;

  constructor(
    private readonly inner: PushMetricExporter,
    private readonly destination: string,
    private readonly failures: ExportFailures,
    /** The PeriodicExportingMetricReader's exportTimeoutMillis: an export in flight longer is answered, and counted when it ends. */
    private readonly callerTimeoutMillis?: number,
    /** The inner exporter's own timeout, if it has one: an export in flight longer is counted as a timeout. */
    private readonly deadlineMillis?: number,
  ) {
    if (inner.selectAggregationTemporality !== undefined)
      this.selectAggregationTemporality = (type) => inner.selectAggregationTemporality!(type);
    if (inner.selectAggregation !== undefined) this.selectAggregation = (type) => inner.selectAggregation!(type);
  }

  export(resourceMetrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    let items = 0;
    try {
      items = dataPointCount(resourceMetrics);
    } catch {
      // A shape this version does not know: counted as an export with 0 points.
    }
    exportCounted(
      this.failures,
      "metrics",
      this.destination,
      items,
      (done) => this.inner.export(resourceMetrics, done),
      resultCallback,
      // The same duration as the reader's timeout, whose timer it starts just after export()
      // returns: Node runs timers of one duration in the order they were set, so ours comes first
      // even when the event loop was blocked past both (a sooner one of another duration did not:
      // the reader's interval timer, due earlier, shares its list and ran it first).
      this.callerTimeoutMillis,
      this.deadlineMillis,
    );
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
