import type { Breakdown } from "../model/breakdown.js";
import { breakdownOfTask, journeyKind, stateVisitsOf, type SpanIndex } from "./from-trace.js";
import type { Role } from "./machine-from-data.js";
import type { ReportData } from "./report-data.js";

/**
 * The slowest journeys of the spans, by total time and by their longest visit to the measured
 * state (the report's "Slowest" and "Longest in" sections); moved out of from-telemetry.ts as is.
 */

/** The slowest journeys of the spans: worker compute journeys, else any. */
export function slowestJourneys(index: SpanIndex, count: number): Breakdown[] {
  if (count <= 0) return [];
  const bySeconds = [...index.tasks].sort((a, b) => Number(b.endNanos - b.startNanos - (a.endNanos - a.startNanos)));
  const compute: Breakdown[] = [];
  const others: Breakdown[] = [];
  for (const task of bySeconds) {
    const kind = journeyKind(index, task);
    if (kind === "compute") compute.push(breakdownOfTask(index, task, kind));
    else if (others.length < count) others.push(breakdownOfTask(index, task, kind));
    if (compute.length >= count) break;
  }
  return compute.length > 0 ? compute : others;
}

/**
 * The journeys with the longest single visit to the measured state (the workers', else the
 * scheduler's): the slowest runs, which the slowest by total (a failure's backoffs, a long
 * queue) may not hold.
 */
export function slowestInMeasured(
  index: SpanIndex | undefined,
  measured: Record<Role, string | undefined>,
  count: number,
): Pick<ReportData, "slowestIn"> {
  if (index === undefined || count <= 0) return {};
  for (const role of ["worker", "scheduler"] as const) {
    const state = measured[role];
    if (state === undefined) continue;
    const longest: Array<{ breakdown: Breakdown; seconds: number }> = [];
    for (const task of index.tasks) {
      const kind = journeyKind(index, task);
      if ((kind === "scheduler") !== (role === "scheduler") || kind === "fetch") continue;
      const visits = stateVisitsOf(index, task).filter((visit) => visit.name === state);
      if (visits.length === 0) continue;
      const seconds = Math.max(...visits.map((visit) => Number(visit.endNanos - visit.startNanos) / 1e9));
      longest.push({ breakdown: breakdownOfTask(index, task, kind), seconds });
    }
    if (longest.length === 0) continue;
    longest.sort((a, b) => b.seconds - a.seconds || a.breakdown.key.localeCompare(b.breakdown.key));
    return {
      slowestIn: {
        state,
        journeys: longest.slice(0, count).map(({ breakdown, seconds }) => ({ key: breakdown.key, seconds, breakdown })),
      },
    };
  }
  return {};
}
