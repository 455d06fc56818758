import type { DropReason } from "./drop-reasons.js";
import { InvalidTransition } from "../shared/errors.js";
import type { Journey } from "./journey.js";
import { deprecated } from "./deprecations.js";

export interface FailuresConfig {
  /** Where the first failure of each kind is told: `diag.warn`, given by the caller (no OpenTelemetry under recorder/). */
  tell: (message: string) => void;
  /** Bad input throws InvalidTransition instead of being counted and repaired (`strict: true`). */
  strict: boolean;
  /** Counts by reason, the ones taskjourney.dropped exports; undefined: failures are told only. */
  counts: Map<string, number> | undefined;
  /** State names by id, for a journey's story (the recorder's machine); ids are shown without. */
  stateNames?: readonly string[];
}

/**
 * The one failure path of taskjourney: count it in taskjourney.dropped{reason}, tell `diag` the
 * first of each kind, and — for bad input only, with `strict: true` — throw. Telemetry never
 * throws into the host otherwise, and never tells the same kind of failure twice.
 */
/**
 * Kinds of one reason told at most: a reason told once per value (each unknown state name, each
 * outcome misspelt) names every distinct mistake, but a stream of distinct garbage must not
 * flood stderr. Past it, the reason's further kinds are counted silently.
 */
export const KINDS_TOLD_PER_REASON = 16;

export class Failures {
  private readonly told = new Set<string>();
  /** Kinds told per reason (see KINDS_TOLD_PER_REASON). */
  private readonly kindsTold = new Map<string, number>();

  constructor(private readonly config: FailuresConfig) {}

  /**
   * Bad input from the host (a bad key, state, time or outcome): counted, then thrown as
   * InvalidTransition with `journey`'s recent story when strict, else told once per `kind` (by
   * default the reason; a distinct mistake, e.g. each unknown state name, may be a kind of its own).
   */
  input(reason: DropReason, detail: string, journey?: Journey, kind: string = reason): void {
    this.count(reason);
    if (this.config.strict)
      throw new InvalidTransition(detail, reason, journey === undefined ? [] : story(journey, this.config.stateNames));
    this.tellOnce(reason, kind, `dropped input (${reason}): ${detail}.`);
  }

  /**
   * A failure of telemetry's own making (a listener, a user's extractor, a wrapper): counted and
   * told once per `kind`, never thrown, even strict — it must not become the host's failure.
   * `times`: how many such failures at once (counted as many, told as one).
   */
  fault(reason: DropReason, text: string, kind: string = reason, times = 1): void {
    this.count(reason, times);
    this.tellOnce(reason, kind, text);
  }

  /**
   * A call that did nothing for a reason that may be no mistake (inject() of a key whose journey
   * ended long ago): told once per `kind`, neither counted nor thrown, so that a normal path
   * of a long run neither fills taskjourney.dropped nor fails a strict test.
   */
  notice(kind: string, text: string): void {
    if (this.told.has(kind)) return;
    this.told.add(kind);
    this.config.tell(`taskjourney: ${text}. Told once.`);
  }

  /** A deprecated call form (`form`) was used: told once per process, never counted, never thrown. */
  deprecated(form: string, instead: string): void {
    deprecated(this.config.tell, form, instead);
  }

  private count(reason: DropReason, times = 1): void {
    const counts = this.config.counts;
    if (counts !== undefined) counts.set(reason, (counts.get(reason) ?? 0) + times);
  }

  private tellOnce(reason: DropReason, kind: string, text: string): void {
    if (this.told.has(kind)) return;
    const kinds = this.kindsTold.get(reason) ?? 0;
    if (kinds >= KINDS_TOLD_PER_REASON) return;
    this.kindsTold.set(reason, kinds + 1);
    this.told.add(kind);
    const further =
      this.config.counts === undefined
        ? "Further ones are not reported."
        : `Counted in taskjourney.dropped{reason="${reason}"}; further ones are counted silently.`;
    this.config.tell(`taskjourney: ${text} ${further}`);
  }
}

/** The key's last state visits, oldest first, e.g. "waiting@1.000000", for InvalidTransition. */
function story(journey: Journey, names: readonly string[] | undefined): string[] {
  const visits: string[] = [];
  const first = Math.max(0, journey.visitCount - 8);
  for (let visit = first; visit < journey.visitCount; visit++) {
    visits.push(
      `${names?.[journey.visitState(visit)] ?? journey.visitState(visit)}@${journey.visitStart(visit).toFixed(6)}`,
    );
  }
  return visits;
}
