import { DurationStatistics } from "../model/statistics/index.js";
import { TRANSFER_OUTCOMES } from "../model/activities.js";

/**
 * Running totals per (prefix, state) and per (prefix, activity), in typed arrays indexed by
 * interned ids: the hot path adds to a slot, the metric producer reads them at collection.
 * Everything is cumulative since construction; delta temporality is computed by the producer.
 */
export class Accumulators {
  /** Seconds spent in each (prefix, state), summed over finished visits. */
  readonly stateSeconds: Float64Array;
  /** Finished visits per (prefix, state). */
  readonly stateVisits: Float64Array;
  /** Entries into each (prefix, state), terminal states included. */
  readonly transitions: Float64Array;
  /** Journeys currently in each (prefix, state); terminal states are never counted. */
  readonly active: Float64Array;
  /** Per-visit durations per (prefix, state), created at the first visit. */
  readonly durations: Array<DurationStatistics | undefined>;
  /** Execute ledger self seconds per (prefix, activity). */
  readonly executeSeconds: Float64Array;
  /** Gather ledger self seconds per activity. */
  readonly gatherSeconds: Float64Array;
  /** Apportioned waiting seconds per (dependent prefix, activity). */
  readonly waitSeconds: Float64Array;
  /** Transferred bytes per transfer outcome, in TRANSFER_OUTCOMES order. */
  readonly gatherBytes = new Float64Array(TRANSFER_OUTCOMES.length);
  /** Finished transfers per outcome. */
  readonly transfers = new Float64Array(TRANSFER_OUTCOMES.length);
  /** Dropped or repaired inputs per reason. */
  readonly dropped = new Map<string, number>();

  constructor(
    readonly prefixCapacity: number,
    readonly stateCount: number,
    readonly activityCapacity: number,
    private readonly makeStatistics: () => DurationStatistics,
  ) {
    const stateCells = prefixCapacity * stateCount;
    const activityCells = prefixCapacity * activityCapacity;
    this.stateSeconds = new Float64Array(stateCells);
    this.stateVisits = new Float64Array(stateCells);
    this.transitions = new Float64Array(stateCells);
    this.active = new Float64Array(stateCells);
    this.durations = new Array<DurationStatistics | undefined>(stateCells).fill(undefined);
    this.executeSeconds = new Float64Array(activityCells);
    this.gatherSeconds = new Float64Array(activityCapacity);
    this.waitSeconds = new Float64Array(activityCells);
  }

  /** A finished visit of `seconds` in state cell `cell` (prefixId * stateCount + stateId). */
  visit(cell: number, seconds: number): void {
    this.stateSeconds[cell] += seconds;
    this.stateVisits[cell] += 1;
    let statistics = this.durations[cell];
    if (statistics === undefined) {
      statistics = this.makeStatistics();
      this.durations[cell] = statistics;
    }
    statistics.record(seconds);
  }

  drop(reason: string, count = 1): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + count);
  }
}
