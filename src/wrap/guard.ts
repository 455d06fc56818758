import { diag } from "@opentelemetry/api";
import type { TaskJourneys } from "../journeys.js";
import { internalsOf } from "../internal.js";
import { InvalidTransition } from "../recorder/errors.js";

/** A user's extractor or outcome mapper threw or returned something unusable; the call went on unrecorded. */
export const EXTRACTOR_ERROR = "wrap-extractor-error";
/** A taskjourney call made by a wrapper failed; the wrapped call went on untouched. */
export const INTERNAL_ERROR = "wrap-internal-error";

/** Diagnostics already told, per journeys, by "reason site": each kind of failure is told once. */
const told = new WeakMap<TaskJourneys, Set<string>>();
/** The same for failures outside any journeys (a plain `wrap()`ped function). */
const toldGlobally = new Set<string>();

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
 * kind (`site` names the method and extractor). Never throws, even with `strict: true`: a bug in a
 * user's extractor must not become the host's failure. Without `journeys` it is only told.
 */
export function report(journeys: TaskJourneys | undefined, reason: string, site: string, error: unknown): void {
  try {
    let sites = toldGlobally;
    if (journeys !== undefined) {
      internalsOf(journeys)!.recorder.accumulators.drop(reason);
      let own = told.get(journeys);
      if (own === undefined) {
        own = new Set();
        told.set(journeys, own);
      }
      sites = own;
    }
    const kind = `${reason} ${site}`;
    if (sites.has(kind)) return;
    sites.add(kind);
    const counted =
      journeys === undefined
        ? "Further ones are not reported."
        : `Counted in taskjourney.dropped{reason="${reason}"}; further ones are counted silently.`;
    diag.warn(`taskjourney: ${site} failed (${describe(error)}); the call proceeds unrecorded. ${counted}`);
  } catch {
    // Nothing more can be done without reaching the host.
  }
}

/**
 * A taskjourney call inside a wrapper failed. With `strict: true` the recorder throws
 * `InvalidTransition` for bad data on purpose, for the user's own tests: that error is returned for
 * the wrapper to throw. Anything else is counted and told once; undefined is returned.
 */
export function internalFailure(journeys: TaskJourneys | undefined, site: string, error: unknown): InvalidTransition | undefined {
  if (error instanceof InvalidTransition) return error;
  report(journeys, INTERNAL_ERROR, site, error);
  return undefined;
}
