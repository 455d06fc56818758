import type { DropReason } from "./drop-reasons.js";

/** The failure path as end() reads its options: failures.ts's Failures (named apart, so no import cycle). */
export interface OptionsFailures {
  input(reason: DropReason, detail: string): void;
  deprecated(form: string, instead: string): void;
}

/**
 * Whether `value` is a call's trailing options object (`{ at, error }`, …) rather than a value of
 * the deprecated positional form it replaces: an object literal (Object or null prototype) whose
 * own names are all among `names`. An Error, a class instance (an OpenTelemetry Context), a carrier
 * with a `traceparent` or a thrown `{ code }` is a positional value. A Proxy that throws when
 * asked is no options object. Allocates nothing.
 */
export function isCallOptions(value: unknown, names: readonly string[]): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  try {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return false;
    for (const name in value) if (!names.includes(name)) return false;
    return true;
  } catch {
    return false;
  }
}

const END_NAMES = ["error", "at"] as const;

/** What one end() call said, read into this one object: end() allocates nothing to read it. */
const endCall = { error: undefined as unknown, at: undefined as number | undefined };

/**
 * The `error` and `at` of a ledger's `end(outcome, second, third)`: `second` is `{ error, at }`,
 * or — deprecated, told once — the positional `end(outcome, error, at)`. Options that throw when
 * read are counted (`invalid-options`) and the ledger ends as if given none. Only called when an
 * argument follows the outcome: `end(outcome)` reads nothing.
 */
export function readEndCall(
  failures: OptionsFailures,
  ledger: string,
  second: unknown,
  third: unknown,
): typeof endCall {
  if (third === undefined && isCallOptions(second, END_NAMES)) {
    try {
      endCall.error = second.error;
      endCall.at = second.at as number | undefined;
    } catch {
      endCall.error = undefined;
      endCall.at = undefined;
      failures.input("invalid-options", `${ledger}.end() given options that threw when read; ended as if given none`);
    }
  } else {
    failures.deprecated(`${ledger}.end(outcome, error, at)`, `${ledger}.end(outcome, { error, at })`);
    endCall.error = second;
    endCall.at = third as number | undefined;
  }
  return endCall;
}
