import { ValueType, type Attributes, type HrTime } from "@opentelemetry/api";
import type { DataPoint, Histogram as OtlpHistogram, MetricData, MetricDescriptor } from "@opentelemetry/sdk-metrics";
import { GC_TYPES } from "../model/stalls.js";
import { GC_DURATION_BUCKETS, type EventLoopDelay, type ProcessStalls } from "../runtime/process-stalls.js";

// The SDK's enum values (see metric-producer.ts, which a test checks against the SDK).
const DATA_POINT_HISTOGRAM = 0;
const DATA_POINT_GAUGE = 2;
const TEMPORALITY_DELTA = 0;
const TEMPORALITY_CUMULATIVE = 1;

/** The OpenTelemetry semantic conventions' names for V8 and Node.js runtime metrics. */
export const METRIC_GC_DURATION = "v8js.gc.duration";
export const ATTR_GC_TYPE = "v8js.gc.type";
/** `nodejs.eventloop.delay.<statistic>`: min, max, mean, stddev, p50, p90, p99. */
export const METRIC_EVENT_LOOP_DELAY_PREFIX = "nodejs.eventloop.delay.";

export const DELAY_STATISTICS = ["min", "max", "mean", "stddev", "p50", "p90", "p99"] as const satisfies ReadonlyArray<
  keyof EventLoopDelay
>;

const DELAY_DESCRIPTIONS: Record<(typeof DELAY_STATISTICS)[number], string> = {
  min: "Event loop minimum delay.",
  max: "Event loop maximum delay.",
  mean: "Event loop mean delay.",
  stddev: "Event loop standard deviation delay.",
  p50: "Event loop 50 percentile delay.",
  p90: "Event loop 90 percentile delay.",
  p99: "Event loop 99 percentile delay.",
};

const GC_DESCRIPTOR: MetricDescriptor = Object.freeze({
  name: METRIC_GC_DURATION,
  unit: "s",
  valueType: ValueType.DOUBLE,
  description: "Garbage collection duration.",
});

const DELAY_DESCRIPTORS: readonly MetricDescriptor[] = DELAY_STATISTICS.map((statistic) =>
  Object.freeze({
    name: METRIC_EVENT_LOOP_DELAY_PREFIX + statistic,
    unit: "s",
    valueType: ValueType.DOUBLE,
    description: DELAY_DESCRIPTIONS[statistic],
  }),
);

const GC_ATTRIBUTES: readonly Attributes[] = GC_TYPES.map((type) => Object.freeze({ [ATTR_GC_TYPE]: type }));

/**
 * The process-stall metrics of one metric producer: `v8js.gc.duration` (a histogram per GC type,
 * with the conventions' buckets) and the `nodejs.eventloop.delay.*` gauges. Made at collection
 * time from ProcessStalls' cumulative counts; with delta temporality, each producer keeps what it
 * reported last. The delay gauges describe the interval since the previous collection of any
 * producer of these journeys (the delay histogram is reset when read).
 */
export class RuntimeMetrics {
  private previousBuckets: Float64Array | undefined;
  private previousCounts: Float64Array | undefined;
  private previousSums: Float64Array | undefined;

  constructor(
    private readonly stalls: ProcessStalls,
    private readonly delta: boolean,
  ) {}

  produce(startTime: HrTime, endTime: HrTime): MetricData[] {
    const stalls = this.stalls;
    const width = GC_DURATION_BUCKETS.length + 1;
    const gcPoints: DataPoint<OtlpHistogram>[] = [];
    for (let type = 0; type < GC_TYPES.length; type++) {
      let count = stalls.gcCounts[type];
      if (count === 0) continue;
      let sum = stalls.gcSums[type];
      const counts = Array.from(stalls.gcBuckets.subarray(type * width, (type + 1) * width));
      if (this.delta && this.previousCounts !== undefined) {
        count -= this.previousCounts[type];
        sum -= this.previousSums![type];
        for (let bucket = 0; bucket < width; bucket++) counts[bucket] -= this.previousBuckets![type * width + bucket];
      }
      gcPoints.push({
        startTime,
        endTime,
        attributes: GC_ATTRIBUTES[type],
        value: { buckets: { boundaries: [...GC_DURATION_BUCKETS], counts }, sum, count },
      });
    }
    if (this.delta) {
      this.previousBuckets = Float64Array.from(stalls.gcBuckets);
      this.previousCounts = Float64Array.from(stalls.gcCounts);
      this.previousSums = Float64Array.from(stalls.gcSums);
    }
    const metrics: MetricData[] = [];
    if (gcPoints.length > 0) {
      metrics.push({
        descriptor: GC_DESCRIPTOR,
        aggregationTemporality: this.delta ? TEMPORALITY_DELTA : TEMPORALITY_CUMULATIVE,
        dataPointType: DATA_POINT_HISTOGRAM,
        dataPoints: gcPoints,
      } as MetricData);
    }
    const delay = stalls.eventLoopDelay();
    if (delay !== undefined) {
      DELAY_STATISTICS.forEach((statistic, index) => {
        metrics.push({
          descriptor: DELAY_DESCRIPTORS[index],
          aggregationTemporality: TEMPORALITY_CUMULATIVE,
          dataPointType: DATA_POINT_GAUGE,
          dataPoints: [{ startTime: endTime, endTime, attributes: {}, value: delay[statistic] }],
        } as MetricData);
      });
    }
    return metrics;
  }
}
