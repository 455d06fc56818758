/**
 * `instrument()`: wraps an object's existing methods, as the spec says, with the wrappers of the
 * files beside it (transition.ts, execute.ts, gather.ts, activities.ts, on the plumbing of
 * extractors.ts and ledgers.ts); the spec's types are spec.ts's.
 */
import type { TaskJourneys as TaskJourneysOf } from "../journeys.js";
import type { Role } from "../model/states.js";
import { AlreadyWrappedError, InvalidArgumentError } from "../shared/errors.js";
import { disguise, originalOf, type AnyFunction } from "./function.js";
import { show } from "../model/show.js";
import type { InstrumentSpec, Unwrap } from "./spec.js";
import type { Switch, Site } from "./extractors.js";
import { transitionWrapper, dependenciesWrapper } from "./transition.js";
import { executeWrapper } from "./execute.js";
import { gatherWrapper } from "./gather.js";
import { activityWrapper } from "./activities.js";

export type {
  MethodName,
  MethodArgs,
  MethodResult,
  Extractor,
  TransitionSpec,
  DependenciesSpec,
  ExecuteSpec,
  GatherSpec,
  ActivitySpec,
  InstrumentSpec,
  Unwrap,
} from "./spec.js";

// ---- instrument -------------------------------------------------------------------------------

type Kind = "transition" | "dependencies" | "execute" | "gather" | "activities";

interface Plan {
  kind: Kind;
  /** Where the entry is in the spec, e.g. `spec.transition[1]`, for error messages. */
  path: string;
  entry: Record<string, unknown>;
  method: PropertyKey;
  original: AnyFunction;
  /** The target's own property before wrapping; undefined when the method was inherited. */
  own: PropertyDescriptor | undefined;
}

const KINDS: readonly Kind[] = ["transition", "dependencies", "execute", "gather", "activities"];

/** Each kind's extractors: required ones, optional ones, and ones that may also be a fixed string. */
const FIELDS: Record<Kind, { required: string[]; optional: string[]; orString: string[] }> = {
  transition: {
    required: ["key"],
    optional: ["dependencies", "prefix", "computation", "at", "error"],
    orString: ["from", "to"],
  },
  dependencies: { required: ["key", "dependencies"], optional: [], orString: [] },
  execute: { required: ["key"], optional: ["prefix", "at", "outcome"], orString: [] },
  gather: { required: ["peer", "keys"], optional: ["nbytes", "at", "outcome"], orString: [] },
  activities: { required: [], optional: [], orString: [] },
};

function methodLabel(method: PropertyKey): string {
  return typeof method === "symbol" ? method.toString() : `"${String(method)}"`;
}

/** The property `method` resolves to on `target`, walking its prototype chain. */
function lookup(target: object, method: PropertyKey): PropertyDescriptor | undefined {
  for (let object: object | null = target; object !== null; object = Object.getPrototypeOf(object) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(object, method);
    if (descriptor !== undefined) return descriptor;
  }
  return undefined;
}

function plan(target: object, spec: InstrumentSpec<unknown>): Plan[] {
  if (spec === null || typeof spec !== "object")
    throw new InvalidArgumentError(`instrument(): spec must be an object, got ${show(spec)}`);
  for (const name of Object.keys(spec)) {
    if (!(KINDS as readonly string[]).includes(name)) {
      throw new InvalidArgumentError(`instrument(): unknown spec option "${name}"; expected ${KINDS.join(", ")}`);
    }
  }
  const plans: Plan[] = [];
  const seen = new Map<PropertyKey, string>();
  for (const kind of KINDS) {
    const value = (spec as Record<string, unknown>)[kind];
    if (value === undefined) continue;
    const entries = Array.isArray(value) ? (value as unknown[]) : [value];
    entries.forEach((entry, index) => {
      const path = Array.isArray(value) ? `spec.${kind}[${index}]` : `spec.${kind}`;
      if (entry === null || typeof entry !== "object")
        throw new InvalidArgumentError(`instrument(): ${path} must be an object, got ${show(entry)}`);
      const fields = entry as Record<string, unknown>;
      const method = fields.method;
      if (typeof method !== "string" && typeof method !== "symbol" && typeof method !== "number") {
        throw new InvalidArgumentError(
          `instrument(): ${path}.method must name a method of the target, got ${show(method)}`,
        );
      }
      const { required, optional, orString } = FIELDS[kind];
      for (const field of required) {
        if (typeof fields[field] !== "function")
          throw new InvalidArgumentError(
            `instrument(): ${path}.${field} must be a function, got ${show(fields[field])}`,
          );
      }
      for (const field of optional) {
        if (fields[field] !== undefined && typeof fields[field] !== "function") {
          throw new InvalidArgumentError(
            `instrument(): ${path}.${field} must be a function when given, got ${show(fields[field])}`,
          );
        }
      }
      for (const field of orString) {
        const extractor = fields[field];
        if (typeof extractor !== "function" && (typeof extractor !== "string" || extractor.length === 0)) {
          throw new InvalidArgumentError(
            `instrument(): ${path}.${field} must be a state name or a function, got ${show(extractor)}`,
          );
        }
      }
      if (kind === "activities" && (typeof fields.activity !== "string" || fields.activity.length === 0)) {
        throw new InvalidArgumentError(
          `instrument(): ${path}.activity must be a non-empty string, got ${show(fields.activity)}`,
        );
      }
      const earlier = seen.get(method);
      if (earlier !== undefined) {
        throw new AlreadyWrappedError(
          `instrument(): method ${methodLabel(method)} is named twice, by ${earlier} and ${path}; a method can be wrapped once`,
        );
      }
      seen.set(method, path);
      const found = lookup(target, method);
      if (found !== undefined && (found.get !== undefined || found.set !== undefined)) {
        throw new InvalidArgumentError(
          `instrument(): ${path}.method ${methodLabel(method)} is an accessor property; only methods (data properties) can be wrapped`,
        );
      }
      const original = found?.value as unknown;
      if (typeof original !== "function") {
        throw new InvalidArgumentError(
          `instrument(): ${path}.method ${methodLabel(method)} is not a method of the target (found ${show(original)})`,
        );
      }
      if (originalOf(original) !== undefined) {
        throw new AlreadyWrappedError(
          `instrument(): method ${methodLabel(method)} is already wrapped by taskjourney (on this object or its prototype); ` +
            "call the earlier instrument()'s unwrap() first, or instrument either the class or its instances, not both",
        );
      }
      const own = Object.getOwnPropertyDescriptor(target, method);
      if (own !== undefined ? !own.configurable && !own.writable : !Object.isExtensible(target)) {
        throw new InvalidArgumentError(
          `instrument(): method ${methodLabel(method)} cannot be replaced on the target (frozen, sealed or read-only)`,
        );
      }
      plans.push({ kind, path, entry: fields, method, original: original as AnyFunction, own });
    });
  }
  if (plans.length === 0)
    throw new InvalidArgumentError(`instrument(): spec names no method to wrap; give one of ${KINDS.join(", ")}`);
  return plans;
}

function makeWrapper(site: Site, plan: Plan): AnyFunction {
  // Checked by plan(): the fields each kind needs are there, with the right types.
  const entry = plan.entry as any;
  switch (plan.kind) {
    case "transition":
      return transitionWrapper(site, entry);
    case "dependencies":
      return dependenciesWrapper(site, entry);
    case "execute":
      return executeWrapper(site, entry);
    case "gather":
      return gatherWrapper(site, entry);
    case "activities":
      return activityWrapper(site, entry.activity);
  }
}

/**
 * Wraps methods of an existing scheduler or worker object (or of its class's prototype) so that they
 * report to `journeys`: transitions, executions, gather_dep transfers and activities. Returns
 * `unwrap()`, which puts every method back exactly as it was.
 *
 * The wrapped methods keep `this`, arguments, results, sync or async behaviour, thrown errors and
 * rejections, `name` and `length`. An extractor or mapper that throws is counted in
 * taskjourney.dropped{reason="wrap-extractor-error"} and told once through `diag`; the call proceeds
 * untouched. Bad configuration (a method that does not exist, one already wrapped) throws here.
 *
 * Why our own and not @opentelemetry/instrumentation (InstrumentationBase, shimmer): that patches
 * a named module as it loads, while a scheduler is the user's own objects, wrapped by instance or
 * prototype with extractors; and the core depends on @opentelemetry/api only.
 */
export function instrument<T extends object, S extends string = string>(
  target: T,
  journeys: TaskJourneysOf<Role, S>,
  // S from `journeys` only, never from the spec's literals (TypeScript's NoInfer, written so that
  // TypeScript before 5.4 reads it too).
  spec: InstrumentSpec<T, [S][S extends unknown ? 0 : never]>,
): Unwrap {
  if (target === null || (typeof target !== "object" && typeof target !== "function")) {
    throw new InvalidArgumentError(`instrument(): target must be an object, got ${show(target)}`);
  }
  if (journeys === null || typeof journeys !== "object" || typeof journeys.execute !== "function") {
    throw new InvalidArgumentError(`instrument(): journeys must be a TaskJourneys, got ${show(journeys)}`);
  }
  const plans = plan(target, spec as InstrumentSpec<unknown>);
  const on: Switch = { active: true };
  const installed: Array<{ plan: Plan; wrapper: AnyFunction }> = [];
  for (const step of plans) {
    const name = `${step.kind === "activities" ? "activity" : step.kind} method ${methodLabel(step.method)}`;
    const wrapper = disguise(makeWrapper({ journeys, original: step.original, on, name }, step), step.original);
    installed.push({ plan: step, wrapper });
  }
  const target_ = target as Record<PropertyKey, unknown>;
  const restore = (count: number): void => {
    for (let index = count - 1; index >= 0; index--) {
      const { plan: step, wrapper } = installed[index];
      const current = Object.getOwnPropertyDescriptor(target_, step.method);
      // Someone wrapped it again on top of us: leave their wrapper; ours now passes calls through.
      if (current === undefined || current.value !== wrapper) continue;
      if (step.own !== undefined) Object.defineProperty(target_, step.method, step.own);
      else delete target_[step.method];
    }
  };
  let count = 0;
  try {
    for (const { plan: step, wrapper } of installed) {
      const descriptor: PropertyDescriptor =
        step.own !== undefined
          ? { ...step.own, value: wrapper }
          : { value: wrapper, writable: true, enumerable: false, configurable: true };
      Object.defineProperty(target_, step.method, descriptor);
      count++;
    }
  } catch (error) {
    restore(count);
    throw new InvalidArgumentError(
      `instrument(): could not wrap the target's methods: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  let unwrapped = false;
  return () => {
    if (unwrapped) return;
    unwrapped = true;
    on.active = false;
    restore(installed.length);
  };
}
