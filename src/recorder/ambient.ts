import { AsyncLocalStorage } from "node:async_hooks";
import type { Ledger } from "./ledger.js";

/**
 * The ledger surrounding the current call, so that code deep inside a user's task can meter
 * activities without a ledger being passed to it. `record` is the open activity record that
 * nested activities belong to, or -1 at the ledger's top level.
 */
export interface AmbientFrame {
  readonly ledger: Ledger;
  readonly record: number;
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

function runSync<T>(frame: AmbientFrame | undefined, work: () => T): T {
  const outerFrame = syncFrame;
  syncFrame = frame;
  syncDepth++;
  try {
    return work();
  } finally {
    syncDepth--;
    syncFrame = outerFrame;
  }
}

export const ambientLedger = {
  /** The ambient frame, if any. */
  getStore(): AmbientFrame | undefined {
    if (syncDepth !== 0) return syncFrame;
    return storageUsed ? storage.getStore() : undefined;
  },
  /**
   * Runs `work` with `frame` ambient: across its awaits and timers when `async` (default), else
   * only for its synchronous part.
   */
  run<T>(frame: AmbientFrame, work: () => T, async = true): T {
    if (!async) return runSync(frame, work);
    storageUsed = true;
    if (syncDepth === 0) return storage.run(frame, work);
    // Inside a synchronous run: the asynchronous frame takes over for the duration of `work`.
    const outerFrame = syncFrame;
    const outerDepth = syncDepth;
    syncFrame = undefined;
    syncDepth = 0;
    try {
      return storage.run(frame, work);
    } finally {
      syncFrame = outerFrame;
      syncDepth = outerDepth;
    }
  },
};
