/**
 * What the execute and gather wrappers share: the ledger opened guarded, the original run inside it, and the ledger ended with the mapped outcome.
 */
import type { AnyTaskJourneys as TaskJourneys } from "../journeys.js";
import type { InvalidTransition } from "../shared/errors.js";
import { isThenable } from "../shared/functions.js";
import { ArgumentArrays, type AnyFunction } from "./function.js";
import type { Site } from "./extractors.js";
import { EXTRACTOR_ERROR, internalFailure, report } from "./guard.js";
import { show } from "../model/show.js";

/** What ends an execute or gather ledger, fixed at instrument() time. */
export interface Ending {
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
export function end(
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
    ledger.end(outcome as never, (failed ? { error } : undefined) as never);
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
export type OpenLedger = {
  runApply(fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown;
  end(outcome?: never, error?: never): void;
};

/** Promise.prototype.then as loaded: a promise that uses it calls one of its two handlers, once. */
const promiseThen = Promise.prototype.then;
/** Settlements kept for reuse at most: one per call awaiting its promise, a few at once. */
const SPARE_SETTLEMENTS = 64;
const spareSettlements: Settlement[] = [];

/**
 * The end of one wrapped call that returned a native promise: its two handlers are made once per
 * Settlement, not per call (two closures and their context, ≈ 130 B a call), and read the call
 * from the fields. A handler's first act is to take the call out and put the Settlement back for
 * reuse, which is safe only because a native promise calls one handler at most once; any other
 * thenable (which may call both, or twice) gets closures of its own (runInLedger).
 */
class Settlement {
  private ending: Ending | undefined = undefined;
  private ledger: OpenLedger | undefined = undefined;
  private self: unknown = undefined;
  private args: unknown[] | undefined = undefined;
  readonly fulfilled = (value: unknown): unknown => {
    const thrown = this.settle(value, undefined, false);
    if (thrown !== undefined) throw thrown;
    return value;
  };
  readonly rejected = (error: unknown): never => {
    this.settle(undefined, error, true);
    throw error;
  };

  static take(ending: Ending, ledger: OpenLedger, self: unknown, args: unknown[]): Settlement {
    const settlement = spareSettlements.pop() ?? new Settlement();
    settlement.ending = ending;
    settlement.ledger = ledger;
    settlement.self = self;
    settlement.args = args;
    return settlement;
  }

  private settle(result: unknown, error: unknown, failed: boolean): InvalidTransition | undefined {
    const ending = this.ending!;
    const ledger = this.ledger!;
    const self = this.self;
    const args = this.args!;
    // Emptied and back before end() runs the user's outcome mapper (which may make wrapped calls).
    this.ending = undefined;
    this.ledger = undefined;
    this.self = undefined;
    this.args = undefined;
    if (spareSettlements.length < SPARE_SETTLEMENTS) spareSettlements.push(this);
    return end(ending, ledger, self, args, result, error, failed);
  }
}

/**
 * Runs `original` inside `ledger` and ends the ledger after a sync return, a throw, or the
 * settlement of a returned promise. Results and errors pass through unchanged.
 */
export function runInLedger(
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
      if (result instanceof Promise && result.then === promiseThen) {
        const settlement = Settlement.take(ending, ledger, self, args);
        return promiseThen.call(result, settlement.fulfilled, settlement.rejected);
      }
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

/**
 * Opens a wrapped call's ledger through `open`, whatever the extractors returned: a failure is
 * counted and told once, and the call goes on unrecorded (undefined). A strict recorder's
 * InvalidTransition is thrown, before the original runs.
 */
export function openGuarded(
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

/**
 * The wrapper an execute or gather spec makes, named as its kind: each call's arguments copied into
 * a reused array (no rest parameter's new one, see ArgumentArrays; its own array when an outcome
 * mapper is given the arguments after the call), the ledger opened guarded, the original run
 * inside it; the original alone while the instrumentation is off or the ledger could not open.
 */
export function ledgerWrapper(
  kind: "execute" | "gather",
  site: Site,
  open: (self: unknown, args: unknown[]) => OpenLedger | undefined,
  ending: Ending,
): AnyFunction {
  const { journeys, original, on } = site;
  const openingSite = `${site.name}: opening the ${kind} ledger`;
  const arrays = new ArgumentArrays(ending.outcome === undefined);
  return {
    [kind](this: unknown): unknown {
      const count = arguments.length;
      const args = arrays.take(count);
      // eslint-disable-next-line prefer-rest-params
      for (let index = 0; index < count; index++) args[index] = arguments[index];
      try {
        if (!on.active) return Reflect.apply(original, this, args);
        const ledger = openGuarded(journeys, openingSite, open, this, args);
        if (ledger === undefined) return Reflect.apply(original, this, args);
        return runInLedger(ending, ledger, original, this, args);
      } finally {
        arrays.give(args);
      }
    },
  }[kind];
}
