import * as fs from "node:fs";
import * as path from "node:path";
import { createRequire } from "node:module";
import type { Breakdown, BreakdownNode } from "../model/breakdown.js";
import { guarded } from "./arguments.js";
import { formatBreakdown, formatSeconds } from "./format.js";
import { activitiesOnPage, activityMeaning } from "./glossary.js";
import { withLumpLabels } from "./lumps.js";
import { chartColors, STATE_COLORS } from "./palette.js";
import { statesOf, type PrefixRow } from "./table.js";
import { finite, type ReportData } from "./report-data.js";
import { timelineCharts, timelineSection } from "./timeline-page.js";
import { COMPUTATION_ROWS } from "./computations.js";
import {
  failureWords,
  machineWords,
  measuredOf,
  outcomeWords,
  schedulerSide,
  workerSide,
  type MachineWords,
} from "./words.js";

/**
 * The HTML report: one self-contained page (ECharts inlined) with the failed tasks and why they
 * failed (when any did), the per-prefix table, time by
 * state per prefix, the execute / gather activity breakdowns, the waiting breakdown by dependent
 * prefix and the slowest tasks' breakdowns. Every user-controlled string (keys, prefixes,
 * activity and state names, titles) is escaped for HTML, and the chart data travels as JSON in a
 * `<script type="application/json">` block with `<`, `>`, `&` and line separators escaped, so no
 * name can end the block or start markup.
 */

export type { ReportData, ReportFailure } from "./report-data.js";
// Reading a ReportData back from JSON lives with its type (report-data.ts); re-exported so every importer is unchanged.
export { reportDataFrom } from "./report-data.js";

export interface RenderOptions {
  /**
   * Inline ECharts (shipped with the package) so the page draws its charts offline. Default
   * true; when false (a smaller page, for tests) the page has the tables and trees, and says
   * where the charts would be. The page never loads anything from the network.
   */
  inlineEcharts?: boolean;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]);
}

/**
 * JSON safe inside a `<script>` element: `<`, `>` and `&` as \u escapes (no `</script>`, no
 * `<!--`), and U+2028 / U+2029 escaped. Non-finite numbers become null, as JSON has none.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === "number" && !Number.isFinite(item) ? null : item,
  )
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

let echarts: { source: string; version: string } | null | undefined;

/**
 * ECharts as the page inlines it: the copy `npm run build` puts beside this module
 * (dist/report/page/echarts.min.js, so an installed package has it), else the `echarts`
 * package (a devDependency, when running from src/); null when neither is there.
 */
export function loadEcharts(): { source: string; version: string } | null {
  if (echarts !== undefined) return echarts;
  const read = (file: string | URL) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
  };
  const shipped = read(new URL("./page/echarts.min.js", import.meta.url));
  if (shipped !== undefined) {
    echarts = { source: shipped, version: (read(new URL("./page/echarts.version", import.meta.url)) ?? "").trim() };
    return echarts;
  }
  try {
    const require = createRequire(import.meta.url);
    const directory = path.dirname(require.resolve("echarts/package.json"));
    const source = read(path.join(directory, "dist", "echarts.min.js"));
    const version = String(
      (JSON.parse(read(path.join(directory, "package.json")) ?? "{}") as { version?: unknown }).version ?? "",
    );
    echarts = source === undefined ? null : { source, version };
  } catch {
    echarts = null;
  }
  return echarts;
}

/** Largest first, `other` last: the order of the activity charts and tables. */
function byShare([a, x]: [string, number], [b, y]: [string, number]): number {
  return (a === "other" ? 1 : 0) - (b === "other" ? 1 : 0) || y - x || a.localeCompare(b);
}

interface SunburstNode {
  name: string;
  value: number;
  children?: SunburstNode[];
  /** The states' ring: one colour each, none repeated (palette.ts). */
  itemStyle?: { color: string };
}

function sunburstNodes(nodes: readonly BreakdownNode[]): SunburstNode[] {
  return nodes
    .filter((node) => node.seconds > 0)
    .map((node) => {
      const children = sunburstNodes(node.children);
      return children.length > 0
        ? { name: node.name, value: node.seconds, children }
        : { name: node.name, value: node.seconds };
    });
}

/** The data the page's charts draw, as embedded JSON. */
function chartData(data: ReportData, states: readonly string[]) {
  const prefixes = data.prefixes.map((row) => row.prefix);
  const waitPrefixes = Object.keys(data.wait).sort(
    (a, b) => sum(Object.values(data.wait[b])) - sum(Object.values(data.wait[a])) || a.localeCompare(b),
  );
  const waitActivities = [...new Set(waitPrefixes.flatMap((prefix) => Object.keys(data.wait[prefix])))]
    .map((activity): [string, number] => [
      activity,
      sum(waitPrefixes.map((prefix) => finite(data.wait[prefix][activity]) || 0)),
    ])
    .filter(([, total]) => total > 0)
    .sort(byShare)
    .map(([activity]) => activity);
  const slowest = data.slowest?.[0];
  const stateColors = chartColors(states, STATE_COLORS);
  const waitColors = chartColors(waitActivities);
  const slowestNodes = slowest === undefined ? [] : sunburstNodes(slowest.children);
  const slowestColors = chartColors(
    slowestNodes.map((node) => node.name),
    STATE_COLORS,
  );
  slowestNodes.forEach((node, index) => (node.itemStyle = { color: slowestColors[index] }));
  return {
    states: {
      prefixes,
      series: states.map((state, index) => ({
        name: state,
        color: stateColors[index],
        data: data.prefixes.map((row) => finite(row.stateSeconds[state]) || 0),
      })),
    },
    execute: activityEntries(withLumpLabels(data.execute, "execute")),
    gather: activityEntries(withLumpLabels(data.gather, "gather")),
    wait: {
      prefixes: waitPrefixes,
      series: waitActivities.map((activity, index) => ({
        name: activity,
        color: waitColors[index],
        data: waitPrefixes.map((prefix) => finite(data.wait[prefix][activity]) || 0),
      })),
    },
    slowest: slowest === undefined ? null : { name: slowest.key, value: slowest.seconds, children: slowestNodes },
    // The states chart's states first, so that a state keeps its colour on the timelines.
    timelines: timelineCharts(data.keptTraces, [
      ...states,
      ...statesOf(data.schedulerPrefixes ?? [], data.schedulerStates).filter((state) => !states.includes(state)),
    ]),
  };
}

function activityEntries(seconds: Readonly<Record<string, number>>): Array<[string, number]> {
  return Object.entries(seconds)
    .map(([name, value]): [string, number] => [name, finite(value)])
    .filter(([, value]) => value > 0)
    .sort(byShare);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) if (Number.isFinite(value)) total += value;
  return total;
}

function prefixTable(
  rows: readonly PrefixRow[],
  durationOfState: string | undefined,
  states: readonly string[],
  timeTitle = "time by state",
): string {
  const durationOf = durationOfState === undefined ? "(no measured state)" : escapeHtml(durationOfState);
  const head =
    `<tr class="group"><th></th><th></th><th colspan="3">${durationOf} duration</th>` +
    (states.length > 0 ? `<th colspan="${states.length}">${escapeHtml(timeTitle)}</th>` : "") +
    `</tr><tr><th class="name">prefix</th><th>visits</th><th>p50</th><th>p90</th><th>p99</th>${states.map((state) => `<th>${escapeHtml(state)}</th>`).join("")}</tr>`;
  const cell = (seconds: number) => `<td>${escapeHtml(formatSeconds(finite(seconds)))}</td>`;
  const lines = rows.map(
    (row) =>
      `<tr><td class="name">${escapeHtml(row.prefix)}</td><td>${escapeHtml(String(row.count))}</td>${cell(row.p50)}${cell(row.p90)}${cell(row.p99)}` +
      `${states.map((state) => cell(finite(row.stateSeconds[state]) || 0)).join("")}</tr>`,
  );
  const total =
    rows.length === 0
      ? `<tr><td class="name empty" colspan="${5 + states.length}">(no prefixes recorded)</td></tr>`
      : `<tr class="total"><td class="name">total</td><td>${sum(rows.map((row) => row.count))}</td><td></td><td></td><td></td>` +
        `${states.map((state) => cell(sum(rows.map((row) => finite(row.stateSeconds[state]) || 0)))).join("")}</tr>`;
  return `<table class="prefixes"><thead>${head}</thead><tbody>${lines.join("")}${total}</tbody></table>`;
}

/** The failed tasks and why, first on the page; nothing when no task failed. */
function failuresSection(data: ReportData, words: MachineWords): string {
  const custom = words.custom;
  const failures = data.failures ?? [];
  const counted = failureWords(data.failureCounts, words);
  if (failures.length === 0 && counted === undefined) return "";
  const listed = failures.length;
  const prefix = counted === undefined ? "" : `${counted}. `;
  const once = custom
    ? "a task is listed once, by its last failed attempt"
    : "a key that failed on both a worker and the scheduler is listed once";
  const note =
    listed === 0
      ? `${prefix}No failed task is known by key (none among the traces), so none is listed.`
      : `${prefix}Listed: ${listed === 1 ? "the failed task" : `the ${listed} failed tasks`} known by key, earliest first (${once}).`;
  // A column only where some task was tried more than once (a job queue's retries).
  const withAttempts = failures.some((failure) => (failure.attempts ?? 0) > 1);
  const rows = failures.map((failure) => {
    const role = custom ? "" : `${failure.kind === "scheduler" ? "scheduler" : "worker"} `;
    const where = failure.instance === "" ? "" : `${role}${failure.instance}`;
    const failedIn = failure.state === undefined ? failure.outcome : `${failure.state}: ${failure.outcome}`;
    const why =
      failure.error === undefined
        ? `<td class="why unknown">(no reason recorded)</td>`
        : `<td class="why">${escapeHtml(failure.error)}</td>`;
    const attempts = withAttempts
      ? `<td>${failure.attempts === undefined ? "" : escapeHtml(String(failure.attempts))}</td>`
      : "";
    return (
      `<tr><td class="name">${escapeHtml(failure.key)}</td><td class="name">${escapeHtml(failure.prefix)}</td><td class="name">${escapeHtml(failedIn)}</td>` +
      `<td class="name">${escapeHtml(where)}</td>${attempts}<td>${escapeHtml(formatSeconds(finite(failure.seconds)))}</td>${why}</tr>`
    );
  });
  const table =
    listed === 0
      ? ""
      : `<div class="table-scroll"><table class="failures"><thead><tr><th class="name">key</th><th class="name">prefix</th><th class="name">failed in</th><th class="name">on</th>${withAttempts ? "<th>attempts</th>" : ""}<th>after</th><th class="name">why</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
  return `<section id="failures">\n<h2>Failed tasks</h2>\n<p class="note">${escapeHtml(note)}</p>\n${table}\n</section>`;
}

/**
 * Each computation's totals (one graph submission, one flow), when the data has any: tasks,
 * failures, live ones, wall time and task-seconds by state.
 */
function computationsSection(data: ReportData, custom: boolean): string {
  const all = data.computations;
  if (all === undefined || all.length === 0) return "";
  const shown = all.slice(0, COMPUTATION_ROWS);
  const states = statesOf(
    shown.map((row) => ({ prefix: row.name, count: 0, p50: 0, p90: 0, p99: 0, stateSeconds: row.seconds })),
    data.schedulerStates ?? data.states,
  );
  const head =
    `<tr><th class="name">computation</th><th>tasks</th><th>failed</th><th>live</th><th>wall</th>` +
    `${states.map((state) => `<th>${escapeHtml(state)}</th>`).join("")}</tr>`;
  const cell = (seconds: number) => `<td>${escapeHtml(formatSeconds(finite(seconds) || 0))}</td>`;
  const lines = shown.map(
    (row) =>
      `<tr><td class="name">${escapeHtml(row.name)}</td><td>${row.tasks}</td><td>${row.failed}</td><td>${row.live}</td>${cell(row.wall)}` +
      `${states.map((state) => cell(row.seconds[state])).join("")}</tr>`,
  );
  const workers = shown.some((row) => row.from === "workers");
  // Dask's words only for Dask's machines (a custom machine's page never says "scheduler").
  const sums = custom
    ? "Rows no process handing out the tasks reported are the totals of those that ran them, summed. "
    : "Rows no scheduler reported are the workers' totals summed. ";
  const whole = custom
    ? "From the process that hands out the tasks, which sees every task. "
    : "From the scheduler, which sees every task. ";
  const more = all.length > shown.length ? ` The first ${shown.length} of ${all.length} are shown.` : "";
  const note =
    `One row per graph submission (flow): its tasks, those that failed (per task, retried attempts apart) and those not ended; ` +
    `wall: its first task's start to its last task's end; then task-seconds by state, summed over its tasks. ` +
    `${workers ? sums : whole}` +
    `Only the live and most recently finished computations, up to limits.maxComputations, are exported.${more}`;
  return `<section id="computations">
<h2>Computations</h2>
<div class="table-scroll"><table class="computations"><thead>${head}</thead><tbody>${lines.join("")}</tbody></table></div>
<p class="note">${escapeHtml(note)}</p>
</section>`;
}

/** How the journeys ended, cancelled and removed ones included; nothing without counts. */
function outcomesSection(data: ReportData, words: MachineWords): string {
  const ended = outcomeWords(data.outcomes, words);
  if (ended === undefined) return "";
  return `<section id="outcomes">\n<h2>How they ended</h2>\n<p class="note">${escapeHtml(ended)}.</p>\n</section>`;
}

/** Distinct prefixes of the workers' and the scheduler's tables. */
function prefixCount(data: ReportData): number {
  return new Set([...data.prefixes, ...(data.schedulerPrefixes ?? [])].map((row) => row.prefix)).size;
}

function schedulerSection(data: ReportData, custom: boolean): string {
  const rows = data.schedulerPrefixes;
  if (rows === undefined || rows.length === 0) return "";
  const durationOf = measuredOf(rows, data.schedulerDurationOf, "processing", custom);
  const visits =
    durationOf === undefined
      ? "no state to measure found in the data (give one with --state)"
      : `the visits to ${escapeHtml(durationOf)}${custom ? "" : " on the scheduler"}`;
  return (
    `<h3>${escapeHtml(schedulerSide(custom))}</h3><div class="table-scroll">${prefixTable(rows, durationOf, statesOf(rows, data.schedulerStates), "task-seconds by state")}</div>` +
    `<p class="note">visits and quantiles: ${visits}; task-seconds by state: each task's seconds in the state, summed over the prefix's tasks (tasks overlap, so a total can exceed the run's wall time).</p>`
  );
}

function activityTable(seconds: Readonly<Record<string, number>>): string {
  const entries = activityEntries(seconds);
  if (entries.length === 0) return `<p class="empty">(nothing recorded)</p>`;
  const total = sum(entries.map(([, value]) => value));
  const rows = entries.map(
    ([name, value]) =>
      `<tr><td class="name">${escapeHtml(name)}</td><td>${escapeHtml(formatSeconds(value))}</td><td>${((value / total) * 100).toFixed(1)}%</td></tr>`,
  );
  return `<table class="activities"><tbody>${rows.join("")}<tr class="total"><td class="name">total</td><td>${escapeHtml(formatSeconds(total))}</td><td>100.0%</td></tr></tbody></table>`;
}

function failedMark(breakdown: Breakdown): string {
  return breakdown.failed === true || breakdown.outcome === "error" || breakdown.outcome === "erred"
    ? ` (${escapeHtml(breakdown.outcome ?? "failed")})`
    : "";
}

function slowestSection(slowest: readonly Breakdown[] | undefined, custom: boolean): string {
  if (slowest === undefined || slowest.length === 0) return `<p class="empty">(no journey breakdowns in the data)</p>`;
  const [first, ...others] = slowest;
  const tree = (breakdown: Breakdown) => escapeHtml(formatBreakdown(breakdown, { roles: !custom }));
  const more = others
    .slice(0, 9)
    .map(
      (breakdown) =>
        `<details><summary>${escapeHtml(breakdown.key)} — ${escapeHtml(formatSeconds(breakdown.seconds))}${failedMark(breakdown)}</summary><pre>${tree(breakdown)}</pre></details>`,
    )
    .join("");
  return (
    `<div class="slowest"><pre class="tree">${tree(first)}</pre><div class="chart" id="chart-slowest" style="height:460px"></div></div>` +
    (more === "" ? "" : `<h3>Next slowest, by total time</h3>${more}`)
  );
}

/** The longest single visits to the measured state: the slowest runs. */
function slowestInSection(data: ReportData, custom: boolean): string {
  const slowestIn = data.slowestIn;
  if (slowestIn === undefined || slowestIn.journeys.length === 0) return "";
  const state = escapeHtml(slowestIn.state);
  // Journeys that are one visit each (a job queue's attempts): the same list as the slowest above.
  const slowest = data.slowest ?? [];
  const same =
    slowestIn.journeys.length <= slowest.length &&
    slowestIn.journeys.every(
      ({ breakdown, seconds }, index) => breakdown.seconds === seconds && slowest[index].key === breakdown.key,
    );
  if (same)
    return `<section id="slowest-in">\n<h2>Longest in ${state}</h2>\n<p class="note">The same journeys as the slowest above: each of them is its time in ${state}.</p>\n</section>`;
  const items = slowestIn.journeys
    .slice(0, 10)
    .map(
      ({ key, seconds, breakdown }) =>
        `<details><summary>${escapeHtml(key)} — ${escapeHtml(formatSeconds(seconds))} in ${escapeHtml(slowestIn.state)} (${escapeHtml(formatSeconds(breakdown.seconds))} in all)${failedMark(breakdown)}</summary><pre>${escapeHtml(formatBreakdown(breakdown, { roles: !custom }))}</pre></details>`,
    )
    .join("");
  return `<section id="slowest-in">\n<h2>Longest in ${escapeHtml(slowestIn.state)}</h2>\n<p class="note">By the longest single visit to ${escapeHtml(slowestIn.state)}: the slowest runs, whatever their waits and retries.</p>\n${items}\n</section>`;
}

/** The trees the page shows, for the glossary. */
function treesOnPage(data: ReportData): Breakdown[] {
  return [
    ...(data.slowest ?? []).slice(0, 10),
    ...(data.slowestIn?.journeys ?? []).slice(0, 10).map((j) => j.breakdown),
  ];
}

/** Every activity on the page and what it means. */
function glossarySection(data: ReportData): string {
  const drawn = (data.keptTraces?.timelines ?? []).flatMap((timeline) =>
    timeline.bars.filter((bar) => bar.kind === "activity").map((bar) => bar.name),
  );
  const names = [...new Set([...activitiesOnPage(data, treesOnPage(data)), ...drawn])].sort((a, b) =>
    a.localeCompare(b),
  );
  if (names.length === 0) return "";
  const entries = names.map((name) => `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(activityMeaning(name))}</dd>`);
  return `<section id="glossary">\n<h2>Activities on this page</h2>\n<dl class="glossary">${entries.join("")}</dl>\n</section>`;
}

/** Whether a breakdown record holds any time. */
function holdsTime(seconds: Readonly<Record<string, number>>): boolean {
  return Object.values(seconds).some((value) => finite(value) > 0);
}

/** The one line saying which sections were left out, and why; "" when none was. */
function leftOutNote(data: ReportData, custom: boolean): string {
  const waited = Object.values(data.wait).some(holdsTime);
  const parts: string[] = [];
  if (!holdsTime(data.execute))
    parts.push(
      custom ? "where execution time went (no execution was metered)" : "Execute (no execute() ledger recorded time)",
    );
  if (!holdsTime(data.gather))
    parts.push(
      custom ? "transfers between processes (none recorded)" : "Gather (no transfer between workers was recorded)",
    );
  if (!waited)
    parts.push(
      custom
        ? "waiting for dependencies transferred from peers (none recorded)"
        : `Waiting (no worker waited for dependencies${data.schedulerPrefixes !== undefined && data.schedulerPrefixes.length > 0 ? "; the scheduler's own waiting is in its table" : ""})`,
    );
  if (parts.length === 0) return "";
  return `<p class="note" id="left-out">Left out, as nothing applies: ${escapeHtml(parts.join("; "))}.</p>`;
}

/**
 * The page's own script and style, real files beside this one (src/report/page/) so that the
 * linter sees them; `npm run build` copies them next to the compiled module. Read once, inlined
 * into every page without their leading comment.
 */
let pageAssets: { script: string; style: string } | undefined;

function loadPageAssets(): { script: string; style: string } {
  return (pageAssets ??= { script: readPageAsset("report.client.js"), style: readPageAsset("report.css") });
}

function readPageAsset(name: string): string {
  const source = fs.readFileSync(new URL(`./page/${name}`, import.meta.url), "utf8");
  return source.replace(/^\/\*[\s\S]*?\*\/\n/, "");
}

/** The report page for `data`, as one HTML string. */
export function renderHtmlReport(data: ReportData, options: RenderOptions = {}): string {
  return guarded(
    "renderHtmlReport(data, options)",
    [
      ["data", "ReportData, as reportDataFrom() or reportDataFromTelemetry() gives", data],
      ["options", "{ inlineEcharts?: boolean }", options],
    ],
    () => htmlPage(data, options),
  );
}

// Out of renderHtmlReport's guard, unindented: the page's template is whitespace the page keeps.
function htmlPage(data: ReportData, options: RenderOptions): string {
  const states = statesOf(data.prefixes, data.states);
  const words = machineWords(data);
  const custom = words.custom;
  const { script, style } = loadPageAssets();
  const inlined = options.inlineEcharts === false ? null : loadEcharts();
  const echartsTag =
    inlined === null
      ? `<!-- ECharts not inlined (${options.inlineEcharts === false ? "turned off" : "not found beside the package"}): the charts are left out. -->`
      : `<!-- ECharts ${escapeHtml(inlined.version)} (Apache-2.0), inlined so the page works offline. -->\n<script>${inlined.source.replace(/<\/script/gi, "<\\/script")}</script>`;
  const prefixes = prefixCount(data);
  const meta = [
    data.workload === undefined ? undefined : `workload ${escapeHtml(data.workload)}`,
    `generated ${escapeHtml(data.generatedAt)}`,
    `${prefixes} prefix${prefixes === 1 ? "" : "es"}`,
  ].filter((part) => part !== undefined);
  // A run with no worker journeys (a job queue recorded on its scheduler side only): its table
  // is the scheduler's, without an empty workers' one above it.
  const onlyScheduler = data.prefixes.length === 0 && (data.schedulerPrefixes?.length ?? 0) > 0;
  const durationOf = measuredOf(data.prefixes, data.durationOf, "executing", custom);
  const visits =
    durationOf === undefined
      ? "no state to measure found in the data (give one with --state)"
      : `the visits to ${escapeHtml(durationOf)}`;
  const waited = Object.values(data.wait).some(holdsTime);
  const executeSection = holdsTime(data.execute)
    ? `<section id="execute">
<h2>Execute: where ${escapeHtml(durationOf ?? "execution")} time went</h2>
<div class="chart" id="chart-execute"></div>
${activityTable(withLumpLabels(data.execute, "execute"))}
</section>`
    : "";
  const gatherSection = holdsTime(data.gather)
    ? `<section id="gather">
<h2>Gather: where gathering time went</h2>
<div class="chart" id="chart-gather"></div>
${activityTable(withLumpLabels(data.gather, "gather"))}
</section>`
    : "";
  const waitSection = waited
    ? `<section id="wait">
<h2>Waiting: what dependents waited for, by dependent prefix</h2>
<div class="chart" id="chart-wait"></div>
</section>`
    : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="taskjourney">
<title>${escapeHtml(data.title)}</title>
<style>\n${style}</style>
</head>
<body>
<header>
<h1>${escapeHtml(data.title)}</h1>
<div class="meta">${meta.join(" · ")}</div>
${data.description === undefined ? "" : `<div class="meta">${escapeHtml(data.description)}</div>`}
</header>
<main>
${failuresSection(data, words)}
${outcomesSection(data, words)}
${computationsSection(data, custom)}
<section id="prefixes">
<h2>Per prefix</h2>
${
  onlyScheduler
    ? ""
    : `${custom ? `<h3>${escapeHtml(workerSide(words))}</h3>` : ""}<div class="table-scroll">${prefixTable(data.prefixes, durationOf, states)}</div>
<p class="note">visits and quantiles: ${visits}; time by state: total seconds all tasks of the prefix spent in each state.</p>`
}
${schedulerSection(data, custom)}
</section>
<section id="states">
<h2>Time by state per prefix</h2>
<div class="chart" id="chart-states"></div>
</section>
${executeSection === "" && gatherSection === "" ? "" : `<div class="grid">\n${executeSection}\n${gatherSection}\n</div>`}
${waitSection}
${leftOutNote(data, custom)}
<section id="slowest">
<h2>Slowest task${data.slowest !== undefined && data.slowest.length > 0 ? `: ${escapeHtml(data.slowest[0].key)}` : ""}</h2>
${slowestSection(data.slowest, custom)}
</section>
${slowestInSection(data, custom)}
${timelineSection(data, escapeHtml)}
${glossarySection(data)}
</main>
<script type="application/json" id="taskjourney-data">${scriptJson(chartData(data, states))}</script>
${echartsTag}
<script>\n${script}</script>
</body>
</html>
`;
}
