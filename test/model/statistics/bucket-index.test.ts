import { describe, expect, it } from "vitest";
import { bucketIndex, bucketLowerBoundary } from "../../../src/model/statistics/index.js";

// The reference decides `base^i < value` in exact integer arithmetic, independently of the
// implementation's logarithms: value = significand * 2^exponent with an integer significand,
// and for scale s >= 0, base^i < value  <=>  2^i < value^(2^s).

interface ExactDouble {
  significand: bigint;
  exponent: number;
}

function decompose(value: number): ExactDouble {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const biasedExponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  if (biasedExponent === 0) return { significand: fraction, exponent: -1074 };
  return { significand: fraction | (1n << 52n), exponent: biasedExponent - 1075 };
}

function bitLength(value: bigint): number {
  return value.toString(2).length;
}

function isPowerOfTwo(value: bigint): boolean {
  return (value & (value - 1n)) === 0n;
}

/**
 * floor(log2(significand^(2^squarings))), by squaring with interval bounds truncated to
 * `precision` bits; exact whenever the two bounds agree on their bit length, which the
 * function insists on.
 */
function floorLog2OfPower(significand: bigint, squarings: number, precision = 256): number {
  let lower = significand;
  let upper = significand;
  let shift = 0;
  for (let step = 0; step < squarings; step++) {
    lower *= lower;
    upper *= upper;
    shift *= 2;
    const excess = bitLength(lower) - precision;
    if (excess > 0) {
      const dropped = BigInt(excess);
      lower >>= dropped;
      upper = ((upper - 1n) >> dropped) + 1n;
      shift += excess;
    }
  }
  const lowerLog = bitLength(lower) - 1 + shift;
  const upperLog = bitLength(upper) - 1 + shift;
  if (lowerLog !== upperLog) {
    if (precision > 4096) throw new Error("reference could not decide");
    return floorLog2OfPower(significand, squarings, precision * 4);
  }
  return lowerLog;
}

/** The i with base^i < value <= base^(i+1), computed exactly. Subnormals count as 2^-1022. */
function referenceIndex(value: number, scale: number): number {
  const { significand, exponent } = decompose(Math.max(value, 2 ** -1022));
  const power = isPowerOfTwo(significand);
  if (scale >= 0) {
    // value^(2^s) = significand^(2^s) * 2^(exponent * 2^s); i is the largest integer with
    // 2^i < that, i.e. floor(log2) when it is not a power of two, log2 - 1 when it is.
    const logOfPower = floorLog2OfPower(significand, scale);
    return exponent * 2 ** scale + logOfPower - (power ? 1 : 0);
  }
  // base^i = 2^(i * 2^-s): the largest i with 2^(i * 2^-s) < value.
  const width = 2 ** -scale;
  const floorLog2 = bitLength(significand) - 1 + exponent;
  const below = (candidate: number): boolean => {
    const boundaryExponent = candidate * width;
    return power ? boundaryExponent < floorLog2 : boundaryExponent <= floorLog2;
  };
  let index = Math.floor(floorLog2 / width);
  while (below(index + 1)) index++;
  while (!below(index)) index--;
  return index;
}

function stepUlps(value: number, steps: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(steps));
  return view.getFloat64(0);
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

const POSITIVE_SCALES = [1, 2, 3, 4, 5, 8, 12, 16, 19, 20];
const NON_POSITIVE_SCALES = [-10, -8, -4, -3, -2, -1, 0];

describe("the reference itself", () => {
  it("agrees with hand-worked indices", () => {
    expect(referenceIndex(1, 0)).toBe(-1);
    expect(referenceIndex(1.5, 0)).toBe(0);
    expect(referenceIndex(2, 0)).toBe(0);
    expect(referenceIndex(3, 1)).toBe(3); // sqrt(2)^3 = 2.83 < 3 <= 4
    expect(referenceIndex(2.8, 1)).toBe(2);
    expect(referenceIndex(16, -1)).toBe(1); // (4, 16]
    expect(referenceIndex(17, -1)).toBe(2);
    expect(referenceIndex(0.25, -1)).toBe(-2); // (1/16, 1/4]
  });
});

describe("bucketIndex", () => {
  it("puts every exact power of two in the bucket it closes, at every scale", () => {
    for (const scale of [...NON_POSITIVE_SCALES, ...POSITIVE_SCALES]) {
      for (let exponent = -1022; exponent <= 1023; exponent++) {
        const value = 2 ** exponent;
        const expected = scale > 0 ? exponent * 2 ** scale - 1 : Math.floor((exponent - 1) / 2 ** -scale);
        expect(bucketIndex(value, scale)).toBe(expected);
        if (exponent % 97 === 0) expect(referenceIndex(value, scale)).toBe(expected);
      }
    }
  });

  it("matches the exact reference for the doubles around bucket boundaries, positive scales", () => {
    const random = mulberry32(7);
    for (const scale of POSITIVE_SCALES) {
      const indices: number[] = [];
      for (let index = -40; index <= 40; index++) indices.push(index);
      for (let draw = 0; draw < 60; draw++) {
        // Boundaries across the whole normal range, including large |index| at scale 20.
        indices.push(Math.floor((random() * 2 - 1) * 1000 * 2 ** scale));
      }
      for (const index of indices) {
        const boundary = bucketLowerBoundary(index, scale);
        for (let steps = -3; steps <= 3; steps++) {
          const value = stepUlps(boundary, steps);
          expect(bucketIndex(value, scale), `value ${value} scale ${scale}`).toBe(referenceIndex(value, scale));
        }
      }
    }
  });

  it("matches the exact reference around bucket boundaries, zero and negative scales", () => {
    for (const scale of NON_POSITIVE_SCALES) {
      const width = 2 ** -scale;
      for (let index = Math.ceil(-1022 / width); index <= Math.floor(1023 / width); index++) {
        const boundary = 2 ** (index * width);
        for (let steps = -2; steps <= 2; steps++) {
          const value = stepUlps(boundary, steps);
          expect(bucketIndex(value, scale), `value ${value} scale ${scale}`).toBe(referenceIndex(value, scale));
        }
      }
    }
  });

  it("matches the exact reference for random doubles over the whole normal range", () => {
    const random = mulberry32(11);
    for (let draw = 0; draw < 400; draw++) {
      const value = 2 ** ((random() * 2 - 1) * 1020) * (1 + random());
      for (const scale of [-3, 0, 3, 10, 20]) {
        expect(bucketIndex(value, scale), `value ${value} scale ${scale}`).toBe(referenceIndex(value, scale));
      }
    }
  });

  it("agrees with downscaling: the index at scale s - k is the index at s shifted right by k", () => {
    const random = mulberry32(13);
    for (let draw = 0; draw < 500; draw++) {
      const value = 2 ** ((random() * 2 - 1) * 60) * (1 + random());
      const atTwenty = bucketIndex(value, 20);
      for (let scale = 19; scale >= -10; scale--) {
        expect(bucketIndex(value, scale)).toBe(atTwenty >> (20 - scale));
      }
    }
  });

  it("maps subnormals like the smallest normal and the largest double to the last bucket", () => {
    for (const scale of [-10, -1, 0, 1, 20]) {
      expect(bucketIndex(Number.MIN_VALUE, scale)).toBe(bucketIndex(2 ** -1022, scale));
      expect(bucketIndex(2 ** -1030, scale)).toBe(bucketIndex(2 ** -1022, scale));
      const lastIndex = scale > 0 ? 1024 * 2 ** scale - 1 : 1023 >> -scale;
      expect(bucketIndex(Number.MAX_VALUE, scale)).toBe(lastIndex);
      expect(referenceIndex(Number.MAX_VALUE, scale)).toBe(lastIndex);
    }
  });
});

describe("bucketLowerBoundary", () => {
  it("gives exact powers of two where the boundaries are powers of two", () => {
    expect(bucketLowerBoundary(0, 5)).toBe(1);
    expect(bucketLowerBoundary(32, 5)).toBe(2);
    expect(bucketLowerBoundary(-3, 0)).toBe(0.125);
    expect(bucketLowerBoundary(2, -2)).toBe(256);
    expect(bucketLowerBoundary(1, 1)).toBeCloseTo(Math.SQRT2, 15);
  });
});
