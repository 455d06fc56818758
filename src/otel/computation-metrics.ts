import { ValueType, type Attributes, type HrTime } from "@opentelemetry/api";
import type { DataPoint, MetricData, MetricDescriptor } from "@opentelemetry/sdk-metrics";
import type { Recorder } from "../recorder/recorder.js";
import type { Computation } from "../recorder/computations.js";
import {
  ATTR_TASK_COMPUTATION,
  ATTR_TASK_STATE,
  METRIC_COMPUTATION_ACTIVE,
  METRIC_COMPUTATION_TASKS,
  METRIC_COMPUTATION_TIME,
  METRIC_COMPUTATION_WALL,
} from "../shared/semconv.js";

/** Name, unit, value type and description of each (metric-producer.ts's METRIC_DESCRIPTORS holds them too). */
export const COMPUTATION_DESCRIPTORS = [
  [
    METRIC_COMPUTATION_TIME,
    "s",
    ValueType.DOUBLE,
    "Task-seconds of a computation's tasks in each state (live and recently finished computations only).",
  ],
  [
    METRIC_COMPUTATION_TASKS,
    "{task}",
    ValueType.INT,
    "Tasks of a computation ended, by the terminal state they ended in.",
  ],
  [METRIC_COMPUTATION_ACTIVE, "{task}", ValueType.INT, "Tasks of a computation not ended yet."],
  [
    METRIC_COMPUTATION_WALL,
    "s",
    ValueType.DOUBLE,
    "Wall seconds of a computation from its first task's start to its last task's end (to now while live).",
  ],
] as const;

const DESCRIPTORS: Readonly<Record<string, MetricDescriptor>> = Object.fromEntries(
  COMPUTATION_DESCRIPTORS.map(([name, unit, valueType, description]) => [
    name,
    Object.freeze({ name, unit, valueType, description }),
  ]),
);

// The SDK's enum values (metric-producer.ts, which a test checks against the SDK).
const DATA_POINT_GAUGE = 2;
const DATA_POINT_SUM = 3;
const TEMPORALITY_DELTA = 0;
const TEMPORALITY_CUMULATIVE = 1;

/** What one producer keeps of a computation it reported: attributes made once, and for delta its last values. */
interface Series {
  computation: Computation;
  /** Of its cumulative points: when this producer first saw it (a computation made since the producer began). */
  start: HrTime;
  /** By state id: `{ task.computation, task.state }`, made on first use. */
  byState: Array<Attributes | undefined>;
  alone: Attributes;
  /** Delta: the cumulative seconds and ended counts last reported, by state id. */
  previousSeconds: Float64Array | undefined;
  previousEnded: Float64Array | undefined;
  /** Its tasks and live tasks when last reported: none live and no task since is its final totals reported. */
  reportedTasks: number;
  reportedLive: number;
}

/**
 * The task.computation.* metrics of one metric producer: made at collection from the recorder's
 * computations (recorder/computations.ts), the live and recently finished ones, and those retired
 * since this producer's previous collection whose final totals it has not reported yet (the
 * recorder holds the last `limits.maxComputations` retired for that). A retired computation's
 * series end with it: what this producer kept of it is let go once it reported it, so its memory
 * is bounded by twice `limits.maxComputations` however many computations the process sees. One
 * retired and gone from the recorder's ring before this producer read it, or whose name a kept
 * computation has again, is counted `computation-unexported` (told once): never silence.
 */
export class ComputationMetrics {
  private readonly series = new Map<number, Series>();
  /** The end of this producer's previous collection: the start of a computation first seen now. */
  private previousEnd: HrTime | undefined = undefined;

  /** The recorder's `computations.retiredCount` when this producer last read the retired ones. */
  private retiredRead: number;
  /** The retired ones read at a collection (reused: one array for the producer's life). */
  private readonly retired: Computation[] = [];

  constructor(
    private readonly recorder: Recorder,
    private readonly delta: boolean,
  ) {
    // Retired before this producer existed: not its to export (its sums start now).
    this.retiredRead = recorder.computations.retiredCount;
  }

  produce(startTime: HrTime, endTime: HrTime): MetricData[] {
    const recorder = this.recorder;
    const machine = recorder.machine;
    const names = machine.names;
    const terminal = machine.terminal;
    const computations = recorder.computations;
    const kept = computations.all();
    const retired = this.retired;
    retired.length = 0;
    const overwritten = computations.retiredSince(this.retiredRead, retired);
    this.retiredRead = computations.retiredCount;
    const time: DataPoint<number>[] = [];
    const tasks: DataPoint<number>[] = [];
    const active: DataPoint<number>[] = [];
    const wall: DataPoint<number>[] = [];
    const now = kept.length === 0 && retired.length === 0 ? 0 : recorder.clock();
    // Kept ones: their series stay. Retired ones: reported once more (their final totals), unless
    // this producer reported those already, then let go.
    const seen = new Set<number>();
    for (const computation of kept) seen.add(computation.serial);
    const reporting = kept.slice();
    let clashed = 0;
    if (retired.length > 0) {
      const taken = new Set<string>();
      for (const computation of kept) taken.add(computation.name);
      // Newest first: of a name retired twice since the last collection, the later one is reported.
      for (let index = retired.length - 1; index >= 0; index--) {
        const computation = retired[index];
        const series = this.series.get(computation.serial);
        if (series !== undefined && series.reportedLive === 0 && series.reportedTasks === computation.tasks) continue;
        // Two series of one name in one collection would be one series to a backend: not reported.
        if (taken.has(computation.name)) clashed += 1;
        else {
          taken.add(computation.name);
          reporting.push(computation);
        }
      }
    }
    this.tellUnexported(overwritten, clashed);
    for (const computation of reporting) {
      const series = this.seriesOf(computation, startTime);
      series.reportedTasks = computation.tasks;
      series.reportedLive = computation.live;
      const start = this.delta ? startTime : series.start;
      for (let state = 0; state < names.length; state++) {
        const seconds = computation.seconds[state];
        if (seconds > 0) {
          const value = this.delta ? seconds - (series.previousSeconds![state] ?? 0) : seconds;
          if (this.delta) series.previousSeconds![state] = seconds;
          time.push({ startTime: start, endTime, attributes: this.stateAttributes(series, state), value });
        }
        const ended = computation.ended[state];
        if (terminal[state] === 1 && ended > 0) {
          const value = this.delta ? ended - series.previousEnded![state] : ended;
          if (this.delta) series.previousEnded![state] = ended;
          tasks.push({ startTime: start, endTime, attributes: this.stateAttributes(series, state), value });
        }
      }
      active.push({ startTime: endTime, endTime, attributes: series.alone, value: computation.live });
      const last = computation.live > 0 || computation.end === Number.NEGATIVE_INFINITY ? now : computation.end;
      wall.push({
        startTime: endTime,
        endTime,
        attributes: series.alone,
        value: Math.max(0, last - computation.start),
      });
    }
    // Retired: their series end here, and nothing of them is kept.
    for (const serial of this.series.keys()) if (!seen.has(serial)) this.series.delete(serial);
    retired.length = 0;
    this.previousEnd = endTime;
    const temporality = this.delta ? TEMPORALITY_DELTA : TEMPORALITY_CUMULATIVE;
    const metrics: MetricData[] = [];
    const push = (name: string, type: number, points: DataPoint<number>[], kind: number) => {
      if (points.length === 0) return;
      metrics.push({
        descriptor: DESCRIPTORS[name],
        aggregationTemporality: kind,
        dataPointType: type,
        dataPoints: points,
        ...(type === DATA_POINT_SUM ? { isMonotonic: true } : {}),
      } as MetricData);
    };
    push(METRIC_COMPUTATION_TIME, DATA_POINT_SUM, time, temporality);
    push(METRIC_COMPUTATION_TASKS, DATA_POINT_SUM, tasks, temporality);
    push(METRIC_COMPUTATION_ACTIVE, DATA_POINT_GAUGE, active, TEMPORALITY_CUMULATIVE);
    push(METRIC_COMPUTATION_WALL, DATA_POINT_GAUGE, wall, TEMPORALITY_CUMULATIVE);
    return metrics;
  }

  /** Retired computations this producer will never export: counted, and told once per cause. */
  private tellUnexported(overwritten: number, clashed: number): void {
    const failures = this.recorder.failures;
    const limit = this.recorder.computations.limit;
    if (overwritten > 0)
      failures.fault(
        "computation-unexported",
        `${overwritten} computation(s) finished and retired between two metric collections were never exported: more than limits.maxComputations (${limit}) retired in one collection interval. ` +
          "Raise limits.maxComputations above the computations one collection interval sees, or collect more often.",
        "computation-unexported",
        overwritten,
      );
    if (clashed > 0)
      failures.fault(
        "computation-unexported",
        `${clashed} retired computation(s) were not exported because a computation of the same name was begun again before the metrics were collected. ` +
          "Give each submission its own computation name (graph-<n>, a flow id), or raise limits.maxComputations so the finished one is kept until then.",
        "computation-unexported-name",
        clashed,
      );
  }

  private seriesOf(computation: Computation, startTime: HrTime): Series {
    let series = this.series.get(computation.serial);
    if (series === undefined) {
      const states = this.recorder.machine.names.length;
      series = {
        computation,
        // Its cumulative sums began after this producer's previous collection (or with the producer).
        start: this.previousEnd ?? startTime,
        byState: new Array<Attributes | undefined>(states),
        alone: Object.freeze({ [ATTR_TASK_COMPUTATION]: computation.name }),
        previousSeconds: this.delta ? new Float64Array(states) : undefined,
        previousEnded: this.delta ? new Float64Array(states) : undefined,
        reportedTasks: 0,
        reportedLive: 0,
      };
      this.series.set(computation.serial, series);
    }
    return series;
  }

  private stateAttributes(series: Series, state: number): Attributes {
    let attributes = series.byState[state];
    if (attributes === undefined) {
      attributes = Object.freeze({
        [ATTR_TASK_COMPUTATION]: series.computation.name,
        [ATTR_TASK_STATE]: this.recorder.machine.names[state],
      });
      series.byState[state] = attributes;
    }
    return attributes;
  }
}
