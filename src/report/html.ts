import * as fs from "node:fs";
import * as path from "node:path";
import { createRequire } from "node:module";
import type { Breakdown, BreakdownNode } from "../model/breakdown.js";
import { keySplit } from "../model/keys.js";
import { formatBreakdown, formatSeconds } from "./format.js";
import { statesOf, type PrefixRow } from "./table.js";

/**
 * The HTML report: one self-contained page (ECharts inlined) with the failed tasks and why they
 * failed (when any did), the per-prefix table, time by
 * state per prefix, the execute / gather activity breakdowns, the waiting breakdown by dependent
 * prefix and the slowest tasks' breakdowns. Every user-controlled string (keys, prefixes,
 * activity and state names, titles) is escaped for HTML, and the chart data travels as JSON in a
 * `<script type="application/json">` block with `<`, `>`, `&` and line separators escaped, so no
 * name can end the block or start markup.
 */

/** Everything the report shows; plain JSON (NaN quantiles may be written as null). */
export interface ReportData {
  /** The page title. */
  title: string;
  /** When the data was taken, ISO 8601. */
  generatedAt: string;
  /** The workload's name, if a benchmark or example produced the data. */
  workload?: string;
  /** A line under the title. */
  description?: string;
  /** The per-prefix rows (src/report/table.ts): count, p50/p90/p99 of `durationOf`, seconds by state. */
  prefixes: PrefixRow[];
  /** What the quantiles measure. Default "executing". */
  durationOf?: string;
  /**
   * The order of the state columns (a machine's own order, as its journeys lived it); states
   * not listed follow, in Dask's lifecycle order, then by name. Default: that order alone.
   */
  states?: string[];
  /** The scheduler's per-prefix rows (quantiles of `schedulerDurationOf`), shown when present. */
  schedulerPrefixes?: PrefixRow[];
  /** What the scheduler rows' quantiles measure. Default "processing". */
  schedulerDurationOf?: string;
  /** The order of the scheduler table's state columns, as `states` is of the workers'. */
  schedulerStates?: string[];
  /** task.execute.time by activity, seconds. */
  execute: Record<string, number>;
  /** task.gather.time by activity, seconds. */
  gather: Record<string, number>;
  /** task.wait.time by dependent prefix, then by activity, seconds. */
  wait: Record<string, Record<string, number>>;
  /** The slowest journeys' breakdowns (explain()), slowest first. */
  slowest?: Breakdown[];
  /** Tasks that failed, with why when known, earliest first (from the spans, or a summary's list). */
  failures?: ReportFailure[];
  /**
   * How many journeys failed in all, by terminal state: `error` (workers' executions), `erred`
   * (the scheduler), or a machine's own failure state; from the metrics (task.transitions) or a summary, so it counts what the
   * list, made of sampled traces, may not hold.
   */
  failureCounts?: Record<string, number>;
}

/** One failed task, as the report's "Failed tasks" table shows it. */
export interface ReportFailure {
  key: string;
  prefix: string;
  /** The worker or scheduler it failed on ("" when not known). */
  instance: string;
  /** "compute" (a worker's execution), "scheduler", or "fetch"; "" when not known. */
  kind: string;
  /** The terminal state: "error" on a worker, "erred" on the scheduler (or a machine's own, e.g. "failed"). */
  outcome: string;
  /** The state of the attempt that failed, e.g. "executing". */
  state?: string;
  /** Why, as explain() words it: "TypeError: no such file". */
  error?: string;
  /** The journey's wall seconds up to its failure. */
  seconds?: number;
}

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

function finite(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : Number.NaN;
}

interface SunburstNode {
  name: string;
  value: number;
  children?: SunburstNode[];
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
  return {
    states: {
      prefixes,
      series: states.map((state) => ({
        name: state,
        data: data.prefixes.map((row) => finite(row.stateSeconds[state]) || 0),
      })),
    },
    execute: activityEntries(data.execute),
    gather: activityEntries(data.gather),
    wait: {
      prefixes: waitPrefixes,
      series: waitActivities.map((activity) => ({
        name: activity,
        data: waitPrefixes.map((prefix) => finite(data.wait[prefix][activity]) || 0),
      })),
    },
    slowest:
      slowest === undefined
        ? null
        : { name: slowest.key, value: slowest.seconds, children: sunburstNodes(slowest.children) },
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

function prefixTable(rows: readonly PrefixRow[], durationOfState: string, states: readonly string[]): string {
  const durationOf = escapeHtml(durationOfState);
  const head =
    `<tr class="group"><th></th><th></th><th colspan="3">${durationOf} duration</th>` +
    (states.length > 0 ? `<th colspan="${states.length}">time by state</th>` : "") +
    `</tr><tr><th class="name">prefix</th><th>count</th><th>p50</th><th>p90</th><th>p99</th>${states.map((state) => `<th>${escapeHtml(state)}</th>`).join("")}</tr>`;
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

/**
 * How many a failure count is, in words: "3 ended in error on workers", "1 ended in dead on the
 * scheduler". Its key is "<role>:<state>", or a state alone (Dask's error and erred say their role).
 */
function failureCount(key: string, count: number): string {
  const colon = key.indexOf(":");
  const role = colon === -1 ? undefined : key.slice(0, colon);
  const state = colon === -1 ? key : key.slice(colon + 1);
  const where =
    state === "erred" && role !== "worker"
      ? "erred on the scheduler"
      : `ended in ${state}${role === "scheduler" ? " on the scheduler" : role === "worker" || state === "error" ? " on workers" : ""}`;
  return `${count} ${where}`;
}

/**
 * Under the waiting chart when it is empty: why (the workers' waits for fetched dependencies are
 * what it shows; a scheduler's own waiting, all of a job queue's, is in the scheduler's table).
 */
function waitNote(data: ReportData): string {
  const recorded = Object.values(data.wait).some((activities) =>
    Object.values(activities).some((seconds) => finite(seconds) > 0),
  );
  if (recorded) return "";
  const scheduler = data.schedulerPrefixes !== undefined && data.schedulerPrefixes.length > 0;
  return `<p class="empty">(nothing recorded: no worker waited for dependencies${scheduler ? "; the scheduler's own waiting is in its table above" : ""})</p>`;
}

/** The failed tasks and why, first on the page; nothing when no task failed. */
function failuresSection(data: ReportData): string {
  const failures = data.failures ?? [];
  // The workers' errors first, then the scheduler's: the order the failures happen in.
  const order = (key: string) =>
    key.startsWith("scheduler:") || key === "erred" ? 1 : key.startsWith("worker:") || key === "error" ? 0 : 2;
  const counts = Object.entries(data.failureCounts ?? {})
    .filter(([, count]) => finite(count) > 0)
    .sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b));
  if (failures.length === 0 && counts.length === 0) return "";
  const listed = failures.length;
  const counted =
    counts.length === 0 ? "" : `${counts.map(([state, count]) => failureCount(state, count)).join(", ")}. `;
  const note =
    listed === 0
      ? `${counted}No failed task is known by key (none among the traces), so none is listed.`
      : `${counted}Listed: ${listed === 1 ? "the failed task" : `the ${listed} failed tasks`} known by key, earliest first (a key that failed on both a worker and the scheduler is listed once).`;
  const rows = failures.map((failure) => {
    const where =
      failure.instance === "" ? "" : `${failure.kind === "scheduler" ? "scheduler" : "worker"} ${failure.instance}`;
    const failedIn = failure.state === undefined ? failure.outcome : `${failure.state}: ${failure.outcome}`;
    const why =
      failure.error === undefined
        ? `<td class="why unknown">(no reason recorded)</td>`
        : `<td class="why">${escapeHtml(failure.error)}</td>`;
    return (
      `<tr><td class="name">${escapeHtml(failure.key)}</td><td class="name">${escapeHtml(failure.prefix)}</td><td class="name">${escapeHtml(failedIn)}</td>` +
      `<td class="name">${escapeHtml(where)}</td><td>${escapeHtml(formatSeconds(finite(failure.seconds)))}</td>${why}</tr>`
    );
  });
  const table =
    listed === 0
      ? ""
      : `<div class="table-scroll"><table class="failures"><thead><tr><th class="name">key</th><th class="name">prefix</th><th class="name">failed in</th><th class="name">on</th><th>after</th><th class="name">why</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
  return `<section id="failures">\n<h2>Failed tasks</h2>\n<p class="note">${escapeHtml(note)}</p>\n${table}\n</section>`;
}

/** Distinct prefixes of the workers' and the scheduler's tables. */
function prefixCount(data: ReportData): number {
  return new Set([...data.prefixes, ...(data.schedulerPrefixes ?? [])].map((row) => row.prefix)).size;
}

function schedulerSection(data: ReportData): string {
  const rows = data.schedulerPrefixes;
  if (rows === undefined || rows.length === 0) return "";
  const durationOf = data.schedulerDurationOf ?? "processing";
  return (
    `<h3>On the scheduler</h3><div class="table-scroll">${prefixTable(rows, durationOf, statesOf(rows, data.schedulerStates))}</div>` +
    `<p class="note">count and quantiles: visits to ${escapeHtml(durationOf)} on the scheduler.</p>`
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

function slowestSection(slowest: readonly Breakdown[] | undefined): string {
  if (slowest === undefined || slowest.length === 0) return `<p class="empty">(no journey breakdowns in the data)</p>`;
  const [first, ...others] = slowest;
  const more = others
    .slice(0, 9)
    .map(
      (breakdown) =>
        `<details><summary>${escapeHtml(breakdown.key)} — ${escapeHtml(formatSeconds(breakdown.seconds))}${breakdown.outcome === "error" || breakdown.outcome === "erred" ? ` (${escapeHtml(breakdown.outcome)})` : ""}</summary><pre>${escapeHtml(formatBreakdown(breakdown))}</pre></details>`,
    )
    .join("");
  return (
    `<div class="slowest"><pre class="tree">${escapeHtml(formatBreakdown(first))}</pre><div class="chart" id="chart-slowest" style="height:460px"></div></div>` +
    (more === "" ? "" : `<h3>Next slowest</h3>${more}`)
  );
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
  const states = statesOf(data.prefixes, data.states);
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
${failuresSection(data)}
<section id="prefixes">
<h2>Per prefix</h2>
${
  onlyScheduler
    ? ""
    : `<div class="table-scroll">${prefixTable(data.prefixes, data.durationOf ?? "executing", states)}</div>
<p class="note">count and quantiles: visits to ${escapeHtml(data.durationOf ?? "executing")}; time by state: total seconds all tasks of the prefix spent in each state.</p>`
}
${schedulerSection(data)}
</section>
<section id="states">
<h2>Time by state per prefix</h2>
<div class="chart" id="chart-states"></div>
</section>
<div class="grid">
<section id="execute">
<h2>Execute: where executing time went</h2>
<div class="chart" id="chart-execute"></div>
${activityTable(data.execute)}
</section>
<section id="gather">
<h2>Gather: where transfer time went</h2>
<div class="chart" id="chart-gather"></div>
${activityTable(data.gather)}
</section>
</div>
<section id="wait">
<h2>Waiting: what dependents waited for, by dependent prefix</h2>
<div class="chart" id="chart-wait"></div>
${waitNote(data)}
</section>
<section id="slowest">
<h2>Slowest task${data.slowest !== undefined && data.slowest.length > 0 ? `: ${escapeHtml(data.slowest[0].key)}` : ""}</h2>
${slowestSection(data.slowest)}
</section>
</main>
<script type="application/json" id="taskjourney-data">${scriptJson(chartData(data, states))}</script>
${echartsTag}
<script>\n${script}</script>
</body>
</html>
`;
}

// ---- reading report data ------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function stateNames(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((name) => typeof name !== "string"))
    throw new TypeError(`${field} must be an array of state names`);
  return value as string[];
}

function secondsRecord(value: unknown, field: string, what = "seconds"): Record<string, number> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new TypeError(`${field} must be an object of ${what} by name`);
  // No prototype: an activity named `__proto__` or `constructor` is a name like any other.
  const out = Object.create(null) as Record<string, number>;
  for (const [name, seconds] of Object.entries(value)) {
    if (seconds === null) continue;
    if (typeof seconds !== "number") throw new TypeError(`${field}.${name} must be a number of ${what}`);
    out[name] = seconds;
  }
  return out;
}

function quantile(value: unknown): number {
  return typeof value === "number" ? value : Number.NaN;
}

function prefixRows(value: unknown, field: string): PrefixRow[] {
  if (!Array.isArray(value))
    throw new TypeError(`${field} must be an array of {prefix, count, p50, p90, p99, stateSeconds}`);
  return value.map((row: unknown, index) => {
    if (!isRecord(row) || typeof row.prefix !== "string")
      throw new TypeError(`${field}[${index}] must have a string prefix`);
    return {
      prefix: row.prefix,
      count: typeof row.count === "number" ? row.count : 0,
      p50: quantile(row.p50),
      p90: quantile(row.p90),
      p99: quantile(row.p99),
      stateSeconds: secondsRecord(row.stateSeconds, `${field}[${index}].stateSeconds`),
    };
  });
}

/**
 * Levels of a breakdown tree read from a summary: a visit, its activities and theirs, nested as
 * deep as metered work nests (far fewer in practice). Deeper is a crafted file, refused by name
 * rather than overflowing the stack here and in the page's renderer.
 */
const MAX_BREAKDOWN_DEPTH = 256;

function breakdownNode(value: unknown, field: string, depth = 1): BreakdownNode {
  if (!isRecord(value) || typeof value.name !== "string")
    throw new TypeError(`${field} must be {name, seconds, children}`);
  if (depth > MAX_BREAKDOWN_DEPTH)
    throw new TypeError(
      `${field.slice(0, field.indexOf(".children"))}: its children nest more than ${MAX_BREAKDOWN_DEPTH} levels deep`,
    );
  const node: BreakdownNode = {
    name: value.name,
    seconds: typeof value.seconds === "number" ? value.seconds : Number.NaN,
    children: Array.isArray(value.children)
      ? value.children.map((child, index) => breakdownNode(child, `${field}.children[${index}]`, depth + 1))
      : [],
  };
  // A failed attempt keeps its outcome and reason, so the tree says why as explain() did.
  if (typeof value.outcome === "string") node.outcome = value.outcome;
  if (typeof value.error === "string") node.error = value.error;
  if (isRecord(value.quantities)) node.quantities = secondsRecord(value.quantities, `${field}.quantities`, "units");
  return node;
}

function failureList(value: unknown, field: string): ReportFailure[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value))
    throw new TypeError(
      `${field} must be an array of {key, prefix, instance, kind, outcome, state?, error?, seconds?}`,
    );
  return value.map((item: unknown, index) => {
    if (!isRecord(item) || typeof item.key !== "string")
      throw new TypeError(`${field}[${index}] must be a failure with a string key`);
    const failure: ReportFailure = {
      key: item.key,
      prefix: typeof item.prefix === "string" ? item.prefix : "",
      instance: typeof item.instance === "string" ? item.instance : "",
      kind: typeof item.kind === "string" ? item.kind : "",
      outcome: typeof item.outcome === "string" ? item.outcome : "error",
    };
    if (typeof item.state === "string") failure.state = item.state;
    if (typeof item.error === "string") failure.error = item.error;
    if (typeof item.seconds === "number") failure.seconds = item.seconds;
    return failure;
  });
}

/**
 * The cluster example's failures: `failed` (the keys that raised), `failures` ([{key, error}],
 * when the summary has them; the error without its stack trace) and `erred` (how many erred in
 * all, dependents included).
 */
function summaryFailures(json: Record<string, unknown>): Pick<ReportData, "failures" | "failureCounts"> {
  const reasons = Array.isArray(json.failures) ? json.failures.filter(isRecord) : [];
  const failed = Array.isArray(json.failed)
    ? json.failed.filter((key): key is string => typeof key === "string")
    : reasons.map((item) => item.key).filter((key): key is string => typeof key === "string");
  const counts = Object.create(null) as Record<string, number>;
  if (failed.length > 0) counts.error = failed.length;
  if (typeof json.erred === "number" && json.erred > 0) counts.erred = json.erred;
  if (failed.length === 0 && counts.erred === undefined) return {};
  const failures = failed.map((key): ReportFailure => {
    const reported = reasons.find((item) => item.key === key)?.error;
    // Why, not where: a worker's error text may carry its stack trace, which explain() leaves out too.
    const error = typeof reported === "string" ? reported.split(/\n\s+at /)[0] : undefined;
    return {
      key,
      prefix: keySplit(key),
      instance: "",
      kind: "compute",
      outcome: "error",
      ...(error === undefined ? {} : { error }),
    };
  });
  return { failures, failureCounts: counts };
}

function breakdowns(value: unknown, field: string): Breakdown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new TypeError(`${field} must be an array of breakdowns`);
  return value
    .filter((item) => item !== null && item !== undefined)
    .map((item: unknown, index) => {
      if (!isRecord(item) || typeof item.key !== "string")
        throw new TypeError(`${field}[${index}] must be a breakdown with a string key`);
      return {
        key: item.key,
        prefix: typeof item.prefix === "string" ? item.prefix : "",
        instance: typeof item.instance === "string" ? item.instance : "",
        seconds: typeof item.seconds === "number" ? item.seconds : Number.NaN,
        kind: typeof item.kind === "string" ? item.kind : "compute",
        outcome: typeof item.outcome === "string" ? item.outcome : undefined,
        children: Array.isArray(item.children)
          ? item.children.map((child, i) => breakdownNode(child, `${field}[${index}].children[${i}]`))
          : [],
      };
    });
}

function waitRecord(value: unknown, field: string): Record<string, Record<string, number>> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new TypeError(`${field} must be an object: dependent prefix → activity → seconds`);
  const out = Object.create(null) as Record<string, Record<string, number>>;
  for (const [prefix, activities] of Object.entries(value))
    out[prefix] = secondsRecord(activities, `${field}.${prefix}`);
  return out;
}

/**
 * ReportData from parsed JSON, checked: a ReportData object as written by JSON.stringify (NaN
 * quantiles as null), or the cluster example's run summary (`{workload, description, report:
 * {rows, execute, gather, waitByPrefix, slowest: [{breakdown}]}}`). Throws a TypeError naming
 * the field that is wrong.
 */
export function reportDataFrom(json: unknown): ReportData {
  if (!isRecord(json))
    throw new TypeError(
      "expected a JSON object: ReportData {title, generatedAt, prefixes, execute, gather, wait, slowest?}",
    );
  const generatedAt = typeof json.generatedAt === "string" ? json.generatedAt : new Date().toISOString();
  const workload = typeof json.workload === "string" ? json.workload : undefined;
  const description = typeof json.description === "string" ? json.description : undefined;
  if (Array.isArray(json.prefixes)) {
    return {
      title: typeof json.title === "string" ? json.title : "taskjourney report",
      generatedAt,
      workload,
      description,
      prefixes: prefixRows(json.prefixes, "prefixes"),
      durationOf: typeof json.durationOf === "string" ? json.durationOf : undefined,
      states: stateNames(json.states, "states"),
      schedulerPrefixes:
        json.schedulerPrefixes === undefined || json.schedulerPrefixes === null
          ? undefined
          : prefixRows(json.schedulerPrefixes, "schedulerPrefixes"),
      schedulerDurationOf: typeof json.schedulerDurationOf === "string" ? json.schedulerDurationOf : undefined,
      schedulerStates: stateNames(json.schedulerStates, "schedulerStates"),
      execute: secondsRecord(json.execute, "execute"),
      gather: secondsRecord(json.gather, "gather"),
      wait: waitRecord(json.wait, "wait"),
      slowest: breakdowns(json.slowest, "slowest"),
      failures: failureList(json.failures, "failures"),
      failureCounts:
        json.failureCounts === undefined || json.failureCounts === null
          ? undefined
          : secondsRecord(json.failureCounts, "failureCounts", "tasks"),
    };
  }
  const report = json.report;
  if (isRecord(report) && Array.isArray(report.rows)) {
    const slowest = Array.isArray(report.slowest)
      ? report.slowest.map((item: unknown) => (isRecord(item) ? item.breakdown : undefined))
      : undefined;
    return {
      title: typeof json.title === "string" ? json.title : `taskjourney: ${workload ?? "cluster run"}`,
      generatedAt,
      workload,
      description,
      prefixes: prefixRows(report.rows, "report.rows"),
      schedulerPrefixes: Array.isArray(report.schedulerRows)
        ? prefixRows(report.schedulerRows, "report.schedulerRows")
        : undefined,
      execute: secondsRecord(report.execute, "report.execute"),
      gather: secondsRecord(report.gather, "report.gather"),
      wait: waitRecord(report.waitByPrefix, "report.waitByPrefix"),
      slowest: breakdowns(slowest, "report.slowest[].breakdown"),
      ...summaryFailures(json),
    };
  }
  throw new TypeError(
    "expected ReportData: {title, generatedAt, workload?, prefixes: [{prefix, count, p50, p90, p99, stateSeconds}], execute: {activity: s}, gather: {activity: s}, wait: {prefix: {activity: s}}, slowest?: [Breakdown]}, or the cluster example's summary {report: {rows, ...}}",
  );
}
