import { show } from "../model/show.js";
import { dataError } from "./arguments.js";

/**
 * The kept traces' timelines as ReportData holds them (made from spans by src/report/timeline.ts,
 * drawn by src/report/timeline-page.ts), and their reader from JSON (a saved ReportData), checked:
 * every index within what it indexes (a bar's lane and row, a link's bars, a lane's rows), the
 * timelines and bars within the bounds they were made under, so that a crafted file can make the
 * page draw no more than its own size says, and a wrong one is refused naming the field.
 */

/** What a bar is: a journey's task span, a state visit, a transfer (gather_dep, get_data), an activity, or a span of the application's own. */
export type BarKind = "task" | "state" | "transfer" | "activity" | "other";

export interface TimelineBar {
  /** The lane (process) it is in, an index into `lanes`. */
  lane: number;
  /** Its row in the chart, counted over every lane from the top. */
  row: number;
  /** Microseconds from the trace's first span's start (nanosecond-exact). */
  start: number;
  end: number;
  /** The span's name: `task <prefix>`, a state, an activity. */
  name: string;
  kind: BarKind;
  /** The task key, on a task span. */
  key?: string;
  /** The span's status was ERROR. */
  failed?: true;
  /** Why it failed, when the span says. */
  error?: string;
}

export interface TraceTimeline {
  traceId: string;
  /** The task the trace is of (the key that chose it). */
  key: string;
  /** Why it is drawn: "slowest" (with its rank), "failed", or both. */
  reasons: string[];
  /** Microseconds from its first span's start to its last span's end (of those read). */
  duration: number;
  /** One per process, in the order they began: its name and its rows (`first` to `first + rows - 1`). */
  lanes: Array<{ name: string; first: number; rows: number }>;
  rows: number;
  bars: TimelineBar[];
  /** Links between drawn bars, as indexes into `bars`: from the linking span to the one it links to. */
  links: Array<[number, number]>;
  /** Spans of the trace in the inputs. */
  spans: number;
  /** Spans not drawn (past maxSpansRead, or past maxBars). */
  elided: number;
  /** Links not drawn: to spans of other traces, to spans not drawn, or past maxLinks. */
  linksNotDrawn: number;
}

export interface KeptTraces {
  timelines: TraceTimeline[];
  /** The keys asked for (slowest, failed) that no span of the inputs holds: not sampled, or not exported. */
  notFound: string[];
  /** Traces of slowest journeys and failed tasks past the bounds: not drawn. */
  leftOut: { slowest: number; failed: number };
  /** The bounds used, for the page to say. */
  bounds: { slowest: number; failed: number; maxBars: number };
}

// ---- reading them back from JSON ----

const BAR_KINDS: ReadonlySet<string> = new Set<BarKind>(["task", "state", "transfer", "activity", "other"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A whole number from 0 to `max` (inclusive), or an error naming the field and what would be right. */
function count(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER, what = ""): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > max)
    throw dataError(
      max < 0
        ? `${field} must be a whole number${what}, and there is none to be, got ${show(value)}`
        : `${field} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? ">= 0" : `from 0 to ${max}${what}`}, got ${show(value)}`,
    );
  return value;
}

/** A finite number of microseconds >= `min`. */
function micros(value: unknown, field: string, min = 0, what = "0"): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min)
    throw dataError(`${field} must be a number of microseconds >= ${what}, got ${show(value)}`);
  return value;
}

function text(value: unknown, field: string): string {
  if (typeof value !== "string") throw dataError(`${field} must be a string, got ${show(value)}`);
  return value;
}

function list(value: unknown, field: string, of: string, max = Number.MAX_SAFE_INTEGER, why = ""): unknown[] {
  if (!Array.isArray(value)) throw dataError(`${field} must be an array of ${of}, got ${show(value)}`);
  if (value.length > max) throw dataError(`${field} holds ${value.length} items, more than ${max}${why}`);
  return value;
}

function texts(value: unknown, field: string): string[] {
  return list(value, field, "strings").map((item, index) => text(item, `${field}[${index}]`));
}

function bar(value: unknown, field: string, lanes: number, rows: number): TimelineBar {
  if (!isRecord(value))
    throw dataError(`${field} must be a bar {lane, row, start, end, name, kind}, got ${show(value)}`);
  const start = micros(value.start, `${field}.start`);
  const out: TimelineBar = {
    lane: count(value.lane, `${field}.lane`, lanes - 1, " (an index into the timeline's lanes)"),
    row: count(value.row, `${field}.row`, rows - 1, " (below the timeline's rows)"),
    start,
    end: micros(value.end, `${field}.end`, start, `its start (${start})`),
    name: text(value.name, `${field}.name`),
    kind: value.kind as BarKind,
  };
  if (typeof value.kind !== "string" || !BAR_KINDS.has(value.kind))
    throw dataError(`${field}.kind must be one of ${[...BAR_KINDS].join(", ")}, got ${show(value.kind)}`);
  if (value.key !== undefined) out.key = text(value.key, `${field}.key`);
  if (value.failed !== undefined) {
    if (value.failed !== true) throw dataError(`${field}.failed must be true when present, got ${show(value.failed)}`);
    out.failed = true;
  }
  if (value.error !== undefined) out.error = text(value.error, `${field}.error`);
  return out;
}

function timeline(value: unknown, field: string, maxBars: number): TraceTimeline {
  if (!isRecord(value))
    throw dataError(
      `${field} must be a timeline {traceId, key, reasons, duration, lanes, rows, bars, links, …}, got ${show(value)}`,
    );
  const bars = list(value.bars, `${field}.bars`, "bars", maxBars, ` (keptTraces.bounds.maxBars)`);
  // Each row holds at least one bar: no more rows than bars, so the chart is no bigger than its data.
  const rows = count(value.rows, `${field}.rows`, bars.length, " (its bars: a row holds at least one)");
  const lanes = list(value.lanes, `${field}.lanes`, "lanes {name, first, rows}").map((lane, index) => {
    const at = `${field}.lanes[${index}]`;
    if (!isRecord(lane)) throw dataError(`${at} must be a lane {name, first, rows}, got ${show(lane)}`);
    const first = count(lane.first, `${at}.first`, rows, " (the timeline's rows)");
    return {
      name: text(lane.name, `${at}.name`),
      first,
      rows: count(lane.rows, `${at}.rows`, rows - first, ` (the timeline's rows after its first, ${first})`),
    };
  });
  const drawn = bars.map((item, index) => bar(item, `${field}.bars[${index}]`, lanes.length, rows));
  const links = list(value.links, `${field}.links`, "[from, to] bar indexes").map((link, index) => {
    const at = `${field}.links[${index}]`;
    if (!Array.isArray(link) || link.length !== 2)
      throw dataError(`${at} must be [from, to], two bar indexes, got ${show(link)}`);
    const last = drawn.length - 1;
    return [
      count(link[0], `${at}[0]`, last, " (an index into the timeline's bars)"),
      count(link[1], `${at}[1]`, last, " (an index into the timeline's bars)"),
    ] as [number, number];
  });
  return {
    traceId: text(value.traceId, `${field}.traceId`),
    key: text(value.key, `${field}.key`),
    reasons: texts(value.reasons, `${field}.reasons`),
    duration: micros(value.duration, `${field}.duration`),
    lanes,
    rows,
    bars: drawn,
    links,
    spans: count(value.spans, `${field}.spans`),
    elided: count(value.elided, `${field}.elided`),
    linksNotDrawn: count(value.linksNotDrawn, `${field}.linksNotDrawn`),
  };
}

/**
 * KeptTraces from parsed JSON (a saved ReportData's `keptTraces`), checked; undefined when absent.
 * At most `bounds.slowest + bounds.failed` timelines (one more for the slowest traced journey),
 * each of at most `bounds.maxBars` bars. Throws an InvalidDataError naming the field that is wrong.
 */
export function keptTracesFrom(value: unknown, field = "keptTraces"): KeptTraces | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value))
    throw dataError(
      `${field} must be {timelines, notFound, leftOut, bounds} (as the report wrote it), got ${show(value)}`,
    );
  const { bounds, leftOut } = value;
  if (!isRecord(bounds)) throw dataError(`${field}.bounds must be {slowest, failed, maxBars}, got ${show(bounds)}`);
  if (!isRecord(leftOut)) throw dataError(`${field}.leftOut must be {slowest, failed}, got ${show(leftOut)}`);
  const read = {
    slowest: count(bounds.slowest, `${field}.bounds.slowest`),
    failed: count(bounds.failed, `${field}.bounds.failed`),
    maxBars: count(bounds.maxBars, `${field}.bounds.maxBars`),
  };
  const most = read.slowest + read.failed + (read.slowest > 0 ? 1 : 0);
  const timelines = list(
    value.timelines,
    `${field}.timelines`,
    "timelines",
    most,
    ` (keptTraces.bounds: ${read.slowest} slowest, ${read.failed} failed${read.slowest > 0 ? ", the slowest traced" : ""})`,
  ).map((item, index) => timeline(item, `${field}.timelines[${index}]`, read.maxBars));
  return {
    timelines,
    notFound: texts(value.notFound, `${field}.notFound`),
    leftOut: {
      slowest: count(leftOut.slowest, `${field}.leftOut.slowest`),
      failed: count(leftOut.failed, `${field}.leftOut.failed`),
    },
    bounds: read,
  };
}
