import { EXECUTE_LUMP, EXECUTE_OUTCOMES, type ExecuteOutcome } from "../model/activities.js";
import type { Machine } from "../model/machine.js";
import { OTHER } from "./activity-ids.js";
import {
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_SELF_SECONDS,
  addQuantity,
  type Journey,
  type OpenExecution,
} from "./journey.js";
import { Ledger, unknownOutcome, type LedgerHost } from "./ledger.js";
import { failureDetail } from "./failure-detail.js";
import { show } from "../model/show.js";
import { readEndCall } from "./call-options.js";

/** The state an execute ledger's `end(state)` moves to (see Machine.endsExecution), or -1. */
function endState(machine: Machine, name: string): number {
  const id = machine.id(name);
  return id !== -1 && machine.endsExecution[id] === 1 ? id : -1;
}

/** The names an execute ledger's `end()` takes: its outcomes, then the machine's states it moves to. */
export function executeEndNames(machine: Machine): string[] {
  const states = machine.states.filter((name) => endState(machine, name) !== -1);
  return [...new Set<string>([...EXECUTE_OUTCOMES, ...states])];
}

/** Meters one execution of a key; `end(outcome)` ends the executing state. */
export class ExecutionLedger extends Ledger implements OpenExecution {
  /** The execution ledger opened before this one on the same journey, still open (see Journey.execution). */
  previous: OpenExecution | undefined;

  constructor(
    host: LedgerHost,
    readonly journey: Journey,
    start: number,
  ) {
    super(host, journey.activityRecords(), start);
    this.previous = journey.execution;
    journey.execution = this;
  }

  protected currentVisit(): number {
    return this.journey.visitIndex;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    const journey = this.journey;
    const quantities = journey.quantities;
    // The first as a literal of its QUANTITY_FIELDS numbers: a `[]` pushed into reserves 17
    // (≈ 110 B more, for the usual one quantity a task: the bytes it read).
    if (quantities === undefined) journey.quantities = [journey.visitIndex, activityId, unitId, value];
    else addQuantity(quantities, journey.visitIndex, activityId, unitId, value);
    const unit = this.host.quantityUnit(unitId);
    if (unit !== -1) {
      const accumulators = this.host.accumulators;
      accumulators.addExecuteQuantity(accumulators.activityCell(journey.prefixId, activityId), unit, value);
    }
  }

  /**
   * Ends the execution: "memory" (success), "error" or "cancelled", or a state of the machine the
   * key moves to (see ExecuteLedger). `error` is what was thrown or rejected with: a failed
   * execution keeps its type, message and stack (spans, explain()). `options` is `{ error, at }`;
   * the positional `end(outcome, error, at)` still works (deprecated, told once).
   */
  end(outcome: string = "memory", options?: unknown, legacyAt?: unknown): void {
    const host = this.host;
    // end(outcome), the usual call, reads nothing more.
    let error: unknown = undefined;
    let at: number | undefined = undefined;
    if (options !== undefined || legacyAt !== undefined) {
      const call = readEndCall(host.failures, "execute ledger", options, legacyAt);
      error = call.error;
      at = call.at;
    }
    if (this.ended) {
      this.endedAgain();
      return;
    }
    const machine = host.machine;
    let checked: ExecuteOutcome;
    let next: number;
    if (outcome === "memory" || outcome === "error" || outcome === "cancelled") {
      checked = outcome;
      // Into the machine's first success, failure or cancelled state (Dask: memory, error, cancelled).
      next = checked === "memory" ? machine.success : checked === "error" ? machine.failure : machine.cancelled;
    } else {
      next = endState(machine, outcome);
      if (next === -1) {
        const of = `of ${show(this.journey.key)}`;
        checked = unknownOutcome(host, "execute", of, outcome, executeEndNames(machine), error, "memory", "error", {
          success: machine.names[machine.success],
          failure: machine.names[machine.failure],
        });
        next = checked === "memory" ? machine.success : machine.failure;
      } else checked = machine.executeOutcome(next);
    }
    const time = this.endTime(at);
    // An attempt the journey goes on from (a retry's delayed) keeps its failure on its own visit:
    // the journey may fail several times before it ends.
    this.settle(checked, error, time, machine.terminal[next] !== 1);
    host.executionEnded(this.journey, next, time);
  }

  /**
   * The journey ended (a terminal state, `outcome` the one it implies) or was evicted
   * (`outcome` undefined: nothing is settled) while this ledger was open: it ends at `time`,
   * and whatever the caller does with it afterwards is not counted again.
   */
  closeEarly(time: number, outcome: ExecuteOutcome | undefined): void {
    this.closedEarly = true;
    if (time < this.start) time = this.start;
    if (this.asyncOpen > 0) this.journey.holdRecords();
    if (outcome !== undefined) {
      this.settle(outcome, undefined, time);
      return;
    }
    this.closeAll(time);
    this.ended = true;
    this.unlink();
  }

  /** Closes the records at `time` and adds the execution's seconds into the accumulators. */
  private settle(checked: ExecuteOutcome, error: unknown, time: number, continues = false): void {
    const host = this.host;
    if (checked !== "memory") {
      const journey = this.journey;
      const failure = checked === "error" && error !== undefined ? failureDetail(error) : undefined;
      if (continues) journey.addReason(failure);
      else {
        journey.failureVisit = journey.visitIndex;
        journey.failureOutcome = checked;
        journey.failure = failure;
      }
    }
    // An async activity still pending settles later, into these records: the journey must not be
    // reused meanwhile (Journey.recordsHeld).
    if (this.asyncOpen > 0) this.journey.holdRecords();
    const other = this.closeAll(time);
    this.ended = true;
    this.unlink();
    // The execution's seconds by activity: its self times and the rest as `other`, or all of it
    // under one lump for an execution that did not succeed.
    const accumulators = host.accumulators;
    const journey = this.journey;
    const prefixId = journey.prefixId;
    const lump = EXECUTE_LUMP[checked];
    if (lump !== undefined) {
      accumulators.executeSeconds[accumulators.activityCell(prefixId, host.activityId(lump))] += time - this.start;
    } else {
      const records = this.records;
      const into = accumulators.executeSeconds;
      for (let record = this.firstRecord; record < records.length; record += ACTIVITY_FIELDS) {
        into[accumulators.activityCell(prefixId, records[record + ACTIVITY_ID])] +=
          records[record + ACTIVITY_SELF_SECONDS];
      }
      into[accumulators.activityCell(prefixId, OTHER)] += other;
    }
  }

  /** Leaves the journey's list of open execution ledgers (nearly always its head). */
  private unlink(): void {
    const journey = this.journey;
    let at = journey.execution;
    if (at === this) {
      journey.execution = this.previous;
    } else {
      while (at !== undefined && at.previous !== this) at = at.previous;
      if (at !== undefined) at.previous = this.previous;
    }
    this.previous = undefined;
  }
}
