import { addQuantity, type Breakdown, type BreakdownNode } from "../model/breakdown.js";
import { guarded } from "./arguments.js";
import {
  ActivityLevel,
  addNode,
  addStallNodes,
  EPSILON,
  type JourneyKind,
  showsStalls,
  waitingNodes,
} from "../model/breakdown-builder.js";
import { STALL_ATTRIBUTE_NAMES } from "../model/stalls.js";
import {
  DEPENDENCIES_ACTIVITY,
  OTHER_ACTIVITY,
  THREAD_CPU_ACTIVITY as THREAD_CPU,
  THREAD_NONCPU_ACTIVITY as THREAD_NONCPU,
  TRANSFER_LUMP,
  type TransferOutcome,
} from "../model/activities.js";
import {
  ATTR_TASK_COMPUTATION,
  ATTR_TASK_KEY,
  ATTR_TASK_KEY_LENGTH,
  ATTR_TASK_OUTCOME,
  ATTR_TASK_PREFIX,
  ATTR_TASK_QUANTITY_PREFIX,
  ATTR_TASK_STALL_PREFIX,
  ATTR_TASK_WAIT_PREFIX,
  ATTR_THREAD_CPU_TIME,
  ATTR_THREAD_NONCPU_TIME,
  ATTR_TRANSFER_KEY_COUNT,
  ATTR_TRANSFER_KEYS,
  ATTR_TRANSFER_OUTCOME,
  ATTR_UNFINISHED,
  SPAN_GATHER_DEP,
  SPAN_TASK_PREFIX,
} from "../shared/semconv.js";
import type { DecodedSpan } from "./otlp-json.js";
import {
  failureReason,
  hasWaitAttributes,
  isRunOfDigests,
  isTaskSpan,
  journeyInstance,
  journeyKind,
  MAX_SPAN_DEPTH,
  numberAttribute,
  seconds,
  SpanIndex,
  stateVisitsOf,
  stringAttribute,
} from "./span-index.js";

/**
 * explain() from a trace: the Breakdown of a key's journey rebuilt from the span tree the bridge
 * (src/otel/spans/) emitted, as explainJourney (src/recorder/explain.ts) builds it from the
 * live records:
 *
 * - the journey is a `task <prefix>` span with `task.key`; its state-visit children, in visit
 *   order, are the first level (name = state, seconds = span duration; the terminal state has no
 *   span, as it has no visit in explain());
 * - a compute journey's waiting visit: its apportioned breakdown from the `task.wait.<activity>`
 *   attributes, largest first; without them, one `dependencies` node;
 * - any other visit: its activity spans in the order they were recorded (see
 *   SpanIndex.activitiesOf), nested as metered, siblings of one name summed, the `run` span read
 *   back as its `thread-cpu` / `thread-noncpu` digests, and `other` for what no activity claimed;
 *   `gather_dep` children are transfers and task spans other journeys, not activities of the
 *   visit, and spans of other instrumentation scopes are the user's own;
 * - a fetch journey's flight visit: its even share of the gather_dep that carried it (the span its
 *   flight span links to), its activities' self times divided by `transfer.key_count`.
 *
 * Spans carry what the recorder recorded at nanosecond resolution, so seconds agree with
 * explain() to about 1e-9 s. What the nodes are made of (sums, `other`, `dependencies`, the
 * place of thread digests) is src/model/breakdown-builder.ts's, shared with explain(); this file
 * only reads spans.
 */

export type { JourneyKind };
// SpanIndex and the span readers moved to span-index.ts; re-exported so every importer is unchanged.
export {
  failureReason,
  hasWaitAttributes,
  journeyInstance,
  journeyKind,
  MAX_SPAN_DEPTH,
  SpanIndex,
  stateVisitsOf,
  stringAttribute,
};

export interface BreakdownFromSpansOptions {
  /**
   * Which journey of the key: by default the worker compute journey (the latest, if the key was
   * computed more than once), else the scheduler's, else a fetch journey.
   */
  kind?: JourneyKind;
  /** Only journeys on this worker or scheduler (`task.worker`, or the resource's `service.instance.id`). */
  instance?: string;
}

/** What the helpers' `spans` and `key` must be, for the errors of guarded(). */
const SPANS = "an array of decoded spans (decodeOtlpJson(), readTelemetryFiles()) or a SpanIndex";
const KEY = "a string, a task.key as the spans hold it";

/**
 * Whether a task span is a journey of `key`: its `task.key` (for a key longer than the attribute
 * length limit, the beginning the trace shows, as a user copies it from there), or the full key
 * of a truncated one: it begins with `task.key` and has the length recorded beside it.
 */
function isTaskOf(task: DecodedSpan, key: string): boolean {
  const recorded = task.attributes[ATTR_TASK_KEY];
  if (recorded === key) return true;
  const length = task.attributes[ATTR_TASK_KEY_LENGTH];
  return (
    typeof recorded === "string" && typeof length === "number" && length === key.length && key.startsWith(recorded)
  );
}

/** Every journey of `key` in the spans (scheduler, compute, fetches), in start order. */
export function breakdownsFromSpans(spans: readonly DecodedSpan[] | SpanIndex, key: string): Breakdown[] {
  return guarded(
    "breakdownsFromSpans(spans, key)",
    [
      ["spans", SPANS, spans],
      ["key", KEY, key],
    ],
    () => {
      const index = spans instanceof SpanIndex ? spans : new SpanIndex(spans);
      // Named by the key asked for: the spans may hold only its truncated beginning.
      return index.tasks
        .filter((task) => isTaskOf(task, key))
        .map((task) => ({ ...breakdownOfTask(index, task), key }));
    },
  );
}

/**
 * The Breakdown `journeys.explain(key)` gave for the journey of `key` that the spans hold (see
 * BreakdownFromSpansOptions for which one), or undefined when they hold none.
 */
export function breakdownFromSpans(
  spans: readonly DecodedSpan[] | SpanIndex,
  key: string,
  options: BreakdownFromSpansOptions = {},
): Breakdown | undefined {
  return guarded(
    "breakdownFromSpans(spans, key, options)",
    [
      ["spans", SPANS, spans],
      ["key", KEY, key],
      ["options", "{ kind?: JourneyKind, instance?: string }", options],
    ],
    () => {
      const index = spans instanceof SpanIndex ? spans : new SpanIndex(spans);
      const candidates = index.tasks
        .filter((task) => isTaskOf(task, key))
        .filter((task) => options.instance === undefined || journeyInstance(task) === options.instance)
        .map((task) => ({ task, kind: journeyKind(index, task) }));
      const preference: JourneyKind[] = options.kind !== undefined ? [options.kind] : ["compute", "scheduler", "fetch"];
      for (const kind of preference) {
        const ofKind = candidates.filter((candidate) => candidate.kind === kind);
        // The latest: a key computed again after being lost is explained by its last computation.
        if (ofKind.length > 0) return { ...breakdownOfTask(index, ofKind[ofKind.length - 1].task, kind), key };
      }
      return undefined;
    },
  );
}

/** The Breakdown of one task span. */
export function breakdownOfTask(
  index: SpanIndex,
  task: DecodedSpan,
  kind: JourneyKind = journeyKind(index, task),
): Breakdown {
  const unfinished = task.attributes[ATTR_UNFINISHED] === true;
  const outcome = unfinished ? undefined : stringAttribute(task, ATTR_TASK_OUTCOME);
  const visits = stateVisitsOf(index, task);
  let waitingState = "";
  const children = visits.map((visit, position) => {
    const node: BreakdownNode = { name: visit.name, seconds: seconds(visit), children: [] };
    // A journey cut short by shutdown: its last visit was the current one, as in a live explain().
    const isCurrent = unfinished && position === visits.length - 1;
    // The bridge marks the machine's waiting state with `task.wait.*` (whatever its name: a job
    // queue's `waiting` may be its queue); a waiting visit without them lasted no time.
    const waits = hasWaitAttributes(visit);
    if (kind === "compute" && waits) {
      if (!isCurrent) {
        waitingState = node.name;
        node.children = waitingActivities(visit, node.seconds);
      }
    } else if (visit.name === "flight" && kind === "fetch") {
      node.children = flightActivities(index, visit, node.seconds, !isCurrent);
    } else {
      node.children = visitActivities(index, visit, node.seconds, !isCurrent, true);
    }
    if (showsStalls(kind, waits)) addStalls(node.children, node.seconds, visit);
    addQuantities(node.children, visit);
    // An attempt that did not succeed, as explain() marks it.
    const attempt = stringAttribute(visit, ATTR_TASK_OUTCOME);
    if (attempt !== undefined) node.outcome = attempt;
    const error = attempt === undefined ? undefined : failureReason(visit);
    if (error !== undefined) node.error = error;
    return node;
  });
  const prefix = task.name.startsWith(SPAN_TASK_PREFIX)
    ? task.name.slice(SPAN_TASK_PREFIX.length)
    : (stringAttribute(task, ATTR_TASK_PREFIX) ?? "");
  return {
    key: stringAttribute(task, ATTR_TASK_KEY) ?? "",
    prefix,
    instance: journeyInstance(task),
    seconds: seconds(task),
    kind,
    outcome,
    // A failure state marks its task span ERROR; a cancelled one leaves it unset, so only the
    // former is known from a trace (format.ts falls back to Dask's names for the rest).
    ...(outcome !== undefined && task.statusCode === 2 ? { failed: true } : {}),
    children,
    waitingState,
    // The computation (graph submission, flow) the journey was begun under, on its task span.
    ...(typeof task.attributes[ATTR_TASK_COMPUTATION] === "string"
      ? { computation: task.attributes[ATTR_TASK_COMPUTATION] }
      : {}),
  };
}

/** The process stalls a visit overlapped, from its `task.stall.<kind>` attributes, placed as explain() places them. */
function addStalls(nodes: BreakdownNode[], total: number, visit: DecodedSpan): void {
  const overlap = new Float64Array(STALL_ATTRIBUTE_NAMES.length);
  let any = false;
  STALL_ATTRIBUTE_NAMES.forEach((name, kind) => {
    const value = visit.attributes[ATTR_TASK_STALL_PREFIX + name];
    if (typeof value !== "number" || !(value > 0) || value === Infinity) return;
    overlap[kind] = value;
    any = true;
  });
  if (any) addStallNodes(nodes, total, overlap);
}

/** A visit's digested quantities, from its `task.quantity.<unit>.<activity>` attributes, placed as explain() places them. */
function addQuantities(nodes: BreakdownNode[], visit: DecodedSpan): void {
  for (const [name, value] of Object.entries(visit.attributes)) {
    if (!name.startsWith(ATTR_TASK_QUANTITY_PREFIX) || typeof value !== "number" || !Number.isFinite(value)) continue;
    const rest = name.slice(ATTR_TASK_QUANTITY_PREFIX.length);
    const dot = rest.indexOf(".");
    if (dot <= 0 || dot === rest.length - 1) continue;
    addQuantity(nodes, rest.slice(dot + 1), rest.slice(0, dot), value);
  }
}

/** A waiting visit's apportioned breakdown, from its `task.wait.<activity>` attributes. */
function waitingActivities(visit: DecodedSpan, total: number): BreakdownNode[] {
  const parts: BreakdownNode[] = [];
  for (const [name, value] of Object.entries(visit.attributes)) {
    if (!name.startsWith(ATTR_TASK_WAIT_PREFIX) || typeof value !== "number" || !Number.isFinite(value)) continue;
    addNode(parts, name.slice(ATTR_TASK_WAIT_PREFIX.length), value);
  }
  // The bridge writes `task.wait.dependencies` for any waiting time; explain() leaves rounding out.
  if (parts.length === 1 && parts[0].name === DEPENDENCIES_ACTIVITY && !(parts[0].seconds > EPSILON)) parts.length = 0;
  return waitingNodes(parts, total);
}

/**
 * The activities under `parent` (a state visit or an activity), summed by name, with `other` for
 * what they leave of `total` (when there are any).
 */
function visitActivities(
  index: SpanIndex,
  parent: DecodedSpan,
  total: number,
  withRemainder: boolean,
  topLevel: boolean,
): BreakdownNode[] {
  const level = new ActivityLevel();
  for (const child of index.activitiesOf(parent)) {
    if (!isActivitySpan(child, parent)) continue;
    if (topLevel && isRunOfDigests(index, child)) {
      // The bridge's `run` span: the top-level thread digests of an execution, as one interval.
      for (const [name, value] of threadDigests(child)) level.add(name, value);
      continue;
    }
    const childSeconds = seconds(child);
    level.add(child.name, childSeconds, activityChildren(index, child, childSeconds));
  }
  if (!topLevel) {
    // Digests nested in an activity are its thread.cpu_time / thread.noncpu_time attributes.
    for (const [name, value] of threadDigests(parent)) level.digest(name, value);
  }
  return level.finish(total, withRemainder);
}

/** The level inside an activity span: its activity children, its digests, and `other`. */
function activityChildren(index: SpanIndex, activity: DecodedSpan, total: number): BreakdownNode[] {
  return visitActivities(index, activity, total, true, false);
}

/**
 * Whether a child span is an activity of its parent: not a gather_dep (a transfer, with its own
 * activities), not another journey's task span (a worker's journey nests under the scheduler's
 * processing span), and made by the same instrumentation (not the user's own spans).
 */
function isActivitySpan(child: DecodedSpan, parent: DecodedSpan): boolean {
  return child.name !== SPAN_GATHER_DEP && !isTaskSpan(child) && child.scope === parent.scope;
}

/**
 * The thread digests a span carries as attributes, cpu first. (The bridge's `run` span should
 * carry only the ones digested: a `thread.noncpu_time` of 0 reads as a digest of 0 s.)
 */
function threadDigests(span: DecodedSpan): Array<[typeof THREAD_CPU | typeof THREAD_NONCPU, number]> {
  const digests: Array<[typeof THREAD_CPU | typeof THREAD_NONCPU, number]> = [];
  const cpu = numberAttribute(span, ATTR_THREAD_CPU_TIME);
  const noncpu = numberAttribute(span, ATTR_THREAD_NONCPU_TIME);
  if (cpu !== undefined) digests.push([THREAD_CPU, cpu]);
  if (noncpu !== undefined) digests.push([THREAD_NONCPU, noncpu]);
  return digests;
}

/**
 * A fetch journey's flight visit: the recorder gives each key a transfer carried an even share of
 * the transfer's activity self times (flat), plus its share of the transfer's `other`; a transfer
 * that did not succeed gives a share of its wall time under its outcome instead.
 */
function flightActivities(
  index: SpanIndex,
  visit: DecodedSpan,
  total: number,
  withRemainder: boolean,
): BreakdownNode[] {
  const own = index.childrenOf(visit).filter((child) => isActivitySpan(child, visit));
  if (own.length > 0) return visitActivities(index, visit, total, withRemainder, true);
  const gather = carrier(index, visit);
  // Shares, not intervals: summed as they come, then `other` for what they leave of the visit.
  const level = new ActivityLevel();
  if (gather !== undefined) {
    const count = numberAttribute(gather, ATTR_TRANSFER_KEY_COUNT) ?? 1;
    const share = count > 0 ? 1 / count : 0;
    const wall = seconds(gather);
    const outcome = stringAttribute(gather, ATTR_TRANSFER_OUTCOME) as TransferOutcome | undefined;
    const lump = outcome === undefined ? undefined : TRANSFER_LUMP[outcome];
    if (lump !== undefined) {
      level.add(lump, wall * share);
    } else {
      const { entries, topLevel } = flattenedTransfer(index, gather);
      for (const [name, value] of entries) level.add(name, value * share);
      const other = wall - topLevel;
      if (other > 0) level.add(OTHER_ACTIVITY, other * share);
    }
  }
  return level.finish(total, withRemainder);
}

/**
 * A transfer's activity self times, flat, in the order they are added, and the seconds its
 * top-level activities cover: computed once per gather_dep span and kept in the index, since
 * every key the transfer carried reads the same (a transfer of n keys with m activities would
 * otherwise cost n × m).
 */
function flattenedTransfer(
  index: SpanIndex,
  gather: DecodedSpan,
): { entries: Array<[string, number]>; topLevel: number } {
  const cached = index.flattened.get(gather);
  if (cached !== undefined) return cached;
  const entries: Array<[string, number]> = [];
  let topLevel = 0;
  const flatten = (span: DecodedSpan) => {
    for (const child of index.activitiesOf(span)) {
      if (!isActivitySpan(child, span)) continue;
      const childSeconds = seconds(child);
      if (span === gather && isRunOfDigests(index, child)) {
        for (const [name, value] of threadDigests(child)) {
          entries.push([name, value]);
          topLevel += value;
        }
        continue;
      }
      if (span === gather) topLevel += childSeconds;
      const grandchildren = index.childrenOf(child).filter((grandchild) => isActivitySpan(grandchild, child));
      const digests = threadDigests(child);
      const nested =
        grandchildren.reduce((sum, grandchild) => sum + seconds(grandchild), 0) +
        digests.reduce((sum, [, value]) => sum + value, 0);
      entries.push([child.name, Math.max(0, childSeconds - nested)]);
      flatten(child);
      for (const [name, value] of digests) entries.push([name, value]);
    }
  };
  flatten(gather);
  const result = { entries, topLevel };
  index.flattened.set(gather, result);
  return result;
}

/** The gather_dep span of the transfer that carried a flight visit: linked, a child, or found by its keys. */
function carrier(index: SpanIndex, visit: DecodedSpan): DecodedSpan | undefined {
  for (const link of visit.links) {
    const target = index.get(link.traceId, link.spanId);
    if (target !== undefined && target.name === SPAN_GATHER_DEP) return target;
  }
  const child = index.childrenOf(visit).find((span) => span.name === SPAN_GATHER_DEP);
  if (child !== undefined) return child;
  // No link (capped away): the transfer that began as the flight did, listing this key.
  const task = visit.parentSpanId === undefined ? undefined : index.get(visit.traceId, visit.parentSpanId);
  const key = task === undefined ? undefined : task.attributes[ATTR_TASK_KEY];
  return index.gathersStartingAt(visit.startNanos).find((span) => {
    const keys = span.attributes[ATTR_TRANSFER_KEYS];
    return Array.isArray(keys) && keys.includes(key as string);
  });
}

/** A few `task.key` values of the spans, for telling what a file holds. */
export function keysInSpans(spans: readonly DecodedSpan[] | SpanIndex, limit = 10): { keys: string[]; total: number } {
  return guarded(
    "keysInSpans(spans, limit)",
    [
      ["spans", SPANS, spans],
      ["limit", "a number of keys", limit],
    ],
    () => {
      const index = spans instanceof SpanIndex ? spans : new SpanIndex(spans);
      const keys = index.keys();
      return { keys: keys.slice(0, limit), total: keys.length };
    },
  );
}
