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

/** Arities whose argument arrays a wrapper keeps for reuse: 0 to 4 arguments (the methods wrapped take 1–3). */
const KEPT_ARITIES = 5;

/**
 * A wrapper's arrays of call arguments, one kept per arity and reused by the next call: a rest
 * parameter (`...args`) is a new array each call, ~100 B (600 B a task in the replayed cluster
 * worker, bench/README.md). The wrapper copies `arguments` in (`arguments.length` and
 * `arguments[index]` alone: optimized code then reads them from the stack, no object made) and
 * gives the array back once the original has been called with it, cleared, so that it holds no
 * argument alive. A call made while the array is out (a wrapped method called from inside its
 * own extractor or original) takes a new one, as does a call with more than four arguments.
 * Only for arrays that no user code keeps: an outcome mapper is given its call's `args` after
 * the call, so the execute and gather wrappers with one take a fresh array.
 */
export class ArgumentArrays {
  private readonly kept: Array<unknown[] | undefined> = new Array<unknown[] | undefined>(KEPT_ARITIES).fill(undefined);

  /** `reuse` false: every call gets an array of its own (a wrapper whose user code may keep it). */
  constructor(private readonly reuse = true) {}

  /** An array of `count` elements for a call to fill: a kept one when free. */
  take(count: number): unknown[] {
    if (this.reuse && count < KEPT_ARITIES) {
      const array = this.kept[count];
      if (array !== undefined) {
        this.kept[count] = undefined;
        return array;
      }
    }
    return new Array<unknown>(count);
  }

  /** The array back, once the call it was made for no longer reads it. */
  give(array: unknown[]): void {
    const count = array.length;
    if (!this.reuse || count >= KEPT_ARITIES) return;
    for (let index = 0; index < count; index++) array[index] = undefined;
    this.kept[count] = array;
  }
}
