/**
 * What each activity on a report page means: the names taskjourney itself gives (Dask's fine
 * performance metrics' names, the lumps of what did not succeed, the waiting time no fetch
 * explains) and, for any other, that the application metered it under that name.
 */
import type { Breakdown, BreakdownNode } from "../model/breakdown.js";
import type { ReportData } from "./report-data.js";
import { LUMPS, LUMP_SUFFIX, treeActivityName, withLumpLabels } from "./lumps.js";

export const ACTIVITY_MEANINGS: Readonly<Record<string, string>> = Object.freeze({
  "thread-cpu": "CPU time of the thread that ran the task, measured over its execution",
  "thread-noncpu": "time the running thread spent off the CPU: runnable but not running, or blocked (I/O, a lock)",
  "thread-wall": "the running thread's wall time, where its CPU time could not be measured",
  executor:
    "handing the task to its thread and the result back (a pool's queue, structured clone included): the pool call's time less the thread's own",
  other: "the part of a state's time that no metered activity claimed",
  deserialize: "turning received bytes back into objects",
  serialize: "turning objects into bytes to send or spill",
  compress: "compressing bytes",
  decompress: "decompressing bytes",
  "disk-read": "reading spilled data back from disk",
  "disk-write": "writing data to disk (spilling)",
  seceded: "time the task ran after seceding from its thread (long-running)",
  connect: "opening a connection to the peer",
  network: "waiting on the network: bytes in flight between processes",
  dependencies:
    "waiting with no fetch of a dependency under way: the dependencies were still computing, or being scheduled",
  queued: "a dependency waiting in fetch before its transfer began",
  missing: "a dependency no peer had: waiting until one was found",
  failed: "the whole time of an execution or transfer that failed (its activities are not useful work)",
  cancelled: "the whole time of an execution or transfer that was cancelled",
  busy: "the whole time of a transfer the peer refused as busy",
  gc: "garbage-collection pauses of the process",
  "event-loop": "the process's event loop blocked",
});

/** What an activity means; an application's own name is said to be one. */
export function activityMeaning(name: string): string {
  if (Object.prototype.hasOwnProperty.call(ACTIVITY_MEANINGS, name)) return ACTIVITY_MEANINGS[name];
  if (name.endsWith(LUMP_SUFFIX)) {
    const lump = name.slice(0, -LUMP_SUFFIX.length);
    if (LUMPS.gather.has(lump)) return ACTIVITY_MEANINGS[lump];
  }
  if (name.startsWith("queued (")) return `a dependency waiting in fetch before its transfer began, ${name.slice(7)}`;
  return "an activity the application metered under this name";
}

function nodeActivities(
  nodes: readonly BreakdownNode[],
  depth: number,
  into: Set<string>,
  parent?: BreakdownNode,
): void {
  for (const node of nodes) {
    // Depth 0 is a state; below it, activities (and a waiting state's fetches' activities).
    if (depth > 0) into.add(treeActivityName(node, parent));
    nodeActivities(node.children, depth + 1, into, node);
  }
}

/**
 * Every activity name the page shows: the execute and gather breakdowns (their lumps labelled),
 * the wait breakdown and the slowest trees (as formatBreakdown labels a lump there).
 */
export function activitiesOnPage(data: ReportData, trees: readonly Breakdown[]): string[] {
  const names = new Set<string>();
  const add = (record: Readonly<Record<string, number>>) => {
    for (const [name, seconds] of Object.entries(record)) if (Number.isFinite(seconds) && seconds > 0) names.add(name);
  };
  add(withLumpLabels(data.execute, "execute"));
  add(withLumpLabels(data.gather, "gather"));
  for (const activities of Object.values(data.wait)) add(activities);
  for (const tree of trees) nodeActivities(tree.children, 0, names);
  return [...names].sort((a, b) => a.localeCompare(b));
}
