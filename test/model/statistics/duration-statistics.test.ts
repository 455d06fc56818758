import { describe, expect, it } from "vitest";
import { DurationStatistics } from "../../../src/model/statistics/index.js";
import { OutOfRangeError } from "../../../src/shared/errors.js";

function statisticsOf(values: readonly number[]): DurationStatistics {
  const statistics = new DurationStatistics();
  for (const value of values) statistics.record(value);
  return statistics;
}

describe("DurationStatistics", () => {
  it("reports moments, extremes and quantiles in one snapshot", () => {
    const statistics = statisticsOf([2, 4, 4, 4, 5, 5, 7, 9]);
    const stats = statistics.snapshot();
    expect(stats.count).toBe(8);
    expect(stats.mean).toBe(5);
    expect(stats.variance).toBe(4);
    expect(stats.stddev).toBe(2);
    expect(stats.min).toBe(2);
    expect(stats.max).toBe(9);
    expect(stats.quantile(0)).toBe(2);
    expect(stats.quantile(1)).toBe(9);
    // 2 to 9 fits the default 512 buckets at scale 7 (128 per doubling), where the bound is
    // 2^(2^-8) - 1 = 0.27 %.
    expect(statistics.histogram.scale).toBe(7);
    expect(stats.quantile(0.5)).toBe(2 ** (255.5 / 128));
    expect(Math.abs(stats.quantile(0.5) - 4) / 4).toBeLessThanOrEqual(2 ** (2 ** -8) - 1);
  });

  it("gives an empty snapshot of NaNs", () => {
    const stats = new DurationStatistics().snapshot();
    expect(stats.count).toBe(0);
    for (const reading of [stats.mean, stats.variance, stats.stddev, stats.min, stats.max, stats.quantile(0.5)]) {
      expect(reading).toBeNaN();
    }
    expect(Object.isFrozen(stats)).toBe(true);
  });

  it("rejects q outside [0, 1] with a RangeError naming q, empty or not", () => {
    for (const stats of [new DurationStatistics().snapshot(), statisticsOf([1]).snapshot()]) {
      for (const q of [-0.5, 2, Number.NaN]) {
        expect(() => stats.quantile(q)).toThrow(RangeError);
        expect(() => stats.quantile(q)).toThrow(/q must be/);
      }
    }
  });

  it("rejects a q that is no number with the same RangeError, describing q by its type, running none of its code", () => {
    const throwingToString = {
      toString: () => {
        throw new Error("q's own code ran");
      },
      valueOf: () => {
        throw new Error("q's own code ran");
      },
    };
    let deep: unknown[] = [];
    for (let depth = 0; depth < 1_000_000; depth++) deep = [deep];
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const cases: Array<[unknown, string]> = [
      [throwingToString, "an object"],
      [Symbol("q"), "a symbol"],
      [Object.create(null), "an object"],
      [deep, "an object"],
      [revoked, "an object"],
      ["0.5", "a string"],
      [null, "null"],
      [undefined, "undefined"],
      [1n, "a bigint"],
      [() => 0.5, "a function"],
    ];
    for (const stats of [new DurationStatistics().snapshot(), statisticsOf([1]).snapshot()]) {
      for (const [q, described] of cases) {
        expect(() => stats.quantile(q as number)).toThrow(
          new OutOfRangeError(`quantile q must be a number in [0, 1], got ${described}`),
        );
      }
    }
  });

  it("refuses NaN, negative and infinite durations and counts the rest", () => {
    const statistics = new DurationStatistics();
    for (const bad of [Number.NaN, -0.001, Infinity, -Infinity]) expect(statistics.record(bad)).toBe(false);
    expect(statistics.record(0)).toBe(true);
    expect(statistics.record(1.5)).toBe(true);
    expect(statistics.count).toBe(2);
    const stats = statistics.snapshot();
    expect([stats.count, stats.mean, stats.min, stats.max]).toEqual([2, 0.75, 0, 1.5]);
    expect(statistics.histogram.count).toBe(2);
    expect(statistics.histogram.zeroCount).toBe(1);
  });

  it("keeps a snapshot unchanged while recording goes on", () => {
    const statistics = statisticsOf([1, 2, 3]);
    const stats = statistics.snapshot();
    const medianBefore = stats.quantile(0.5);
    for (let repeat = 0; repeat < 100; repeat++) statistics.record(1000);
    statistics.reset();
    expect(stats.count).toBe(3);
    expect(stats.max).toBe(3);
    expect(stats.quantile(0.5)).toBe(medianBefore);
    expect(stats.quantile(1)).toBe(3);
    expect(Object.isFrozen(stats)).toBe(true);
    expect(() => {
      (stats as { count: number }).count = 7;
    }).toThrow(TypeError);
  });

  it("merges statistics recorded apart", () => {
    const left = statisticsOf([2, 4, 4, 4]);
    left.merge(statisticsOf([5, 5, 7, 9]));
    const merged = left.snapshot();
    const whole = statisticsOf([2, 4, 4, 4, 5, 5, 7, 9]).snapshot();
    expect([merged.count, merged.mean, merged.variance, merged.min, merged.max]).toEqual([8, 5, 4, 2, 9]);
    for (const q of [0.1, 0.5, 0.9]) expect(merged.quantile(q)).toBe(whole.quantile(q));
  });

  it("passes histogram options through and rejects bad ones by name", () => {
    const statistics = new DurationStatistics({ maxSize: 8, maxScale: 3 });
    expect(statistics.histogram.maxSize).toBe(8);
    expect(statistics.histogram.scale).toBe(3);
    expect(() => new DurationStatistics({ maxSize: 0 })).toThrow(/maxSize/);
  });
});
