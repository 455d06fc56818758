/**
 * Checking what a user configures, shared by `new TaskJourneys()` and `startTelemetry()`: bad
 * configuration throws at once, in the constructor, with an InvalidOptionError (a TypeError, code TJ_INVALID_OPTION) naming the option.
 */
import { show } from "./model/show.js";
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

/** Edit distance of two names, letters only and case aside: "samplingRatio" is "sampling.ratio". */
function distance(a: string, b: string): number {
  const x = a.toLowerCase().replace(/[^a-z0-9]/g, "");
  const y = b.toLowerCase().replace(/[^a-z0-9]/g, "");
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++)
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[y.length];
}

/**
 * The valid name nearest `name`, or undefined when none is near (more than a third of its letters
 * apart). `candidates` maps each name a user might write (a path, a group's field alone, an old
 * flat name) to the name to suggest.
 */
export function nearestName(name: string, candidates: ReadonlyMap<string, string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const [written, suggested] of candidates) {
    const d = distance(name, written);
    if (d < bestDistance) [best, bestDistance] = [suggested, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * Refuses an option name nothing reads: in plain JavaScript a misspelt name (`samplingRatio`,
 * `fileDirectry`) would otherwise pass silently and its default be used. Names the nearest valid one.
 */
export function unknownOption(owner: string, name: string, candidates: ReadonlyMap<string, string>): never {
  const nearest = nearestName(name, candidates);
  const valid = [...new Set(candidates.values())].join(", ");
  const error = new InvalidOptionError(
    `${owner}: unknown option ${show(name)}${nearest === undefined ? "" : `; did you mean ${show(nearest)}?`} ` +
      `(the options: ${valid})`,
  );
  thrown.add(error);
  throw error;
}

/**
 * Refuses every own name of `options` not among `names` (`prefix`: the path of a nested object,
 * "exporters."), naming the nearest valid one. Options that cannot be listed are left to the
 * checks that read them.
 */
export function refuseUnknownNames(owner: string, options: object, names: readonly string[], prefix = ""): void {
  let given: string[];
  try {
    given = Object.keys(options);
  } catch {
    return;
  }
  const suggestions = new Map(names.map((name) => [`${prefix}${name}`, `${prefix}${name}`]));
  for (const name of given) if (!names.includes(name)) unknownOption(owner, `${prefix}${name}`, suggestions);
}
