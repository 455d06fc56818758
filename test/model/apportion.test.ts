import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { apportionWaiting, type WaitInterval } from "../../src/model/apportion.js";
import { referenceApportion } from "./apportion.reference.js";

const DEPENDENCIES = 100;
const OTHER = 101;

function total(shares: Map<number, number>): number {
  let sum = 0;
  for (const seconds of shares.values()) sum += seconds;
  return sum;
}

describe("apportionWaiting", () => {
  it("splits a segment covered by two transfers in proportion to their weighted activities", () => {
    // Waiting 0–10 s. A transfer 2–6 s (network 3 s, deserialize 1 s) for this dependent alone, and
    // one 4–8 s shared with another dependent (weight 0.5, network 4 s). 0–2 and 8–10 are uncovered.
    const intervals: WaitInterval[] = [
      { start: 2, end: 6, weight: 1, priority: 0, activities: [1, 3, 2, 1] },
      { start: 4, end: 8, weight: 0.5, priority: 0, activities: [1, 4] },
    ];
    const shares = apportionWaiting(0, 10, intervals, DEPENDENCIES, OTHER);
    // 2–4: network 0.75/s, deserialize 0.25/s → 1.5 + 0.5. 4–6: network 0.75 + 0.5, deserialize
    // 0.25 (total 1.5/s) → network 2 × 1.25/1.5, deserialize 2 × 0.25/1.5. 6–8: network 2.
    expect(shares.get(DEPENDENCIES)).toBeCloseTo(4, 12);
    expect(shares.get(1)).toBeCloseTo(1.5 + 2 * (1.25 / 1.5) + 2, 12);
    expect(shares.get(2)).toBeCloseTo(0.5 + 2 * (0.25 / 1.5), 12);
    expect(total(shares)).toBeCloseTo(10, 12);
  });

  it("counts only the lowest priority present, and covered time with no activity seconds as other", () => {
    const intervals: WaitInterval[] = [
      { start: 0, end: 4, weight: 1, priority: 1, activities: [3, 4] }, // queued in fetch
      { start: 1, end: 3, weight: 1, priority: 0, activities: [1, 0] }, // a transfer with no activity time
    ];
    const shares = apportionWaiting(0, 4, intervals, DEPENDENCIES, OTHER);
    expect([...shares.entries()].sort((a, b) => a[0] - b[0])).toEqual([
      [3, 2],
      [OTHER, 2],
    ]);
  });

  it("agrees with the quadratic reference for random intervals (fast-check, 300 seeded runs)", () => {
    const interval = fc.record({
      start: fc.integer({ min: -20, max: 120 }),
      length: fc.integer({ min: 0, max: 60 }),
      weight: fc.constantFrom(1, 0.5, 1 / 3, 0.25, 0),
      priority: fc.integer({ min: 0, max: 2 }),
      activities: fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: -1, max: 9 })), { maxLength: 4 }),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 80 }),
        fc.array(interval, { maxLength: 40 }),
        (start, length, raw) => {
          const intervals: WaitInterval[] = raw.map((r) => ({
            start: r.start / 4,
            end: (r.start + r.length) / 4,
            weight: r.weight,
            priority: r.priority,
            activities: r.activities.flat(),
          }));
          const got = apportionWaiting(start, start + length, intervals, DEPENDENCIES, OTHER);
          const want = referenceApportion(start, start + length, intervals, DEPENDENCIES, OTHER);
          expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
          for (const [id, seconds] of want) expect(got.get(id)).toBeCloseTo(seconds, 9);
          if (length > 0) expect(total(got)).toBeCloseTo(length, 9);
        },
      ),
      { numRuns: 300, seed: 20261201 },
    );
  });

  it("agrees with the reference for serial intervals in time order, the path with no sweep (fast-check, 300 seeded runs)", () => {
    // Serial fetches and retried visits: each interval begins at or after the last one's end, some
    // touching, some with gaps, some outside the waiting interval or empty.
    const step = fc.record({
      gap: fc.integer({ min: 0, max: 8 }),
      length: fc.integer({ min: 0, max: 12 }),
      weight: fc.constantFrom(1, 0.5, 1 / 3, 0),
      priority: fc.integer({ min: 0, max: 1 }),
      activities: fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: -1, max: 9 })), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 120 }),
        fc.array(step, { minLength: 1, maxLength: 40 }),
        (start, length, steps) => {
          let at = 0;
          const intervals: WaitInterval[] = steps.map((s) => {
            const from = at + s.gap / 2;
            at = from + s.length / 2;
            return { start: from, end: at, weight: s.weight, priority: s.priority, activities: s.activities.flat() };
          });
          const got = apportionWaiting(start, start + length, intervals, DEPENDENCIES, OTHER);
          const want = referenceApportion(start, start + length, intervals, DEPENDENCIES, OTHER);
          expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
          for (const [id, seconds] of want) expect(got.get(id)).toBeCloseTo(seconds, 9);
          if (length > 0) expect(total(got)).toBeCloseTo(length, 9);
        },
      ),
      { numRuns: 300, seed: 20261201 },
    );
  });

  it("stays linearithmic: 16,000 overlapping transfers are apportioned in one pass", () => {
    // Not a timing assertion: the reference would take minutes here; this finishing at all (within
    // the suite's timeout) and summing to the wait is the check.
    const intervals: WaitInterval[] = [];
    for (let i = 0; i < 16_000; i++)
      intervals.push({ start: i * 0.001, end: i * 0.001 + 5, weight: 1, priority: i % 2, activities: [i % 7, 0.5] });
    const shares = apportionWaiting(0, 30, intervals, DEPENDENCIES, OTHER);
    expect(total(shares)).toBeCloseTo(30, 6);
    expect(shares.get(DEPENDENCIES)).toBeCloseTo(30 - (15.999 + 5), 6);
  });
});
