import { tell } from "../otel/warn.js";
import type { AnyTaskJourneys as TaskJourneys } from "../journeys.js";
import { internalsOf } from "../internal.js";
import type { DropReason } from "../recorder/drop-reasons.js";
import { InvalidTransition } from "../shared/errors.js";
import { Failures } from "../recorder/failures.js";

/** A user's extractor or outcome mapper threw or returned something unusable; the call went on unrecorded. */
export const EXTRACTOR_ERROR = "wrap-extractor-error" satisfies DropReason;
/** A taskjourney call made by a wrapper failed; the wrapped call went on untouched. */
export const INTERNAL_ERROR = "wrap-internal-error" satisfies DropReason;

/** Failures outside any journeys (a plain `wrap()`ped function): told once each, not counted. */
const unattached = new Failures({ tell: (message) => tell("warn", message), strict: false, counts: undefined });

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return "an unprintable value";
  }
}

/**
 * Counts a failure in taskjourney.dropped{reason} and tells `diag` about the first one of each
 * kind (`site` names the method and extractor), through the journeys' own failure path. Never
 * throws, even with `strict: true`: a bug in a user's extractor must not become the host's
 * failure. Without `journeys` it is only told.
 */
export function report(
  journeys: TaskJourneys | undefined,
  reason: DropReason,
  site: string,
  error: unknown,
  /** What taskjourney did about it, as the warning says. */
  consequence = "the call proceeds unrecorded",
): void {
  try {
    const failures = (journeys === undefined ? undefined : internalsOf(journeys)?.recorder.failures) ?? unattached;
    failures.fault(reason, `${site} failed (${describe(error)}); ${consequence}.`, `${reason} ${site}`);
  } catch {
    // Nothing more can be done without reaching the host.
  }
}

/**
 * A taskjourney call inside a wrapper failed. With `strict: true` the recorder throws
 * `InvalidTransition` for bad data on purpose, for the user's own tests: that error is returned for
 * the wrapper to throw. Anything else is counted and told once; undefined is returned.
 */
export function internalFailure(
  journeys: TaskJourneys | undefined,
  site: string,
  error: unknown,
): InvalidTransition | undefined {
  if (error instanceof InvalidTransition) return error;
  report(journeys, INTERNAL_ERROR, site, error);
  return undefined;
}
