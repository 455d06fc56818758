/**
 * The wrapper of a method that gathers keys from a peer: a gather ledger around each call.
 */
import { TRANSFER_OUTCOMES } from "../model/activities.js";
import type { AnyFunction } from "./function.js";
import { FAILED, type Extract, extract, wrongKind, extractTime, extractKeys, type Site } from "./extractors.js";
import { type Ending, type OpenLedger, ledgerWrapper } from "./ledgers.js";

export function gatherWrapper(
  site: Site,
  spec: { peer: Extract; keys: Extract; nbytes?: Extract; at?: Extract; outcome?: Ending["outcome"] },
): AnyFunction {
  const { journeys } = site;
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
    return (n === undefined && a === undefined
      ? journeys.gather(p, ks)
      : journeys.gather(p, ks, {
          bytes: n as number | undefined,
          at: a as number | undefined,
        })) as unknown as OpenLedger;
  };
  return ledgerWrapper("gather", site, open, ending);
}
