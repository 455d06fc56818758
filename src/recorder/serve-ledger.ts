import { NETWORK_ACTIVITY, TRANSFER_LUMP, TRANSFER_OUTCOMES, type TransferOutcome } from "../model/activities.js";
import { OTHER } from "./activity-ids.js";
import { ACTIVITY_FIELDS, ACTIVITY_ID, ACTIVITY_SELF_SECONDS } from "./journey.js";
import { Ledger, unknownOutcome, type LedgerHost } from "./ledger.js";
import { failureDetail, type FailureDetail } from "./failure-detail.js";
import { show } from "../model/show.js";
import { readEndCall } from "./call-options.js";

/**
 * The serving side of a transfer: one get_data request a peer's gather_dep made of this worker,
 * with what answering it took (disk-read of spilled values, serialize, network, other) and the
 * bytes sent. Dask counts this as its `get-data-*` activities; without it a slow transfer shows
 * on the fetching side only, with no way to see that the sender was busy unspilling.
 */
export class Serve {
  /** Activity records, ACTIVITY_FIELDS numbers each; visit unused (-1). */
  readonly activities: number[] = [];
  bytes = 0;
  end = Number.NaN;
  outcome = "";
  /** What a failed serve was ended with (`end("failed", error)`), for its span. */
  failure: FailureDetail | undefined = undefined;
  /** Self seconds not claimed by any activity, set at the end. */
  other = 0;
  /** Owned by the span bridge. */
  spanState: unknown = undefined;

  constructor(
    readonly id: number,
    /** The peer that asked (its address). */
    readonly peer: string,
    /** The keys asked for, as map ids. */
    readonly keyIds: ReadonlyArray<string | number>,
    readonly start: number,
  ) {}
}

/** Totals of the serves ended so far, read by the metric producer. */
export class ServeTotals {
  /** Seconds by activity id (task.serve.time). */
  readonly seconds: Float64Array;
  /** Bytes and serves by outcome, in TRANSFER_OUTCOMES order (task.serve.size). */
  readonly bytes = new Float64Array(TRANSFER_OUTCOMES.length);
  readonly count = new Float64Array(TRANSFER_OUTCOMES.length);

  constructor(activityCapacity: number) {
    this.seconds = new Float64Array(activityCapacity + 1);
  }
}

/** Meters one get_data request served to a peer; `end(outcome)` settles it. */
export class ServeLedger extends Ledger {
  constructor(
    host: LedgerHost,
    readonly serve: Serve,
    private readonly totals: ServeTotals,
    private readonly ended_: (serve: Serve) => void,
  ) {
    super(host, serve.activities, serve.start);
  }

  protected currentVisit(): number {
    return -1;
  }

  protected quantity(activityId: number, unitId: number, value: number): void {
    // What went onto the wire is the serve's size, as on the fetching side.
    if (activityId === this.host.activityId(NETWORK_ACTIVITY) && this.host.units.name(unitId) === "bytes")
      this.serve.bytes += value;
  }

  /**
   * Ends the serve: "ok" (sent), "busy" (refused), "missing" (none of the keys here) or "failed",
   * with what was thrown (`error`) for the get_data span, as a gather ledger's end() takes it:
   * `options` is `{ error, at }` (the positional `end(outcome, error, at)` deprecated, told once).
   */
  end(outcome: TransferOutcome = "ok", options?: unknown, legacyAt?: unknown): void {
    const host = this.host;
    let error: unknown = undefined;
    let at: number | undefined = undefined;
    if (options !== undefined || legacyAt !== undefined) {
      const call = readEndCall(host.failures, "serve ledger", options, legacyAt);
      error = call.error;
      at = call.at;
    }
    if (this.ended) {
      host.drop("ledger-ended", "end() called twice");
      return;
    }
    let checked = outcome;
    if (!TRANSFER_OUTCOMES.includes(checked)) {
      const to = `to ${show(this.serve.peer)}`;
      checked = unknownOutcome<TransferOutcome>(host, "serve", to, outcome, TRANSFER_OUTCOMES, error, "ok", "failed");
    }
    const time = this.endTime(at);
    if (checked === "failed" && error !== undefined) this.serve.failure = failureDetail(error);
    const other = this.closeAll(time);
    this.ended = true;
    const serve = this.serve;
    serve.end = time;
    serve.outcome = checked;
    serve.other = other;
    const totals = this.totals;
    const outcomeIndex = TRANSFER_OUTCOMES.indexOf(checked);
    totals.bytes[outcomeIndex] += serve.bytes;
    totals.count[outcomeIndex] += 1;
    // As a transfer: a serve that did not succeed is one lump of its whole time.
    const lump = TRANSFER_LUMP[checked];
    if (lump !== undefined) {
      totals.seconds[host.activityId(lump)] += time - serve.start;
    } else {
      const records = serve.activities;
      for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
        totals.seconds[records[record + ACTIVITY_ID]] += records[record + ACTIVITY_SELF_SECONDS];
      }
      totals.seconds[OTHER] += other;
    }
    this.ended_(serve);
  }
}
