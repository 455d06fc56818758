import { ambientLedger } from "../recorder/ambient.js";
import type { AnyFunction } from "../shared/functions.js";

export type { AnyFunction } from "../shared/functions.js";

/**
 * Marks a taskjourney wrapper and holds the function it wraps. A registered symbol, so that two
 * copies of taskjourney in one process still see each other's wrappers.
 */
const ORIGINAL = Symbol.for("taskjourney.wrap.original");

/** The function a taskjourney wrapper wraps, or undefined for any other value. */
export function originalOf(value: unknown): AnyFunction | undefined {
  if (typeof value !== "function") return undefined;
  return (value as unknown as Record<symbol, AnyFunction | undefined>)[ORIGINAL];
}

/**
 * Makes `wrapper` look like `original` to code that inspects functions: the same `name` and
 * `length`, and the same prototype chain (an async original's wrapper has `constructor ===
 * AsyncFunction`, as code that tells sync work from async work checks). Marks it as a wrapper.
 */
export function disguise<F extends AnyFunction>(wrapper: AnyFunction, original: F): F {
  for (const property of ["name", "length"] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(original, property);
    if (descriptor !== undefined) Object.defineProperty(wrapper, property, descriptor);
  }
  const prototype = Object.getPrototypeOf(original) as object | null;
  if (Object.getPrototypeOf(wrapper) !== prototype) Object.setPrototypeOf(wrapper, prototype);
  Object.defineProperty(wrapper, ORIGINAL, {
    value: original,
    enumerable: false,
    writable: false,
    configurable: false,
  });
  return wrapper as F;
}

/**
 * Calls `original` with `self` and `args` as activity `activity` of the ledger surrounding the call
 * (through AsyncLocalStorage), or just calls it when there is none or it has ended. An async
 * original is metered as async work, so activities metered after its first `await` nest under it.
 * When taskjourney fails before the original runs, `onFailure` is told and the original runs
 * untouched.
 */
export function meterCall(
  activity: string,
  original: AnyFunction,
  isAsync: boolean,
  self: unknown,
  args: unknown[],
  onFailure: (error: unknown) => void,
): unknown {
  const frame = ambientLedger.getStore();
  if (frame === undefined) return Reflect.apply(original, self, args);
  return frame.ledger.meterApply(activity, original, self, args, isAsync, onFailure);
}
