/** Any function; the wrappers pass arguments, `this` and results through untouched. */
export type AnyFunction = (...args: any[]) => any;

/** The constructor of `async function`s, compared against to tell async work from sync work cheaply. */
export const AsyncFunction = (async () => {}).constructor;

/** True for `async function`s and async methods: they always return a promise and never throw. */
export function isAsyncFunction(fn: AnyFunction): boolean {
  return fn.constructor === AsyncFunction;
}

/** True for promises and anything else with a `then` method, as `await` treats them. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  try {
    return typeof (value as PromiseLike<unknown>).then === "function";
  } catch {
    // A `then` getter that throws (a hostile Proxy): not something `await` could wait for either.
    return false;
  }
}
