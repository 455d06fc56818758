/**
 * The journeys the plain OpenTelemetry way, as a user without taskjourney would record them: the
 * comparison every benchmark's ratios are made against. Shared by core, spans and instructions.
 */
import { ROOT_CONTEXT, trace, type Histogram, type Counter, type Tracer } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { library } from "./lib.js";
import { ACTIVITIES, noWork } from "./workload.js";

const { keySplit } = library;

/** A reader that collects on demand and never exports: attached, so the SDK really aggregates. */
export class HoldingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A MeterProvider with a reader attached, and the two instruments the plain journey records into. */
export function plainMetrics(): {
  meterProvider: MeterProvider;
  reader: HoldingReader;
  stateDuration: Histogram;
  executeTime: Counter;
} {
  const reader = new HoldingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const meter = meterProvider.getMeter("bench-plain-otel");
  return {
    meterProvider,
    reader,
    stateDuration: meter.createHistogram("task.state.duration", { unit: "s" }),
    executeTime: meter.createCounter("task.execute.time", { unit: "s" }),
  };
}

/** Clock reads the plain metrics journey makes itself. */
export const PLAIN_CLOCK_READS = 11;

/**
 * The worker journey with plain metrics: histogram.record(seconds, {task.prefix, task.state}) per
 * state visit, counter.add(seconds, {task.activity}) per activity, reading `now` as often as
 * taskjourney does (`clockReads`, at least PLAIN_CLOCK_READS).
 */
export function plainMetricsJourney(
  instruments: { stateDuration: Histogram; executeTime: Counter },
  now: () => number,
  clockReads = PLAIN_CLOCK_READS,
): (key: string) => void {
  const { stateDuration, executeTime } = instruments;
  const extraReads = Math.max(0, clockReads - PLAIN_CLOCK_READS);
  return (key) => {
    for (let i = 0; i < extraReads; i++) now();
    const prefix = keySplit(key);
    const waiting = now(); // released → waiting
    const ready = now(); // waiting → ready
    stateDuration.record(ready - waiting, { "task.prefix": prefix, "task.state": "waiting" });
    const executing = now(); // ready → executing
    stateDuration.record(executing - ready, { "task.prefix": prefix, "task.state": "ready" });
    now(); // the execute ledger opens
    for (const activity of ACTIVITIES) {
      const start = now();
      noWork();
      executeTime.add(now() - start, { "task.activity": activity });
    }
    const memory = now(); // the ledger ends (the worker's own executing → memory transition that follows records nothing more)
    stateDuration.record(memory - executing, { "task.prefix": prefix, "task.state": "executing" });
  };
}

/** The worker journey with plain spans: one live span per state visit, one per activity. */
export function plainSpansJourney(tracer: Tracer, key: string): void {
  const prefix = keySplit(key);
  const attributes = { "task.key": key, "task.prefix": prefix };
  // released → waiting
  const task = tracer.startSpan(`task ${prefix}`, { attributes });
  const parent = trace.setSpan(ROOT_CONTEXT, task);
  const waiting = tracer.startSpan("waiting", { attributes }, parent);
  // waiting → ready
  waiting.end();
  const ready = tracer.startSpan("ready", { attributes }, parent);
  // ready → executing
  ready.end();
  const executing = tracer.startSpan("executing", { attributes }, parent);
  // the execute ledger: three metered activities
  const inExecuting = trace.setSpan(ROOT_CONTEXT, executing);
  for (const activity of ACTIVITIES) {
    const span = tracer.startSpan(activity, undefined, inExecuting);
    noWork();
    span.end();
  }
  // executing → memory: the journey is over
  executing.end();
  task.end();
}
