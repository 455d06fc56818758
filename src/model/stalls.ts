/**
 * Stalls of the whole process: garbage-collection pauses and a blocked event loop. They are not
 * activities any ledger metered; they are intervals in which no JavaScript of any task ran. A
 * task's state that overlapped one shows the overlap in its breakdown (`gc`, `event-loop`, placed
 * by addStallNodes in breakdown-builder.ts), so explain() of a slow task can say that 18 ms of it
 * was a major GC.
 */

/** The breakdown node of GC pauses (its children are the GC types) and of a blocked event loop. */
export const GC_STALL = "gc";
export const EVENT_LOOP_STALL = "event-loop";

/**
 * Kinds of stall by id: the event loop, then the GC types with the `v8js.gc.type` values of the
 * OpenTelemetry semantic conventions (major: mark-sweep-compact, minor: scavenge, incremental:
 * incremental marking, weakcb: weak callbacks).
 */
export const STALL_KINDS = [EVENT_LOOP_STALL, "major", "minor", "incremental", "weakcb"] as const;
export type StallKind = (typeof STALL_KINDS)[number];
export const EVENT_LOOP_KIND = 0;
export const GC_TYPES = STALL_KINDS.slice(1) as readonly Exclude<StallKind, "event-loop">[];

/** Seconds of each kind (STALL_KINDS order) that overlapped an interval. */
export type StallOverlap = Float64Array;

const FIELDS = 3;

/**
 * The most recent stalls, [kind, start, end] in the recorder's seconds, in a fixed ring: the
 * oldest is overwritten, so memory stays bounded however long the process runs. Written by the
 * process observers (never by the task hot path), read by explain() and the span bridge.
 */
export class StallRing {
  private readonly records: Float64Array;
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.records = new Float64Array(Math.max(1, capacity) * FIELDS);
  }

  /** A stall of `kind` (a STALL_KINDS index) from `start` to `end` seconds; empty or bad ones are ignored. */
  push(kind: number, start: number, end: number): void {
    if (!(end > start) || !(kind >= 0 && kind < STALL_KINDS.length)) return;
    const at = this.next * FIELDS;
    this.records[at] = kind;
    this.records[at + 1] = start;
    this.records[at + 2] = end;
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1;
    if (this.count < this.capacity) this.count++;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Seconds of each kind overlapping [start, end]. GC pauses block the event loop too, so the
   * event loop's share is only what its stalls leave after the GC pauses inside them: a 18 ms
   * major GC is `gc`, not also `event-loop`.
   */
  overlap(start: number, end: number): StallOverlap {
    const out = new Float64Array(STALL_KINDS.length);
    if (!(end > start) || this.count === 0) return out;
    const records = this.records;
    for (let index = 0; index < this.count; index++) {
      const at = index * FIELDS;
      const from = Math.max(start, records[at + 1]);
      const to = Math.min(end, records[at + 2]);
      if (!(to > from)) continue;
      const kind = records[at];
      if (kind !== EVENT_LOOP_KIND) {
        out[kind] += to - from;
        continue;
      }
      let blocked = to - from;
      for (let other = 0; other < this.count; other++) {
        const gc = other * FIELDS;
        if (records[gc] === EVENT_LOOP_KIND) continue;
        const inside = Math.min(to, records[gc + 2]) - Math.max(from, records[gc + 1]);
        if (inside > 0) blocked -= inside;
      }
      if (blocked > 0) out[EVENT_LOOP_KIND] += blocked;
    }
    return out;
  }
}

/** The attribute suffix of each kind (STALL_KINDS order) on a state span: `event-loop`, `gc.major`, … */
export const STALL_ATTRIBUTE_NAMES: readonly string[] = STALL_KINDS.map((kind, id) =>
  id === EVENT_LOOP_KIND ? kind : `${GC_STALL}.${kind}`,
);
