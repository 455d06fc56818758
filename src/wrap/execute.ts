/**
 * The wrapper of a method that runs a task: an execute ledger around each call.
 */
import type { AnyTaskJourneys as TaskJourneys } from "../journeys.js";
import type { Key } from "../model/keys.js";
import { EXECUTE_OUTCOMES } from "../model/activities.js";
import { executeEndNames } from "../recorder/execution-ledger.js";
import type { AnyFunction } from "./function.js";
import { internalsOf } from "../internal.js";
import { FAILED, type Extract, extract, extractPrefix, extractTime, type Site } from "./extractors.js";
import { type Ending, type OpenLedger, ledgerWrapper } from "./ledgers.js";

/** What an execute spec's outcome mapper may return: the ledger's outcomes and the machine's states it moves to. */
export function executeEndOutcomes(journeys: TaskJourneys): readonly string[] {
  const machine = internalsOf(journeys)?.recorder.machine;
  return machine === undefined ? EXECUTE_OUTCOMES : executeEndNames(machine);
}

export function executeWrapper(
  site: Site,
  spec: { key: Extract; prefix?: Extract; at?: Extract; outcome?: Ending["outcome"] },
): AnyFunction {
  const { journeys } = site;
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
    return (p === undefined && a === undefined
      ? journeys.execute(k as Key)
      : journeys.execute(k as Key, {
          at: a as number | undefined,
          prefix: p as string | undefined,
        })) as unknown as OpenLedger;
  };
  return ledgerWrapper("execute", site, open, ending);
}
