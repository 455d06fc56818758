import { ValueType, type Attributes, type HrTime } from "@opentelemetry/api";
import type {
  CollectionResult,
  DataPoint,
  ExponentialHistogram as OtlpExponentialHistogram,
  Histogram as OtlpHistogram,
  MetricData,
  MetricDescriptor,
  MetricProducer,
  ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { QUANTITY_UNITS, TRANSFER_OUTCOMES } from "../model/activities.js";
import type { ReadonlyExponentialHistogram } from "../model/statistics/index.js";
import type { Recorder } from "../recorder/recorder.js";
import { stateCell } from "../recorder/accumulators.js";
import {
  ATTR_DROPPED_REASON,
  ATTR_TASK_ACTIVITY,
  ATTR_TASK_PREFIX,
  ATTR_TASK_STATE,
  ATTR_TRANSFER_OUTCOME,
  INSTRUMENTATION_SCOPE,
  METRIC_ACTIVE,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_WALL,
  METRIC_OLDEST_ACTIVE,
  METRIC_DROPPED,
  METRIC_EXECUTE_TIME,
  METRIC_GATHER_SIZE,
  METRIC_EXECUTE_SIZE,
  METRIC_EXECUTE_COUNT,
  METRIC_GATHER_TIME,
  METRIC_SERVE_SIZE,
  METRIC_SERVE_TIME,
  METRIC_STATE_DURATION,
  METRIC_STATE_TIME,
  METRIC_TRANSITIONS,
  METRIC_WAIT_TIME,
} from "./semconv.js";
import { VERSION } from "../version.js";
import type { ProcessStalls } from "../runtime/process-stalls.js";
import { RuntimeMetrics } from "./runtime-metrics.js";
import { COMPUTATION_DESCRIPTORS, ComputationMetrics } from "./computation-metrics.js";

// The SDK's enums, by value: the core takes only types from @opentelemetry/sdk-metrics, so it
// runs with whatever SDK the user has. A test checks these against the SDK's own enums.
export const DATA_POINT_HISTOGRAM = 0;
export const DATA_POINT_EXPONENTIAL_HISTOGRAM = 1;
export const DATA_POINT_GAUGE = 2;
export const DATA_POINT_SUM = 3;
export const TEMPORALITY_DELTA = 0;
export const TEMPORALITY_CUMULATIVE = 1;

/** Name, unit, value type and description of every task metric, shared with the observable path. */
export const METRIC_DESCRIPTORS: Readonly<Record<string, MetricDescriptor>> = Object.freeze(
  Object.fromEntries(
    (
      [
        [METRIC_STATE_TIME, "s", ValueType.DOUBLE, "Time tasks spent in each state, by task prefix."],
        [METRIC_STATE_DURATION, "s", ValueType.DOUBLE, "Duration of each visit of a task to a state."],
        [METRIC_EXECUTE_TIME, "s", ValueType.DOUBLE, "Time spent executing tasks, by activity."],
        [METRIC_GATHER_TIME, "s", ValueType.DOUBLE, "Time spent gathering dependencies from peers, by activity."],
        [
          METRIC_WAIT_TIME,
          "s",
          ValueType.DOUBLE,
          "Time tasks waited for their dependencies, by the waiting task's prefix and activity.",
        ],
        [METRIC_GATHER_SIZE, "By", ValueType.INT, "Bytes gathered from peers, by transfer outcome."],
        [
          METRIC_SERVE_TIME,
          "s",
          ValueType.DOUBLE,
          "Time spent serving data to peers' gather_dep requests, by activity.",
        ],
        [METRIC_SERVE_SIZE, "By", ValueType.INT, "Bytes served to peers, by transfer outcome."],
        [
          METRIC_EXECUTE_SIZE,
          "By",
          ValueType.DOUBLE,
          "Bytes digested into executions (read, written, spilled), by activity.",
        ],
        [METRIC_EXECUTE_COUNT, "{count}", ValueType.DOUBLE, "Counts digested into executions, by activity."],
        [METRIC_TRANSITIONS, "{transition}", ValueType.INT, "Transitions of tasks into each state."],
        [METRIC_ACTIVE, "{task}", ValueType.INT, "Tasks currently in each state."],
        [
          METRIC_OLDEST_ACTIVE,
          "s",
          ValueType.DOUBLE,
          "Seconds since the oldest task still in a non-terminal state began its journey; 0 with none.",
        ],
        ...COMPUTATION_DESCRIPTORS,
        [METRIC_DROPPED, "{item}", ValueType.INT, "Telemetry inputs taskjourney dropped or repaired, by reason."],
      ] as const
    ).map(([name, unit, valueType, description]) => [name, Object.freeze({ name, unit, valueType, description })]),
  ),
);

/** The metrics reported as gauges (the rest are sums or histograms): observable gauges on the observable path. */
export const GAUGE_METRICS: ReadonlySet<string> = new Set([
  METRIC_ACTIVE,
  METRIC_OLDEST_ACTIVE,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_WALL,
]);

export interface MetricProducerOptions {
  temporality: "cumulative" | "delta";
  histogram: "exponential" | "explicit";
  explicitBuckets: readonly number[];
  executeTimeByPrefix: boolean;
  /** The process's stall watcher, when on: adds the v8js.gc.duration and nodejs.eventloop.delay.* metrics. */
  processStalls?: ProcessStalls;
}

/** Now, as HrTime. Not @opentelemetry/core's hrTime(): the main entry's one runtime dependency is @opentelemetry/api. */
function hrTimeNow(): HrTime {
  const millis = performance.timeOrigin + performance.now();
  const seconds = Math.floor(millis / 1000);
  const nanos = Math.round((millis - seconds * 1000) * 1e6);
  // Rounding up to a whole second carries into the seconds (a remainder would step back a second).
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

/**
 * Turns the recorder's accumulators into OTLP data points at collection time: this is where the
 * attribute objects are made, once per series per export, never per task. Pass it to a
 * MetricReader's `metricProducers`. With delta temporality it reports what changed since its
 * previous collection, so give it to one reader only.
 */
export class TaskMetricProducer implements MetricProducer {
  private readonly startTime = hrTimeNow();
  private lastCollection: HrTime = this.startTime;
  /** Cumulative values at the previous collection, by series id, for delta temporality. */
  private readonly previous = new Map<string, number>();
  private readonly previousHistograms = new Map<number, ReadonlyExponentialHistogram>();
  private readonly attributeCache = new Map<string, Attributes>();
  private readonly delta: boolean;
  private readonly runtime: RuntimeMetrics | undefined;
  private readonly computationMetrics: ComputationMetrics;

  constructor(
    private readonly recorder: Recorder,
    private readonly options: MetricProducerOptions,
  ) {
    this.delta = options.temporality === "delta";
    this.runtime =
      options.processStalls === undefined ? undefined : new RuntimeMetrics(options.processStalls, this.delta);
    this.computationMetrics = new ComputationMetrics(recorder, this.delta);
  }

  /** The SDK's MetricProducer.collect(); its options (a timeout) have nothing to wait for here. */
  async collect(_options?: Parameters<MetricProducer["collect"]>[0]): Promise<CollectionResult> {
    const endTime = hrTimeNow();
    const startTime = this.delta ? this.lastCollection : this.startTime;
    const metrics = this.produce(startTime, endTime);
    this.lastCollection = endTime;
    const resourceMetrics = {
      // A MetricReader keeps its MeterProvider's resource and takes only our scope metrics.
      resource: undefined,
      scopeMetrics: [{ scope: { name: INSTRUMENTATION_SCOPE, version: VERSION }, metrics }],
    } as unknown as ResourceMetrics;
    return { resourceMetrics, errors: [] };
  }

  /** The metrics as of now; exposed for tests and the report. */
  produce(startTime: HrTime, endTime: HrTime): MetricData[] {
    const recorder = this.recorder;
    const accumulators = recorder.accumulators;
    const prefixes = recorder.prefixes;
    const activities = recorder.activities;
    const activityCapacity = activities.limit;
    const temporality = this.delta ? TEMPORALITY_DELTA : TEMPORALITY_CUMULATIVE;

    const stateTime: DataPoint<number>[] = [];
    const transitions: DataPoint<number>[] = [];
    const active: DataPoint<number>[] = [];
    const durations: DataPoint<OtlpExponentialHistogram>[] = [];
    const explicitDurations: DataPoint<OtlpHistogram>[] = [];
    const prefixCount = prefixes.names.length + (prefixes.overflowed > 0 ? 1 : 0);
    const machine = recorder.machine;
    const stateNames = machine.names;
    for (let p = 0; p < prefixCount; p++) {
      const prefixId = p < prefixes.names.length ? p : prefixes.limit;
      const prefix = prefixes.name(prefixId);
      for (let state = 0; state < stateNames.length; state++) {
        const cell = stateCell(prefixId, state);
        if (accumulators.transitions[cell] === 0) continue;
        const stateName = stateNames[state];
        const attributes = this.attributes(`s\u0000${prefix}\u0000${stateName}`, {
          [ATTR_TASK_PREFIX]: prefix,
          [ATTR_TASK_STATE]: stateName,
        });
        transitions.push(this.sumPoint(`t${cell}`, accumulators.transitions[cell], attributes, startTime, endTime));
        if (machine.terminal[state] === 1) continue;
        active.push({ startTime: endTime, endTime, attributes, value: accumulators.active(cell) });
        if (accumulators.stateVisits(cell) === 0) continue;
        stateTime.push(this.sumPoint(`s${cell}`, accumulators.stateSeconds(cell), attributes, startTime, endTime));
        const statistics = accumulators.durations[cell];
        if (statistics === undefined) continue;
        if (this.options.histogram === "explicit") {
          explicitDurations.push({
            startTime,
            endTime,
            attributes,
            value: this.explicitHistogram(cell, statistics.histogram),
          });
        } else {
          durations.push({
            startTime,
            endTime,
            attributes,
            value: this.exponentialHistogram(cell, statistics.histogram),
          });
        }
      }
    }

    const executeTime: DataPoint<number>[] = [];
    const waitTime: DataPoint<number>[] = [];
    const byActivity = new Float64Array(activityCapacity);
    const units = QUANTITY_UNITS.length;
    /** task.execute.size and task.execute.count points, in QUANTITY_UNITS order. */
    const executeQuantities: DataPoint<number>[][] = QUANTITY_UNITS.map(() => []);
    const quantitiesByActivity = new Float64Array(activityCapacity * units);
    for (let p = 0; p < prefixCount; p++) {
      const prefixId = p < prefixes.names.length ? p : prefixes.limit;
      const prefix = prefixes.name(prefixId);
      for (let activity = 0; activity < activities.names.length; activity++) {
        const name = activities.names[activity];
        const cell = accumulators.activityCell(prefixId, activity);
        const executed = accumulators.executeSeconds[cell];
        if (executed > 0) {
          if (this.options.executeTimeByPrefix) {
            const attributes = this.attributes(`e\u0000${prefix}\u0000${name}`, {
              [ATTR_TASK_PREFIX]: prefix,
              [ATTR_TASK_ACTIVITY]: name,
            });
            executeTime.push(this.sumPoint(`e${cell}`, executed, attributes, startTime, endTime));
          } else {
            byActivity[activity] += executed;
          }
        }
        for (let unit = 0; unit < units; unit++) {
          const quantity = accumulators.executeQuantity(cell, unit);
          if (quantity === 0) continue;
          if (this.options.executeTimeByPrefix) {
            const attributes = this.attributes(`e\u0000${prefix}\u0000${name}`, {
              [ATTR_TASK_PREFIX]: prefix,
              [ATTR_TASK_ACTIVITY]: name,
            });
            executeQuantities[unit].push(
              this.sumPoint(`q${unit}\u0000${cell}`, quantity, attributes, startTime, endTime),
            );
          } else {
            quantitiesByActivity[activity * units + unit] += quantity;
          }
        }
        const waited = accumulators.waitSeconds[cell];
        if (waited > 0) {
          const attributes = this.attributes(`w\u0000${prefix}\u0000${name}`, {
            [ATTR_TASK_PREFIX]: prefix,
            [ATTR_TASK_ACTIVITY]: name,
          });
          waitTime.push(this.sumPoint(`w${cell}`, waited, attributes, startTime, endTime));
        }
      }
    }
    if (!this.options.executeTimeByPrefix) {
      for (let activity = 0; activity < activities.names.length; activity++) {
        if (byActivity[activity] === 0) continue;
        const name = activities.names[activity];
        const attributes = this.attributes(`a\u0000${name}`, { [ATTR_TASK_ACTIVITY]: name });
        executeTime.push(this.sumPoint(`ea${activity}`, byActivity[activity], attributes, startTime, endTime));
      }
      for (let activity = 0; activity < activities.names.length; activity++) {
        for (let unit = 0; unit < units; unit++) {
          const quantity = quantitiesByActivity[activity * units + unit];
          if (quantity === 0) continue;
          const name = activities.names[activity];
          const attributes = this.attributes(`a\u0000${name}`, { [ATTR_TASK_ACTIVITY]: name });
          executeQuantities[unit].push(
            this.sumPoint(`qa${unit}\u0000${activity}`, quantity, attributes, startTime, endTime),
          );
        }
      }
    }

    const gatherTime: DataPoint<number>[] = [];
    for (let activity = 0; activity < activities.names.length; activity++) {
      const seconds = accumulators.gatherSeconds[activity];
      if (seconds === 0) continue;
      const name = activities.names[activity];
      const attributes = this.attributes(`a\u0000${name}`, { [ATTR_TASK_ACTIVITY]: name });
      gatherTime.push(this.sumPoint(`g${activity}`, seconds, attributes, startTime, endTime));
    }

    const gatherSize: DataPoint<number>[] = [];
    for (let outcome = 0; outcome < TRANSFER_OUTCOMES.length; outcome++) {
      if (accumulators.transfers[outcome] === 0) continue;
      const name = TRANSFER_OUTCOMES[outcome];
      const attributes = this.attributes(`o\u0000${name}`, { [ATTR_TRANSFER_OUTCOME]: name });
      gatherSize.push(this.sumPoint(`b${outcome}`, accumulators.gatherBytes[outcome], attributes, startTime, endTime));
    }

    // The serving side of transfers (journeys.serve), like the fetching side above.
    const serveTotals = recorder.serveTotals;
    const serveTime: DataPoint<number>[] = [];
    for (let activity = 0; activity < activities.names.length; activity++) {
      const seconds = serveTotals.seconds[activity];
      if (seconds === 0) continue;
      const name = activities.names[activity];
      const attributes = this.attributes(`a\u0000${name}`, { [ATTR_TASK_ACTIVITY]: name });
      serveTime.push(this.sumPoint(`sv${activity}`, seconds, attributes, startTime, endTime));
    }
    const serveSize: DataPoint<number>[] = [];
    for (let outcome = 0; outcome < TRANSFER_OUTCOMES.length; outcome++) {
      if (serveTotals.count[outcome] === 0) continue;
      const name = TRANSFER_OUTCOMES[outcome];
      const attributes = this.attributes(`o\u0000${name}`, { [ATTR_TRANSFER_OUTCOME]: name });
      serveSize.push(this.sumPoint(`sb${outcome}`, serveTotals.bytes[outcome], attributes, startTime, endTime));
    }

    // By computation: live, recently finished and retired since the last collection; made before
    // taskjourney.dropped so that a computation this collection missed is counted in it already.
    const computations = this.computationMetrics.produce(startTime, endTime);
    const dropped: DataPoint<number>[] = [];
    for (const [reason, count] of accumulators.dropped) {
      const attributes = this.attributes(`d\u0000${reason}`, { [ATTR_DROPPED_REASON]: reason });
      dropped.push(this.sumPoint(`d${reason}`, count, attributes, startTime, endTime));
    }

    const metrics: MetricData[] = [];
    const push = (name: string, dataPointType: number, points: DataPoint<unknown>[], kindTemporality = temporality) => {
      if (points.length === 0) return;
      const isMonotonic = dataPointType === DATA_POINT_SUM ? { isMonotonic: true } : {};
      metrics.push({
        descriptor: METRIC_DESCRIPTORS[name],
        aggregationTemporality: kindTemporality,
        dataPointType,
        dataPoints: points,
        ...isMonotonic,
      } as MetricData);
    };
    push(METRIC_STATE_TIME, DATA_POINT_SUM, stateTime);
    push(METRIC_STATE_DURATION, DATA_POINT_EXPONENTIAL_HISTOGRAM, durations);
    push(METRIC_STATE_DURATION, DATA_POINT_HISTOGRAM, explicitDurations);
    push(METRIC_EXECUTE_TIME, DATA_POINT_SUM, executeTime);
    push(METRIC_GATHER_TIME, DATA_POINT_SUM, gatherTime);
    push(METRIC_WAIT_TIME, DATA_POINT_SUM, waitTime);
    push(METRIC_GATHER_SIZE, DATA_POINT_SUM, gatherSize);
    push(METRIC_SERVE_TIME, DATA_POINT_SUM, serveTime);
    push(METRIC_SERVE_SIZE, DATA_POINT_SUM, serveSize);
    push(METRIC_EXECUTE_SIZE, DATA_POINT_SUM, executeQuantities[QUANTITY_UNITS.indexOf("bytes")]);
    push(METRIC_EXECUTE_COUNT, DATA_POINT_SUM, executeQuantities[QUANTITY_UNITS.indexOf("count")]);
    push(METRIC_TRANSITIONS, DATA_POINT_SUM, transitions);
    push(METRIC_ACTIVE, DATA_POINT_GAUGE, active, TEMPORALITY_CUMULATIVE);
    // The head of the recorder's live list (begin order): O(1) at collection, nothing per task.
    const oldest = recorder.oldestLiveJourney();
    const age = oldest === undefined ? 0 : Math.max(0, recorder.clock() - oldest.start);
    push(
      METRIC_OLDEST_ACTIVE,
      DATA_POINT_GAUGE,
      [{ startTime: endTime, endTime, attributes: {}, value: age }],
      TEMPORALITY_CUMULATIVE,
    );
    for (const metric of computations) metrics.push(metric);
    push(METRIC_DROPPED, DATA_POINT_SUM, dropped);
    if (this.runtime !== undefined) metrics.push(...this.runtime.produce(startTime, endTime));
    return metrics;
  }

  private attributes(id: string, make: Attributes): Attributes {
    // Series are few and stable: one frozen attribute object per series for the process's life.
    let attributes = this.attributeCache.get(id);
    if (attributes === undefined) {
      attributes = Object.freeze(make);
      this.attributeCache.set(id, attributes);
    }
    return attributes;
  }

  private sumPoint(
    series: string,
    cumulative: number,
    attributes: Attributes,
    startTime: HrTime,
    endTime: HrTime,
  ): DataPoint<number> {
    let value = cumulative;
    if (this.delta) {
      value = cumulative - (this.previous.get(series) ?? 0);
      this.previous.set(series, cumulative);
    }
    return { startTime, endTime, attributes, value };
  }

  /** The cell's data point: cumulative, or (delta) what was recorded since the last collection. */
  private exponentialHistogram(cell: number, histogram: ReadonlyExponentialHistogram): OtlpExponentialHistogram {
    if (!this.delta) return subtractHistograms(histogram, undefined);
    const previous = this.previousHistograms.get(cell);
    this.previousHistograms.set(cell, histogram.clone());
    return subtractHistograms(histogram, previous);
  }

  private explicitHistogram(cell: number, histogram: ReadonlyExponentialHistogram): OtlpHistogram {
    return toExplicitBuckets(this.exponentialHistogram(cell, histogram), this.options.explicitBuckets);
  }
}

/**
 * What was recorded between `previous` and `current` (both cumulative; `current` may have
 * downscaled since), or all of `current` without a `previous`. Min and max of an interval are
 * unknown, so they are left out of a difference.
 */
export function subtractHistograms(
  current: ReadonlyExponentialHistogram,
  previous: ReadonlyExponentialHistogram | undefined,
): OtlpExponentialHistogram {
  const counts = current.positiveBucketCounts();
  const offset = current.positiveOffset;
  if (previous === undefined) {
    return {
      count: current.count,
      sum: current.sum,
      scale: current.scale,
      zeroCount: current.zeroCount,
      positive: { offset, bucketCounts: counts },
      negative: { offset: 0, bucketCounts: [] },
      min: current.min,
      max: current.max,
    };
  }
  const shift = previous.scale - current.scale;
  const previousCounts = previous.positiveBucketCounts();
  for (let i = 0; i < previousCounts.length; i++) {
    const index = Math.floor((previous.positiveOffset + i) / 2 ** shift) - offset;
    if (index >= 0 && index < counts.length) counts[index] -= previousCounts[i];
  }
  return {
    count: current.count - previous.count,
    sum: current.sum - previous.sum,
    scale: current.scale,
    zeroCount: current.zeroCount - previous.zeroCount,
    positive: { offset, bucketCounts: counts },
    negative: { offset: 0, bucketCounts: [] },
  };
}

/**
 * Re-buckets an exponential histogram into explicit boundaries, for pull-mode Prometheus users.
 * Each exponential bucket's count goes to the explicit bucket holding its log-midpoint, so a
 * count can land one explicit bucket off only when an explicit boundary falls inside an
 * exponential bucket, which at the default scale spans well under 1% of its value.
 */
export function toExplicitBuckets(source: OtlpExponentialHistogram, boundaries: readonly number[]): OtlpHistogram {
  const counts = new Array<number>(boundaries.length + 1).fill(0);
  const place = (value: number, count: number) => {
    let index = 0;
    while (index < boundaries.length && value > boundaries[index]) index++;
    counts[index] += count;
  };
  if (source.zeroCount > 0) place(0, source.zeroCount);
  const base = 2 ** (2 ** -source.scale);
  source.positive.bucketCounts.forEach((count, i) => {
    if (count === 0) return;
    const lower = base ** (source.positive.offset + i);
    place(lower * Math.sqrt(base), count);
  });
  return {
    buckets: { boundaries: [...boundaries], counts },
    sum: source.sum,
    count: source.count,
    min: source.min,
    max: source.max,
  };
}
