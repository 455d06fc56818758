/**
 * The span processors startTelemetry builds: a BatchSpanProcessor whose spans dropped on a full
 * queue are counted as export failures of error type `queue_full` (the value the OpenTelemetry
 * semantic conventions give `otel.sdk.processor.span.processed` for them) and told once through
 * the same rate-limited warnings, instead of vanishing into the processor's private count and
 * one debug line.
 *
 * Why a wrapper, not the SDK's own `selfObsMeterProvider`: that reports the drops as SDK metrics
 * (useful, and a user may still turn them on) but tells no one, and taskjourney's rule is that a
 * user learns of every kind of loss on stderr without setting anything up. The wrapper keeps the
 * processor's arithmetic rather than reading its private queue: a span is queued when the
 * processor takes it and leaves the queue when a batch of it is handed to the exporter
 * (`CountedSpanExporter.handed`), so the queue holds `taken - handed` spans, and a span that finds
 * it at `maxQueueSize` is dropped here, before the processor sees it. (The processor takes a batch
 * from its queue before it hands it over, so its queue never holds more than `taken - handed`
 * and never reaches its own limit, which is the same.)
 */
import { TraceFlags, type Context } from "@opentelemetry/api";
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from "@opentelemetry/sdk-trace";
import type { CountedSpanExporter } from "./counted-exporters.js";
import { QueueFull, type ExportFailures } from "./export-failures.js";

/** The BatchSpanProcessor's settings (the OTEL_BSP_* variables, read by startTelemetry). */
export interface BatchSettings {
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
}

/** The defaults of the specification (and of the SDK's BatchSpanProcessor). */
export const BATCH_DEFAULTS: BatchSettings = {
  scheduledDelayMillis: 5000,
  exportTimeoutMillis: 30000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
};

export class QueueCountedSpanProcessor implements SpanProcessor {
  private readonly inner: BatchSpanProcessor;
  private readonly maxQueueSize: number;
  /** Spans the processor took into its queue. */
  private taken = 0;
  private shutDown = false;
  private readonly queueFull: QueueFull;

  constructor(
    private readonly exporter: CountedSpanExporter,
    settings: BatchSettings,
    private readonly destination: string,
    private readonly failures: ExportFailures,
  ) {
    // The processor lowers a batch size above the queue's to the queue's (and warns): so does this.
    this.maxQueueSize = settings.maxQueueSize;
    this.inner = new BatchSpanProcessor({ ...settings, exporter });
    this.queueFull = new QueueFull(this.maxQueueSize);
  }

  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    // As the processor decides: nothing after shutdown, nothing unsampled.
    if (!this.shutDown && (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) {
      // The drop is decided here and the span kept from the processor, whose queue therefore
      // never fills: it would otherwise log a "Dropped N spans because maxQueueSize reached"
      // warning of its own beside the one told here (a user trial saw both on stderr).
      if (this.taken - this.exporter.handed >= this.maxQueueSize) {
        this.failures.record("traces", this.destination, 1, this.queueFull, 0);
        return;
      }
      this.taken++;
    }
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    this.shutDown = true;
    return this.inner.shutdown();
  }
}
