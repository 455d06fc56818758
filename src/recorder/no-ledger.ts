import type { AnyFunction } from "../shared/functions.js";

/**
 * Returned for a key that could not be recorded: runs the caller's work untouched, records nothing.
 * One shared instance, so an invalid key costs no allocation.
 */
export class NoLedger {
  meter<T>(_activity: string, work: () => T): T {
    // Lenient: something that is not a function is not run (the recording ledger counts it).
    return typeof work === "function" ? work() : (undefined as T);
  }
  digest(_activity: string, _value: number, _unit?: string): void {}
  run<T>(work: () => T): T {
    return typeof work === "function" ? work() : (undefined as T);
  }
  /** Ledger.runApply(): the wrappers' call, made untouched. */
  runApply(fn: AnyFunction, self: unknown, args: ArrayLike<unknown>): unknown {
    return Reflect.apply(fn, self, args);
  }
  end(_outcome?: string, _options?: unknown, _legacyAt?: unknown): void {}
  get ended(): boolean {
    return false;
  }
}
