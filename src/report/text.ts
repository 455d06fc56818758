/**
 * A `ReportData` as text for a terminal: the tables the HTML page shows, each with the settings
 * the data carries (what the quantiles measure, the machine's state order), so a job queue's or
 * a scheduler-only run's tables read as the page's do, in the machine's own words (words.ts).
 */
import { argumentError, guarded } from "./arguments.js";
import { formatSeconds } from "./format.js";
import { withLumpLabels } from "./lumps.js";
import { terminalSafe } from "./terminal.js";
import type { ReportData } from "./report-data.js";
import { formatActivityTable, formatPrefixTable, statesOf } from "./table.js";
import { failureWords, machineWords, measuredOf, outcomeWords, schedulerSide, workerSide } from "./words.js";

/** How many journeys the text's slowest lines name. */
const SLOWEST_NAMED = 5;

/** Seconds waited for dependencies, by activity, over every dependent prefix. */
function waitByActivity(wait: ReportData["wait"]): Record<string, number> {
  const total: Record<string, number> = Object.create(null);
  for (const activities of Object.values(wait))
    for (const [activity, seconds] of Object.entries(activities))
      if (Number.isFinite(seconds)) total[activity] = (total[activity] ?? 0) + seconds;
  return total;
}

const hasTime = (seconds: Readonly<Record<string, number>>) =>
  Object.values(seconds).some((value) => Number.isFinite(value) && value > 0);

/** "visits and quantiles: …" under a table: what its visits column counts. */
function visitsLine(durationOf: string | undefined, where: string): string {
  return durationOf === undefined
    ? "visits and quantiles: no state to measure found in the data (give one with --state)"
    : `visits and quantiles: the visits to ${durationOf}${where}`;
}

/**
 * The report's tables as text: the workers' per-prefix table, the scheduler's (when the data has
 * one), the execute, gather and wait breakdowns that hold time (one line names those left out),
 * how the journeys ended, the failure counts and the slowest journeys — the text
 * `formatPrefixTable(data.prefixes)` alone leaves half of for a scheduler's or a custom machine's data.
 */
export function formatReportTables(data: ReportData): string {
  return guarded(
    "formatReportTables(data)",
    [["data", "a ReportData, as reportDataFromTelemetry() or reportDataFrom() gives", data]],
    () => {
      if (typeof data !== "object" || data === null || !Array.isArray(data.prefixes))
        throw argumentError(
          "formatReportTables(data): data must be a ReportData, as reportDataFromTelemetry() or reportDataFrom() gives",
        );
      const words = machineWords(data);
      const custom = words.custom;
      const sections: string[] = [];
      const scheduler = data.schedulerPrefixes ?? [];
      // A run with no worker journeys (a job queue recorded on its scheduler side only) shows the
      // scheduler's table alone, as the page does.
      if (data.prefixes.length > 0 || scheduler.length === 0) {
        const durationOf = measuredOf(data.prefixes, data.durationOf, "executing", custom);
        sections.push(
          (custom ? `${workerSide(words)}\n` : "") +
            formatPrefixTable(data.prefixes, {
              durationOf: durationOf ?? "(no measured state)",
              states: statesOf(data.prefixes, data.states),
            }) +
            `\n${visitsLine(durationOf, "")} (a task retried visits it once per attempt)`,
        );
      }
      if (scheduler.length > 0) {
        const durationOf = measuredOf(scheduler, data.schedulerDurationOf, "processing", custom);
        sections.push(
          `${schedulerSide(custom)}\n` +
            formatPrefixTable(scheduler, {
              durationOf: durationOf ?? "(no measured state)",
              states: statesOf(scheduler, data.schedulerStates),
              timeTitle: "task-seconds by state",
            }) +
            `\n${visitsLine(durationOf, custom ? "" : " on the scheduler")}; task-seconds: summed over the tasks, which overlap`,
        );
      }
      const wait = waitByActivity(data.wait ?? {});
      const leftOut: string[] = [];
      if (hasTime(data.execute)) sections.push(formatActivityTable("execute", withLumpLabels(data.execute, "execute")));
      else
        leftOut.push(
          custom ? "execution breakdown (no execution was metered)" : "execute (no execute() ledger recorded time)",
        );
      if (hasTime(data.gather)) sections.push(formatActivityTable("gather", withLumpLabels(data.gather, "gather")));
      else
        leftOut.push(custom ? "transfers between processes (none recorded)" : "gather (no transfer between workers)");
      if (hasTime(wait)) sections.push(formatActivityTable("wait (dependencies)", wait));
      else
        leftOut.push(
          custom
            ? "waiting for dependencies transferred from peers (none recorded)"
            : "wait (no worker waited for dependencies)",
        );
      if (leftOut.length > 0) sections.push(`left out, as nothing applies: ${leftOut.join("; ")}`);
      const ended = outcomeWords(data.outcomes, words);
      if (ended !== undefined) sections.push(`ended: ${ended}`);
      const failed = failureWords(data.failureCounts, words);
      if (failed !== undefined) sections.push(`failed: ${failed}`);
      const slowest = slowestLines(data);
      if (slowest !== "") sections.push(slowest);
      return sections.join("\n\n");
    },
  );
}

/** The slowest journeys by total time and, when the data has them, by their longest visit to the measured state. */
function slowestLines(data: ReportData): string {
  const lines: string[] = [];
  const slowest = (data.slowest ?? []).slice(0, SLOWEST_NAMED);
  if (slowest.length > 0)
    lines.push(
      `slowest by total: ${slowest.map((breakdown) => `${terminalSafe(breakdown.key)} ${formatSeconds(breakdown.seconds)}`).join(", ")}`,
    );
  const slowestIn = data.slowestIn;
  if (slowestIn !== undefined && slowestIn.journeys.length > 0)
    lines.push(
      `longest in ${terminalSafe(slowestIn.state)}: ${slowestIn.journeys
        .slice(0, SLOWEST_NAMED)
        .map(({ key, seconds }) => `${terminalSafe(key)} ${formatSeconds(seconds)}`)
        .join(", ")}`,
    );
  return lines.join("\n");
}
