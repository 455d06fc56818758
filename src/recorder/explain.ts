import { failedAttempt } from "./failed-attempt.js";
import { addQuantity, failureText, type Breakdown, type BreakdownNode } from "../model/breakdown.js";
import {
  ActivityLevel,
  addNode,
  addStallNodes,
  isThreadDigest,
  JOURNEY_KINDS,
  showsStalls,
  waitingNodes,
} from "../model/breakdown-builder.js";
import type { Machine } from "../model/machine.js";
import { keyToText } from "../model/keys.js";
import type { StallRing } from "../model/stalls.js";
import {
  ACTIVITY_CHILD_SECONDS,
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_PARENT,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_VISIT,
  COMPUTE_JOURNEY,
  isDigested,
  QUANTITY_ACTIVITY,
  QUANTITY_FIELDS,
  QUANTITY_UNIT,
  QUANTITY_VALUE,
  QUANTITY_VISIT,
  type Journey,
} from "./journey.js";

/**
 * The breakdown of a live or finished journey. Built on demand from the journey's flat records;
 * allocation here is fine, it is never on the hot path.
 */
export function explainJourney(
  journey: Journey,
  names: { prefix(id: number): string; activity(id: number): string; unit(id: number): string },
  instance: string,
  now: number,
  /** The recorder's state machine: state names, and which state waits for dependencies. */
  machine: Machine,
  stalls?: StallRing,
): Breakdown {
  const ended = journey.ended;
  const last = ended ? journey.visitCount - 1 : journey.visitCount;
  const children: BreakdownNode[] = [];
  let waitingState = "";
  const index = new RecordIndex(journey);
  for (let visit = 0; visit < last; visit++) {
    const state = journey.visitState(visit);
    const start = journey.visitStart(visit);
    const end = visit + 1 < journey.visitCount ? journey.visitStart(visit + 1) : now;
    const seconds = Math.max(0, end - start);
    const node: BreakdownNode = { name: machine.names[state], seconds, children: [] };
    const isCurrent = !ended && visit === journey.visitCount - 1;
    if (state === machine.waiting && journey.kind === COMPUTE_JOURNEY) {
      if (!isCurrent) {
        // As a trace tells it: a waiting visit that lasted, and ended (model/breakdown.ts).
        if (seconds > 0) waitingState = node.name;
        node.children = waitingActivities(journey, index.waits(visit), seconds, names);
      }
    } else {
      node.children = visitActivities(journey, index, index.topLevel(visit), seconds, names, !isCurrent);
    }
    // Process stalls (GC pauses, a blocked event loop) that overlapped the visit, read at explain time.
    if (stalls !== undefined && stalls.size > 0 && showsStalls(JOURNEY_KINDS[journey.kind], state === machine.waiting))
      addStallNodes(node.children, seconds, stalls.overlap(start, end));
    if (journey.quantities !== undefined)
      addQuantities(node.children, journey.quantities, index.quantities(visit), names);
    const attempt = failedAttempt(journey, visit);
    if (attempt !== undefined) {
      node.outcome = attempt.outcome;
      if (attempt.failure !== undefined) node.error = failureText(attempt.failure.type, attempt.failure.message);
    }
    children.push(node);
  }
  return {
    key: keyText(journey),
    prefix: names.prefix(journey.prefixId),
    instance,
    seconds: Math.max(0, (ended ? journey.end : now) - journey.start),
    kind: JOURNEY_KINDS[journey.kind] ?? "compute",
    outcome: ended ? machine.names[journey.outcomeState] : undefined,
    // As the task span's ERROR status says it (model/breakdown.ts): a failure state, not a cancelled one.
    ...(ended && machine.failed[journey.outcomeState] === 1 ? { failed: true } : {}),
    children,
    waitingState,
  };
}

/** The key's canonical text; its map id when the key cannot be read again (a hostile Proxy). */
function keyText(journey: Journey): string {
  try {
    return keyToText(journey.key) ?? String(journey.id);
  } catch {
    return String(journey.id);
  }
}

/**
 * Where each record stands, found in one pass over the journey's flat arrays: the top-level
 * records of each visit, the records nested in each record, the waiting parts and quantities of
 * each visit. Scanning every record for each visit and each parent made explain() of a journey
 * with 16,000 activities take a second.
 */
class RecordIndex {
  private readonly top = new Map<number, number[]>();
  private readonly nested = new Map<number, number[]>();
  private readonly waiting = new Map<number, number[]>();
  private readonly quantity = new Map<number, number[]>();

  constructor(journey: Journey) {
    const records = journey.activities;
    for (let record = 0; record < records.length; record += ACTIVITY_FIELDS) {
      const parent = records[record + ACTIVITY_PARENT];
      if (parent === -1) push(this.top, records[record + ACTIVITY_VISIT], record);
      else push(this.nested, parent, record);
    }
    const breakdown = journey.waitBreakdown;
    if (breakdown !== undefined) for (let at = 0; at < breakdown.length; at += 3) push(this.waiting, breakdown[at], at);
    const quantities = journey.quantities;
    if (quantities !== undefined)
      for (let at = 0; at < quantities.length; at += QUANTITY_FIELDS)
        push(this.quantity, quantities[at + QUANTITY_VISIT], at);
  }

  topLevel(visit: number): readonly number[] {
    return this.top.get(visit) ?? NONE;
  }

  nestedIn(record: number): readonly number[] {
    return this.nested.get(record) ?? NONE;
  }

  waits(visit: number): readonly number[] {
    return this.waiting.get(visit) ?? NONE;
  }

  quantities(visit: number): readonly number[] {
    return this.quantity.get(visit) ?? NONE;
  }
}

const NONE: readonly number[] = [];

function push(map: Map<number, number[]>, at: number, value: number): void {
  const list = map.get(at);
  if (list === undefined) map.set(at, [value]);
  else list.push(value);
}

function waitingActivities(
  journey: Journey,
  offsets: readonly number[],
  seconds: number,
  names: { activity(id: number): string },
): BreakdownNode[] {
  const breakdown = journey.waitBreakdown!;
  const parts: BreakdownNode[] = [];
  for (const at of offsets) addNode(parts, names.activity(breakdown[at + 1]), breakdown[at + 2]);
  return waitingNodes(parts, seconds);
}

/** The activity records at `offsets` (one level of one visit), summed by name, with `other` last. */
function visitActivities(
  journey: Journey,
  index: RecordIndex,
  offsets: readonly number[],
  seconds: number,
  names: { activity(id: number): string },
  withRemainder: boolean,
): BreakdownNode[] {
  const records = journey.activities;
  const level = new ActivityLevel();
  for (const record of offsets) {
    // A record's whole time is its self time plus its nested records' (whose parents are closed).
    const total = records[record + ACTIVITY_SELF_SECONDS] + records[record + ACTIVITY_CHILD_SECONDS];
    const name = names.activity(records[record + ACTIVITY_ID]);
    // A thread digest (not an activity metered under that name) nested in an activity.
    if (records[record + ACTIVITY_PARENT] !== -1 && isThreadDigest(name) && isDigested(records, record))
      level.digest(name, total);
    else level.add(name, total, visitActivities(journey, index, index.nestedIn(record), total, names, true));
  }
  return level.finish(seconds, withRemainder);
}

/** The quantities digested during one visit (at `offsets`), on the nodes of their activities (see addQuantity). */
function addQuantities(
  nodes: BreakdownNode[],
  quantities: readonly number[],
  offsets: readonly number[],
  names: { activity(id: number): string; unit(id: number): string },
): void {
  for (const at of offsets) {
    addQuantity(
      nodes,
      names.activity(quantities[at + QUANTITY_ACTIVITY]),
      names.unit(quantities[at + QUANTITY_UNIT]),
      quantities[at + QUANTITY_VALUE],
    );
  }
}
