import { addQuantity, type Breakdown, type BreakdownNode } from "../model/breakdown.js";
import { ALL_STATES, stateId } from "../model/states.js";
import { OTHER_ACTIVITY, DEPENDENCIES_ACTIVITY, THREAD_CPU_ACTIVITY as THREAD_CPU, THREAD_NONCPU_ACTIVITY as THREAD_NONCPU } from "../model/activities.js";
import { keyToText } from "../model/keys.js";
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
const KIND_NAMES = ["compute", "fetch", "scheduler"];
/** Remainders below this are rounding, not time anyone spent. */
const EPSILON = 1e-9;

/**
 * The breakdown of a live or finished journey. Built on demand from the journey's flat records;
 * allocation here is fine, it is never on the hot path.
 */
export function explainJourney(
  journey: Journey,
  names: { prefix(id: number): string; activity(id: number): string; unit(id: number): string },
  instance: string,
  now: number,
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
    if (journey.quantities !== undefined) addQuantities(node.children, journey.quantities, visit, names);
    children.push(node);
  }
  return {
    key: keyToText(journey.key) ?? String(journey.id),
    prefix: names.prefix(journey.prefixId),
    instance,
    seconds: Math.max(0, (ended ? journey.end : now) - journey.start),
    kind: KIND_NAMES[journey.kind] ?? "compute",
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
  const nodes: BreakdownNode[] = [];
  if (breakdown !== undefined) {
    for (let index = 0; index < breakdown.length; index += 3) {
      if (breakdown[index] !== visit) continue;
      addNode(nodes, names.activity(breakdown[index + 1]), breakdown[index + 2], []);
    }
  }
  if (nodes.length === 0 && seconds > EPSILON) nodes.push({ name: DEPENDENCIES_ACTIVITY, seconds, children: [] });
  return sortBySeconds(nodes);
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
  const nodes: BreakdownNode[] = [];
  // Thread digests nested in an activity are measurements over its interval (its span's
  // thread.cpu_time / thread.noncpu_time), not slices of it: they come after its other
  // activities, cpu first, as a trace rebuilds them.
  let cpu = 0;
  let noncpu = 0;
  let digested = 0;
  let claimed = 0;
  for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
    if (records[record + ACTIVITY_VISIT] !== visit || records[record + ACTIVITY_PARENT] !== parent) continue;
    // A record's whole time is its self time plus its nested records' (whose parents are closed).
    const total = records[record + ACTIVITY_SELF_SECONDS] + records[record + ACTIVITY_CHILD_SECONDS];
    const name = names.activity(records[record + ACTIVITY_ID]);
    claimed += total;
    if (parent !== -1 && (name === THREAD_CPU || name === THREAD_NONCPU) && journey.digestRecords?.includes(record) === true) {
      if (name === THREAD_CPU) cpu += total;
      else noncpu += total;
      digested |= name === THREAD_CPU ? 1 : 2;
      continue;
    }
    addNode(nodes, name, total, visitActivities(journey, visit, record, total, names, true));
  }
  if ((digested & 1) !== 0) addNode(nodes, THREAD_CPU, cpu, []);
  if ((digested & 2) !== 0) addNode(nodes, THREAD_NONCPU, noncpu, []);
  const remainder = seconds - claimed;
  if (withRemainder && nodes.length > 0 && remainder > EPSILON) addNode(nodes, OTHER_ACTIVITY, remainder, []);
  return nodes;
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

function addNode(nodes: BreakdownNode[], name: string, seconds: number, children: BreakdownNode[]): void {
  const existing = nodes.find((node) => node.name === name);
  if (existing === undefined) {
    nodes.push({ name, seconds, children });
    return;
  }
  existing.seconds += seconds;
  for (const child of children) addNode(existing.children, child.name, child.seconds, child.children);
}

function sortBySeconds(nodes: BreakdownNode[]): BreakdownNode[] {
  return nodes.sort((a, b) => b.seconds - a.seconds || a.name.localeCompare(b.name));
}
