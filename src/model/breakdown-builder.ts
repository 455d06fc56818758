import type { BreakdownNode } from "./breakdown.js";
import { DEPENDENCIES_ACTIVITY, OTHER_ACTIVITY, THREAD_CPU_ACTIVITY, THREAD_NONCPU_ACTIVITY } from "./activities.js";

/**
 * The rules that shape a Breakdown, in one place: explain() (src/recorder/explain.ts) feeds them
 * the recorder's records, the trace rebuild (src/report/from-trace.ts) the spans the bridge made
 * of the same records. Each side only decodes its source; what becomes a node, how nodes sum,
 * where `other` and `dependencies` come from and in which order thread digests stand is decided
 * here, so the two cannot drift apart.
 */

/** Remainders below this are rounding, not time anyone spent. */
export const EPSILON = 1e-9;

/**
 * Adds `seconds` under `name` among `nodes`: a new node, or summed into the sibling of that name
 * (its children merged alike), as metering one activity twice in a visit adds up.
 */
export function addNode(nodes: BreakdownNode[], name: string, seconds: number, children: BreakdownNode[] = []): void {
  const existing = nodes.find((node) => node.name === name);
  if (existing === undefined) {
    nodes.push({ name, seconds, children });
    return;
  }
  existing.seconds += seconds;
  for (const child of children) addNode(existing.children, child.name, child.seconds, child.children);
}

/** Largest first, ties by name: the order of apportioned parts, which have no order in time. */
export function sortBySeconds(nodes: BreakdownNode[]): BreakdownNode[] {
  return nodes.sort((a, b) => b.seconds - a.seconds || a.name.localeCompare(b.name));
}

/**
 * A compute journey's ended waiting visit: its apportioned parts (already summed into `parts`),
 * largest first; with none (no dependency was fetched during it), its whole time as
 * `dependencies`, unless that is only rounding.
 */
export function waitingNodes(parts: BreakdownNode[], seconds: number): BreakdownNode[] {
  if (parts.length === 0 && seconds > EPSILON) parts.push({ name: DEPENDENCIES_ACTIVITY, seconds, children: [] });
  return sortBySeconds(parts);
}

/**
 * The activities of one level (a state visit, or the inside of an activity), in the order they
 * were recorded, summed by name. Thread digests nested in an activity are measurements over its
 * interval (a span's thread.cpu_time / thread.noncpu_time), not slices of it: they are held back
 * and stand after the level's other activities, cpu first. `other` is what the level's
 * activities leave of its time, when it has any activity at all.
 */
export class ActivityLevel {
  readonly nodes: BreakdownNode[] = [];
  /** The nodes by name: a level of thousands of records finds its sibling without a scan each. */
  private readonly byName = new Map<string, BreakdownNode>();
  private claimed = 0;
  private cpu = -1;
  private noncpu = -1;

  /** An activity (or a digest at top level, which stands where it was taken) of `seconds`, with its own level's nodes. */
  add(name: string, seconds: number, children: BreakdownNode[] = []): void {
    const existing = this.byName.get(name);
    if (existing === undefined) {
      const node = { name, seconds, children };
      this.nodes.push(node);
      this.byName.set(name, node);
    } else {
      // As addNode() sums a sibling of the same name.
      existing.seconds += seconds;
      for (const child of children) addNode(existing.children, child.name, child.seconds, child.children);
    }
    this.claimed += seconds;
  }

  /** A thread digest (thread-cpu or thread-noncpu) measured over this level's interval, placed by finish(). */
  digest(name: typeof THREAD_CPU_ACTIVITY | typeof THREAD_NONCPU_ACTIVITY, seconds: number): void {
    if (name === THREAD_CPU_ACTIVITY) this.cpu = Math.max(this.cpu, 0) + seconds;
    else this.noncpu = Math.max(this.noncpu, 0) + seconds;
    this.claimed += seconds;
  }

  /** The level's nodes: held-back digests cpu first, then `other` for what is left of `seconds` (if `withRemainder`). */
  finish(seconds: number, withRemainder: boolean): BreakdownNode[] {
    if (this.cpu >= 0) addNode(this.nodes, THREAD_CPU_ACTIVITY, this.cpu);
    if (this.noncpu >= 0) addNode(this.nodes, THREAD_NONCPU_ACTIVITY, this.noncpu);
    const remainder = seconds - this.claimed;
    if (withRemainder && this.nodes.length > 0 && remainder > EPSILON) addNode(this.nodes, OTHER_ACTIVITY, remainder);
    return this.nodes;
  }
}

/** Whether an activity name is a thread digest (see ActivityLevel.digest). */
export function isThreadDigest(name: string): name is typeof THREAD_CPU_ACTIVITY | typeof THREAD_NONCPU_ACTIVITY {
  return name === THREAD_CPU_ACTIVITY || name === THREAD_NONCPU_ACTIVITY;
}

/** The kinds of journey, by the recorder's kind id (compute 0, fetch 1, scheduler 2). */
export const JOURNEY_KINDS = ["compute", "fetch", "scheduler"] as const;
/** What kind of journey a Breakdown explains (`Breakdown.kind`). */
export type JourneyKind = (typeof JOURNEY_KINDS)[number];
