/**
 * A `ReportData` as text for a terminal: the tables the HTML page shows, each with the settings
 * the data carries (what the quantiles measure, the machine's state order), so a job queue's or
 * a scheduler-only run's tables read as the page's do.
 */
import type { ReportData } from "./html.js";
import { formatActivityTable, formatPrefixTable, statesOf } from "./table.js";

function countsLine(counts: Readonly<Record<string, number>> | undefined): string | undefined {
  const entries = Object.entries(counts ?? {}).filter(([, count]) => Number.isFinite(count) && count > 0);
  if (entries.length === 0) return undefined;
  return `failed: ${entries.map(([outcome, count]) => `${count} ${outcome}`).join(", ")}`;
}

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

/**
 * The report's tables as text: the workers' per-prefix table, the scheduler's (when the data has
 * one), the execute, gather and wait breakdowns that hold time, and the failure counts — the text
 * `formatPrefixTable(data.prefixes)` alone leaves half of for a scheduler's or a custom machine's data.
 */
export function formatReportTables(data: ReportData): string {
  if (typeof data !== "object" || data === null || !Array.isArray(data.prefixes))
    throw new TypeError(
      "formatReportTables(data): data must be a ReportData, as reportDataFromTelemetry() or reportDataFrom() gives",
    );
  const sections: string[] = [];
  const scheduler = data.schedulerPrefixes ?? [];
  // A run with no worker journeys (a job queue recorded on its scheduler side only) shows the
  // scheduler's table alone, as the page does.
  if (data.prefixes.length > 0 || scheduler.length === 0) {
    const durationOf = data.durationOf ?? "executing";
    sections.push(
      formatPrefixTable(data.prefixes, { durationOf, states: statesOf(data.prefixes, data.states) }) +
        `\ncount and quantiles: visits to ${durationOf} (a task retried counts once per attempt)`,
    );
  }
  if (scheduler.length > 0) {
    const durationOf = data.schedulerDurationOf ?? "processing";
    sections.push(
      `On the scheduler\n` +
        formatPrefixTable(scheduler, { durationOf, states: statesOf(scheduler, data.schedulerStates) }) +
        `\ncount and quantiles: visits to ${durationOf} on the scheduler`,
    );
  }
  if (hasTime(data.execute)) sections.push(formatActivityTable("execute", data.execute));
  if (hasTime(data.gather)) sections.push(formatActivityTable("gather", data.gather));
  const wait = waitByActivity(data.wait ?? {});
  if (hasTime(wait)) sections.push(formatActivityTable("wait (dependencies)", wait));
  const failed = countsLine(data.failureCounts);
  if (failed !== undefined) sections.push(failed);
  return sections.join("\n\n");
}
