import type { Journey, Transfer } from "./journey.js";
import type { Serve } from "./serve-ledger.js";

/**
 * RecorderListener's key for whether it let a journey go: a symbol, so that a listener a user
 * writes (addListener() is public) never has it by chance, and the recorder calls it unguarded.
 */
export const LETS_GO: unique symbol = Symbol("taskjourney.letsGo");

/**
 * How the recorder hands its data out, without knowing who listens (the OpenTelemetry bridge, a
 * test). Calls for sampled journeys happen while they run; `journeyEnded` and `transferEnded`
 * happen for every journey and transfer, so they must be cheap when there is nothing to emit.
 */
export interface RecorderListener {
  /** A sampled journey began (its first visit is recorded). */
  journeyStarted?(journey: Journey): void;
  /** A sampled journey entered a new, non-terminal state. */
  stateEntered?(journey: Journey): void;
  /** A journey reached its terminal state and every ledger on it closed. */
  journeyEnded?(journey: Journey): void;
  /**
   * Asked right after journeyEnded: true when the listener keeps no reference to `journey` (the
   * span bridge, for an unsampled journey it did not keep), so the recorder may reuse the object
   * for a later journey. Without it, no journey is reused while the listener is registered.
   */
  [LETS_GO]?(journey: Journey): boolean;
  /**
   * A live journey was evicted past maxLiveJourneys: it never reaches a terminal state, `end` is
   * when it was abandoned, `outcomeState` stays -1. Its spans, if any, must end now.
   */
  journeyAbandoned?(journey: Journey): void;
  /** A transfer began; `journeys` are the fetch journeys of its keys. */
  transferStarted?(transfer: Transfer): void;
  transferEnded?(transfer: Transfer): void;
  /** A get_data request served to a peer ended (serve-ledger.ts). */
  serveEnded?(serve: Serve): void;
}

/** One listener that tells each of `listeners` in turn (journeys.ts, when more than one listens). */
export function fanOut(listeners: RecorderListener[]): RecorderListener {
  return {
    journeyStarted: (journey) => listeners.forEach((listener) => listener.journeyStarted?.(journey)),
    stateEntered: (journey) => listeners.forEach((listener) => listener.stateEntered?.(journey)),
    journeyEnded: (journey) => listeners.forEach((listener) => listener.journeyEnded?.(journey)),
    journeyAbandoned: (journey) => listeners.forEach((listener) => listener.journeyAbandoned?.(journey)),
    transferStarted: (transfer) => listeners.forEach((listener) => listener.transferStarted?.(transfer)),
    transferEnded: (transfer) => listeners.forEach((listener) => listener.transferEnded?.(transfer)),
    serveEnded: (serve) => listeners.forEach((listener) => listener.serveEnded?.(serve)),
  };
}
