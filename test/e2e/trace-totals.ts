/**
 * The journeys' explain() totals, rebuilt from a trace file (the Collector's file exporter
 * output, every span): each task span's Breakdown as `taskjourney explain --from` rebuilds it,
 * summed per (role, prefix, state) and, for the workers' waiting, per (prefix, activity) — the
 * numbers the dashboard's "time by state" and "wait breakdown" panels must add up to.
 */
import fs from "node:fs";
import { breakdownOfTask, journeyKind, SpanIndex } from "../../src/report/from-trace.js";
import { decodeOtlpJson } from "../../src/report/otlp-json.js";

export interface TraceTotals {
  /** Task journeys in the file, by role. */
  journeys: Record<string, number>;
  /** Seconds by role, then `prefix state`. */
  stateSeconds: Record<string, Record<string, number>>;
  /** Workers' apportioned waiting seconds by `prefix activity`. */
  workerWait: Record<string, number>;
}

function add(into: Record<string, number>, key: string, seconds: number): void {
  into[key] = (into[key] ?? 0) + seconds;
}

/** Sums the breakdowns of every task span of `file` (OTLP JSON lines), optionally of one service. */
export function traceTotals(file: string, serviceName?: string): TraceTotals {
  const spans = decodeOtlpJson(fs.readFileSync(file, "utf8"), file).filter(
    (span) => serviceName === undefined || span.resource["service.name"] === serviceName,
  );
  const index = new SpanIndex(spans);
  const totals: TraceTotals = { journeys: {}, stateSeconds: {}, workerWait: {} };
  for (const task of index.tasks) {
    const kind = journeyKind(index, task);
    const role = kind === "scheduler" ? "scheduler" : "worker";
    const breakdown = breakdownOfTask(index, task, kind);
    add(totals.journeys, role, 1);
    const byState = (totals.stateSeconds[role] ??= {});
    for (const visit of breakdown.children) {
      add(byState, `${breakdown.prefix} ${visit.name}`, visit.seconds);
      // task.wait.time counts the apportioned waiting of compute journeys (the waiting node's
      // children); the scheduler's waiting is left out, as the dashboard's wait breakdown does.
      if (role === "worker" && visit.name === "waiting") {
        for (const activity of visit.children)
          add(totals.workerWait, `${breakdown.prefix} ${activity.name}`, activity.seconds);
      }
    }
  }
  return totals;
}
