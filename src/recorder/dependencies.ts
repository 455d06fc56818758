import { apportionShares, type WaitInterval } from "../model/apportion.js";
import type { Machine } from "../model/machine.js";
import type { Accumulators } from "./accumulators.js";
import { ChunkList } from "./chunk-list.js";
import { fitted, sizedList } from "./key-lists.js";
import { DEPENDENCIES, MISSING_ACTIVITY, OTHER, QUEUED } from "./activity-ids.js";
import {
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_SELF_SECONDS,
  ACTIVITY_VISIT,
  FETCH_JOURNEY,
  type Journey,
} from "./journey.js";

/** `dependencies()` told before their keys' journeys began are kept up to this many keys. */
const PENDING_LIMIT = 100_000;
/** Wait intervals the scratch list keeps between sweeps at most (the usual handful, reused). */
const SCRATCH_KEPT = 1024;

/**
 * Which journeys wait for which, and where a dependent's waiting time went: a dependency fetched
 * while its dependents waited serves them, and when a dependent leaves `waiting` its time is
 * apportioned over what those fetches were doing (model/apportion.ts). The recorder tells it
 * when journeys begin, enter flight, leave waiting and end.
 */
export class Dependencies {
  /**
   * Dependents registered through `dependencies()`, by the dependency's key id. A dependent that
   * ends is not looked for and removed from each list (with n dependents sharing n dependencies
   * that made their ends O(n³) in all): it stays, harmless since only waiting dependents are
   * noted, until a sweep that each journey's end advances by twice its dependencies' count
   * drops it. Each call's share of the sweep is bounded; the ended ones left are bounded by the
   * entries made since the sweep last passed.
   */
  readonly dependentsOf = new Map<string | number, ChunkList<Journey>>();
  /** Where the sweep of `dependentsOf` stands (a Map iterator survives deletions). */
  private sweep: Iterator<[string | number, ChunkList<Journey>]> | undefined = undefined;
  /** `dependencies()` told before the key's journey began, consumed when it begins (besides `next`). */
  private readonly pending = new Map<string | number, Array<string | number>>();
  /**
   * The newest of them, outside `pending` while no other is there: a worker is told a task's
   * dependencies just before its journey begins, one key at a time, and a Map emptied at once
   * after each set makes itself a new table (≈ 140 B a task). `nextIds` undefined: none.
   */
  private nextId: string | number = "";
  private nextIds: Array<string | number> | undefined = undefined;
  /** The last waiting time apportioned, with its inputs, for the dependents that follow with the same. */
  private lastSweep: SweepInputs | undefined = undefined;
  /** Scratch list of a sweep's intervals, reused (filled up to a count) across calls. */
  private readonly intervals: WaitInterval[] = [];

  constructor(
    /** The recorder's live journeys, by key id (read only). */
    private readonly live: ReadonlyMap<string | number, Journey>,
    private readonly accumulators: Accumulators,
    /** Which states wait for dependencies and fetch them. */
    private readonly machine: Machine,
  ) {}

  /**
   * The journey of key `id` depends on the keys of `ids`: attached now if it is live, else kept
   * until it begins. False when too many keys wait for their journeys already (nothing is kept).
   */
  tell(id: string | number, ids: Array<string | number>): boolean {
    const journey = this.live.get(id);
    if (journey !== undefined) {
      if (journey.dependencyIds !== undefined) this.detach(journey);
      this.attach(journey, ids);
      return true;
    }
    const pending = this.pending;
    const next = this.nextIds;
    if (pending.size + (next === undefined ? 0 : 1) >= PENDING_LIMIT) return false;
    // Another key waiting: it moves into the Map (the key told last is the one kept out).
    if (next !== undefined && this.nextId !== id) pending.set(this.nextId, next);
    // Told again while waiting: the newest wins, as a set() over the older one did.
    if (pending.size !== 0) pending.delete(id);
    this.nextId = id;
    this.nextIds = ids;
    return true;
  }

  /** Whether any key's dependencies told wait for its journey to begin: begun() has work (begin() asks, every journey). */
  hasWaiting(): boolean {
    return this.nextIds !== undefined || this.pending.size !== 0;
  }

  /** A journey began: the dependencies told before it are attached (call when hasWaiting()). */
  begun(journey: Journey): void {
    const id = journey.id;
    const next = this.nextIds;
    if (next !== undefined && this.nextId === id) {
      this.nextIds = undefined;
      this.nextId = "";
      this.attach(journey, next);
      return;
    }
    if (this.pending.size === 0) return;
    const dependencies = this.pending.get(id);
    if (dependencies !== undefined) {
      this.pending.delete(id);
      this.attach(journey, dependencies);
    }
  }

  /** At a dependency's flight, the dependents waiting for it are the ones it serves (call when `dependentsOf` is not empty). */
  enteredFlight(journey: Journey): void {
    const dependents = this.dependentsOf.get(journey.id);
    if (dependents !== undefined) {
      for (let index = 0; index < dependents.length; index++) {
        const dependent = dependents.at(index);
        if (dependent.state === this.machine.waiting) this.note(journey, dependent);
      }
    }
  }

  /** A journey ended: it waits for nothing more, and the dependents it served learn what it did. */
  ended(journey: Journey): void {
    if (journey.dependencyIds !== undefined) this.sweepEnded(2 * journey.dependencyIds.length + 2);
    const noted = journey.notedDependents;
    if (noted !== undefined) {
      const weight = 1 / noted.size;
      for (const dependent of noted) {
        dependent.detail!.notedBy--;
        if (dependent.ended || dependent.state !== this.machine.waiting) continue;
        // What this fetch did, made once here for every dependent it served (they share its
        // weight), rather than per dependent at each one's apportioning: n dependents of the same
        // n fetches made n² of them, and one of a thousand fetches paid for all of them.
        journey.waitIntervals ??= collectIntervals(journey, weight, this.machine);
        const sources = dependent.waitSources;
        if (sources === undefined) dependent.waitSources = new ChunkList(journey);
        else sources.push(journey);
      }
      journey.notedDependents = undefined;
    }
  }

  /** `journey` leaves `waiting` at `time`: its waiting seconds go to the activities of the fetches that served it. */
  apportion(journey: Journey, time: number): void {
    const waitStart = journey.stateStart;
    const accumulators = this.accumulators;
    const prefixId = journey.prefixId;
    const sources = journey.waitSources;
    if (sources === undefined) {
      accumulators.waitSeconds[accumulators.activityCell(prefixId, DEPENDENCIES)] += time - waitStart;
      return;
    }
    const shares = this.sharesOf(sources, waitStart, time);
    const breakdown = journey.waitBreakdown;
    const visit = journey.visitIndex;
    // The first waiting visit's made at its size (a `[]` pushed into reserves 17 numbers for the
    // usual 3 to 9); a second one's appended.
    const first = breakdown === undefined ? sizedList<number>((shares.length / 2) * 3) : undefined;
    for (let share = 0, at = 0; share < shares.length; share += 2, at += 3) {
      const activity = shares[share];
      const seconds = shares[share + 1];
      if (first === undefined) breakdown!.push(visit, activity, seconds);
      else {
        first[at] = visit;
        first[at + 1] = activity;
        first[at + 2] = seconds;
      }
      accumulators.waitSeconds[accumulators.activityCell(prefixId, activity)] += seconds;
    }
    if (first !== undefined) journey.waitBreakdown = first;
    journey.waitSources = undefined;
    // Kept (not copied) for span links; a second waiting visit appends to the first's list.
    const served = journey.fetchedBy;
    if (served === undefined) journey.fetchedBy = sources;
    else for (let index = 0; index < sources.length; index++) served.push(sources.at(index));
  }

  /**
   * The shares (activity, seconds, …) of [waitStart, time] among what `sources` did. Dependents
   * of the same fetches usually leave `waiting` together with the same sources in the same order
   * (a shuffle's or a reduction's n dependents of n keys): the last sweep is kept with its inputs,
   * and a dependent whose inputs are the same takes its shares without sweeping again (n sweeps
   * of n fetches were most of those dependents' cost).
   */
  private sharesOf(sources: ChunkList<Journey>, waitStart: number, time: number): readonly number[] {
    const last = this.lastSweep;
    if (last !== undefined && last.start === waitStart && last.end === time && last.count === sources.length) {
      let same = true;
      for (let s = 0; s < sources.length && same; s++) same = last.sources.at(s) === sources.at(s);
      if (same) return last.shares;
    }
    const intervals = this.intervals;
    let count = 0;
    for (let s = 0; s < sources.length; s++) {
      const own = sources.at(s).waitIntervals!;
      for (let i = 0; i < own.length; i++) intervals[count++] = own[i];
    }
    const shares = apportionShares(waitStart, time, intervals, DEPENDENCIES, OTHER, [], count);
    // A large list is let go rather than kept holding ended fetches' intervals alive.
    if (count > SCRATCH_KEPT) intervals.length = 0;
    // The arrays are kept, not copied: `sources` becomes the dependent's `fetchedBy`, which only
    // ever grows at its end, so its first `count` entries stay what was swept.
    this.lastSweep = { start: waitStart, end: time, count: sources.length, sources, shares };
    return shares;
  }

  private attach(journey: Journey, ids: Array<string | number>): void {
    journey.dependencyIds = ids;
    for (const dependencyId of ids) {
      const dependents = this.dependentsOf.get(dependencyId);
      if (dependents === undefined) this.dependentsOf.set(dependencyId, new ChunkList(journey));
      else dependents.push(journey);
      // A dependency already being fetched serves this dependent too.
      const dependency = this.live.get(dependencyId);
      if (dependency !== undefined && dependency.kind === FETCH_JOURNEY && journey.state === this.machine.waiting) {
        this.note(dependency, journey);
      }
    }
  }

  /** A live journey told its dependencies again leaves the lists it was in (rare: O(their lengths)). */
  private detach(journey: Journey): void {
    for (const dependencyId of journey.dependencyIds!) {
      const dependents = this.dependentsOf.get(dependencyId);
      if (dependents === undefined || !dependents.remove(journey)) continue;
      if (dependents.length === 0) this.dependentsOf.delete(dependencyId);
    }
  }

  /** Drops ended dependents from the next lists of the sweep, about `budget` entries' worth. */
  private sweepEnded(budget: number): void {
    const lists = this.dependentsOf;
    let restarted = false;
    while (budget > 0 && lists.size > 0) {
      let next = (this.sweep ??= lists.entries()).next();
      if (next.done === true) {
        if (restarted) return;
        restarted = true;
        next = (this.sweep = lists.entries()).next();
        if (next.done === true) return;
      }
      const [dependencyId, dependents] = next.value;
      budget -= dependents.length;
      dependents.retain(isLive);
      if (dependents.length === 0) lists.delete(dependencyId);
    }
  }

  private note(dependency: Journey, dependent: Journey): void {
    // A Set: a dependency re-entering flight (retried after "busy") notes its dependents again.
    const noted = (dependency.notedDependents ??= new Set());
    const size = noted.size;
    // Counted once a fetch (ended() counts it off): a dependent held by none may be reused.
    if (noted.add(dependent).size !== size) dependent.more().notedBy++;
  }

  /**
   * An ended journey about to be reused leaves the lists of dependents it is in (else, live again
   * under another key, it would be found waiting under its former dependencies). Only when that is
   * cheap: at most `maxLength` entries a list; false when a list is longer (it is not reused, and
   * the sweep drops it from the lists as before). The lists it left are dropped when empty.
   */
  release(journey: Journey, maxLength: number): boolean {
    const ids = journey.dependencyIds!;
    const lists = this.dependentsOf;
    for (let index = 0; index < ids.length; index++) {
      const dependents = lists.get(ids[index]);
      if (dependents === undefined) continue;
      if (dependents.length > maxLength) return false;
      if (dependents.remove(journey) && dependents.length === 0) lists.delete(ids[index]);
    }
    return true;
  }
}

const isLive = (journey: Journey): boolean => !journey.ended;

/** One apportioning's inputs and result (Dependencies.sharesOf). */
interface SweepInputs {
  start: number;
  end: number;
  count: number;
  sources: ChunkList<Journey>;
  shares: readonly number[];
}

/**
 * What an ended fetch journey was doing, visit by visit: its fetch, flight and missing visits
 * with their activities, each weighted `weight` (apportionShares clips them to each waiting
 * visit). One pass over its visits and records together, not a scan of the records per visit (a
 * dependency retried n times has 2n visits and n records): records are appended with the visit
 * current when they are written, so they come in visit order.
 */
function collectIntervals(source: Journey, weight: number, machine: Machine): WaitInterval[] {
  // Lists made at their size (sizedList), not pushed into from `[]`, which reserves 17 slots.
  const intervals = sizedList<WaitInterval>(source.visitCount);
  let filled = 0;
  const records = source.activities;
  let record = 0;
  for (let visit = 0; visit < source.visitCount; visit++) {
    const state = source.visitState(visit);
    if (machine.fetching[state] !== 1) continue;
    const start = source.visitStart(visit);
    const end = source.visitEnd(visit);
    if (!(end > start)) continue;
    while (record < records.length && records[record + ACTIVITY_VISIT] < visit) record += ACTIVITY_FIELDS;
    let count = 0;
    for (let at = record; at < records.length && records[at + ACTIVITY_VISIT] === visit; at += ACTIVITY_FIELDS) count++;
    let activities: number[];
    if (count === 0) {
      activities = [
        state === machine.retry ? QUEUED : state === machine.missing ? MISSING_ACTIVITY : OTHER,
        end - start,
      ];
    } else {
      activities = sizedList<number>(2 * count);
      for (let pair = 0; pair < 2 * count; pair += 2, record += ACTIVITY_FIELDS) {
        activities[pair] = records[record + ACTIVITY_ID];
        activities[pair + 1] = records[record + ACTIVITY_SELF_SECONDS];
      }
    }
    intervals[filled++] = { start, end, weight, priority: state === machine.transfer ? 0 : 1, activities };
  }
  return fitted(intervals, filled);
}
