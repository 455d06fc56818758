/**
 * The wrapper of a method metered as an activity of whatever ledger surrounds its call.
 */
import { isAsyncFunction } from "../shared/functions.js";
import { meterCall, type AnyFunction } from "./function.js";
import { internalFailure } from "./guard.js";
import type { Site } from "./extractors.js";

export function activityWrapper(site: Site, activity: string): AnyFunction {
  const { journeys, original, on } = site;
  const isAsync = isAsyncFunction(original);
  const onFailure = (error: unknown): void => {
    const thrown = internalFailure(journeys, site.name, error);
    if (thrown !== undefined) throw thrown;
  };
  return {
    activity(this: unknown, ...args: unknown[]): unknown {
      if (!on.active) return Reflect.apply(original, this, args);
      return meterCall(activity, original, isAsync, this, args, onFailure);
    },
  }.activity;
}
