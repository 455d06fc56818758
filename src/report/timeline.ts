import { ATTR_TASK_KEY, RESOURCE_ROLE, SPAN_GATHER_DEP, SPAN_GET_DATA } from "../shared/semconv.js";
import { show } from "../model/show.js";
import { argumentError } from "./arguments.js";
import { failedOutcome } from "./failures.js";
import {
  failureReason,
  isStateSpan,
  isTaskSpan,
  journeyInstance,
  stringAttribute,
  type SpanIndex,
} from "./span-index.js";
import { RESOURCE_INSTANCE } from "../shared/semconv.js";
import type { DecodedSpan } from "./otlp-json.js";
import type { BarKind, KeptTraces, ReportData, TimelineBar, TraceTimeline } from "./report-data.js";

export type { BarKind, KeptTraces, TimelineBar, TraceTimeline } from "./report-data.js";

/**
 * The timelines of the traces the report keeps: the traces of its slowest journeys and of its
 * failed tasks, each drawn as a Gantt chart of its spans grouped by process (a lane per
 * `service.instance.id`, else `service.name`), each lane's spans in rows by their depth in that
 * process (task span, its states, their activities) and packed so none overlaps another, with
 * the links between drawn spans (a gather_dep and the get_data it caused). Every cost is bounded:
 * at most `slowest` + `failed` traces, one pass over the spans to collect theirs, at most
 * `maxSpansRead` spans kept per trace and `maxBars` drawn, the rest counted.
 */

export const TIMELINE_DEFAULTS: Readonly<Required<TimelineOptions>> = Object.freeze({
  /** Traces of the slowest journeys drawn, slowest first. */
  slowest: 5,
  /** Traces of failed tasks drawn, in the failures table's order. */
  failed: 5,
  /** Spans of one trace read (the rest counted, not looked at). */
  maxSpansRead: 10_000,
  /** Spans of one trace drawn: the shallowest first (task spans, states), then the longest. */
  maxBars: 300,
  /** Links drawn per trace. */
  maxLinks: 300,
});

/** The bounds (TIMELINE_DEFAULTS for any left out). */
export interface TimelineOptions {
  slowest?: number;
  failed?: number;
  maxSpansRead?: number;
  maxBars?: number;
  maxLinks?: number;
}

/** A journey asked for: its key, and the process it ran on when known (a slowest journey's). */
export interface WantedJourney {
  key: string;
  instance?: string;
}

/**
 * The task span a journey's trace is chosen by: of those on its process when known, the longest
 * (slowest), or the failed one that ended last (failed).
 */
function taskOf(tasks: readonly DecodedSpan[], wanted: WantedJourney, failed: boolean): DecodedSpan {
  const there = wanted.instance === undefined ? [] : tasks.filter((task) => journeyInstance(task) === wanted.instance);
  const candidates = there.length > 0 ? there : tasks;
  let chosen = candidates[0];
  for (const task of candidates) {
    if (failed) {
      const a = failedOutcome(task) !== undefined;
      const b = failedOutcome(chosen) !== undefined;
      if ((a && !b) || (a === b && task.endNanos > chosen.endNanos)) chosen = task;
    } else if (task.endNanos - task.startNanos > chosen.endNanos - chosen.startNanos) chosen = task;
  }
  return chosen;
}

function laneName(span: DecodedSpan): string {
  const instance = span.resource[RESOURCE_INSTANCE];
  if (typeof instance === "string" && instance !== "") return instance;
  const service = span.resource["service.name"];
  if (typeof service === "string" && service !== "") return service;
  const role = span.resource[RESOURCE_ROLE];
  return typeof role === "string" ? `(a ${role} process)` : "(a process)";
}

function kindOf(span: DecodedSpan, parent: DecodedSpan | undefined): BarKind {
  if (isTaskSpan(span)) return "task";
  if (span.name === SPAN_GATHER_DEP || span.name === SPAN_GET_DATA) return "transfer";
  if (parent !== undefined && isTaskSpan(parent)) return isStateSpan(parent, span) ? "state" : "other";
  if (span.scope === "taskjourney") return "activity";
  return "other";
}

const micros = (nanos: bigint): number => Number(nanos) / 1000;

/**
 * The timelines of the traces of `slowest` (journeys' keys, slowest first) and `failed` (failed
 * tasks' keys), at most `slowest` and `failed` of each (TIMELINE_DEFAULTS), and of `traced` (the
 * slowest journey known to have been traced, when the slowest was not: one more, reason "slowest
 * traced", unless `slowest` is 0); a trace chosen more than once is drawn once, with every reason.
 */
export function keptTraces(
  index: SpanIndex,
  wanted: {
    slowest: ReadonlyArray<string | WantedJourney>;
    failed: ReadonlyArray<string | WantedJourney>;
    traced?: string | WantedJourney;
  },
  options: TimelineOptions = {},
): KeptTraces {
  const bounds = { ...TIMELINE_DEFAULTS };
  for (const name of Object.keys(TIMELINE_DEFAULTS) as Array<keyof TimelineOptions>) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
      throw argumentError(
        `timelines.${name} must be a whole number >= 0 (default ${TIMELINE_DEFAULTS[name]}), got ${show(value)}`,
      );
    bounds[name] = value;
  }
  const journeys = (list: ReadonlyArray<string | WantedJourney>) =>
    list.map((item): WantedJourney => (typeof item === "string" ? { key: item } : item));
  const slowest = journeys(wanted.slowest);
  const failedTasks = journeys(wanted.failed);
  const traced = journeys(wanted.traced === undefined ? [] : [wanted.traced]);
  const asked = new Set(
    [
      ...slowest.slice(0, bounds.slowest),
      ...traced.slice(0, bounds.slowest === 0 ? 0 : 1),
      ...failedTasks.slice(0, bounds.failed),
    ].map((journey) => journey.key),
  );
  // The task spans of the keys asked for: one pass over the task spans.
  const tasksByKey = new Map<string, DecodedSpan[]>();
  for (const task of index.tasks) {
    const key = stringAttribute(task, ATTR_TASK_KEY)!;
    if (!asked.has(key)) continue;
    const list = tasksByKey.get(key);
    if (list === undefined) tasksByKey.set(key, [task]);
    else list.push(task);
  }
  const chosen = new Map<string, { key: string; reasons: string[] }>();
  const notFound: string[] = [];
  const choose = (list: readonly WantedJourney[], limit: number, failed: boolean, why?: string) => {
    let drawn = 0;
    let leftOut = 0;
    list.forEach((journey, rank) => {
      const key = journey.key;
      const tasks = tasksByKey.get(key);
      if (drawn >= limit) {
        leftOut++;
        return;
      }
      drawn++;
      if (tasks === undefined) {
        if (!notFound.includes(key)) notFound.push(key);
        return;
      }
      const traceId = taskOf(tasks, journey, failed).traceId;
      const reason = why ?? (failed ? "failed" : `slowest #${rank + 1}`);
      const entry = chosen.get(traceId);
      if (entry === undefined) chosen.set(traceId, { key, reasons: [reason] });
      else if (!entry.reasons.includes(reason)) entry.reasons.push(reason);
    });
    return leftOut;
  };
  // In this order on the page: the slowest, the slowest traced, the failed.
  const slowestLeftOut = choose(slowest, bounds.slowest, false);
  const leftOut = {
    slowest: slowestLeftOut + choose(traced, bounds.slowest === 0 ? 0 : 1, false, "slowest traced"),
    failed: choose(failedTasks, bounds.failed, true),
  };
  // Their spans: one pass over the inputs' spans, at most maxSpansRead kept per trace.
  const read = new Map<string, { spans: DecodedSpan[]; count: number }>();
  for (const traceId of chosen.keys()) read.set(traceId, { spans: [], count: 0 });
  for (const span of index.spans) {
    const trace = read.get(span.traceId);
    if (trace === undefined) continue;
    trace.count++;
    if (trace.spans.length < bounds.maxSpansRead) trace.spans.push(span);
  }
  const timelines = [...chosen].map(([traceId, { key, reasons }]) => {
    const { spans, count } = read.get(traceId)!;
    return timelineOf(traceId, key, reasons, spans, count, bounds);
  });
  return {
    timelines,
    notFound,
    leftOut,
    bounds: { slowest: bounds.slowest, failed: bounds.failed, maxBars: bounds.maxBars },
  };
}

/** One trace's timeline from its spans (`count` of them in the inputs, `spans` those read). */
export function timelineOf(
  traceId: string,
  key: string,
  reasons: string[],
  spans: readonly DecodedSpan[],
  count: number,
  bounds: { maxBars: number; maxLinks: number },
): TraceTimeline {
  const byId = new Map<string, DecodedSpan>();
  for (const span of spans) byId.set(span.spanId, span);
  let origin: bigint | undefined;
  let last: bigint | undefined;
  for (const span of spans) {
    if (origin === undefined || span.startNanos < origin) origin = span.startNanos;
    if (last === undefined || span.endNanos > last) last = span.endNanos;
  }
  const start = origin ?? 0n;
  // Lanes: one per process, in the order they began.
  const laneOf = new Map<DecodedSpan, string>();
  const laneStart = new Map<string, bigint>();
  for (const span of spans) {
    const name = laneName(span);
    laneOf.set(span, name);
    const begun = laneStart.get(name);
    if (begun === undefined || span.startNanos < begun) laneStart.set(name, span.startNanos);
  }
  const laneNames = [...laneStart.keys()].sort((a, b) =>
    laneStart.get(a)! < laneStart.get(b)! ? -1 : laneStart.get(a)! > laneStart.get(b)! ? 1 : a.localeCompare(b),
  );
  const laneIndex = new Map(laneNames.map((name, index) => [name, index]));
  // Each span's depth in the trace (`depth`) and within its process (`local`: 0 for a span whose
  // parent is in another process or not in the inputs). Walked up without recursion; SpanIndex
  // refused cycles.
  const depthsOf = (withinLane: boolean): Map<DecodedSpan, number> => {
    const depths = new Map<DecodedSpan, number>();
    for (const span of spans) {
      const path: DecodedSpan[] = [];
      let current: DecodedSpan | undefined = span;
      let base = -1;
      while (current !== undefined) {
        const known = depths.get(current);
        if (known !== undefined) {
          base = known;
          break;
        }
        path.push(current);
        const parent: DecodedSpan | undefined =
          current.parentSpanId === undefined ? undefined : byId.get(current.parentSpanId);
        current =
          parent !== undefined && (!withinLane || laneOf.get(parent) === laneOf.get(current)) ? parent : undefined;
      }
      for (let at = path.length - 1; at >= 0; at--) depths.set(path[at], ++base);
    }
    return depths;
  };
  const depth = depthsOf(false);
  const local = depthsOf(true);
  // Drawn: the shallowest in the trace first (task spans, then states, then activities), then the
  // longest, so that every drawn span's parent is drawn too.
  const drawn = [...spans]
    .sort(
      (a, b) =>
        depth.get(a)! - depth.get(b)! ||
        Number(b.endNanos - b.startNanos - (a.endNanos - a.startNanos)) ||
        (a.startNanos < b.startNanos ? -1 : a.startNanos > b.startNanos ? 1 : 0),
    )
    .slice(0, bounds.maxBars);
  // Rows: per lane, per depth, packed: a span goes into the first row of its depth it does not overlap.
  const rowsByLaneDepth = laneNames.map(() => [] as bigint[][]);
  const placed = new Map<DecodedSpan, { lane: number; depth: number; sub: number }>();
  // By start, ties by end: a visit left the moment it was entered goes before the one that starts as it ends, in its row.
  const inOrder = [...drawn].sort((a, b) =>
    a.startNanos < b.startNanos ? -1 : a.startNanos > b.startNanos ? 1 : Number(a.endNanos - b.endNanos),
  );
  for (const span of inOrder) {
    const lane = laneIndex.get(laneOf.get(span)!)!;
    const level = local.get(span)!;
    const levels = rowsByLaneDepth[lane];
    while (levels.length <= level) levels.push([]);
    const ends = levels[level];
    let sub = ends.findIndex((end) => end <= span.startNanos);
    if (sub === -1) sub = ends.push(span.endNanos) - 1;
    else ends[sub] = span.endNanos;
    placed.set(span, { lane, depth: level, sub });
  }
  // Row numbers: lanes top to bottom, each lane's depths in order (a depth with no drawn span has no row).
  const lanes: TraceTimeline["lanes"] = [];
  const firstRowOf: number[][] = [];
  let rows = 0;
  rowsByLaneDepth.forEach((levels, lane) => {
    const first = rows;
    firstRowOf.push(
      levels.map((ends) => {
        const at = rows;
        rows += ends.length;
        return at;
      }),
    );
    lanes.push({ name: laneNames[lane], first, rows: rows - first });
  });
  const bars: TimelineBar[] = [];
  const barOf = new Map<string, number>();
  const ordered = [...placed].sort(([a, x], [b, y]) => {
    const rowA = firstRowOf[x.lane][x.depth] + x.sub;
    const rowB = firstRowOf[y.lane][y.depth] + y.sub;
    return rowA - rowB || (a.startNanos < b.startNanos ? -1 : a.startNanos > b.startNanos ? 1 : 0);
  });
  for (const [span, { lane, depth: level, sub }] of ordered) {
    const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    const bar: TimelineBar = {
      lane,
      row: firstRowOf[lane][level] + sub,
      start: micros(span.startNanos - start),
      end: micros((span.endNanos > span.startNanos ? span.endNanos : span.startNanos) - start),
      name: span.name,
      kind: kindOf(span, parent),
    };
    const taskKey = bar.kind === "task" ? stringAttribute(span, ATTR_TASK_KEY) : undefined;
    if (taskKey !== undefined) bar.key = taskKey;
    if (span.statusCode === 2) {
      bar.failed = true;
      // Not the words taskjourney writes when it knows no reason ("task ended in erred", "executing error").
      const message = span.statusMessage;
      const generic =
        message === undefined ||
        message.startsWith("task ended in ") ||
        message === `${span.name} error` ||
        message === `${span.name} failed`;
      const why = failureReason(span) ?? (generic ? undefined : message);
      if (why !== undefined && why !== "") bar.error = why;
    }
    barOf.set(span.spanId, bars.length);
    bars.push(bar);
  }
  const links: Array<[number, number]> = [];
  let linksNotDrawn = 0;
  for (const span of spans) {
    const from = barOf.get(span.spanId);
    for (const link of span.links) {
      const to = link.traceId === traceId ? barOf.get(link.spanId) : undefined;
      if (from === undefined || to === undefined || links.length >= bounds.maxLinks) linksNotDrawn++;
      else links.push([from, to]);
    }
  }
  return {
    traceId,
    key,
    reasons,
    duration: origin === undefined ? 0 : micros(last! - start),
    lanes,
    rows,
    bars,
    links,
    spans: count,
    elided: count - bars.length,
    linksNotDrawn,
  };
}

/** The timelines of the traces of a report's slowest journeys (and its slowest traced one) and failed tasks. */
export function keptTracesOf(index: SpanIndex, data: ReportData, options: TimelineOptions = {}): KeptTraces {
  const wanted = ({ key, instance }: { key: string; instance: string }): WantedJourney =>
    instance === "" ? { key } : { key, instance };
  return keptTraces(
    index,
    {
      slowest: (data.slowest ?? []).map(wanted),
      failed: (data.failures ?? []).map(wanted),
      ...(data.slowestTraced === undefined ? {} : { traced: wanted(data.slowestTraced) }),
    },
    options,
  );
}
