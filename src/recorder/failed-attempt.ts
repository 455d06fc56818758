import type { FailureDetail } from "./failure-detail.js";
import type { Journey } from "./journey.js";
import { firstAtOrAfter } from "./sorted.js";

/** How an attempt that did not succeed ended: its outcome and, when told, why. */
export interface Attempt {
  readonly outcome: string;
  readonly failure: FailureDetail | undefined;
}

/**
 * The attempt a visit was, when it did not succeed: an execution ended in error or cancelled, or
 * (a fetch journey's flight) a transfer that was not ok. Undefined for any other visit.
 */
export function failedAttempt(journey: Journey, visit: number): Attempt | undefined {
  if (visit === journey.failureVisit) return { outcome: journey.failureOutcome, failure: journey.failure };
  const reasonVisits = journey.reasonVisits;
  if (reasonVisits !== undefined) {
    const index = firstAtOrAfter(reasonVisits, visit);
    if (reasonVisits[index] === visit)
      return { outcome: journey.reasonOutcomes?.[index] ?? "error", failure: journey.reasons![index] };
  }
  const transfers = journey.transfers;
  const visits = journey.transferVisits;
  if (transfers === undefined || visits === undefined) return undefined;
  for (let index = firstAtOrAfter(visits, visit); index < visits.length && visits[index] === visit; index++) {
    const transfer = transfers[index];
    if (transfer.outcome !== "" && transfer.outcome !== "ok")
      return { outcome: transfer.outcome, failure: transfer.failure };
  }
  return undefined;
}
