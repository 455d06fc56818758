import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { WelfordAccumulator } from "../../../src/model/statistics/index.js";

function accumulatorOf(values: readonly number[]): WelfordAccumulator {
  const accumulator = new WelfordAccumulator();
  for (const value of values) accumulator.record(value);
  return accumulator;
}

/** Two passes: the mean first, then squared deviations from it. */
function twoPass(values: readonly number[]): { mean: number; variance: number } {
  const mean = values.reduce((total, value) => total + value, 0) / values.length;
  const squares = values.reduce((total, value) => total + (value - mean) ** 2, 0);
  return { mean, variance: squares / values.length };
}

/** Relative to `scale`, with an absolute floor so that subnormal inputs cannot demand exactness. */
function expectRelativelyClose(actual: number, expected: number, tolerance: number, scale: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance * scale + 1e-300);
}

describe("WelfordAccumulator", () => {
  it("gives the textbook numbers", () => {
    const accumulator = accumulatorOf([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(accumulator.count).toBe(8);
    expect(accumulator.mean).toBe(5);
    expect(accumulator.variance).toBe(4);
    expect(accumulator.stddev).toBe(2);
    expect(accumulator.sampleVariance).toBe(32 / 7);
    expect(accumulator.min).toBe(2);
    expect(accumulator.max).toBe(9);
  });

  it("is NaN everywhere when empty and has zero spread for one value", () => {
    const empty = new WelfordAccumulator();
    for (const reading of [empty.mean, empty.variance, empty.sampleVariance, empty.stddev, empty.min, empty.max]) {
      expect(reading).toBeNaN();
    }
    const single = accumulatorOf([1.25]);
    expect(single.mean).toBe(1.25);
    expect(single.variance).toBe(0);
    expect(single.stddev).toBe(0);
    expect(single.sampleVariance).toBeNaN();
  });

  it("keeps its precision where sums of squares cancel", () => {
    // Four durations a few nanoseconds apart around 1e9: sum(x^2) - n*mean^2 has no correct digit left.
    const accumulator = accumulatorOf([1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16]);
    expect(accumulator.mean).toBe(1e9 + 10);
    expect(accumulator.variance).toBe(22.5);
  });

  it("matches a two-pass computation", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { minLength: 1, maxLength: 400 }),
        (values) => {
          const accumulator = accumulatorOf(values);
          const reference = twoPass(values);
          const magnitude = Math.max(...values.map(Math.abs));
          expectRelativelyClose(accumulator.mean, reference.mean, 1e-12, magnitude);
          expectRelativelyClose(accumulator.variance, reference.variance, 1e-9, magnitude * magnitude);
          expect(accumulator.min).toBe(Math.min(...values));
          expect(accumulator.max).toBe(Math.max(...values));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("merges two halves into the statistics of the whole", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { maxLength: 200 }),
        fc.array(fc.double({ min: 0, max: 1e4, noNaN: true }), { maxLength: 200 }),
        (first, second) => {
          const merged = accumulatorOf(first);
          merged.merge(accumulatorOf(second));
          const whole = accumulatorOf([...first, ...second]);
          expect(merged.count).toBe(whole.count);
          if (whole.count === 0) {
            expect(merged.mean).toBeNaN();
            return;
          }
          const magnitude = Math.max(...first, ...second);
          expectRelativelyClose(merged.mean, whole.mean, 1e-12, magnitude);
          expectRelativelyClose(merged.variance, whole.variance, 1e-9, magnitude * magnitude);
          expect(merged.min).toBe(whole.min);
          expect(merged.max).toBe(whole.max);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("merges the textbook halves exactly, with itself, and with empty accumulators", () => {
    const left = accumulatorOf([2, 4, 4, 4]);
    left.merge(accumulatorOf([5, 5, 7, 9]));
    expect([left.count, left.mean, left.variance, left.min, left.max]).toEqual([8, 5, 4, 2, 9]);

    const doubled = accumulatorOf([1, 3]);
    doubled.merge(doubled);
    expect([doubled.count, doubled.mean, doubled.variance]).toEqual([4, 2, 1]);

    const fromEmpty = new WelfordAccumulator();
    fromEmpty.merge(accumulatorOf([1, 3]));
    fromEmpty.merge(new WelfordAccumulator());
    expect([fromEmpty.count, fromEmpty.mean, fromEmpty.variance, fromEmpty.min, fromEmpty.max]).toEqual([
      2, 2, 1, 1, 3,
    ]);
  });

  it("reset and clone", () => {
    const accumulator = accumulatorOf([1, 2, 3]);
    const copy = accumulator.clone();
    accumulator.reset();
    expect(accumulator.count).toBe(0);
    expect(accumulator.mean).toBeNaN();
    expect([copy.count, copy.mean, copy.min, copy.max]).toEqual([3, 2, 1, 3]);
    accumulator.record(10);
    expect([accumulator.mean, accumulator.variance, accumulator.min, accumulator.max]).toEqual([10, 0, 10, 10]);
  });
});
