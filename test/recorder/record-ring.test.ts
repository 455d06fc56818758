import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RecordRing } from "../../src/recorder/record-ring.js";

/** Adds a record of `length` numbers, each `tag * 1000 + index`, and returns its slot. */
function add(ring: RecordRing, tag: number, length: number): number {
  const slot = ring.add(length);
  if (slot === -1) return -1;
  const at = ring.offset(slot);
  for (let index = 0; index < length; index++) ring.data[at + index] = tag * 1000 + index;
  return slot;
}

/** The kept records, newest first, as [tag, length] read back from the ring's numbers. */
function kept(ring: RecordRing): Array<[number, number]> {
  const records: Array<[number, number]> = [];
  for (let back = 1; back <= ring.count; back++) {
    const slot = ring.newest(back);
    const at = ring.offset(slot);
    const length = ring.length(slot);
    const tag = Math.floor(ring.data[at] / 1000);
    for (let index = 0; index < length; index++) expect(ring.data[at + index]).toBe(tag * 1000 + index);
    records.push([tag, length]);
  }
  return records;
}

describe("RecordRing", () => {
  it("keeps the newest records whole, within its count and its budget, whatever their lengths", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 64, max: 4096 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 120 }),
        (capacity, budget, lengths) => {
          const ring = new RecordRing(capacity, budget, 16);
          const added: Array<[number, number]> = [];
          lengths.forEach((length, tag) => {
            const slot = add(ring, tag, length);
            if (16 + 8 * length > budget) {
              expect(slot).toBe(-1);
              return;
            }
            expect(slot).not.toBe(-1);
            added.push([tag, length]);
            const records = kept(ring);
            // The newest first, a run of the newest added with none skipped.
            expect(records).toEqual(added.slice(added.length - records.length).reverse());
            expect(records.length).toBeGreaterThanOrEqual(1);
            expect(records.length).toBeLessThanOrEqual(capacity);
            const bytes = records.reduce((sum, [, n]) => sum + 16 + 8 * n, 0);
            expect(bytes).toBeLessThanOrEqual(budget);
            expect(ring.data.length).toBeLessThanOrEqual(Math.floor(budget / 8));
          });
        },
      ),
    );
  });

  it("evicts by count alone when the budget is roomy, and then writes in place: the storage stops growing", () => {
    const ring = new RecordRing(100, 64 * 1024 * 1024, 40);
    const sizes = [12, 40, 7, 90, 33];
    let storage: Float64Array | undefined;
    for (let tag = 0; tag < 5000; tag++) {
      add(ring, tag, sizes[tag % sizes.length]);
      if (tag === 1000) storage = ring.data;
    }
    expect(ring.count).toBe(100);
    expect(kept(ring).map(([tag]) => tag)).toEqual(Array.from({ length: 100 }, (_, back) => 4999 - back));
    // The last 4,000 records went over evicted ones: no new storage, 4,096 numbers for the ~3,640 kept.
    expect(ring.data).toBe(storage);
    expect(ring.data.length).toBe(4096);
  });

  it("keeps nothing with a capacity of 0, and not a record larger than the budget, which evicts nothing", () => {
    expect(new RecordRing(0, 1024, 0).add(1)).toBe(-1);
    const ring = new RecordRing(10, 1024, 0);
    add(ring, 1, 64);
    expect(add(ring, 2, 129)).toBe(-1);
    expect(kept(ring)).toEqual([[1, 64]]);
  });
});
