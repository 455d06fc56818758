import type { Key } from "../model/keys.js";
import type { FailureDetail } from "./failure-detail.js";
import { Journey, Transfer, type JourneyKindId } from "./journey.js";
import { copy, RecordRing } from "./record-ring.js";
import type { Computation } from "./computations.js";

/**
 * The finished journeys kept for explain(): each one's numbers written into a RecordRing (one
 * Float64Array, overwritten in place), its key beside them, and how it failed when it did. A kept
 * journey is no object of its own, so the journey as recorded (some 25 objects: its detail,
 * arrays, dependency lists, transfers) dies young, as it does with retainedJourneys: 0.
 *
 * What is kept is what explain() reads: the visits, the activity records, quantities, the waiting
 * breakdown, which records were digested, and how failed attempts failed. Span state, dependency
 * lists and transfers that succeeded are left behind.
 */

/** A record's header, then its arrays one after the other. */
const KIND = 0;
const PREFIX = 1;
const OUTCOME = 2;
/** Lengths of the arrays, in this order; -1 for an array the journey never had. */
const VISITS = 3;
const ACTIVITIES = 4;
const QUANTITIES = 5;
const WAIT_BREAKDOWN = 6;
const HEADER = 7;

/** What a kept journey costs the budget besides its numbers: its slot's five fields. */
const SLOT_BYTES = 40;

/** How a journey's attempts failed, kept only for journeys with a failure to tell. */
interface Failures {
  failureVisit: number;
  failureOutcome: string;
  failure: FailureDetail | undefined;
  reasonVisits: number[] | undefined;
  reasons: Array<FailureDetail | undefined> | undefined;
  reasonOutcomes: Array<string | undefined> | undefined;
  /** Visits of transfers that were not ok, with how they ended. */
  transferVisits: number[] | undefined;
  transfers: Array<{ outcome: string; failure: FailureDetail | undefined }> | undefined;
}

/** The ring: at most `capacity` journeys within `budget` bytes, the oldest out first. */
export class RetainedJourneys {
  private readonly ring: RecordRing;
  /** By slot: the key as given, its map id, its failures. Overwritten when the slot is reused. */
  private readonly keys: Key[] = [];
  private readonly ids: Array<string | number> = [];
  private readonly failures: Array<Failures | undefined> = [];
  /** By slot: the computation it was begun under (the object: a computation's slot is reused once it retires). */
  private readonly computations: Array<Computation | undefined> = [];

  constructor(capacity: number, budget: number) {
    this.ring = new RecordRing(capacity, budget, SLOT_BYTES);
  }

  /** Keeps a finished journey, evicting the oldest as needed; one larger than the whole budget is not kept. */
  add(journey: Journey, computation?: Computation): void {
    if (this.ring.capacity === 0) return;
    const visits = journey.visits;
    const activities = journey.activities;
    const quantities = journey.quantities;
    const waitBreakdown = journey.waitBreakdown;
    const length =
      HEADER + visits.length + activities.length + (quantities?.length ?? 0) + (waitBreakdown?.length ?? 0);
    const slot = this.ring.add(length);
    if (slot === -1) return;
    const data = this.ring.data;
    let at = this.ring.offset(slot);
    data[at + KIND] = journey.kind;
    data[at + PREFIX] = journey.prefixId;
    data[at + OUTCOME] = journey.outcomeState;
    data[at + VISITS] = visits.length;
    data[at + ACTIVITIES] = activities.length;
    data[at + QUANTITIES] = quantities?.length ?? -1;
    data[at + WAIT_BREAKDOWN] = waitBreakdown?.length ?? -1;
    at += HEADER;
    at = copy(data, at, visits);
    at = copy(data, at, activities);
    if (quantities !== undefined) at = copy(data, at, quantities);
    // Digested records are marked in the activities themselves (markDigested): copied with them.
    if (waitBreakdown !== undefined) copy(data, at, waitBreakdown);
    // A slot is at most one past the end: storing there appends, as a push would.
    this.keys[slot] = journey.key;
    this.ids[slot] = journey.id;
    this.failures[slot] = failuresOf(journey);
    this.computations[slot] = computation;
  }

  /** The computation the newest kept journey of `id` was begun under, or undefined. */
  computationOf(id: string | number): Computation | undefined {
    const ring = this.ring;
    for (let back = 1; back <= ring.count; back++) {
      const slot = ring.newest(back);
      if (this.ids[slot] === id) return this.computations[slot];
    }
    return undefined;
  }

  /**
   * The terminal state the newest kept journey of `id` ended in, or -1 when none is kept. For the
   * rare call about a key with no live journey (a stale transition): the ring is scanned, nothing made.
   */
  endedIn(id: string | number): number {
    const ring = this.ring;
    for (let back = 1; back <= ring.count; back++) {
      const slot = ring.newest(back);
      if (this.ids[slot] === id) return ring.data[ring.offset(slot) + OUTCOME];
    }
    return -1;
  }

  /** The newest kept journey of `id`, as a finished Journey again, or undefined. No index by key: the ring is scanned, newest first. */
  find(id: string | number): Journey | undefined {
    const ring = this.ring;
    for (let back = 1; back <= ring.count; back++) {
      const slot = ring.newest(back);
      if (this.ids[slot] === id) return this.unpack(slot);
    }
    return undefined;
  }

  private unpack(slot: number): Journey {
    const data = this.ring.data;
    const start = this.ring.offset(slot);
    let at = start + HEADER;
    const take = (field: number): number[] | undefined => {
      const length = data[start + field];
      if (length === -1) return undefined;
      const array = Array.from(data.subarray(at, at + length));
      at += length;
      return array;
    };
    const visits = take(VISITS)!;
    const kind = data[start + KIND] as JourneyKindId;
    const journey = new Journey(
      this.keys[slot],
      this.ids[slot],
      data[start + PREFIX],
      kind,
      visits[1],
      false,
      visits[0],
    );
    for (let index = 2; index < visits.length; index++) journey.visits.push(visits[index]);
    journey.state = visits[visits.length - 2];
    journey.outcomeState = data[start + OUTCOME];
    journey.ended = true;
    const activities = take(ACTIVITIES)!;
    if (activities.length > 0) journey.activities = activities;
    const quantities = take(QUANTITIES);
    if (quantities !== undefined) journey.quantities = quantities;
    const waitBreakdown = take(WAIT_BREAKDOWN);
    if (waitBreakdown !== undefined) journey.waitBreakdown = waitBreakdown;
    const failures = this.failures[slot];
    if (failures !== undefined) {
      journey.failureVisit = failures.failureVisit;
      journey.failureOutcome = failures.failureOutcome;
      journey.failure = failures.failure;
      if (failures.reasonVisits !== undefined) journey.more().reasonVisits = failures.reasonVisits;
      if (failures.reasons !== undefined) journey.more().reasons = failures.reasons;
      if (failures.reasonOutcomes !== undefined) journey.more().reasonOutcomes = failures.reasonOutcomes;
      if (failures.transfers !== undefined) {
        journey.transferVisits = failures.transferVisits;
        journey.transfers = failures.transfers.map(({ outcome, failure }) => {
          const transfer = new Transfer(-1, "", [], 0, Number.NaN);
          transfer.outcome = outcome;
          transfer.failure = failure;
          return transfer;
        });
      }
    }
    return journey;
  }
}

/** How the journey's failed attempts failed, or undefined (most journeys): an object only when there is something to tell. */
function failuresOf(journey: Journey): Failures | undefined {
  if (journey.detail === undefined) return undefined;
  const transfers = journey.transfers;
  const failedTransfers = transfers !== undefined && anyFailed(transfers);
  if (journey.failureVisit === -1 && journey.reasonVisits === undefined && !failedTransfers) return undefined;
  const failures: Failures = {
    failureVisit: journey.failureVisit,
    failureOutcome: journey.failureOutcome,
    failure: journey.failure,
    reasonVisits: journey.reasonVisits?.slice(),
    reasons: journey.reasons?.slice(),
    reasonOutcomes: journey.reasonOutcomes?.slice(),
    transferVisits: undefined,
    transfers: undefined,
  };
  if (failedTransfers) {
    const visits = journey.transferVisits!;
    failures.transferVisits = [];
    failures.transfers = [];
    for (let index = 0; index < transfers!.length; index++) {
      const { outcome, failure } = transfers![index];
      if (outcome === "" || outcome === "ok") continue;
      failures.transferVisits.push(visits[index]);
      failures.transfers.push({ outcome, failure });
    }
  }
  return failures;
}

/** Whether a transfer that carried the journey was not ok (a loop: no closure made per journey). */
function anyFailed(transfers: readonly Transfer[]): boolean {
  for (let index = 0; index < transfers.length; index++) {
    const outcome = transfers[index].outcome;
    if (outcome !== "" && outcome !== "ok") return true;
  }
  return false;
}
