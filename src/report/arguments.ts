import { show } from "../model/show.js";
import { InvalidArgumentError, InvalidDataError, OtlpJsonError, UnknownStateError } from "../shared/errors.js";

/**
 * The report toolkit's boundary (`taskjourney/report`, formatBreakdown): its helpers throw what
 * they mean — an OtlpJsonError naming a file (code TJ_INVALID_INPUT), an InvalidDataError made by
 * dataError() naming a field (TJ_INVALID_DATA), an InvalidArgumentError made by argumentError()
 * (TJ_INVALID_ARGUMENT) or an UnknownStateError made by unknownStateError() (TJ_UNKNOWN_STATE),
 * all TypeErrors but the first (src/shared/errors.ts) — and nothing else. A value of the wrong shape that the code would trip on (an internal "Cannot
 * read properties of undefined"), a Proxy whose traps throw, a revoked one, or a structure nested
 * deep enough to overflow the stack, becomes a TypeError naming the call, the argument and what it
 * must be, with the original as its cause: an InvalidDataError too.
 */

/** Bad input, with where it was found; the CLI reports it as a data error. One class with src/shared/errors.ts's. */
export { OtlpJsonError };

/** The errors the toolkit means besides OtlpJsonError, passed through its guards as they are. */
const meant = new WeakSet<object>();

/** `error`, marked as meant: guarded() passes it through as it is. */
export function markMeant<E extends Error>(error: E): E {
  meant.add(error);
  return error;
}

/** An InvalidDataError (a TypeError, code TJ_INVALID_DATA) naming what is wrong with the data (a field, an argument): see guarded(). */
export function dataError(message: string, options?: ErrorOptions): InvalidDataError {
  return markMeant(new InvalidDataError(message, options));
}

/** An InvalidArgumentError (a TypeError, code TJ_INVALID_ARGUMENT): a helper's argument of the wrong kind, checked before use. */
export function argumentError(message: string): InvalidArgumentError {
  return markMeant(new InvalidArgumentError(message));
}

/** An UnknownStateError (a TypeError, code TJ_UNKNOWN_STATE): a state asked for by name that the data does not have. */
export function unknownStateError(message: string): UnknownStateError {
  return markMeant(new UnknownStateError(message));
}

function isMeant(error: unknown): boolean {
  try {
    return error instanceof OtlpJsonError || (typeof error === "object" && error !== null && meant.has(error));
  } catch {
    // A thrown revoked Proxy: instanceof asks its getPrototypeOf trap.
    return false;
  }
}

/** One argument of a public helper: its name, what it must be, and the value it was given. */
export type Argument = readonly [name: string, expected: string, value: unknown];

/**
 * Whether an argument after the first cannot be what the helper tripped on: left out, a plain
 * string, number or boolean (a name for messages; property reads on it give undefined), or an
 * empty plain object such as an options parameter's default `{}`. Never throws (a Proxy's trap
 * may: then it could be at fault).
 */
function harmless(value: unknown): boolean {
  if (value === undefined || typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return true;
  try {
    return (
      typeof value === "object" &&
      value !== null &&
      Object.getPrototypeOf(value) === Object.prototype &&
      Reflect.ownKeys(value).length === 0
    );
  } catch {
    return false;
  }
}

/**
 * Runs `run`, a public helper's body, turning any failure it did not mean into one naming the
 * call and its arguments (see the module comment): the first (the data) always, the others
 * (options, a name for messages) when they were given something that could be at fault, as
 * "…, or options must be …". Costs a try on good input, nothing more.
 */
export function guarded<T>(call: string, args: readonly Argument[], run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isMeant(error)) throw error;
    const deep = error instanceof RangeError && /call stack/i.test(error.message);
    const suspects = args
      .filter(([, , value], index) => index === 0 || !harmless(value))
      .map(([name, expected, value]) => {
        const object = typeof value === "object" && value !== null;
        const why = !object ? "" : deep ? " nested too deep to read" : " that could not be read";
        return `${name} must be ${expected}, got ${show(value)}${why}`;
      });
    throw dataError(`${call}: ${suspects.join(", or ")}`, { cause: error });
  }
}
