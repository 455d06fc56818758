import { NETWORK_ACTIVITY, TRANSFER_LUMP, TRANSFER_OUTCOMES, type TransferOutcome } from "../model/activities.js";
import type { Machine } from "../model/machine.js";
import { OTHER } from "./activity-ids.js";
import {
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_SELF_SECONDS,
  addActivity,
  type OpenTransfer,
  type Transfer,
} from "./journey.js";
import { Ledger, unknownOutcome, type LedgerHost } from "./ledger.js";
import { failureDetail } from "./failure-detail.js";
import { show } from "../model/show.js";
import { readEndCall } from "./call-options.js";

/** Where each key of a transfer goes when the transfer ends with `outcome` (Dask: memory, fetch, missing, fetch, cancelled). */
function nextState(machine: Machine, outcome: TransferOutcome): number {
  switch (outcome) {
    case "ok":
      return machine.success;
    case "missing":
      return machine.missing !== -1 ? machine.missing : machine.retry;
    case "cancelled":
      return machine.cancelled;
    default:
      return machine.retry;
  }
}

/** Meters one gather_dep transfer; `end(outcome)` moves its keys on. */
export class TransferLedger extends Ledger implements OpenTransfer {
  constructor(
    host: LedgerHost,
    readonly transfer: Transfer,
    start: number,
  ) {
    super(host, transfer.activities, start);
    transfer.ledger = this;
  }

  protected currentVisit(): number {
    return -1;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    // Only what crossed the wire is the transfer's size: bytes spilled or deserialized on receipt are not.
    if (activityId === this.host.activityId(NETWORK_ACTIVITY) && this.host.units.name(unitId) === "bytes")
      this.transfer.bytes += value;
  }

  /**
   * Ends the transfer: "ok", "busy", "missing", "failed" or "cancelled". `error` is what was
   * thrown or rejected with: a failed transfer keeps its type, message and stack (spans, explain()).
   * `options` is `{ error, at }`; the positional `end(outcome, error, at)` still works (deprecated,
   * told once).
   */
  end(outcome: TransferOutcome = "ok", options?: unknown, legacyAt?: unknown): void {
    const host = this.host;
    let error: unknown = undefined;
    let at: number | undefined = undefined;
    if (options !== undefined || legacyAt !== undefined) {
      const call = readEndCall(host.failures, "gather ledger", options, legacyAt);
      error = call.error;
      at = call.at;
    }
    if (this.ended) {
      this.endedAgain();
      return;
    }
    let checked = outcome;
    if (!TRANSFER_OUTCOMES.includes(checked)) {
      const from = `from ${show(this.transfer.peer)}`;
      checked = unknownOutcome<TransferOutcome>(
        host,
        "gather",
        from,
        outcome,
        TRANSFER_OUTCOMES,
        error,
        "ok",
        "failed",
      );
    }
    const time = this.endTime(at);
    if (checked === "failed" && error !== undefined) this.transfer.failure = failureDetail(error);
    this.finish(checked, time, true);
  }

  /**
   * Every key this transfer carried ended (or was evicted) while it was open: it ends at `time`
   * as cancelled, its seconds and bytes counted only when `settle`, and whatever the caller does
   * with it afterwards is not counted again.
   */
  closeEarly(time: number, settle: boolean): void {
    this.closedEarly = true;
    this.finish("cancelled", time < this.start ? this.start : time, settle);
  }

  private finish(checked: TransferOutcome, time: number, settle: boolean): void {
    const host = this.host;
    const other = this.closeAll(time);
    this.ended = true;
    const transfer = this.transfer;
    transfer.end = time;
    transfer.outcome = checked;
    transfer.ledger = undefined;
    const lump = TRANSFER_LUMP[checked];
    const lumpId = lump === undefined ? -1 : host.activityId(lump);
    if (settle) {
      // The transfer's bytes and seconds by activity: its self times and the rest as `other`, or
      // all of it under one lump for a transfer that did not succeed.
      const accumulators = host.accumulators;
      const outcomeIndex = TRANSFER_OUTCOMES.indexOf(checked);
      accumulators.gatherBytes[outcomeIndex] += transfer.bytes;
      accumulators.transfers[outcomeIndex] += 1;
      if (lumpId !== -1) {
        accumulators.gatherSeconds[lumpId] += time - transfer.start;
      } else {
        const records = transfer.activities;
        for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
          accumulators.gatherSeconds[records[record + ACTIVITY_ID]] += records[record + ACTIVITY_SELF_SECONDS];
        }
        accumulators.gatherSeconds[OTHER] += other;
      }
    }
    host.transferEnded(transfer, nextState(host.machine, checked), lumpId, other, time);
  }
}

/**
 * Adds one key's `share` (1 / keys carried) of an ended transfer's activities to `target`, the
 * key's activity records, on its flight visit `visit`: the lump (`lumpId`, or -1) or the self
 * times and `other`, so nested activities are not counted twice and the keys' shares add up to
 * the transfer's wall time.
 */
export function addTransferShare(
  target: number[],
  visit: number,
  transfer: Transfer,
  lumpId: number,
  other: number,
  share: number,
): void {
  const start = transfer.start;
  const end = transfer.end;
  if (lumpId !== -1) {
    addActivity(target, visit, lumpId, start, end, (end - start) * share);
    return;
  }
  const records = transfer.activities;
  for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
    addActivity(
      target,
      visit,
      records[record + ACTIVITY_ID],
      start,
      end,
      records[record + ACTIVITY_SELF_SECONDS] * share,
    );
  }
  if (other > 0) addActivity(target, visit, OTHER, start, end, other * share);
}
