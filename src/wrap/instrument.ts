import type { AnyTaskJourneys as TaskJourneys, TaskJourneys as TaskJourneysOf } from "../journeys.js";
import type { Key } from "../model/keys.js";
import type { Role } from "../model/states.js";
import { EXECUTE_OUTCOMES, TRANSFER_OUTCOMES, type ExecuteOutcome, type TransferOutcome } from "../model/activities.js";
import { AlreadyWrappedError, InvalidArgumentError, type InvalidTransition } from "../shared/errors.js";
import { isAsyncFunction, isThenable } from "../recorder/functions.js";
import { executeEndNames } from "../recorder/execution-ledger.js";
import { disguise, meterCall, originalOf, type AnyFunction } from "./function.js";
import { EXTRACTOR_ERROR, internalFailure, report } from "./guard.js";
import { internalsOf } from "../internal.js";
import { show } from "../recorder/show.js";

// ---- spec types -------------------------------------------------------------------------------

/** Names of the methods of `T` (own or inherited, optional ones included). */
export type MethodName<T> = {
  [K in keyof T]-?: NonNullable<T[K]> extends AnyFunction ? K : never;
}[keyof T];

/** The parameters of method `K` of `T`. */
export type MethodArgs<T, K extends keyof T> = NonNullable<T[K]> extends (...args: infer A) => any ? A : never;

/** What method `K` of `T` returns, or its promise resolves to. */
export type MethodResult<T, K extends keyof T> =
  NonNullable<T[K]> extends (...args: any[]) => infer R ? Awaited<R> : never;

/**
 * Reads a value from the arguments of a call of method `K`, before the method runs; `this` is the
 * object the method was called on.
 */
export type Extractor<T, K extends keyof T, V> = (this: T, ...args: MethodArgs<T, K>) => V;

/**
 * A method called per state change: `transition(ts, "ready")`. Recorded when the method is
 * called, before it runs, so that transitions it makes in turn are recorded after it, in call order.
 * `key`, `from` or `to` returning undefined leaves that call unrecorded. A fixed state name is typed
 * by the journeys' machine (`S`), so a misspelt one does not compile; a name an extractor reads
 * from the arguments is checked at run time (`unknown-state`).
 */
export type TransitionSpec<T, S extends string = string> = {
  [K in MethodName<T>]: {
    method: K;
    key: Extractor<T, K, Key | undefined>;
    /** The state the key leaves: a fixed name or read from the arguments. */
    from: S | Extractor<T, K, string | undefined>;
    /** The state the key enters: a fixed name or read from the arguments. */
    to: S | Extractor<T, K, string | undefined>;
    /** The keys this key depends on, told after the transition is recorded. */
    dependencies?: Extractor<T, K, Iterable<Key> | undefined>;
    /** The key's prefix, for a journey this call begins (e.g. the job's name); default as `describe()` / `keyPrefix` / key_split say. */
    prefix?: Extractor<T, K, string | undefined>;
    /** When the transition happened, in the journeys' clock (see `clock` / `timeOrigin`); default now. */
    at?: Extractor<T, K, number | undefined>;
    /** Why the attempt the key leaves failed (the job's error or failedReason), for moves into a failure state or a retry; see `transition()`. */
    error?: Extractor<T, K, unknown>;
  };
}[MethodName<T>];

/** A method that learns a key's dependencies (a compute-task handler). */
export type DependenciesSpec<T> = {
  [K in MethodName<T>]: {
    method: K;
    key: Extractor<T, K, Key | undefined>;
    dependencies: Extractor<T, K, Iterable<Key> | undefined>;
  };
}[MethodName<T>];

/**
 * A method that runs one task. Each call opens `journeys.execute(key)`, runs the method with that
 * ledger ambient (so `journeys.meter()` deep inside finds it) and ends the ledger when the method
 * returns, throws, or its promise settles.
 */
export type ExecuteSpec<T, S extends string = never> = {
  [K in MethodName<T>]: {
    method: K;
    key: Extractor<T, K, Key | undefined>;
    /** The key's prefix, for a journey this call begins; default as `describe()` / `keyPrefix` / key_split say. */
    prefix?: Extractor<T, K, string | undefined>;
    /** When the execution began, in the journeys' clock; default now. */
    at?: Extractor<T, K, number | undefined>;
    /**
     * The outcome of a call: `result` on success, `error` on a throw or rejection, `args` the call's
     * arguments. Default, and when this returns undefined: "memory" on success, "error" on failure.
     * A state of the machine moves the key there (`ExecuteLedger.end`): a job queue's retry returns
     * `"delayed"` for an attempt that will be retried, `"failed"` for the last.
     */
    outcome?: (
      this: T,
      result: MethodResult<T, K> | undefined,
      error: unknown,
      args: MethodArgs<T, K>,
    ) => ExecuteOutcome | S | undefined;
  };
}[MethodName<T>];

/**
 * The gather_dep method: fetches `keys` from `peer`. Each call opens `journeys.gather(peer, keys,
 * nbytes)`, runs the method with that ledger ambient and ends it with the outcome.
 */
export type GatherSpec<T> = {
  [K in MethodName<T>]: {
    method: K;
    peer: Extractor<T, K, string>;
    keys: Extractor<T, K, Iterable<Key>>;
    nbytes?: Extractor<T, K, number | undefined>;
    /** When the transfer began, in the journeys' clock; default now. */
    at?: Extractor<T, K, number | undefined>;
    /**
     * The outcome of a call: `result` on success, `error` on a throw or rejection, `args` the call's
     * arguments. Default, and when this returns undefined: "ok" on success, "failed" on failure.
     */
    outcome?: (
      this: T,
      result: MethodResult<T, K> | undefined,
      error: unknown,
      args: MethodArgs<T, K>,
    ) => TransferOutcome | undefined;
  };
}[MethodName<T>];

/** A method whose calls are metered as `activity` of the surrounding execute or gather (get_data, spill, …). */
export type ActivitySpec<T> = {
  [K in MethodName<T>]: { method: K; activity: string };
}[MethodName<T>];

type OneOrMany<S> = S | readonly S[];

/** Which methods of the target to wrap, and how to read their arguments; `S`: the journeys' states. */
export interface InstrumentSpec<T, S extends string = string> {
  transition?: OneOrMany<TransitionSpec<T, S>>;
  dependencies?: OneOrMany<DependenciesSpec<T>>;
  execute?: OneOrMany<ExecuteSpec<T, S>>;
  gather?: OneOrMany<GatherSpec<T>>;
  activities?: OneOrMany<ActivitySpec<T>>;
}

/** Restores every wrapped method exactly as it was. Idempotent. */
export type Unwrap = () => void;

// ---- wrappers ---------------------------------------------------------------------------------

/** An extractor that threw: the call proceeds unrecorded. */
const FAILED: unique symbol = Symbol("taskjourney.extractor-failed");

type Extract = (this: unknown, ...args: unknown[]) => unknown;

/** Whether a wrapper records anything; false after unwrap(), for wrappers still referenced elsewhere. */
interface Switch {
  active: boolean;
}

function extract(journeys: TaskJourneys, fn: Extract, self: unknown, args: unknown[], site: string): unknown {
  try {
    return Reflect.apply(fn, self, args);
  } catch (error) {
    report(journeys, EXTRACTOR_ERROR, site, error);
    return FAILED;
  }
}

/** The extractor returned a value of the wrong kind: a bug of the extractor, counted as such. */
function wrongKind(journeys: TaskJourneys, site: string, value: unknown, expected: string): typeof FAILED {
  report(journeys, EXTRACTOR_ERROR, site, new TypeError(`returned ${show(value)}, not ${expected}`));
  return FAILED;
}

/** A state name, undefined (skip the call) or FAILED. */
function extractState(
  journeys: TaskJourneys,
  state: string | Extract,
  self: unknown,
  args: unknown[],
  site: string,
): unknown {
  if (typeof state === "string") return state;
  const value = extract(journeys, state, self, args, site);
  return value === FAILED || value === undefined || typeof value === "string"
    ? value
    : wrongKind(journeys, site, value, "a state name");
}

/** A prefix (non-empty string), undefined (none) or FAILED. */
function extractPrefix(
  journeys: TaskJourneys,
  fn: Extract | undefined,
  self: unknown,
  args: unknown[],
  site: string,
): unknown {
  if (fn === undefined) return undefined;
  const value = extract(journeys, fn, self, args, site);
  return value === FAILED || value === undefined || (typeof value === "string" && value.length > 0)
    ? value
    : wrongKind(journeys, site, value, "a non-empty prefix");
}

/** A time in seconds, undefined (now) or FAILED. */
function extractTime(
  journeys: TaskJourneys,
  fn: Extract | undefined,
  self: unknown,
  args: unknown[],
  site: string,
): unknown {
  if (fn === undefined) return undefined;
  const value = extract(journeys, fn, self, args, site);
  return value === FAILED || value === undefined || typeof value === "number"
    ? value
    : wrongKind(journeys, site, value, "a time in seconds");
}

/**
 * Runs `record` with `prefix` as the prefix of a journey it begins. The recorder's one-call hint,
 * not describe(): nothing is kept per key, so a wrapped method called for millions of keys costs
 * no memory.
 */
function withPrefix<R>(journeys: TaskJourneys, prefix: unknown, record: () => R): R {
  if (prefix === undefined) return record();
  const recorder = internalsOf(journeys)?.recorder;
  if (recorder === undefined) return record();
  recorder.prefixHint = prefix as string;
  try {
    return record();
  } finally {
    recorder.prefixHint = undefined;
  }
}

/** An array of keys (from any iterable), undefined (skip the call) or FAILED. */
function extractKeys(
  journeys: TaskJourneys,
  fn: Extract,
  self: unknown,
  args: unknown[],
  site: string,
): readonly Key[] | undefined | typeof FAILED {
  const value = extract(journeys, fn, self, args, site);
  if (value === FAILED || value === undefined) return value;
  try {
    if (Array.isArray(value)) return value as readonly Key[];
    if (value !== null && typeof value === "object" && typeof (value as Iterable<Key>)[Symbol.iterator] === "function")
      return Array.from(value as Iterable<Key>);
  } catch (error) {
    // Reading what it returned threw (a Proxy, an iterator that fails): the extractor's bug.
    report(journeys, EXTRACTOR_ERROR, site, error);
    return FAILED;
  }
  return wrongKind(journeys, site, value, "an iterable of keys");
}

/** Everything a wrapper reads, fixed at instrument() time. */
interface Site {
  readonly journeys: TaskJourneys;
  readonly original: AnyFunction;
  readonly on: Switch;
  /** `kind method "name"`, for diagnostics. */
  readonly name: string;
}

/**
 * Records a call with `record` (unless unwrapped), then calls the original. `record` returns the
 * strict recorder's InvalidTransition, thrown before the original runs.
 */
function recordingWrapper(
  site: Site,
  record: (self: unknown, args: unknown[]) => InvalidTransition | undefined,
): AnyFunction {
  const { journeys, original, on } = site;
  return {
    record(this: unknown, ...args: unknown[]): unknown {
      if (on.active) {
        let thrown: InvalidTransition | undefined;
        try {
          thrown = record(this, args);
        } catch (error) {
          // What an extractor returned broke the recording (a Proxy whose traps throw): counted, and
          // the call goes on untouched.
          thrown = internalFailure(journeys, site.name, error);
        }
        if (thrown !== undefined) throw thrown;
      }
      return Reflect.apply(original, this, args);
    },
  }.record;
}

function transitionWrapper(
  site: Site,
  spec: {
    key: Extract;
    from: string | Extract;
    to: string | Extract;
    dependencies?: Extract;
    prefix?: Extract;
    at?: Extract;
    error?: Extract;
  },
): AnyFunction {
  const journeys = site.journeys;
  const { key, from, to, dependencies, prefix, at, error } = spec;
  const errorSite = `${site.name}: the error extractor`;
  const prefixSite = `${site.name}: the prefix extractor`;
  const atSite = `${site.name}: the at extractor`;
  const keySite = `${site.name}: the key extractor`;
  const fromSite = `${site.name}: the from extractor`;
  const toSite = `${site.name}: the to extractor`;
  const dependenciesSite = `${site.name}: the dependencies extractor`;
  return recordingWrapper(site, (self, args) => {
    // One extractor at a time: a call the key extractor skips is never shown to the others.
    const k = extract(journeys, key, self, args, keySite);
    if (k === FAILED || k === undefined) return undefined;
    const f = extractState(journeys, from, self, args, fromSite);
    if (f === FAILED || f === undefined) return undefined;
    const t = extractState(journeys, to, self, args, toSite);
    if (t === FAILED || t === undefined) return undefined;
    const d =
      dependencies === undefined ? undefined : extractKeys(journeys, dependencies, self, args, dependenciesSite);
    if (d === FAILED) return undefined;
    const p = extractPrefix(journeys, prefix, self, args, prefixSite);
    if (p === FAILED) return undefined;
    const a = extractTime(journeys, at, self, args, atSite);
    if (a === FAILED) return undefined;
    const e = error === undefined ? undefined : extract(journeys, error, self, args, errorSite);
    if (e === FAILED) return undefined;
    try {
      // No closure for the usual call, with no prefix to hint.
      if (p === undefined) journeys.transition(k as Key, f as string, t as string, a as number | undefined, e);
      else
        withPrefix(journeys, p, () =>
          journeys.transition(k as Key, f as string, t as string, a as number | undefined, e),
        );
      if (d !== undefined) journeys.dependencies(k as Key, d);
    } catch (error) {
      return internalFailure(journeys, site.name, error);
    }
    return undefined;
  });
}

function dependenciesWrapper(site: Site, spec: { key: Extract; dependencies: Extract }): AnyFunction {
  const journeys = site.journeys;
  const { key, dependencies } = spec;
  const keySite = `${site.name}: the key extractor`;
  const dependenciesSite = `${site.name}: the dependencies extractor`;
  return recordingWrapper(site, (self, args) => {
    const k = extract(journeys, key, self, args, keySite);
    if (k === FAILED || k === undefined) return undefined;
    const d = extractKeys(journeys, dependencies, self, args, dependenciesSite);
    if (d === FAILED || d === undefined) return undefined;
    try {
      journeys.dependencies(k as Key, d);
    } catch (error) {
      return internalFailure(journeys, site.name, error);
    }
    return undefined;
  });
}

/** What ends an execute or gather ledger, fixed at instrument() time. */
interface Ending {
  readonly journeys: TaskJourneys;
  readonly outcome: ((this: unknown, result: unknown, error: unknown, args: unknown[]) => unknown) | undefined;
  /** What the outcome mapper may return (an execute ledger's: also the machine's states). */
  readonly outcomes: readonly string[];
  readonly succeeded: string;
  readonly failed: string;
  readonly outcomeSite: string;
  readonly endSite: string;
}

/**
 * Ends `ledger` with the mapped outcome. Returns the InvalidTransition of a strict recorder for the
 * caller to throw; anything else that fails is counted and told, never thrown.
 */
function end(
  ending: Ending,
  ledger: { end(outcome?: never, error?: never): void },
  self: unknown,
  args: unknown[],
  result: unknown,
  error: unknown,
  failed: boolean,
): InvalidTransition | undefined {
  let outcome = failed ? ending.failed : ending.succeeded;
  const map = ending.outcome;
  if (map !== undefined) {
    try {
      const mapped = map.call(self, result, error, args);
      if (mapped !== undefined) {
        if (ending.outcomes.includes(mapped as string)) outcome = mapped as string;
        else throw new TypeError(`returned ${show(mapped)}, not one of ${ending.outcomes.join(", ")}`);
      }
    } catch (mapperError) {
      report(
        ending.journeys,
        EXTRACTOR_ERROR,
        ending.outcomeSite,
        mapperError,
        `the call is recorded with the default outcome ("${ending.succeeded}" on success, "${ending.failed}" on failure)`,
      );
    }
  }
  try {
    // What was thrown or rejected with, for spans and explain() to say why it failed.
    ledger.end(outcome as never, (failed ? error : undefined) as never);
  } catch (endError) {
    return internalFailure(ending.journeys, ending.endSite, endError);
  }
  return undefined;
}

/**
 * An execute or gather ledger, as the wrappers use it: every ledger the recorder hands out (a
 * Ledger, or the NoLedger of a key it could not record) also has `runApply`, which the public
 * interfaces leave out.
 */
type OpenLedger = {
  runApply(fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown;
  end(outcome?: never, error?: never): void;
};

/**
 * Runs `original` inside `ledger` and ends the ledger after a sync return, a throw, or the
 * settlement of a returned promise. Results and errors pass through unchanged.
 */
function runInLedger(
  ending: Ending,
  ledger: OpenLedger,
  original: AnyFunction,
  self: unknown,
  args: unknown[],
): unknown {
  let result: unknown;
  try {
    result = ledger.runApply(original, self, args);
  } catch (error) {
    // The host's error wins over a strict recorder's complaint; that one is counted already.
    end(ending, ledger, self, args, undefined, error, true);
    throw error;
  }
  if (isThenable(result)) {
    let settled: PromiseLike<unknown>;
    try {
      settled = result.then(
        (value) => {
          const thrown = end(ending, ledger, self, args, value, undefined, false);
          if (thrown !== undefined) throw thrown;
          return value;
        },
        (error: unknown) => {
          end(ending, ledger, self, args, undefined, error, true);
          throw error;
        },
      );
    } catch {
      // A thenable whose then() throws: not one to wait for. Return it as it is.
      end(ending, ledger, self, args, result, undefined, false);
      return result;
    }
    return settled;
  }
  const thrown = end(ending, ledger, self, args, result, undefined, false);
  if (thrown !== undefined) throw thrown;
  return result;
}

/** What an execute spec's outcome mapper may return: the ledger's outcomes and the machine's states it moves to. */
function executeEndOutcomes(journeys: TaskJourneys): readonly string[] {
  const machine = internalsOf(journeys)?.recorder.machine;
  return machine === undefined ? EXECUTE_OUTCOMES : executeEndNames(machine);
}

function executeWrapper(
  site: Site,
  spec: { key: Extract; prefix?: Extract; at?: Extract; outcome?: Ending["outcome"] },
): AnyFunction {
  const { journeys, original, on } = site;
  const { key, prefix, at } = spec;
  const keySite = `${site.name}: the key extractor`;
  const prefixSite = `${site.name}: the prefix extractor`;
  const atSite = `${site.name}: the at extractor`;
  const ending: Ending = {
    journeys,
    outcome: spec.outcome,
    outcomes: executeEndOutcomes(journeys),
    succeeded: "memory",
    failed: "error",
    outcomeSite: `${site.name}: the outcome mapper`,
    endSite: `${site.name}: ending the execute ledger`,
  };
  /** The call's ledger, or undefined for a call that goes on unrecorded (an extractor's failure, counted). */
  const open = (self: unknown, args: unknown[]): OpenLedger | undefined => {
    const k = extract(journeys, key, self, args, keySite);
    if (k === FAILED || k === undefined) return undefined;
    const p = extractPrefix(journeys, prefix, self, args, prefixSite);
    const a = extractTime(journeys, at, self, args, atSite);
    if (p === FAILED || a === FAILED) return undefined;
    return (p === undefined
      ? journeys.execute(k as Key, a as number | undefined)
      : withPrefix(journeys, p, () => journeys.execute(k as Key, a as number | undefined))) as unknown as OpenLedger;
  };
  const openingSite = `${site.name}: opening the execute ledger`;
  return {
    execute(this: unknown, ...args: unknown[]): unknown {
      if (!on.active) return Reflect.apply(original, this, args);
      const ledger = openGuarded(journeys, openingSite, open, this, args);
      if (ledger === undefined) return Reflect.apply(original, this, args);
      return runInLedger(ending, ledger, original, this, args);
    },
  }.execute;
}

function gatherWrapper(
  site: Site,
  spec: { peer: Extract; keys: Extract; nbytes?: Extract; at?: Extract; outcome?: Ending["outcome"] },
): AnyFunction {
  const { journeys, original, on } = site;
  const { peer, keys, nbytes, at } = spec;
  const atSite = `${site.name}: the at extractor`;
  const peerSite = `${site.name}: the peer extractor`;
  const keysSite = `${site.name}: the keys extractor`;
  const nbytesSite = `${site.name}: the nbytes extractor`;
  const ending: Ending = {
    journeys,
    outcome: spec.outcome,
    outcomes: TRANSFER_OUTCOMES,
    succeeded: "ok",
    failed: "failed",
    outcomeSite: `${site.name}: the outcome mapper`,
    endSite: `${site.name}: ending the gather ledger`,
  };
  /** The call's ledger, or undefined for a call that goes on unrecorded (an extractor's failure, counted). */
  const open = (self: unknown, args: unknown[]): OpenLedger | undefined => {
    const p = extract(journeys, peer, self, args, peerSite);
    if (typeof p !== "string") {
      if (p !== FAILED) wrongKind(journeys, peerSite, p, "a peer address string");
      return undefined;
    }
    const ks = extractKeys(journeys, keys, self, args, keysSite);
    if (ks === FAILED || ks === undefined) return undefined;
    const n = nbytes === undefined ? undefined : extract(journeys, nbytes, self, args, nbytesSite);
    if (n !== undefined && typeof n !== "number") {
      if (n !== FAILED) wrongKind(journeys, nbytesSite, n, "a number of bytes");
      return undefined;
    }
    const a = extractTime(journeys, at, self, args, atSite);
    if (a === FAILED) return undefined;
    return journeys.gather(p, ks, n, a as number | undefined) as unknown as OpenLedger;
  };
  const openingSite = `${site.name}: opening the gather ledger`;
  return {
    gather(this: unknown, ...args: unknown[]): unknown {
      if (!on.active) return Reflect.apply(original, this, args);
      const ledger = openGuarded(journeys, openingSite, open, this, args);
      if (ledger === undefined) return Reflect.apply(original, this, args);
      return runInLedger(ending, ledger, original, this, args);
    },
  }.gather;
}

/**
 * Opens a wrapped call's ledger through `open`, whatever the extractors returned: a failure is
 * counted and told once, and the call goes on unrecorded (undefined). A strict recorder's
 * InvalidTransition is thrown, before the original runs.
 */
function openGuarded(
  journeys: TaskJourneys,
  site: string,
  open: (self: unknown, args: unknown[]) => OpenLedger | undefined,
  self: unknown,
  args: unknown[],
): OpenLedger | undefined {
  try {
    return open(self, args);
  } catch (error) {
    const thrown = internalFailure(journeys, site, error);
    if (thrown !== undefined) throw thrown;
    return undefined;
  }
}

function activityWrapper(site: Site, activity: string): AnyFunction {
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
  transition: { required: ["key"], optional: ["dependencies", "prefix", "at", "error"], orString: ["from", "to"] },
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
