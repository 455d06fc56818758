import { AsyncLocalStorage } from "node:async_hooks";
import type { AnyFunction } from "../shared/functions.js";

/**
 * What readers of the ambient frame call on its ledger (ledger.ts's Ledger is one): named here, so
 * that this file imports no ledger (no import cycle with ledger.ts, which makes frames ambient).
 */
export interface AmbientLedger {
  readonly ended: boolean;
  meter<T>(activity: string, work: () => T): T;
  digest(activity: string, value: number, unit?: string): void;
  run<T>(work: () => T): T;
  meterApply(
    activity: string,
    fn: AnyFunction,
    self: unknown,
    args: ArrayLike<unknown>,
    async: boolean,
    onFailure?: (error: unknown) => void,
  ): unknown;
}

/**
 * The ledger surrounding the current call, so that code deep inside a user's task can meter
 * activities without a ledger being passed to it. `record` is the open activity record that
 * nested activities belong to, or -1 at the ledger's top level.
 */
export interface AmbientFrame {
  readonly ledger: AmbientLedger;
  readonly record: number;
}

/** A frame reused for one ledger's synchronous activities (applyAt): its record set for each. */
export interface MutableFrame {
  readonly ledger: AmbientLedger;
  record: number;
}

/**
 * Two ways to make a frame ambient:
 *  - across awaits and timers, through an AsyncLocalStorage (the default). Its first `run()`
 *    makes Node (20) install promise hooks for the whole process, which tax every promise made
 *    afterwards, taskjourney's or not;
 *  - synchronously only (`asyncContext: false`): the frame is seen by code that runs before the
 *    work returns, never by continuations after an `await`. No AsyncLocalStorage is ever entered,
 *    so no hooks are installed.
 * The synchronous frame wins while it is set; an asynchronous run clears it for its own duration.
 */
const storage = new AsyncLocalStorage<AmbientFrame>();
/** Whether `storage` was ever entered (until then, getStore() has nothing to find). */
let storageUsed = false;
/** The frame of the synchronous run in progress, if any. */
let syncFrame: AmbientFrame | undefined = undefined;
/** Whether a synchronous run is in progress (its frame may be undefined: "no ledger here"). */
let syncDepth = 0;

/** Arguments of a call that has none: `Reflect.apply` of work that takes no arguments. */
export const NO_ARGUMENTS: readonly unknown[] = Object.freeze([]);

/**
 * Reflect.apply(fn, self, args); for meter()'s and run()'s work (no `this`, NO_ARGUMENTS) a plain
 * call, which is the same call: V8 makes it directly, where Reflect.apply of an array it cannot
 * see into goes through two builtins (CallWithArrayLike, CallVarargs), ~80 instructions an activity.
 */
function call(fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
  return args === NO_ARGUMENTS && self === undefined ? fn() : Reflect.apply(fn, self, args);
}

function applySync(frame: AmbientFrame | undefined, fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
  const outerFrame = syncFrame;
  syncFrame = frame;
  syncDepth++;
  try {
    return call(fn, self, args);
  } finally {
    syncDepth--;
    syncFrame = outerFrame;
  }
}

/**
 * `storage.run(frame, Reflect.apply, fn, self, args)`, done as run() does it (Node 20: the store
 * set on the current execution resource, the outer one put back after) without its costs: run()'s
 * rest parameter (an array per call), its second Reflect.apply through the callback and its
 * Object.is() against the current store: ~90 instructions an activity more, a worker journey
 * 14,427 → 14,149 (bench/guard, callgrind). Promises the work makes still take the frame, as
 * under run(): the store is on the resource while the work runs.
 */
function applyStored(frame: AmbientFrame, fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
  const outer = storage.getStore();
  storage.enterWith(frame);
  try {
    return call(fn, self, args);
  } finally {
    storage.enterWith(outer as AmbientFrame);
  }
}

export const ambientLedger = {
  /** The ambient frame, if any. */
  getStore(): AmbientFrame | undefined {
    if (syncDepth !== 0) return syncFrame;
    return storageUsed ? storage.getStore() : undefined;
  },
  /**
   * Calls `fn` with `self` and `args`, `frame` ambient: across its awaits and timers when `async`
   * (default), else only for its synchronous part. A call rather than a closure to run, so that
   * the wrappers make no closure per call (≈ 450 B a task in the cluster worker, on Node 24).
   */
  /**
   * apply() synchronously only, with `frame` at `record` for the call and back at its record
   * after: without AsyncLocalStorage nothing can keep a frame past the call (getStore()'s callers
   * read it at once), so one frame serves a ledger's every activity.
   */
  applyAt(frame: MutableFrame, record: number, fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
    const outerRecord = frame.record;
    frame.record = record;
    try {
      return applySync(frame, fn, self, args);
    } finally {
      frame.record = outerRecord;
    }
  },
  apply(frame: AmbientFrame, fn: AnyFunction, self: unknown, args: ArrayLike<unknown>, async = true): unknown {
    if (!async) return applySync(frame, fn, self, args);
    storageUsed = true;
    if (syncDepth === 0) return applyStored(frame, fn, self, args);
    // Inside a synchronous run: the asynchronous frame takes over for the duration of `fn`.
    const outerFrame = syncFrame;
    const outerDepth = syncDepth;
    syncFrame = undefined;
    syncDepth = 0;
    try {
      return applyStored(frame, fn, self, args);
    } finally {
      syncFrame = outerFrame;
      syncDepth = outerDepth;
    }
  },
};
