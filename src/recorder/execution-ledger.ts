import { EXECUTE_LUMP, EXECUTE_OUTCOMES, type ExecuteOutcome } from "../model/activities.js";
import { stateId } from "../model/states.js";
import { OTHER } from "./activity-ids.js";
import { ACTIVITY_FIELDS, ACTIVITY_ID, ACTIVITY_SELF_SECONDS, addQuantity, type Journey } from "./journey.js";
import { Ledger, type LedgerHost } from "./ledger.js";
import { failureDetail } from "./failure-detail.js";
import { show } from "./show.js";

const MEMORY = stateId("memory");
const ERROR = stateId("error");
const CANCELLED = stateId("cancelled");

/** Meters one execution of a key; `end(outcome)` ends the executing state. */
export class ExecutionLedger extends Ledger {
  constructor(
    host: LedgerHost,
    readonly journey: Journey,
    start: number,
  ) {
    super(host, journey.activityRecords(), start);
  }

  protected currentVisit(): number {
    return this.journey.visitIndex;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    const journey = this.journey;
    addQuantity((journey.quantities ??= []), journey.visitIndex, activityId, unitId, value);
    const unit = this.host.quantityUnit(unitId);
    if (unit !== -1) {
      const accumulators = this.host.accumulators;
      accumulators.addExecuteQuantity(accumulators.activityCell(journey.prefixId, activityId), unit, value);
    }
  }

  protected markDigest(record: number): void {
    (this.journey.digestRecords ??= []).push(record);
  }

  /**
   * Ends the execution: "memory" (success), "error" or "cancelled". `error` is what was thrown or
   * rejected with: a failed execution keeps its type, message and stack (spans, explain()).
   */
  end(outcome: ExecuteOutcome = "memory", error?: unknown, at?: number): void {
    const host = this.host;
    if (this.ended) {
      host.drop("ledger-ended", "end() called twice");
      return;
    }
    let checked = outcome;
    if (!EXECUTE_OUTCOMES.includes(checked)) {
      host.drop("invalid-outcome", `execute outcome ${show(outcome)} reported as "error"`);
      checked = "error";
    }
    const time = this.endTime(at);
    if (checked !== "memory") {
      const journey = this.journey;
      journey.failureVisit = journey.visitIndex;
      journey.failureOutcome = checked;
      journey.failure = checked === "error" && error !== undefined ? failureDetail(error) : undefined;
    }
    const other = this.closeAll(time);
    this.ended = true;
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
        into[accumulators.activityCell(prefixId, records[record + ACTIVITY_ID])] += records[record + ACTIVITY_SELF_SECONDS];
      }
      into[accumulators.activityCell(prefixId, OTHER)] += other;
    }
    host.executionEnded(journey, checked === "memory" ? MEMORY : checked === "error" ? ERROR : CANCELLED, time);
  }
}
