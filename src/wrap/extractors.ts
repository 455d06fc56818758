/**
 * The plumbing every wrapper of `instrument()` shares: extractors run guarded (a throwing or wrong-kind extractor is counted and told, and the call proceeds unrecorded), and the wrapper that records before the original runs.
 */
import type { AnyTaskJourneys as TaskJourneys } from "../journeys.js";
import type { Key } from "../model/keys.js";
import type { InvalidTransition } from "../shared/errors.js";
import { ArgumentArrays, type AnyFunction } from "./function.js";
import { EXTRACTOR_ERROR, internalFailure, report } from "./guard.js";
import { show } from "../model/show.js";

/** An extractor that threw: the call proceeds unrecorded. */
export const FAILED: unique symbol = Symbol("taskjourney.extractor-failed");

export type Extract = (this: unknown, ...args: unknown[]) => unknown;

/** Whether a wrapper records anything; false after unwrap(), for wrappers still referenced elsewhere. */
export interface Switch {
  active: boolean;
}

export function extract(journeys: TaskJourneys, fn: Extract, self: unknown, args: unknown[], site: string): unknown {
  try {
    return Reflect.apply(fn, self, args);
  } catch (error) {
    report(journeys, EXTRACTOR_ERROR, site, error);
    return FAILED;
  }
}

/** The extractor returned a value of the wrong kind: a bug of the extractor, counted as such. */
export function wrongKind(journeys: TaskJourneys, site: string, value: unknown, expected: string): typeof FAILED {
  report(journeys, EXTRACTOR_ERROR, site, new TypeError(`returned ${show(value)}, not ${expected}`));
  return FAILED;
}

/** A state name, undefined (skip the call) or FAILED. */
export function extractState(
  journeys: TaskJourneys,
  state: string | Extract,
  self: unknown,
  args: unknown[],
  site: string,
): unknown {
  if (typeof state === "string") return state;
  const value = extract(journeys, state, self, args, site);
  return value === FAILED || value === undefined || typeof value === "string"
    ? value
    : wrongKind(journeys, site, value, "a state name");
}

/** A prefix (or another name: `expected`) as a non-empty string, undefined (none) or FAILED. */
export function extractPrefix(
  journeys: TaskJourneys,
  fn: Extract | undefined,
  self: unknown,
  args: unknown[],
  site: string,
  expected = "a non-empty prefix",
): unknown {
  if (fn === undefined) return undefined;
  const value = extract(journeys, fn, self, args, site);
  return value === FAILED || value === undefined || (typeof value === "string" && value.length > 0)
    ? value
    : wrongKind(journeys, site, value, expected);
}

/** A time in seconds, undefined (now) or FAILED. */
export function extractTime(
  journeys: TaskJourneys,
  fn: Extract | undefined,
  self: unknown,
  args: unknown[],
  site: string,
): unknown {
  if (fn === undefined) return undefined;
  const value = extract(journeys, fn, self, args, site);
  return value === FAILED || value === undefined || typeof value === "number"
    ? value
    : wrongKind(journeys, site, value, "a time in seconds");
}

/** An array of keys (from any iterable), undefined (skip the call) or FAILED. */
export function extractKeys(
  journeys: TaskJourneys,
  fn: Extract,
  self: unknown,
  args: unknown[],
  site: string,
): readonly Key[] | undefined | typeof FAILED {
  const value = extract(journeys, fn, self, args, site);
  if (value === FAILED || value === undefined) return value;
  try {
    if (Array.isArray(value)) return value as readonly Key[];
    if (value !== null && typeof value === "object" && typeof (value as Iterable<Key>)[Symbol.iterator] === "function")
      return Array.from(value as Iterable<Key>);
  } catch (error) {
    // Reading what it returned threw (a Proxy, an iterator that fails): the extractor's bug.
    report(journeys, EXTRACTOR_ERROR, site, error);
    return FAILED;
  }
  return wrongKind(journeys, site, value, "an iterable of keys");
}

/** Everything a wrapper reads, fixed at instrument() time. */
export interface Site {
  readonly journeys: TaskJourneys;
  readonly original: AnyFunction;
  readonly on: Switch;
  /** `kind method "name"`, for diagnostics. */
  readonly name: string;
}

/**
 * Records a call with `record` (unless unwrapped), then calls the original. `record` returns the
 * strict recorder's InvalidTransition, thrown before the original runs.
 */
export function recordingWrapper(
  site: Site,
  record: (self: unknown, args: unknown[]) => InvalidTransition | undefined,
): AnyFunction {
  const { journeys, original, on } = site;
  const arrays = new ArgumentArrays();
  return {
    record(this: unknown): unknown {
      // The arguments into a reused array, not a rest parameter's new one (see ArgumentArrays).
      const count = arguments.length;
      const args = arrays.take(count);
      // eslint-disable-next-line prefer-rest-params
      for (let index = 0; index < count; index++) args[index] = arguments[index];
      try {
        if (on.active) {
          let thrown: InvalidTransition | undefined;
          try {
            thrown = record(this, args);
          } catch (error) {
            // What an extractor returned broke the recording (a Proxy whose traps throw): counted, and
            // the call goes on untouched.
            thrown = internalFailure(journeys, site.name, error);
          }
          if (thrown !== undefined) throw thrown;
        }
        return Reflect.apply(original, this, args);
      } finally {
        arrays.give(args);
      }
    },
  }.record;
}
