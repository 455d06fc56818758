/**
 * What `instrument()` takes: the spec of the methods to wrap, typed by the target's methods (TypeScript infers each extractor's arguments).
 */
import type { Key } from "../model/keys.js";
import type { ExecuteOutcome, TransferOutcome } from "../model/activities.js";
import type { AnyFunction } from "./function.js";

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
    /** The computation (graph submission, flow) of a journey this call begins: see `TransitionOptions.computation`. */
    computation?: Extractor<T, K, string | undefined>;
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
 * The gather_dep method: gathers `keys` from `peer`. Each call opens `journeys.gather(peer, keys,
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

export type OneOrMany<S> = S | readonly S[];

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
