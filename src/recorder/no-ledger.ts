/**
 * Returned for a key that could not be recorded: runs the caller's work untouched, records nothing.
 * One shared instance, so an invalid key costs no allocation.
 */
export class NoLedger {
  meter<T>(_activity: string, work: () => T): T {
    return work();
  }
  digest(_activity: string, _value: number, _unit?: string): void {}
  run<T>(work: () => T): T {
    return work();
  }
  end(_outcome?: string, _at?: number): void {}
  get ended(): boolean {
    return false;
  }
}
