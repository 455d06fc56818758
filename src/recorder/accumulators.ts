import { DurationStatistics } from "../model/statistics/index.js";
import { QUANTITY_UNITS, TRANSFER_OUTCOMES } from "../model/activities.js";
import { STATE_STRIDE } from "../model/machine.js";

/** The cell of (prefix, state) in the per-state arrays (`transitions`, `durations`). */
export function stateCell(prefixId: number, state: number): number {
  return prefixId * STATE_STRIDE + state;
}

/**
 * Running totals per (prefix, state) and per (prefix, activity), in typed arrays indexed by
 * interned ids: the hot path adds to a slot, the metric producer reads them at collection.
 * Everything is cumulative since construction; delta temporality is computed by the producer.
 */
export class Accumulators {
  /** Entries into each (prefix, state), terminal states included. */
  readonly transitions: Float64Array;
  /**
   * Journeys abandoned past maxLiveJourneys per (prefix, state) they were in: their visit there
   * never ends, so without this they would count as in it for the process's life. Made at the
   * first eviction (most processes have none) and added to there only, never on the hot path.
   */
  private abandonedCells: Float64Array | undefined = undefined;
  /** Per-visit durations per (prefix, state), created at the first visit. */
  readonly durations: Array<DurationStatistics | undefined>;
  /** Execute ledger self seconds per (prefix, activity). */
  readonly executeSeconds: Float64Array;
  /** Bytes and counts digested into execute ledgers, per (prefix, activity) cell and QUANTITY_UNITS index. */
  private readonly executeQuantities: Float64Array;
  /** Gather ledger self seconds per activity. */
  readonly gatherSeconds: Float64Array;
  /** Apportioned waiting seconds per (dependent prefix, activity). */
  readonly waitSeconds: Float64Array;
  /** Transferred bytes per transfer outcome, in TRANSFER_OUTCOMES order. */
  readonly gatherBytes = new Float64Array(TRANSFER_OUTCOMES.length);
  /** Finished transfers per outcome. */
  readonly transfers = new Float64Array(TRANSFER_OUTCOMES.length);
  /** Dropped or repaired inputs per reason; counted by failures.ts. */
  readonly dropped = new Map<string, number>();

  constructor(
    readonly prefixCapacity: number,
    readonly stateCount: number,
    readonly activityCapacity: number,
    private readonly makeStatistics: () => DurationStatistics,
  ) {
    const stateCells = prefixCapacity * stateCount;
    const activityCells = prefixCapacity * activityCapacity;
    this.transitions = new Float64Array(stateCells);
    this.durations = new Array<DurationStatistics | undefined>(stateCells).fill(undefined);
    this.executeSeconds = new Float64Array(activityCells);
    this.executeQuantities = new Float64Array(activityCells * QUANTITY_UNITS.length);
    this.gatherSeconds = new Float64Array(activityCapacity);
    this.waitSeconds = new Float64Array(activityCells);
  }

  /** The cell of (prefix, activity) in the per-activity arrays (`executeSeconds`, `waitSeconds`). */
  activityCell(prefixId: number, activity: number): number {
    return prefixId * this.activityCapacity + activity;
  }

  /**
   * A finished visit of `seconds` in state cell `cell` (see `stateCell()`). The
   * visit's statistics are all there is to update: the seconds and visits of a cell are their
   * sum and count, and the journeys in it are its entries less its finished visits.
   */
  visit(cell: number, seconds: number): void {
    let statistics = this.durations[cell];
    if (statistics === undefined) {
      statistics = this.makeStatistics();
      this.durations[cell] = statistics;
    }
    statistics.record(seconds);
  }

  /** Seconds spent in a (prefix, state) cell, summed over finished visits. */
  stateSeconds(cell: number): number {
    return this.durations[cell]?.sum ?? 0;
  }

  /** Finished visits of a (prefix, state) cell. */
  stateVisits(cell: number): number {
    return this.durations[cell]?.count ?? 0;
  }

  /**
   * Journeys live now in a (prefix, state) cell of a non-terminal state: entries less finished
   * visits less journeys abandoned there (a live journey is always in a non-terminal state).
   */
  active(cell: number): number {
    return this.transitions[cell] - this.stateVisits(cell) - (this.abandonedCells?.[cell] ?? 0);
  }

  /** A journey abandoned in a (prefix, state) cell: it leaves the cell's live count for good. */
  abandon(cell: number): void {
    (this.abandonedCells ??= new Float64Array(this.transitions.length))[cell] += 1;
  }

  /** Adds a digested quantity of `unit` (a QUANTITY_UNITS index) to a (prefix, activity) cell. */
  addExecuteQuantity(activityCell: number, unit: number, value: number): void {
    this.executeQuantities[activityCell * QUANTITY_UNITS.length + unit] += value;
  }

  /** The quantity of `unit` (a QUANTITY_UNITS index) digested into a (prefix, activity) cell. */
  executeQuantity(activityCell: number, unit: number): number {
    return this.executeQuantities[activityCell * QUANTITY_UNITS.length + unit];
  }
}
