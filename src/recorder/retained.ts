import type { Key } from "../model/keys.js";
import type { FailureDetail } from "./failure-detail.js";
import { Journey, Transfer, type JourneyKindId } from "./journey.js";

/**
 * The finished journeys kept for explain(): a ring bounded by count and by size, each journey
 * packed as it is kept into one array of numbers (and, when it failed, one small object).
 *
 * Why packed: a finished journey as it was recorded is some 25 objects (its detail, arrays,
 * dependency lists, transfers), and through its transfers and its dependency lists it reaches
 * other finished journeys, which it then keeps alive too. A worker whose host sets off full
 * collections often (spill buffers, compression: every ~76 tasks in the example cluster's
 * replay) marked all of them each time: keeping the default 1,000 journeys that way cost the
 * worker 190,000–330,000 instructions a task in garbage collection, most of what telemetry added
 * once V8 had settled (bench/README.md, "explain()'s ring and the garbage collector"). Packed, a
 * kept journey is two objects that point at nothing but its key.
 *
 * What is packed is what explain() reads: the visits, the activity records, quantities, the
 * waiting breakdown, which records were digested, and how failed attempts failed. Span state,
 * dependency lists and transfers that succeeded are left behind.
 */

/** Header fields of a packed journey's numbers, then its arrays one after the other. */
const KIND = 0;
const PREFIX = 1;
const OUTCOME = 2;
/** Lengths of the packed arrays, in this order; -1 for an array the journey never had. */
const VISITS = 3;
const ACTIVITIES = 4;
const QUANTITIES = 5;
const WAIT_BREAKDOWN = 6;
const DIGEST_RECORDS = 7;
const HEADER = 8;

/** How a journey's attempts failed, kept only for journeys with a failure to tell. */
interface Failures {
  failureVisit: number;
  failureOutcome: string;
  failure: FailureDetail | undefined;
  reasonVisits: number[] | undefined;
  reasons: FailureDetail[] | undefined;
  /** Visits of transfers that were not ok, with how they ended. */
  transferVisits: number[] | undefined;
  transfers: Array<{ outcome: string; failure: FailureDetail | undefined }> | undefined;
}

/** A finished journey as kept: its key, its numbers, and its failures when it had any. */
class PackedJourney {
  constructor(
    readonly key: Key,
    readonly id: string | number,
    readonly numbers: number[],
    readonly failures: Failures | undefined,
  ) {}
}

/** Packs what explain() reads of a finished journey. */
function pack(journey: Journey): PackedJourney {
  const visits = journey.visits;
  const activities = journey.activities;
  const quantities = journey.quantities;
  const waitBreakdown = journey.waitBreakdown;
  const digestRecords = journey.digestRecords;
  const length =
    HEADER +
    visits.length +
    activities.length +
    (quantities?.length ?? 0) +
    (waitBreakdown?.length ?? 0) +
    (digestRecords?.length ?? 0);
  // Made at its final length and filled in order: no growth and no slack (one more copy as its
  // elements become doubles).
  const numbers: number[] = new Array<number>(length);
  numbers[KIND] = journey.kind;
  numbers[PREFIX] = journey.prefixId;
  numbers[OUTCOME] = journey.outcomeState;
  numbers[VISITS] = visits.length;
  numbers[ACTIVITIES] = activities.length;
  numbers[QUANTITIES] = quantities?.length ?? -1;
  numbers[WAIT_BREAKDOWN] = waitBreakdown?.length ?? -1;
  numbers[DIGEST_RECORDS] = digestRecords?.length ?? -1;
  let at = HEADER;
  for (const array of [visits, activities, quantities, waitBreakdown, digestRecords]) {
    if (array === undefined) continue;
    for (let index = 0; index < array.length; index++) numbers[at++] = array[index];
  }
  return new PackedJourney(journey.key, journey.id, numbers, failuresOf(journey));
}

function failuresOf(journey: Journey): Failures | undefined {
  const failedTransfers = journey.transfers?.some((transfer) => transfer.outcome !== "" && transfer.outcome !== "ok");
  if (journey.failureVisit === -1 && journey.reasonVisits === undefined && failedTransfers !== true) return undefined;
  const failures: Failures = {
    failureVisit: journey.failureVisit,
    failureOutcome: journey.failureOutcome,
    failure: journey.failure,
    reasonVisits: journey.reasonVisits?.slice(),
    reasons: journey.reasons?.slice(),
    transferVisits: undefined,
    transfers: undefined,
  };
  if (failedTransfers === true) {
    const transfers = journey.transfers!;
    const visits = journey.transferVisits!;
    failures.transferVisits = [];
    failures.transfers = [];
    for (let index = 0; index < transfers.length; index++) {
      const { outcome, failure } = transfers[index];
      if (outcome === "" || outcome === "ok") continue;
      failures.transferVisits.push(visits[index]);
      failures.transfers.push({ outcome, failure });
    }
  }
  return failures;
}

/** A finished Journey again, with what explain() reads. (Journeys evicted past maxLiveJourneys are never kept.) */
function unpack(packed: PackedJourney): Journey {
  const numbers = packed.numbers;
  let at = HEADER;
  const take = (field: number): number[] | undefined => {
    const length = numbers[field];
    if (length === -1) return undefined;
    const array = numbers.slice(at, at + length);
    at += length;
    return array;
  };
  const visits = take(VISITS)!;
  const journey = new Journey(
    packed.key,
    packed.id,
    numbers[PREFIX],
    numbers[KIND] as JourneyKindId,
    visits[1],
    false,
    visits[0],
  );
  for (let index = 2; index < visits.length; index++) journey.visits.push(visits[index]);
  journey.state = visits[visits.length - 2];
  journey.outcomeState = numbers[OUTCOME];
  journey.ended = true;
  const activities = take(ACTIVITIES)!;
  if (activities.length > 0) journey.activities = activities;
  const quantities = take(QUANTITIES);
  if (quantities !== undefined) journey.quantities = quantities;
  const waitBreakdown = take(WAIT_BREAKDOWN);
  if (waitBreakdown !== undefined) journey.waitBreakdown = waitBreakdown;
  const digestRecords = take(DIGEST_RECORDS);
  if (digestRecords !== undefined) journey.digestRecords = digestRecords;
  const failures = packed.failures;
  if (failures !== undefined) {
    journey.failureVisit = failures.failureVisit;
    journey.failureOutcome = failures.failureOutcome;
    journey.failure = failures.failure;
    if (failures.reasonVisits !== undefined) journey.more().reasonVisits = failures.reasonVisits;
    if (failures.reasons !== undefined) journey.more().reasons = failures.reasons;
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

/**
 * What a finished journey holds, roughly, in bytes: its flat number arrays at 8 bytes a number and
 * a fixed part for the object and its small fields (measured ~300 B for a journey with no records).
 * The budget counts journeys as recorded, so that retainedJourneyBytes means what it meant.
 */
function journeyBytes(journey: Journey): number {
  return (
    300 +
    8 *
      (journey.visits.length +
        journey.activities.length +
        (journey.quantities?.length ?? 0) +
        (journey.waitBreakdown?.length ?? 0) +
        (journey.digestRecords?.length ?? 0))
  );
}

/** The ring: at most `capacity` journeys within `budget` bytes, the oldest out first; grown as it fills. */
export class RetainedJourneys {
  private readonly slots: Array<PackedJourney | undefined> = [];
  /**
   * Each slot's map id and journeyBytes(), apart from the packed journey: finding one and
   * evicting the oldest touch no packed journey, which lies cold in the old generation by then.
   */
  private readonly ids: Array<string | number | undefined> = [];
  private readonly sizes: number[] = [];
  private start = 0;
  private count = 0;
  private bytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly budget: number,
  ) {}

  /** Keeps a finished journey, evicting the oldest as needed; one larger than the whole budget is not kept. */
  add(journey: Journey): void {
    const capacity = this.capacity;
    if (capacity === 0) return;
    const bytes = journeyBytes(journey);
    // Keeping one larger than the budget would evict every other journey for one explain().
    if (bytes > this.budget) return;
    while (this.count > 0 && (this.count === capacity || this.bytes + bytes > this.budget)) this.evict();
    const packed = pack(journey);
    const slot = (this.start + this.count) % capacity;
    if (slot === this.slots.length) {
      this.slots.push(packed);
      this.ids.push(packed.id);
      this.sizes.push(bytes);
    } else {
      this.slots[slot] = packed;
      this.ids[slot] = packed.id;
      this.sizes[slot] = bytes;
    }
    this.count++;
    this.bytes += bytes;
  }

  /** The newest kept journey of `id`, unpacked, or undefined. No index by key: the ring is scanned, newest first. */
  find(id: string | number): Journey | undefined {
    const ids = this.ids;
    for (let back = 1; back <= this.count; back++) {
      const slot = (this.start + this.count - back) % this.capacity;
      if (ids[slot] === id) return unpack(this.slots[slot]!);
    }
    return undefined;
  }

  private evict(): void {
    const slot = this.start;
    this.slots[slot] = undefined;
    this.ids[slot] = undefined;
    this.bytes -= this.sizes[slot];
    this.start = (slot + 1) % this.capacity;
    this.count--;
  }
}
