import { TRANSFER_OUTCOMES } from "../model/activities.js";
import { copy, RecordRing } from "./record-ring.js";
import { Serve } from "./serve-ledger.js";

/**
 * The ended serves kept for explain(), as retained.ts keeps finished journeys: each one's numbers
 * written into a RecordRing, its peer and the keys asked for beside them, so the Serve as recorded
 * (its activity records, span state, failure) dies young.
 */

/** A record's fields, then the serve's activity records. */
const ID = 0;
const START = 1;
const END = 2;
const BYTES = 3;
const OTHER = 4;
/** TRANSFER_OUTCOMES index, -1 for none. */
const OUTCOME = 5;
const HEADER = 6;

/** What a kept serve costs the budget besides its numbers: its slot's four fields. */
const SLOT_BYTES = 32;

export class RetainedServes {
  private readonly ring: RecordRing;
  /** By slot: the peer that asked, the keys it asked for (map ids). Overwritten when the slot is reused. */
  private readonly peers: string[] = [];
  private readonly keyIds: Array<ReadonlyArray<string | number>> = [];

  constructor(capacity: number, budget: number) {
    this.ring = new RecordRing(capacity, budget, SLOT_BYTES);
  }

  /** Keeps an ended serve, evicting the oldest as needed. */
  add(serve: Serve): void {
    const records = serve.activities;
    const slot = this.ring.add(HEADER + records.length);
    if (slot === -1) return;
    const data = this.ring.data;
    const at = this.ring.offset(slot);
    data[at + ID] = serve.id;
    data[at + START] = serve.start;
    data[at + END] = serve.end;
    data[at + BYTES] = serve.bytes;
    data[at + OTHER] = serve.other;
    data[at + OUTCOME] = TRANSFER_OUTCOMES.indexOf(serve.outcome as (typeof TRANSFER_OUTCOMES)[number]);
    copy(data, at + HEADER, records);
    // A slot is at most one past the end: storing there appends, as a push would.
    this.peers[slot] = serve.peer;
    this.keyIds[slot] = serve.keyIds;
  }

  /** The kept serves that asked for `id`, oldest first, as ended Serves again. */
  of(id: string | number): Serve[] {
    const found: Serve[] = [];
    const ring = this.ring;
    for (let back = ring.count; back >= 1; back--) {
      const slot = ring.newest(back);
      if (this.keyIds[slot].includes(id)) found.push(this.unpack(slot));
    }
    return found;
  }

  private unpack(slot: number): Serve {
    const data = this.ring.data;
    const at = this.ring.offset(slot);
    const serve = new Serve(data[at + ID], this.peers[slot], this.keyIds[slot], data[at + START]);
    serve.end = data[at + END];
    serve.bytes = data[at + BYTES];
    serve.other = data[at + OTHER];
    serve.outcome = TRANSFER_OUTCOMES[data[at + OUTCOME]] ?? "";
    const length = this.ring.length(slot);
    for (let index = HEADER; index < length; index++) serve.activities.push(data[at + index]);
    return serve;
  }
}
