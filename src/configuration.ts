/**
 * Checking what a user configures, shared by `new TaskJourneys()` and `startTelemetry()`: bad
 * configuration throws at once, in the constructor, with a TypeError naming the option.
 */
import { show } from "./recorder/show.js";

/** Throws `<owner>: <what> must be <expected>, got <value>`; `what` names the option or variable. */
export function configurationError(owner: string, what: string, expected: string, value: unknown): never {
  throw new TypeError(`${owner}: ${what} must be ${expected}, got ${show(value)}`);
}

/** Options given as `undefined` mean "the default", as they would if left out: those are dropped. */
export function defined<T extends object>(options: T | undefined): Partial<T> {
  if (options === undefined || options === null) return {};
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}
