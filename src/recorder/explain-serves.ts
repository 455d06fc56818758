import type { BreakdownNode } from "../model/breakdown.js";
import { ActivityLevel } from "../model/breakdown-builder.js";
import { TRANSFER_LUMP, type TransferOutcome } from "../model/activities.js";
import {
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_PARENT,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_CHILD_SECONDS,
} from "./journey.js";
import type { Serve } from "./serve-ledger.js";

/** The name of a serve's node in `Breakdown.served`. */
export const SERVE_NODE_PREFIX = "serve ";

/**
 * One node per serve of a key, oldest first: the key's even share (1 / keys asked for) of the
 * serve's wall time, its activities (nested ones under their parents) and its bytes, as a
 * transfer's activities are shared among the keys it carried; a serve that did not succeed is one
 * lump (`busy`, `failed`, …).
 */
export function serveNodes(serves: readonly Serve[], names: { activity(id: number): string }): BreakdownNode[] {
  return serves.map((serve) => {
    const share = serve.keyIds.length > 0 ? 1 / serve.keyIds.length : 1;
    const seconds = (serve.end - serve.start) * share;
    const lump = TRANSFER_LUMP[serve.outcome as TransferOutcome];
    const children =
      lump !== undefined ? [{ name: lump, seconds, children: [] }] : activities(serve, -1, seconds, share, names);
    const node: BreakdownNode = { name: SERVE_NODE_PREFIX + serve.peer, seconds, children };
    if (serve.bytes > 0) node.quantities = { bytes: serve.bytes * share };
    return node;
  });
}

function activities(
  serve: Serve,
  parent: number,
  seconds: number,
  share: number,
  names: { activity(id: number): string },
): BreakdownNode[] {
  const records = serve.activities;
  const level = new ActivityLevel();
  for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
    if (records[record + ACTIVITY_PARENT] !== parent) continue;
    const total = (records[record + ACTIVITY_SELF_SECONDS] + records[record + ACTIVITY_CHILD_SECONDS]) * share;
    level.add(names.activity(records[record + ACTIVITY_ID]), total, activities(serve, record, total, share, names));
  }
  return level.finish(seconds, true);
}
