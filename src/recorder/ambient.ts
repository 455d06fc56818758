import { AsyncLocalStorage } from "node:async_hooks";
import type { Ledger } from "./ledger.js";

/**
 * The ledger surrounding the current call, across awaits and timers, so that code deep inside a
 * user's task can meter activities without a ledger being passed to it. `record` is the open
 * activity record that nested activities belong to, or -1 at the ledger's top level.
 */
export interface AmbientFrame {
  readonly ledger: Ledger;
  readonly record: number;
}

export const ambientLedger = new AsyncLocalStorage<AmbientFrame>();
