import { addQuantity, type Breakdown, type BreakdownNode } from "../model/breakdown.js";
import { ActivityLevel, addNode, isThreadDigest, JOURNEY_KINDS, waitingNodes } from "../model/breakdown-builder.js";
import { ALL_STATES, stateId } from "../model/states.js";
import { keyToText } from "../model/keys.js";
import { addStallNodes, type StallRing } from "../model/stalls.js";
import {
  ACTIVITY_CHILD_SECONDS,
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_PARENT,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_VISIT,
  COMPUTE_JOURNEY,
  QUANTITY_ACTIVITY,
  QUANTITY_FIELDS,
  QUANTITY_UNIT,
  QUANTITY_VALUE,
  QUANTITY_VISIT,
  type Journey,
} from "./journey.js";

const WAITING = stateId("waiting");

/**
 * The breakdown of a live or finished journey. Built on demand from the journey's flat records;
 * allocation here is fine, it is never on the hot path.
 */
export function explainJourney(
  journey: Journey,
  names: { prefix(id: number): string; activity(id: number): string; unit(id: number): string },
  instance: string,
  now: number,
  stalls?: StallRing,
): Breakdown {
  const ended = journey.ended;
  const last = ended ? journey.visitCount - 1 : journey.visitCount;
  const children: BreakdownNode[] = [];
  for (let visit = 0; visit < last; visit++) {
    const state = journey.visitState(visit);
    const start = journey.visitStart(visit);
    const end = visit + 1 < journey.visitCount ? journey.visitStart(visit + 1) : now;
    const seconds = Math.max(0, end - start);
    const node: BreakdownNode = { name: ALL_STATES[state], seconds, children: [] };
    const isCurrent = !ended && visit === journey.visitCount - 1;
    if (state === WAITING && journey.kind === COMPUTE_JOURNEY) {
      if (!isCurrent) node.children = waitingActivities(journey, visit, seconds, names);
    } else {
      node.children = visitActivities(journey, visit, -1, seconds, names, !isCurrent);
    }
    // Process stalls (GC pauses, a blocked event loop) that overlapped the visit, read at explain time.
    if (stalls !== undefined && stalls.size > 0) addStallNodes(node.children, seconds, stalls.overlap(start, end));
    if (journey.quantities !== undefined) addQuantities(node.children, journey.quantities, visit, names);
    children.push(node);
  }
  return {
    key: keyToText(journey.key) ?? String(journey.id),
    prefix: names.prefix(journey.prefixId),
    instance,
    seconds: Math.max(0, (ended ? journey.end : now) - journey.start),
    kind: JOURNEY_KINDS[journey.kind] ?? "compute",
    outcome: ended ? ALL_STATES[journey.outcomeState] : undefined,
    children,
  };
}

function waitingActivities(
  journey: Journey,
  visit: number,
  seconds: number,
  names: { activity(id: number): string },
): BreakdownNode[] {
  const breakdown = journey.waitBreakdown;
  const parts: BreakdownNode[] = [];
  if (breakdown !== undefined) {
    for (let index = 0; index < breakdown.length; index += 3) {
      if (breakdown[index] !== visit) continue;
      addNode(parts, names.activity(breakdown[index + 1]), breakdown[index + 2]);
    }
  }
  return waitingNodes(parts, seconds);
}

/** Activities of one visit under `parent` (-1: top level), summed by name, with `other` last. */
function visitActivities(
  journey: Journey,
  visit: number,
  parent: number,
  seconds: number,
  names: { activity(id: number): string },
  withRemainder: boolean,
): BreakdownNode[] {
  const records = journey.activities;
  const level = new ActivityLevel();
  for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
    if (records[record + ACTIVITY_VISIT] !== visit || records[record + ACTIVITY_PARENT] !== parent) continue;
    // A record's whole time is its self time plus its nested records' (whose parents are closed).
    const total = records[record + ACTIVITY_SELF_SECONDS] + records[record + ACTIVITY_CHILD_SECONDS];
    const name = names.activity(records[record + ACTIVITY_ID]);
    // A thread digest (not an activity metered under that name) nested in an activity.
    if (parent !== -1 && isThreadDigest(name) && journey.digestRecords?.includes(record) === true) level.digest(name, total);
    else level.add(name, total, visitActivities(journey, visit, record, total, names, true));
  }
  return level.finish(seconds, withRemainder);
}

/** The quantities digested during `visit`, on the nodes of their activities (see addQuantity). */
function addQuantities(
  nodes: BreakdownNode[],
  quantities: readonly number[],
  visit: number,
  names: { activity(id: number): string; unit(id: number): string },
): void {
  for (let index = 0; index < quantities.length; index += QUANTITY_FIELDS) {
    if (quantities[index + QUANTITY_VISIT] !== visit) continue;
    addQuantity(nodes, names.activity(quantities[index + QUANTITY_ACTIVITY]), names.unit(quantities[index + QUANTITY_UNIT]), quantities[index + QUANTITY_VALUE]);
  }
}
