/**
 * The wrapper of a method metered as an activity of whatever ledger surrounds its call.
 */
import { isAsyncFunction } from "../shared/functions.js";
import { ArgumentArrays, meterCall, type AnyFunction } from "./function.js";
import { internalFailure } from "./guard.js";
import type { Site } from "./extractors.js";

export function activityWrapper(site: Site, activity: string): AnyFunction {
  const { journeys, original, on } = site;
  const isAsync = isAsyncFunction(original);
  const onFailure = (error: unknown): void => {
    const thrown = internalFailure(journeys, site.name, error);
    if (thrown !== undefined) throw thrown;
  };
  const arrays = new ArgumentArrays();
  return {
    activity(this: unknown): unknown {
      // The arguments into a reused array, not a rest parameter's new one (see ArgumentArrays).
      const count = arguments.length;
      const args = arrays.take(count);
      // eslint-disable-next-line prefer-rest-params
      for (let index = 0; index < count; index++) args[index] = arguments[index];
      try {
        if (!on.active) return Reflect.apply(original, this, args);
        return meterCall(activity, original, isAsync, this, args, onFailure);
      } finally {
        arrays.give(args);
      }
    },
  }.activity;
}
