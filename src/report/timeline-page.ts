import { formatSeconds } from "./format.js";
import { chartColors, STATE_COLORS } from "./palette.js";
import type { BarKind, KeptTraces, ReportData, TraceTimeline } from "./report-data.js";

/**
 * The kept traces' timelines on the report page: the section's HTML (a heading and a note per
 * trace, a chart element each) and the compact JSON the page's script draws them from
 * (src/report/page/report.client.js). A span's colour is its name's, the same in every
 * timeline: the page's states first, in the states chart's order (so they keep its colours),
 * then every other name; task spans share one neutral colour.
 */

/** The series name of task spans (one colour for every journey's task span). */
export const TASK_SERIES = "(task)";
const TASK_COLOR = "#d0d7de";

type Escape = (text: unknown) => string;

/** One timeline as the page's script takes it. */
export interface TimelineChart {
  id: string;
  /** Row labels: a lane's name on its first row, "" on the others. */
  rows: string[];
  /** [first row, rows] of each lane, for the lanes' backgrounds. */
  lanes: Array<[number, number]>;
  /** Microseconds from the trace's start to its end. */
  duration: number;
  /** One per name: its bars as [start µs, end µs, row, bar index, failed 0/1]. */
  series: Array<{ name: string; color: string; bars: Array<[number, number, number, number, number]> }>;
  /** Per bar index with more to say than its name: the task key, why it failed. */
  notes: Record<number, string>;
  /** Links between bars, as [x1, row1, x2, row2] (microseconds, rows). */
  links: Array<[number, number, number, number]>;
}

const KIND_ORDER: Record<BarKind, number> = { task: 0, state: 1, transfer: 2, activity: 3, other: 4 };

/** Each bar name's colour: the page's states first (the states chart's colours), then by kind and name. */
function colorsOf(timelines: readonly TraceTimeline[], pageStates: readonly string[]): Map<string, string> {
  const kinds = new Map<string, BarKind>();
  for (const timeline of timelines)
    for (const bar of timeline.bars) if (bar.kind !== "task" && !kinds.has(bar.name)) kinds.set(bar.name, bar.kind);
  const others = [...kinds.keys()]
    .filter((name) => !pageStates.includes(name))
    .sort((a, b) => KIND_ORDER[kinds.get(a)!] - KIND_ORDER[kinds.get(b)!] || a.localeCompare(b));
  const names = [...pageStates, ...others, TASK_SERIES];
  const colors = chartColors(names, { ...STATE_COLORS, [TASK_SERIES]: TASK_COLOR });
  return new Map(names.map((name, index) => [name, colors[index]]));
}

/** The charts' data, one per timeline, in the section's order. */
export function timelineCharts(kept: KeptTraces | undefined, pageStates: readonly string[]): TimelineChart[] {
  if (kept === undefined) return [];
  const colors = colorsOf(kept.timelines, pageStates);
  return kept.timelines.map((timeline, index) => {
    const rows = Array.from({ length: timeline.rows }, () => "");
    for (const lane of timeline.lanes) if (lane.rows > 0) rows[lane.first] = lane.name;
    const bySeries = new Map<string, TimelineChart["series"][number]>();
    const notes: Record<number, string> = {};
    timeline.bars.forEach((bar, at) => {
      const name = bar.kind === "task" ? TASK_SERIES : bar.name;
      let series = bySeries.get(name);
      if (series === undefined)
        bySeries.set(name, (series = { name, color: colors.get(name) ?? TASK_COLOR, bars: [] }));
      series.bars.push([bar.start, bar.end, bar.row, at, bar.failed === true ? 1 : 0]);
      const note = [bar.kind === "task" ? `${bar.name}: ${bar.key ?? ""}` : "", bar.error ?? ""].filter(Boolean);
      if (note.length > 0) notes[at] = note.join(" — ");
    });
    return {
      id: `chart-timeline-${index}`,
      rows,
      lanes: timeline.lanes.filter((lane) => lane.rows > 0).map((lane): [number, number] => [lane.first, lane.rows]),
      duration: timeline.duration,
      // Task spans first, then in the colours' order (the legend's).
      series: [...bySeries.values()].sort(
        (a, b) =>
          Number(b.name === TASK_SERIES) - Number(a.name === TASK_SERIES) ||
          order(colors, a.name) - order(colors, b.name),
      ),
      notes,
      links: timeline.links.map(([from, to]): [number, number, number, number] => {
        const a = timeline.bars[from];
        const b = timeline.bars[to];
        return [a.start, a.row, b.start, b.row];
      }),
    };
  });
}

function order(colors: Map<string, string>, name: string): number {
  return [...colors.keys()].indexOf(name);
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The section: one chart per kept trace, what chose it, and what was left out; "" without spans. */
export function timelineSection(data: ReportData, escapeHtml: Escape): string {
  const kept = data.keptTraces;
  if (kept === undefined) return "";
  const { timelines, notFound, leftOut, bounds } = kept;
  if (timelines.length === 0 && notFound.length === 0) return "";
  const items = timelines.map((timeline, index) => {
    const processes = timeline.lanes.length;
    const elided =
      timeline.elided === 0
        ? ""
        : `; ${plural(timeline.elided, "span")} not drawn (at most ${bounds.maxBars} a trace: the shallowest, then the longest)`;
    const links =
      timeline.links.length === 0 && timeline.linksNotDrawn === 0
        ? ""
        : `; ${plural(timeline.links.length, "link")} drawn${timeline.linksNotDrawn === 0 ? "" : `, ${timeline.linksNotDrawn} to spans not drawn or in other traces`}`;
    return (
      `<h3>${escapeHtml(timeline.key)} — ${escapeHtml(timeline.reasons.join(", "))}; its trace ${escapeHtml(formatSeconds(timeline.duration / 1e6))}</h3>` +
      `<p class="note">trace ${escapeHtml(timeline.traceId)}: ${plural(timeline.spans, "span")} across ${plural(processes, "process", "processes")}${escapeHtml(elided)}${escapeHtml(links)}.</p>` +
      `<div class="chart timeline" id="chart-timeline-${index}"></div>`
    );
  });
  const notes: string[] = [];
  if (notFound.length > 0)
    notes.push(
      `Not among the traces (not sampled, or not exported): ${notFound.join(", ")}; their journeys are in the tables, not in any trace the inputs hold.`,
    );
  if (leftOut.slowest + leftOut.failed > 0)
    notes.push(
      `Left out: the traces of ${[leftOut.slowest > 0 ? `${plural(leftOut.slowest, "more slowest journey")}` : "", leftOut.failed > 0 ? `${plural(leftOut.failed, "more failed task")}` : ""].filter(Boolean).join(" and ")} (the page draws at most ${bounds.slowest} slowest and ${bounds.failed} failed).`,
    );
  return (
    `<section id="timelines">\n<h2>Kept traces: their spans in time</h2>\n` +
    `<p class="note">Each trace of a slowest journey or failed task, its spans by process (one band each, named by service.instance.id) from the trace's first span: task spans grey, states and activities in the page's colours, failed spans outlined red, links dashed. Scroll or drag the slider to zoom.</p>\n` +
    `${items.join("\n")}\n${notes.map((note) => `<p class="note">${escapeHtml(note)}</p>`).join("\n")}\n</section>`
  );
}
