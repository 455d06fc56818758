import type { MeterProvider } from "@opentelemetry/api";
import { GAUGE_METRICS, METRIC_DESCRIPTORS, type TaskMetricProducer } from "./metric-producer.js";
import { INSTRUMENTATION_SCOPE, METRIC_STATE_DURATION } from "./semconv.js";
import { VERSION } from "../version.js";

/**
 * For users who cannot add a metric producer to their reader: the sums and gauges (not the
 * duration histogram) of `producer` (a cumulative one) as observable instruments on a
 * MeterProvider they passed explicitly. Returns what removes them (at shutdown).
 */
export function observeThrough(meterProvider: MeterProvider, producer: TaskMetricProducer): () => void {
  const meter = meterProvider.getMeter(INSTRUMENTATION_SCOPE, VERSION);
  const instruments = new Map<string, ReturnType<typeof meter.createObservableCounter>>();
  // The producer's own names, units, value types and descriptions; the histogram has no
  // observable instrument.
  for (const { name, unit, valueType, description } of Object.values(METRIC_DESCRIPTORS)) {
    if (name === METRIC_STATE_DURATION) continue;
    const instrumentOptions = { unit, valueType, description };
    instruments.set(
      name,
      GAUGE_METRICS.has(name)
        ? meter.createObservableGauge(name, instrumentOptions)
        : meter.createObservableCounter(name, instrumentOptions),
    );
  }
  const callback = (result: {
    observe(instrument: unknown, value: number, attributes?: Record<string, unknown>): void;
  }) => {
    const now: [number, number] = [0, 0];
    for (const metric of producer.produce(now, now)) {
      const instrument = instruments.get(metric.descriptor.name);
      if (instrument === undefined || metric.dataPointType === 0 || metric.dataPointType === 1) continue;
      for (const point of metric.dataPoints) result.observe(instrument, point.value as number, point.attributes);
    }
  };
  const observables = [...instruments.values()];
  meter.addBatchObservableCallback(callback as never, observables);
  return () => meter.removeBatchObservableCallback(callback as never, observables);
}
