/**
 * Checking what a user configures, shared by `new TaskJourneys()` and `startTelemetry()`: bad
 * configuration throws at once, in the constructor, with an InvalidOptionError (a TypeError, code TJ_INVALID_OPTION) naming the option.
 */
import { show } from "./recorder/show.js";
import { InvalidOptionError } from "./shared/errors.js";

/** The errors configurationError() threw: rethrown as they are by a guard around code that checks options. */
const thrown = new WeakSet<object>();

/** Throws `<owner>: <what> must be <expected>, got <value>`; `what` names the option or variable. */
export function configurationError(owner: string, what: string, expected: string, value: unknown): never {
  const error = new InvalidOptionError(`${owner}: ${what} must be ${expected}, got ${show(value)}`);
  thrown.add(error);
  throw error;
}

/** Whether `error` is one configurationError() threw (naming its option already). */
export function isConfigurationError(error: unknown): boolean {
  return typeof error === "object" && error !== null && thrown.has(error);
}

/**
 * Runs `check` (which reads a user's option object); anything it throws other than a
 * configurationError — a Proxy's trap, a throwing getter, a revoked Proxy — becomes one naming
 * `what`, so that a bad option always reads as one, never as the option's own failure.
 */
export function guardedCheck<T>(owner: string, what: string, expected: string, value: unknown, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (isConfigurationError(error)) throw error;
    const wrapped = new InvalidOptionError(
      `${owner}: ${what} must be ${expected}, got ${show(value)} that threw when read`,
      {
        cause: error,
      },
    );
    thrown.add(wrapped);
    throw wrapped;
  }
}

/** Options given as `undefined` mean "the default", as they would if left out: those are dropped. */
export function defined<T extends object>(options: T | undefined): Partial<T> {
  if (options === undefined || options === null) return {};
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}
