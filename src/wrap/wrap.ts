import { isAsyncFunction } from "../shared/functions.js";
import { ArgumentArrays, disguise, meterCall, originalOf, type AnyFunction } from "./function.js";
import { internalFailure } from "./guard.js";
import { show } from "../model/show.js";
import { AlreadyWrappedError, InvalidArgumentError } from "../shared/errors.js";

/**
 * Wraps a function that is not a method (a module-level helper, a callback) so that every call is
 * metered as `activity` of the execution or transfer surrounding it: the ledger opened by a wrapped
 * execute or gather method, found through AsyncLocalStorage across awaits and timers. Outside one
 * the call is made untouched and nothing is recorded.
 *
 * The wrapper keeps `this`, arguments, the result, sync or async behaviour, thrown errors and
 * rejections, `name` and `length`. Wrapping a wrapper throws: that is a configuration bug.
 *
 * ```ts
 * const readSpilled = wrap(async function readSpilled(path: string) { ... }, "disk-read");
 * ```
 */
export function wrap<F extends AnyFunction>(fn: F, activity: string): F {
  if (typeof fn !== "function") {
    throw new InvalidArgumentError(
      `wrap(): the first argument must be a function, got ${fn === null ? "null" : typeof fn}`,
    );
  }
  if (typeof activity !== "string" || activity.length === 0) {
    throw new InvalidArgumentError(`wrap(): activity must be a non-empty string, got ${show(activity)}`);
  }
  if (originalOf(fn) !== undefined) {
    throw new AlreadyWrappedError(
      `wrap(): function "${fn.name}" is already wrapped by taskjourney; wrap the original once`,
    );
  }
  const original = fn;
  const isAsync = isAsyncFunction(original);
  const site = `wrap() of function "${original.name}" (activity "${activity}")`;
  const onFailure = (error: unknown): void => {
    const thrown = internalFailure(undefined, site, error);
    if (thrown !== undefined) throw thrown;
  };
  const arrays = new ArgumentArrays();
  const wrapper = {
    wrapped(this: unknown): unknown {
      // The arguments into a reused array, not a rest parameter's new one (see ArgumentArrays).
      const count = arguments.length;
      const args = arrays.take(count);
      // eslint-disable-next-line prefer-rest-params
      for (let index = 0; index < count; index++) args[index] = arguments[index];
      try {
        return meterCall(activity, original, isAsync, this, args, onFailure);
      } finally {
        arrays.give(args);
      }
    },
  }.wrapped;
  return disguise(wrapper, original);
}
