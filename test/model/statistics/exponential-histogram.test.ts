import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AggregationType,
  MeterProvider,
  MetricReader,
  type ExponentialHistogram as OtelExponentialHistogram,
} from "@opentelemetry/sdk-metrics";
import { ExponentialHistogram, bucketIndex } from "../../../src/model/statistics/index.js";

function histogramOf(
  values: readonly number[],
  options?: { maxSize?: number; maxScale?: number },
): ExponentialHistogram {
  const histogram = new ExponentialHistogram(options);
  for (const value of values) histogram.record(value);
  return histogram;
}

interface DataPoint {
  scale: number;
  offset: number;
  counts: number[];
  zeroCount: number;
  count: number;
  min: number;
  max: number;
}

function dataPoint(histogram: ExponentialHistogram): DataPoint {
  return {
    scale: histogram.scale,
    offset: histogram.positiveOffset,
    counts: histogram.positiveBucketCounts(),
    zeroCount: histogram.zeroCount,
    count: histogram.count,
    min: histogram.min,
    max: histogram.max,
  };
}

function expectSameSum(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12 * Math.max(Math.abs(expected), Number.MIN_VALUE));
}

describe("ExponentialHistogram construction", () => {
  it("defaults to 160 buckets and scale 20, like the OpenTelemetry SDK", () => {
    const histogram = new ExponentialHistogram();
    expect(histogram.maxSize).toBe(160);
    expect(histogram.maxScale).toBe(20);
    expect(histogram.scale).toBe(20);
  });

  it.each([
    [{ maxSize: 1 }, /maxSize/],
    [{ maxSize: 2.5 }, /maxSize/],
    [{ maxSize: Number.NaN }, /maxSize/],
    [{ maxScale: 21 }, /maxScale/],
    [{ maxScale: -11 }, /maxScale/],
    [{ maxScale: 0.5 }, /maxScale/],
  ])("rejects %o naming the option", (options, message) => {
    expect(() => new ExponentialHistogram(options)).toThrow(RangeError);
    expect(() => new ExponentialHistogram(options)).toThrow(message);
  });
});

describe("ExponentialHistogram.record", () => {
  it("keeps count, sum, min, max, zero count and buckets", () => {
    const histogram = histogramOf([3, 0, 1.5, 4], { maxScale: 0 });
    // Scale 0: (1, 2] is bucket 0, (2, 4] is bucket 1.
    expect(dataPoint(histogram)).toEqual({
      scale: 0,
      offset: 0,
      counts: [1, 2],
      zeroCount: 1,
      count: 4,
      min: 0,
      max: 4,
    });
    expect(histogram.sum).toBe(8.5);
  });

  it("rejects NaN, negative values and infinities without counting them", () => {
    const histogram = histogramOf([1]);
    for (const bad of [Number.NaN, -1, -Number.MIN_VALUE, Infinity, -Infinity]) {
      expect(histogram.record(bad)).toBe(false);
    }
    expect(histogram.record(2)).toBe(true);
    expect(histogram.count).toBe(2);
    expect(histogram.sum).toBe(3);
    expect(histogram.max).toBe(2);
  });

  it("counts -0 as a zero and never reports -0 as min or max", () => {
    const histogram = histogramOf([-0]);
    expect(histogram.zeroCount).toBe(1);
    expect(Object.is(histogram.min, 0)).toBe(true);
    expect(Object.is(histogram.max, 0)).toBe(true);
  });

  it("reports NaN min and max, offset 0 and no buckets when empty", () => {
    const histogram = new ExponentialHistogram();
    expect(histogram.min).toBeNaN();
    expect(histogram.max).toBeNaN();
    expect(histogram.positiveOffset).toBe(0);
    expect(histogram.positiveBucketCounts()).toEqual([]);
    expect(histogram.count).toBe(0);
    expect(histogram.sum).toBe(0);
  });

  it("stays at the highest scale while the values fit, and counts a single value at scale 20", () => {
    const histogram = histogramOf([1.5, 1.5]);
    expect(histogram.scale).toBe(20);
    expect(histogram.positiveOffset).toBe(bucketIndex(1.5, 20));
    expect(histogram.positiveBucketCounts()).toEqual([2]);
  });

  it("returns a fresh array of counts each time", () => {
    const histogram = histogramOf([1, 2]);
    const counts = histogram.positiveBucketCounts();
    counts[0] = 99;
    expect(histogram.positiveBucketCounts()[0]).toBe(1);
  });
});

describe("ExponentialHistogram downscaling", () => {
  it("halves the scale and pairs buckets when the range outgrows maxSize", () => {
    const histogram = histogramOf([1, 2, 4, 8], { maxSize: 4, maxScale: 0 });
    // Scale 0 indices -1, 0, 1, 2: four buckets, still fits.
    expect(dataPoint(histogram)).toMatchObject({ scale: 0, offset: -1, counts: [1, 1, 1, 1] });
    histogram.record(16);
    // Index 3 would make five buckets; at scale -1 buckets are (1/4, 1], (1, 4], (4, 16].
    expect(dataPoint(histogram)).toMatchObject({ scale: -1, offset: -1, counts: [1, 2, 2] });
  });

  it("downscales by as many steps as needed at once", () => {
    const histogram = histogramOf([1.5, 1e6], { maxSize: 4, maxScale: 20 });
    // 1e6 is 2^19.93: with 4 buckets the two values must sit within 3 indices, scale -3.
    expect(histogram.scale).toBe(-3);
    expect(dataPoint(histogram)).toMatchObject({ offset: 0, counts: [1, 0, 1] });
  });

  it("extends the window at both ends of the ring before compacting it", () => {
    // Descending values wrap the window around the ring's slot 0; ascending ones then
    // force a downscale that has to unwrap it.
    const order = [32, 16, 8, 4, 512, 1024];
    const histogram = histogramOf(order, { maxSize: 8, maxScale: 0 });
    // Scale 0 indices 4, 3, 2, 1, 8, 9: span 9 > 8 buckets, so scale -1: 0, 1, 1, 2, 4, 4.
    expect(dataPoint(histogram)).toMatchObject({ scale: -1, offset: 0, counts: [1, 2, 1, 0, 2] });
    expect(dataPoint(histogramOf([...order].reverse(), { maxSize: 8, maxScale: 0 }))).toEqual(dataPoint(histogram));
  });

  it("never holds more than maxSize buckets and ends at the largest scale that fits", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1e-300, max: 1e300, noNaN: true }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: -10, max: 20 }),
        (values, maxSize, maxScale) => {
          const histogram = histogramOf(values, { maxSize, maxScale });
          const counts = histogram.positiveBucketCounts();
          expect(counts.length).toBeLessThanOrEqual(maxSize);
          // Every bucket equals a direct count of the values mapped at the final scale.
          const direct = new Map<number, number>();
          for (const value of values) {
            const index = bucketIndex(value, histogram.scale);
            direct.set(index, (direct.get(index) ?? 0) + 1);
          }
          counts.forEach((count, position) => {
            expect(count).toBe(direct.get(histogram.positiveOffset + position) ?? 0);
          });
          // One scale higher the same values would not have fitted.
          if (histogram.scale < maxScale) {
            const indices = values.map((value) => bucketIndex(value, histogram.scale + 1));
            expect(Math.max(...indices) - Math.min(...indices)).toBeGreaterThanOrEqual(maxSize);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("ExponentialHistogram.merge", () => {
  it("brings both histograms to the common scale", () => {
    const fine = histogramOf([1.1, 1.2], { maxSize: 4 });
    const coarse = histogramOf([1.5, 1000], { maxSize: 4 });
    fine.merge(coarse);
    expect(dataPoint(fine)).toEqual(dataPoint(histogramOf([1.1, 1.2, 1.5, 1000], { maxSize: 4 })));
  });

  it("equals the histogram of the concatenated samples, bucket for bucket", () => {
    const sample = fc.oneof(
      fc.constant(0),
      fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
      fc.double({ min: 1e-300, max: 1e300, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(sample, { maxLength: 120 }),
        fc.array(sample, { maxLength: 120 }),
        fc.integer({ min: 2, max: 200 }),
        fc.integer({ min: -10, max: 20 }),
        (first, second, maxSize, maxScale) => {
          const options = { maxSize, maxScale };
          const merged = histogramOf(first, options);
          merged.merge(histogramOf(second, options));
          const concatenated = histogramOf([...first, ...second], options);
          expect(dataPoint(merged)).toEqual(dataPoint(concatenated));
          expectSameSum(merged.sum, concatenated.sum);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("is order-independent across three histograms", () => {
    const values = fc.array(fc.double({ min: 1e-9, max: 1e9, noNaN: true }), { maxLength: 60 });
    fc.assert(
      fc.property(values, values, values, (first, second, third) => {
        const leftFirst = histogramOf(first, { maxSize: 16 });
        leftFirst.merge(histogramOf(second, { maxSize: 16 }));
        leftFirst.merge(histogramOf(third, { maxSize: 16 }));
        const rightFirst = histogramOf(third, { maxSize: 16 });
        const middle = histogramOf(second, { maxSize: 16 });
        middle.merge(histogramOf(first, { maxSize: 16 }));
        rightFirst.merge(middle);
        expect(dataPoint(leftFirst)).toEqual(dataPoint(rightFirst));
      }),
      { numRuns: 200 },
    );
  });

  it("merges into an empty histogram, from an empty one, and with itself", () => {
    const values = [0.5, 3, 3, 70];
    const empty = new ExponentialHistogram({ maxSize: 4 });
    empty.merge(histogramOf(values, { maxSize: 4 }));
    expect(dataPoint(empty)).toEqual(dataPoint(histogramOf(values, { maxSize: 4 })));

    const full = histogramOf(values, { maxSize: 4 });
    full.merge(new ExponentialHistogram({ maxSize: 4 }));
    expect(dataPoint(full)).toEqual(dataPoint(histogramOf(values, { maxSize: 4 })));

    const doubled = histogramOf(values, { maxSize: 4 });
    doubled.merge(doubled);
    expect(dataPoint(doubled)).toEqual(dataPoint(histogramOf([...values, ...values], { maxSize: 4 })));
    expect(doubled.sum).toBe(2 * 76.5);
  });

  it("keeps the other histogram unchanged", () => {
    const other = histogramOf([1e-6, 1e6], { maxSize: 8 });
    const before = dataPoint(other);
    const target = histogramOf([5], { maxSize: 8 });
    target.merge(other);
    expect(dataPoint(other)).toEqual(before);
  });
});

describe("ExponentialHistogram.quantile", () => {
  it("returns min at q = 0, max at q = 1 and NaN when empty", () => {
    const histogram = histogramOf([0.25, 1, 7, 40]);
    expect(histogram.quantile(0)).toBe(0.25);
    expect(histogram.quantile(1)).toBe(40);
    expect(new ExponentialHistogram().quantile(0.5)).toBeNaN();
  });

  it("returns the log midpoint of the bucket holding rank ceil(q * count), clamped to [min, max]", () => {
    const histogram = histogramOf([1.5, 3, 3, 9], { maxScale: 0 });
    // Buckets at scale 0: (1, 2] = 1, (2, 4] = 2, (8, 16] = 1.
    expect(histogram.quantile(0.25)).toBe(1.5); // midpoint 2^0.5 = 1.414, raised to min
    expect(histogram.quantile(0.5)).toBe(2 ** 1.5);
    expect(histogram.quantile(0.75)).toBe(2 ** 1.5);
    expect(histogram.quantile(0.76)).toBe(9); // midpoint 2^3.5 = 11.31, lowered to max
    histogram.record(12);
    expect(histogram.quantile(0.8)).toBe(2 ** 3.5);
  });

  it("answers 0 while the rank falls among the zeros", () => {
    const histogram = histogramOf([0, 0, 0, 5]);
    expect(histogram.quantile(0.5)).toBe(0);
    expect(histogram.quantile(0.75)).toBe(0);
    expect(histogram.quantile(0.9)).toBe(5);
  });

  it("gives a single value back exactly", () => {
    expect(histogramOf([0.123]).quantile(0.5)).toBe(0.123);
  });

  it("stays within the documented bound sqrt(base) - 1 of the nearest-rank sample quantile", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1e-6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: 160 }),
        (values, q, maxSize) => {
          const histogram = histogramOf(values, { maxSize });
          const sorted = [...values].sort((left, right) => left - right);
          const exact = sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
          const bound = 2 ** (2 ** -(histogram.scale + 1)) - 1;
          const error = Math.abs(histogram.quantile(q) - exact) / exact;
          expect(error).toBeLessThanOrEqual(bound * (1 + 1e-12));
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each([-0.01, 1.01, Number.NaN, Infinity])("throws a RangeError naming q for q = %s", (q) => {
    expect(() => histogramOf([1]).quantile(q)).toThrow(RangeError);
    expect(() => new ExponentialHistogram().quantile(q)).toThrow(/q must be/);
  });
});

describe("ExponentialHistogram.reset and clone", () => {
  it("reset forgets everything and returns to maxScale", () => {
    const histogram = histogramOf([1e-5, 1, 1e5], { maxSize: 8, maxScale: 10 });
    expect(histogram.scale).toBeLessThan(10);
    histogram.reset();
    expect(dataPoint(histogram)).toEqual({
      scale: 10,
      offset: 0,
      counts: [],
      zeroCount: 0,
      count: 0,
      min: Number.NaN,
      max: Number.NaN,
    });
    histogram.record(3);
    expect(dataPoint(histogram)).toEqual(dataPoint(histogramOf([3], { maxSize: 8, maxScale: 10 })));
  });

  it("clone is independent of the original", () => {
    const original = histogramOf([1, 2, 3], { maxSize: 4 });
    const copy = original.clone();
    original.record(1e9);
    expect(dataPoint(copy)).toEqual(dataPoint(histogramOf([1, 2, 3], { maxSize: 4 })));
    expect(copy.maxSize).toBe(4);
  });
});

class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

async function otelDataPoint(values: readonly number[], maxSize: number): Promise<OtelExponentialHistogram> {
  const reader = new CollectingReader();
  const provider = new MeterProvider({
    readers: [reader],
    views: [
      {
        instrumentName: "duration",
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM, options: { maxSize } },
      },
    ],
  });
  const instrument = provider.getMeter("test").createHistogram("duration");
  for (const value of values) instrument.record(value);
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics.scopeMetrics[0].metrics[0].dataPoints[0].value as OtelExponentialHistogram;
}

describe("ExponentialHistogram against the OpenTelemetry SDK", () => {
  it("produces the SDK's data point for the same measurements", async () => {
    let state = 12345;
    const random = (): number => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 4294967296;
    };
    for (const [decades, maxSize] of [
      [0.5, 160],
      [4, 160],
      [12, 160],
      [3, 20],
    ] as const) {
      const values = Array.from({ length: 2000 }, () => 10 ** ((random() - 0.5) * decades));
      values.push(0);
      const ours = histogramOf(values, { maxSize });
      const theirs = await otelDataPoint(values, maxSize);
      expect(ours.scale).toBe(theirs.scale);
      expect(ours.positiveOffset).toBe(theirs.positive.offset);
      expect(ours.positiveBucketCounts()).toEqual(theirs.positive.bucketCounts);
      expect(ours.zeroCount).toBe(theirs.zeroCount);
      expect(ours.count).toBe(theirs.count);
      expect(ours.min).toBe(theirs.min);
      expect(ours.max).toBe(theirs.max);
      expectSameSum(ours.sum, theirs.sum ?? Number.NaN);
    }
  });
});
