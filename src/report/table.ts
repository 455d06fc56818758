import { byLifecycle } from "../model/states.js";
import { argumentError, guarded } from "./arguments.js";
import { formatSeconds } from "./format.js";

/** One task prefix's numbers, as the per-prefix table shows them. */
export interface PrefixRow {
  prefix: string;
  /** Visits counted for the quantiles (tasks that reached the measured state). */
  count: number;
  /** Quantiles of the measured state's duration, in seconds; NaN when unknown. */
  p50: number;
  p90: number;
  p99: number;
  /** Total seconds the prefix's tasks spent in each state. */
  stateSeconds: Readonly<Record<string, number>>;
}

export interface PrefixTableOptions {
  /** The state columns, in this order. Default: every state with time in some row, in lifecycle order. */
  states?: readonly string[];
  /** What the quantiles measure, shown above them. Default "executing". */
  durationOf?: string;
  /** Append a total row (counts and state times summed). Default true. */
  total?: boolean;
  /** The title over the state columns. Default "time by state"; the scheduler's tables say "task-seconds by state". */
  timeTitle?: string;
}

/**
 * The state columns of a table: the states with time in some row, in the order given (a
 * machine's own, as `ReportData.states` holds it), the others after in lifecycle order. The page
 * and the text tables both order their columns by it.
 */
export function statesOf(rows: readonly PrefixRow[], order: readonly string[] = []): string[] {
  const rank = (state: string) => {
    const position = order.indexOf(state);
    return position === -1 ? Number.MAX_SAFE_INTEGER : position;
  };
  return [
    ...new Set(
      rows.flatMap((row) =>
        Object.keys(row.stateSeconds).filter(
          (state) => Number.isFinite(row.stateSeconds[state]) && row.stateSeconds[state] > 0,
        ),
      ),
    ),
  ].sort((a, b) => rank(a) - rank(b) || byLifecycle(a, b));
}

function columnWidths(lines: readonly string[][]): number[] {
  const widths: number[] = [];
  for (const line of lines)
    line.forEach((cell, column) => (widths[column] = Math.max(widths[column] ?? 0, cell.length)));
  return widths;
}

/** Lays out cells: the first column left-aligned, the others right-aligned, two spaces apart; rows in `rules` become lines. */
function layout(
  lines: readonly string[][],
  widths: readonly number[] = columnWidths(lines),
  rules: ReadonlySet<number> = new Set(),
): string {
  return lines
    .map((line, index) => {
      if (rules.has(index)) return widths.map((width) => "─".repeat(width)).join("  ");
      return line
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join("  ")
        .trimEnd();
    })
    .join("\n");
}

/** Where column `column` starts in a layout with these widths. */
function columnStart(widths: readonly number[], column: number): number {
  let offset = 0;
  for (let index = 0; index < column; index++) offset += widths[index] + 2;
  return offset;
}

/**
 * The per-prefix table: the visits to a state (not journeys: a journey that keeps a task's
 * attempts visits its executing state once per attempt), p50 / p90 / p99 of their duration, and the time spent in each
 * state, one row per prefix in the order given, aligned for a terminal:
 *
 *                    executing duration          time by state
 *     prefix  visits     p50     p90     p99  waiting   ready  executing
 *     ──────  ──────  ──────  ──────  ──────  ───────  ──────  ─────────
 *     square     858  4.1 ms  6.0 ms  9.9 ms    1.2 s   0.8 s      3.6 s
 */
export function formatPrefixTable(rows: readonly PrefixRow[], options: PrefixTableOptions = {}): string {
  return guarded(
    "formatPrefixTable(rows, options)",
    [
      ["rows", "an array of prefix rows, such as a ReportData's `prefixes`", rows],
      ["options", "{ states?: string[], durationOf?: string, total?: boolean, timeTitle?: string }", options],
    ],
    () => {
      if (!Array.isArray(rows))
        throw argumentError(
          `formatPrefixTable(rows): rows must be an array of prefix rows, such as a ReportData's \`prefixes\`, not ${kindOf(rows)}`,
        );
      const states = options.states ?? statesOf(rows);
      const header = ["prefix", "visits", "p50", "p90", "p99", ...states];
      const lines: string[][] = [header, header];
      for (const row of rows) {
        lines.push([
          row.prefix,
          String(row.count),
          formatSeconds(row.p50),
          formatSeconds(row.p90),
          formatSeconds(row.p99),
          ...states.map((state) => formatSeconds(row.stateSeconds[state] ?? 0)),
        ]);
      }
      const rules = new Set([1]);
      if ((options.total ?? true) && rows.length > 0) {
        rules.add(lines.length);
        lines.push(header);
        lines.push([
          "total",
          String(rows.reduce((sum, row) => sum + row.count, 0)),
          "",
          "",
          "",
          ...states.map((state) => formatSeconds(rows.reduce((sum, row) => sum + (row.stateSeconds[state] ?? 0), 0))),
        ]);
      }
      const widths = columnWidths(lines);
      let title = " ".repeat(columnStart(widths, 2)) + `${options.durationOf ?? "executing"} duration`;
      if (states.length > 0)
        title =
          title.padEnd(Math.max(title.length + 2, columnStart(widths, 5))) + (options.timeTitle ?? "time by state");
      return `${title}\n${layout(lines, widths, rules)}`;
    },
  );
}

export interface ActivityTableOptions {
  /** Indent of the rows under the title. Default 2. */
  indent?: number;
  /** Append a total row. Default true. */
  total?: boolean;
}

/**
 * One activity breakdown (execute, gather or wait) as a small table: seconds and share of the
 * total per activity, largest first, `other` last.
 *
 *     execute          seconds   share
 *       thread-cpu       4.1 s   62.0%
 *       other           12.0 ms   0.2%
 */
export function formatActivityTable(
  title: string,
  seconds: Readonly<Record<string, number>>,
  options: ActivityTableOptions = {},
): string {
  return guarded(
    "formatActivityTable(title, seconds, options)",
    [
      ["seconds", "an object of seconds by activity, such as a ReportData's `execute`", seconds],
      ["title", "a string", title],
      ["options", "{ indent?: number, total?: boolean }", options],
    ],
    () => {
      if (typeof title !== "string")
        throw argumentError(`formatActivityTable(title, seconds): title must be a string, not ${kindOf(title)}`);
      if (typeof seconds !== "object" || seconds === null || Array.isArray(seconds))
        throw argumentError(
          `formatActivityTable(title, seconds): seconds must be an object of seconds by activity, such as a ReportData's \`execute\`, not ${kindOf(seconds)}`,
        );
      const indent = " ".repeat(options.indent ?? 2);
      const entries = Object.entries(seconds)
        .filter(([, value]) => value > 0 && Number.isFinite(value))
        .sort(([a, x], [b, y]) => (a === "other" ? 1 : 0) - (b === "other" ? 1 : 0) || y - x || a.localeCompare(b));
      const total = entries.reduce((sum, [, value]) => sum + value, 0);
      const share = (value: number) => (total > 0 ? `${((value / total) * 100).toFixed(1)}%` : "-");
      const lines = [
        [title, "seconds", "share"],
        ...entries.map(([name, value]) => [`${indent}${name}`, formatSeconds(value), share(value)]),
      ];
      if (entries.length === 0) lines.push([`${indent}(nothing recorded)`, "", ""]);
      else if (options.total ?? true) lines.push([`${indent}total`, formatSeconds(total), share(total)]);
      return layout(lines);
    },
  );
}

/** What a wrong argument was, for the error that names it. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}
