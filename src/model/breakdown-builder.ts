import type { BreakdownNode } from "./breakdown.js";
import { DEPENDENCIES_ACTIVITY, OTHER_ACTIVITY, THREAD_CPU_ACTIVITY, THREAD_NONCPU_ACTIVITY } from "./activities.js";
import { EVENT_LOOP_KIND, EVENT_LOOP_STALL, GC_STALL, STALL_KINDS, type StallOverlap } from "./stalls.js";

/**
 * The rules that shape a Breakdown, in one place: explain() (src/recorder/explain.ts) feeds them
 * the recorder's records, the trace rebuild (src/report/from-trace.ts) the spans the bridge made
 * of the same records. Each side only decodes its source; what becomes a node, how nodes sum,
 * where `other` and `dependencies` come from, in which order thread digests stand and where
 * process stalls go is decided here, so the two cannot drift apart.
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

/**
 * Whether a visit's breakdown shows the process stalls it overlapped: every visit but a compute
 * journey's waiting (the machine's state that waits for dependencies), whose nodes are the fetches' apportioned activities (task.wait.time), not
 * time of its own; a stall that slowed a fetch shows in that fetch journey's flight visit.
 */
export function showsStalls(kind: JourneyKind, waitsForDependencies: boolean): boolean {
  return !(kind === "compute" && waitsForDependencies);
}

/**
 * Places a visit's stall overlap (the visit lasted `seconds`) in its breakdown `nodes`. The rule:
 * a stall splits what no activity claimed and changes no node the metrics carry. Its share is a
 * child of the visit's `other` (`gc` with one child per GC type, then `event-loop`, then `other`
 * for the rest), so every activity node and `other` itself keep the seconds that
 * task.execute.time, task.gather.time and task.state.time add up; a visit with no activity gets
 * one `other` of its whole time to hold them. Only up to `other` is shown, GC first: a stall
 * inside a metered activity is part of that activity's time, and a visit whose activities claim
 * all of it shows none (the state span's `task.stall.*` attributes still hold the whole overlap).
 * Scaled alike when cut.
 */
export function addStallNodes(nodes: BreakdownNode[], seconds: number, overlap: StallOverlap): void {
  let gc = 0;
  for (let kind = 0; kind < STALL_KINDS.length; kind++) if (kind !== EVENT_LOOP_KIND) gc += overlap[kind];
  const eventLoop = overlap[EVENT_LOOP_KIND];
  if (!(gc > EPSILON) && !(eventLoop > EPSILON)) return;
  let other = nodes.find((node) => node.name === OTHER_ACTIVITY);
  if (other === undefined) {
    if (nodes.length > 0 || !(seconds > EPSILON)) return;
    other = { name: OTHER_ACTIVITY, seconds, children: [] };
    nodes.push(other);
  }
  let unclaimed = other.seconds;
  for (const child of other.children) unclaimed -= child.seconds;
  const gcShown = Math.min(gc, unclaimed);
  const parts: BreakdownNode[] = [];
  if (gcShown > EPSILON) {
    const scale = gcShown / gc;
    const types: BreakdownNode[] = [];
    for (let kind = 0; kind < STALL_KINDS.length; kind++) {
      if (kind !== EVENT_LOOP_KIND && overlap[kind] * scale > EPSILON)
        types.push({ name: STALL_KINDS[kind], seconds: overlap[kind] * scale, children: [] });
    }
    parts.push({ name: GC_STALL, seconds: gcShown, children: sortBySeconds(types) });
    unclaimed -= gcShown;
  }
  const eventLoopShown = Math.min(eventLoop, unclaimed);
  if (eventLoopShown > EPSILON) {
    parts.push({ name: EVENT_LOOP_STALL, seconds: eventLoopShown, children: [] });
    unclaimed -= eventLoopShown;
  }
  if (parts.length === 0) return;
  for (const part of parts) addNode(other.children, part.name, part.seconds, part.children);
  if (unclaimed > EPSILON) addNode(other.children, OTHER_ACTIVITY, unclaimed);
}
