/**
 * A ring of variable-length records of numbers, all in one Float64Array: at most `capacity`
 * records within a budget of bytes, the oldest out first. Adding a record allocates nothing once
 * the storage has grown to what the records need: it is written in place, over records that
 * were evicted.
 *
 * Why: what explain() keeps of finished journeys and serves was kept as the objects recorded.
 * Each of them was promoted out of the young generation, and then marked by every full garbage
 * collection for as long as it was kept. A worker whose host sets off full collections often
 * (the example cluster's, every ~76 tasks) paid that on each one (bench/README.md, "explain()'s
 * rings and the garbage collector"). A typed array's numbers are neither copied by the scavenger
 * nor scanned by the marker.
 *
 * The owner keeps what is not a number (keys, failures) in arrays of its own, indexed by the slot
 * that add() returns; a slot is reused, overwritten, when its record has been evicted.
 */

/** The largest storage, whatever the budget: 2^27 numbers, 1 GiB. */
const MAX_NUMBERS = 2 ** 27;
/** The first storage made, in numbers (8 KiB), doubled as records need more. */
const FIRST_NUMBERS = 1024;

export class RecordRing {
  /** The records' numbers; replaced (copied) when it grows, so read it after add(). */
  data = new Float64Array(0);
  /** Each slot's record: where its numbers start, and how many. */
  private readonly offsets: number[] = [];
  private readonly lengths: number[] = [];
  /** The oldest record's slot, and how many are kept. */
  private first = 0;
  private kept = 0;
  /** Where the next record goes: after the newest one, or at 0 once the ring wrapped. */
  private head = 0;
  /** The budget's bytes in use: `fixedBytes` + 8 a number for each record kept. */
  private bytes = 0;
  /** The most numbers the storage may hold. */
  private readonly maxNumbers: number;

  constructor(
    /** Records kept at most; 0 keeps none. */
    readonly capacity: number,
    /** Bytes the records may hold, counted as `fixedBytes` + 8 a number each. */
    private readonly budget: number,
    /** What a record costs besides its numbers (its slot, its owner's objects), for the budget. */
    private readonly fixedBytes: number,
  ) {
    this.maxNumbers = Math.min(MAX_NUMBERS, Math.floor(budget / 8));
  }

  /** How many records are kept. */
  get count(): number {
    return this.kept;
  }

  /**
   * Makes room for a record of `length` numbers, evicting the oldest as needed, and returns its
   * slot; write its numbers from offset(slot). -1 when none is kept or the record alone is larger
   * than the budget: keeping it would evict every other record for one.
   */
  add(length: number): number {
    if (this.capacity === 0) return -1;
    const bytes = this.fixedBytes + 8 * length;
    if (bytes > this.budget || length > this.maxNumbers) return -1;
    while (this.kept > 0 && (this.kept === this.capacity || this.bytes + bytes > this.budget)) this.evict();
    const offset = this.place(length);
    const slot = (this.first + this.kept) % this.capacity;
    // Grown as records come (a slot is at most one past the end: storing there appends), so a
    // large capacity costs nothing up front.
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.kept++;
    this.bytes += bytes;
    this.head = offset + length;
    return slot;
  }

  offset(slot: number): number {
    return this.offsets[slot];
  }

  length(slot: number): number {
    return this.lengths[slot];
  }

  /** The slot of the `back`-th newest record (1: the newest), for back in 1..count. */
  newest(back: number): number {
    return (this.first + this.kept - back) % this.capacity;
  }

  /** Where a record of `length` numbers fits, evicting the oldest records that are in the way. */
  private place(length: number): number {
    for (;;) {
      if (this.kept === 0) {
        this.head = 0;
        if (length > this.data.length) this.grow(length);
        return 0;
      }
      const tail = this.offsets[this.first];
      if (this.head > tail) {
        // In order, [tail, head): after the newest; else grown, while the storage rather than the
        // count is what limits the records kept; else at the start, before the oldest.
        if (this.head + length <= this.data.length) return this.head;
        const canGrow = this.data.length < this.maxNumbers;
        if (canGrow && (this.kept < this.capacity - 1 || length > tail)) {
          this.grow(this.head + length);
          if (this.head + length <= this.data.length) return this.head;
        }
        if (length <= tail) return 0;
      } else if (this.head + length <= tail) {
        // Wrapped, [tail, end) and [0, head): between the newest and the oldest.
        return this.head;
      }
      this.evict();
    }
  }

  /** Doubles the storage, or more, up to maxNumbers: only while the records are in order, which keeps their offsets. */
  private grow(needed: number): void {
    let size = Math.max(FIRST_NUMBERS, this.data.length * 2);
    while (size < needed) size *= 2;
    const grown = new Float64Array(Math.min(size, this.maxNumbers));
    grown.set(this.data.subarray(0, this.head));
    this.data = grown;
  }

  private evict(): void {
    const slot = this.first;
    this.bytes -= this.fixedBytes + 8 * this.lengths[slot];
    this.first = (slot + 1) % this.capacity;
    this.kept--;
  }
}

/**
 * Writes `numbers` into `data` from `at`; returns where they end. Through `set()`, a builtin that
 * copies a plain array's numbers as they are stored: a loop reading `numbers[index]` boxes each
 * double (a 16 B HeapNumber) for as long as V8 runs it unoptimized, which in the replayed cluster
 * worker (bench/README.md) it did: 271–290 B a task.
 */
export function copy(data: Float64Array, at: number, numbers: readonly number[]): number {
  data.set(numbers, at);
  return at + numbers.length;
}
