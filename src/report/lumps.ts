/**
 * The lumps of what did not succeed, as the report names them: "failed (lump)", apart from a
 * state a machine may call `failed`. The text tables, the page and the trees name them alike.
 */
import { EXECUTE_LUMP, TRANSFER_LUMP } from "../model/activities.js";
import type { BreakdownNode } from "../model/breakdown.js";

/**
 * The lumps of what did not succeed, by breakdown: an execution's whole time when it failed or was
 * cancelled, a gather's when its transfer did not succeed (docs/metrics.md).
 */
export const LUMPS = {
  execute: new Set(Object.values(EXECUTE_LUMP).filter((lump) => lump !== undefined)),
  gather: new Set(Object.values(TRANSFER_LUMP).filter((lump) => lump !== undefined)),
} as const;

export const LUMP_SUFFIX = " (lump)";

/**
 * How the report names a lump: "failed (lump)", not "failed", which a machine may name a state
 * of (an engine's `failed`): the execute table's row is the time of every attempt that failed,
 * retried ones included, not the time tasks spent in that state.
 */
export function lumpLabel(name: string): string {
  return `${name}${LUMP_SUFFIX}`;
}

/** An execute or gather breakdown with its lumps named by lumpLabel, for the tables and charts. */
export function withLumpLabels(
  seconds: Readonly<Record<string, number>>,
  kind: keyof typeof LUMPS,
): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const [name, value] of Object.entries(seconds)) out[LUMPS[kind].has(name) ? lumpLabel(name) : name] = value;
  return out;
}

/**
 * How a tree names an activity: a lump (under a visit that did not succeed, or under a serve node,
 * "serve <peer>", which recorder/explain-serves.ts gives one child lump when it failed) as
 * lumpLabel does.
 */
export function treeActivityName(node: BreakdownNode, parent: BreakdownNode | undefined): string {
  const underFailure = parent !== undefined && (parent.outcome !== undefined || parent.name.startsWith("serve "));
  return underFailure && LUMPS.gather.has(node.name) ? lumpLabel(node.name) : node.name;
}
