/**
 * Computations: what Dask calls a span, one graph submission (a job queue's flow). A journey is
 * tagged with one when it begins (`transition(key, from, to, { computation })`), and its
 * computation's totals grow as it moves: task-seconds by state, tasks begun, tasks ended by
 * terminal state, the first start and the last end.
 *
 * Bounded: at most `limits.maxComputations` computations are kept at once. One with no live
 * journey left is finished; a new computation past the cap retires the one that finished first
 * (its totals and metric series go), so a scheduler given millions of submissions holds only the
 * live and the most recently finished. With every kept computation live, a new one's journeys go
 * to the overflow computation `other` (counted `computation-limit`, told once).
 *
 * A retired computation is still held, in a ring of the last `limits.maxComputations` retired,
 * until the metric producers have exported its final totals once: each producer reads the ring
 * from where it last stopped (`retiredSince`), so one finished and retired between two
 * collections is still exported. One overwritten before a producer read it is counted by that
 * producer (`computation-unexported`, told once).
 *
 * The hot path: a journey carries its computation as a slot number in its flags (journey.ts), 0
 * for none, so a journey without one costs one comparison a move; with one, a move adds into a
 * Float64Array, allocating nothing.
 */

/** The overflow computation's name, as prefixes past their limit fold into "other". */
export const OTHER_COMPUTATION = "other";

import type { ComputationTotals } from "../model/computation-totals.js";

export type { ComputationTotals };

/** One kept computation. Made once per computation (never per journey or transition). */
export class Computation {
  /** Task-seconds of finished visits, by state id. */
  readonly seconds: Float64Array;
  /** Tasks ended, by terminal state id. */
  readonly ended: Float64Array;
  tasks = 0;
  live = 0;
  abandoned = 0;
  start = Number.POSITIVE_INFINITY;
  end = Number.NEGATIVE_INFINITY;
  /** Retired: no longer kept (its slot may be another's now). */
  retired = false;
  /** Neighbours in the list of finished computations, oldest first: what a new one retires. */
  older: Computation | undefined = undefined;
  newer: Computation | undefined = undefined;
  finished = false;

  constructor(
    readonly name: string,
    /** Its slot (1-based; what journeys carry), reused once it retires. */
    readonly slot: number,
    /** Unique for the process's life: the metric producers' series key (a slot is reused). */
    readonly serial: number,
    states: number,
  ) {
    this.seconds = new Float64Array(states);
    this.ended = new Float64Array(states);
  }
}

export class Computations {
  private readonly byName = new Map<string, Computation>();
  /** By slot; index 0 unused (a journey's slot 0 is "none"). */
  private readonly bySlot: Array<Computation | undefined> = [undefined];
  private readonly freeSlots: number[] = [];
  private oldestFinished: Computation | undefined = undefined;
  private newestFinished: Computation | undefined = undefined;
  private overflow: Computation | undefined = undefined;
  private serials = 0;
  /** Computations retired to make room, for the process's life: the sequence number of the last one. */
  retiredCount = 0;
  /**
   * The last `limit` retired, the one of sequence number `n` (1-based) at `(n - 1) % limit`:
   * held until the metric producers have read them (`retiredSince`), then overwritten. Grown as
   * computations retire, never past `limit` (a process that never retires one holds none).
   */
  private readonly retiredRing: Computation[] = [];
  /** Journeys that went to `other` because every kept computation was live. */
  overflowed = 0;

  constructor(
    /** `limits.maxComputations`. */
    readonly limit: number,
    private readonly states: number,
    /** Told once when the cap sends a journey to `other` (the recorder's failure path). */
    private readonly onOverflow: (name: string, limit: number) => void,
  ) {}

  /** How many are kept now (the overflow included once used). */
  get size(): number {
    return this.byName.size + (this.overflow === undefined ? 0 : 1);
  }

  /** The slot of the computation named `name` for a journey beginning at `time`: kept, made, or the overflow's. */
  begin(name: string, time: number): number {
    let computation = this.byName.get(name);
    if (computation === undefined) computation = this.make(name);
    if (computation.finished) this.unlinkFinished(computation);
    computation.tasks += 1;
    computation.live += 1;
    if (time < computation.start) computation.start = time;
    return computation.slot;
  }

  private make(name: string): Computation {
    if (this.byName.size >= this.limit) {
      const retiring = this.oldestFinished;
      if (retiring === undefined) return this.overflowFor(name);
      this.retire(retiring);
    }
    const slot = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.bySlot.length;
    const computation = new Computation(name, slot, ++this.serials, this.states);
    this.bySlot[slot] = computation;
    this.byName.set(name, computation);
    return computation;
  }

  private overflowFor(name: string): Computation {
    this.overflowed += 1;
    this.onOverflow(name, this.limit);
    if (this.overflow === undefined) {
      // The slot past every kept one's: never reused, never retired.
      this.overflow = new Computation(OTHER_COMPUTATION, this.limit + 1, ++this.serials, this.states);
    }
    return this.overflow;
  }

  private retire(computation: Computation): void {
    this.unlinkFinished(computation);
    this.byName.delete(computation.name);
    this.bySlot[computation.slot] = undefined;
    this.freeSlots.push(computation.slot);
    computation.retired = true;
    const index = this.retiredCount % this.limit;
    if (index === this.retiredRing.length) this.retiredRing.push(computation);
    else this.retiredRing[index] = computation;
    this.retiredCount += 1;
  }

  /**
   * The computations retired after the `cursor`-th (a producer's `retiredCount` when it last
   * read), oldest first, into `into`; returns how many of them are gone from the ring already
   * (retired and overwritten before this read: never to be exported by this reader).
   */
  retiredSince(cursor: number, into: Computation[]): number {
    const first = Math.max(cursor, this.retiredCount - this.limit);
    for (let sequence = first; sequence < this.retiredCount; sequence++)
      into.push(this.retiredRing[sequence % this.limit]);
    return first - cursor;
  }

  /** The computation of a slot a live journey carries (always kept: one with a live journey never retires). */
  at(slot: number): Computation {
    return slot > this.limit ? this.overflow! : this.bySlot[slot]!;
  }

  /** A finished visit of `seconds` in state `state`. */
  visit(slot: number, state: number, seconds: number): void {
    this.at(slot).seconds[state] += seconds;
  }

  /** A journey of the slot's computation ended in terminal state `state` at `time`. */
  ended(slot: number, state: number, time: number): void {
    const computation = this.at(slot);
    computation.ended[state] += 1;
    this.left(computation, time);
  }

  /** A journey of the slot's computation was evicted at `time` (it has no terminal state). */
  abandoned(slot: number, time: number): void {
    const computation = this.at(slot);
    computation.abandoned += 1;
    this.left(computation, time);
  }

  private left(computation: Computation, time: number): void {
    if (time > computation.end) computation.end = time;
    if (--computation.live > 0 || computation === this.overflow) return;
    // Finished: the newest of the list a new computation retires from.
    computation.finished = true;
    const newest = this.newestFinished;
    computation.older = newest;
    if (newest === undefined) this.oldestFinished = computation;
    else newest.newer = computation;
    this.newestFinished = computation;
  }

  private unlinkFinished(computation: Computation): void {
    computation.finished = false;
    const { older, newer } = computation;
    if (older === undefined) this.oldestFinished = newer;
    else older.newer = newer;
    if (newer === undefined) this.newestFinished = older;
    else newer.older = older;
    computation.older = undefined;
    computation.newer = undefined;
  }

  /** The kept computation named `name`, or undefined. */
  named(name: string): Computation | undefined {
    return name === OTHER_COMPUTATION && this.overflow !== undefined ? this.overflow : this.byName.get(name);
  }

  /** Every kept computation, in the order they were made (the overflow last). */
  all(): Computation[] {
    const all = [...this.byName.values()].sort((a, b) => a.serial - b.serial);
    if (this.overflow !== undefined) all.push(this.overflow);
    return all;
  }
}

/** A computation's totals as plain data, with the machine's state names and the clock's now. */
export function totalsOf(
  computation: Computation,
  names: readonly string[],
  failed: Uint8Array,
  terminal: Uint8Array,
  now: number,
): ComputationTotals {
  const seconds: Record<string, number> = {};
  const ended: Record<string, number> = {};
  let failures = 0;
  for (let state = 0; state < names.length; state++) {
    if (computation.seconds[state] > 0) seconds[names[state]] = computation.seconds[state];
    const count = computation.ended[state];
    if (terminal[state] === 1 && count > 0) {
      ended[names[state]] = count;
      if (failed[state] === 1) failures += count;
    }
  }
  const live = computation.live > 0;
  const end = live || computation.end === Number.NEGATIVE_INFINITY ? undefined : computation.end;
  return {
    name: computation.name,
    tasks: computation.tasks,
    live: computation.live,
    ended,
    failed: failures,
    abandoned: computation.abandoned,
    seconds,
    start: computation.start,
    end,
    wall: Math.max(0, (end ?? now) - computation.start),
  };
}
