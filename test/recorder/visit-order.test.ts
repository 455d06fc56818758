import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ACTIVITY_FIELDS, firstRecordOf } from "../../src/recorder/journey.js";
import { firstAtOrAfter } from "../../src/recorder/sorted.js";

// A journey's activity records and its transfers' visits are appended in visit order, so the
// first of a visit is found by binary search (explain(), span trees): it must be what a scan finds.
const visitsInOrder = fc
  .array(fc.integer({ min: 0, max: 3 }), { maxLength: 60 })
  .map((steps) => steps.reduce<number[]>((visits, step) => [...visits, (visits.at(-1) ?? -1) + step], []));

describe("the first record or transfer of a visit", () => {
  it("firstAtOrAfter: the first index whose visit is at or after the one asked", () => {
    fc.assert(
      fc.property(visitsInOrder, fc.integer({ min: -2, max: 200 }), (visits, visit) => {
        const scanned = visits.findIndex((v) => v >= visit);
        expect(firstAtOrAfter(visits, visit)).toBe(scanned === -1 ? visits.length : scanned);
      }),
    );
  });

  it("firstRecordOf: the same over records of ACTIVITY_FIELDS numbers, as an offset", () => {
    fc.assert(
      fc.property(visitsInOrder, fc.integer({ min: -2, max: 200 }), (visits, visit) => {
        const records = visits.flatMap((v, i) => [v, i, -1, i, i + 1, 0, 1]);
        expect(ACTIVITY_FIELDS).toBe(7);
        const scanned = visits.findIndex((v) => v >= visit);
        expect(firstRecordOf(records, visit)).toBe((scanned === -1 ? visits.length : scanned) * ACTIVITY_FIELDS);
      }),
    );
  });
});
