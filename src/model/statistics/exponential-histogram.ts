/**
 * Why our own and not the SDK's: sdk-metrics keeps its ExponentialHistogramAccumulation and
 * mappings internal (unexported), the core may depend on @opentelemetry/api only, and the SDK's
 * mapping is off by one near bucket boundaries, which the exact `merge` below cannot allow.
 *
 * A base-2 exponential histogram with the bucket semantics of the OpenTelemetry exponential
 * histogram data model, so that it can be exported as an OTLP data point without conversion
 * and merged with histograms recorded elsewhere exactly like the OpenTelemetry SDK merges
 * them.
 *
 * Buckets: at scale `s` the base is `b = 2^(2^-s)` and bucket `i` holds the values in
 * `(b^i, b^(i+1)]`. Only positive buckets exist (durations are never negative); the value 0
 * goes to `zeroCount` (the zero threshold is 0). Values below the smallest normal double are
 * counted in the bucket of the smallest normal double, as the data model permits.
 *
 * Index mapping: values are mapped through a logarithm, and, as in the SDK's
 * ExponentMapping and LogarithmMapping, exact powers of two are recognised from their bits
 * and put in the lower bucket, the one they close. Unlike the SDK, which accepts an
 * off-by-one answer for values within a rounding error of a bucket boundary (its own
 * mapping disagrees with the exact one for about half of the doubles within a few ulps of
 * a boundary), this implementation re-decides those rare values exactly, so a value lands
 * in the bucket the data model names and downscaling (index >> 1) always agrees with
 * mapping directly at the lower scale. That agreement is what makes `merge` of two
 * histograms equal, bucket for bucket, to the histogram of the concatenated samples.
 *
 * Scale: recording starts at `maxScale` and downscales, merging pairs of adjacent buckets,
 * whenever the range of occupied bucket indices would exceed `maxSize`, exactly as the
 * SDK's ExponentialHistogramAccumulation does. The final scale is therefore the largest
 * scale <= maxScale at which all recorded values fit into `maxSize` buckets.
 *
 * Quantile error bound. `quantile(q)` finds the bucket holding the sample of rank
 * `ceil(q * count)` (the nearest-rank quantile) and returns the geometric mean of its
 * bounds, `b^(i + 1/2)`, clamped to `[min, max]`. For a true value x in `(b^i, b^(i+1)]`
 * the estimate g satisfies `b^(-1/2) <= g / x < b^(1/2)`, so
 *
 *     |g - x| / x  <=  sqrt(b) - 1  =  2^(2^-(s+1)) - 1  ~  ln(2) * 2^-(s+1)
 *
 * (an overestimate when x sits at the bucket's lower edge; an underestimate is at most
 * 1 - 1/sqrt(b)). To first order this is the optimum `(b-1)/(b+1)` that any single point
 * inside a bucket can guarantee; the log midpoint gives away only `sqrt(b)(sqrt(b)-1)^2/(b+1)`,
 * a second-order term. Clamping cannot make it worse, since the true quantile lies in
 * `[min, max]`, and q = 0 and q = 1 are exact.
 *
 * What the bound is with the default maxSize = 160: values spanning N decades occupy
 * about `N * log2(10) * 2^s = 3.32 * N * 2^s` buckets, and 160 buckets always hold a span
 * of at most 159 index steps, so the scale settles at the largest s with
 * `3.32 * N * 2^s <= 159` (sometimes one higher, depending on where the range falls):
 *
 *     range (decades)   scale   relative error bound
 *     <= 0.74             6       0.54 %
 *     <= 1.49             5       1.09 %
 *     <= 2.99             4       2.19 %
 *     <= 5.98             3       4.43 %
 *     <= 11.96            2       9.05 %
 *     <= 23.9             1      18.9 %
 *
 * Task durations from 1 ms to 100 s (5 decades) therefore get quantiles within 4.43 %.
 *
 * Hot path: `record()` allocates nothing. Counts live in a ring of `maxSize` float64 slots
 * allocated once; the occupied window of indices can extend at either end without moving
 * counts, and a downscale compacts the ring in place.
 */
import { InvalidArgumentError, OutOfRangeError } from "../../shared/errors.js";

/** The lowest scale the data model defines; at -10 every double fits into two buckets. */
const MINIMUM_SCALE = -10;
/** The highest scale the SDK supports; beyond it bucket indices of large doubles overflow int32. */
const MAXIMUM_SCALE = 20;
const DEFAULT_MAX_SIZE = 160;
/** With fewer than two buckets a histogram spanning two binades could never fit. */
const MINIMUM_MAX_SIZE = 2;
/** Keeps index arithmetic inside int32 and the ring allocation sane. */
const MAXIMUM_MAX_SIZE = 1 << 24;

const SMALLEST_NORMAL = 2 ** -1022;
const EXPONENT_BIAS = 1023;
const SIGNIFICAND_HIGH_MASK = 0x000fffff;
/** The high word of 1.0: exponent bits of 2^0 with an empty significand. */
const HIGH_WORD_OF_ONE = 0x3ff00000;

/**
 * The mapping computes `2^scale * log2(value)`. V8's Math.log2 is accurate to about an ulp
 * of its result, at most 2^-42 for |log2(value)| < 1075, so the scaled result is off by at
 * most 2^(scale - 42) <= 2^-22 index steps. A result within 2^-16 of an integer (64 times
 * that error) might have been rounded across a boundary, or is an exact power of two, so
 * it is re-decided exactly from the value's bits; random values land there about 3 times
 * in 100,000. (Lookup tables instead of the logarithm measured no faster.)
 */
const BOUNDARY_TOLERANCE = 2 ** -16;
/** Dekker's splitting constant 2^27 + 1 for exact products without FMA. */
const SPLITTER = 134217729;

/** 2^scale for every scale, looked up because `2 ** scale` with a variable exponent calls pow. */
const SCALE_FACTORS = Float64Array.from(
  { length: MAXIMUM_SCALE - MINIMUM_SCALE + 1 },
  (_, position) => 2 ** (position + MINIMUM_SCALE),
);

/** Shared scratch for reading a double's bits: synchronous use only, never retained. */
const floatScratch = new Float64Array(1);
const wordScratch = new Uint32Array(floatScratch.buffer);
const HIGH_WORD = (() => {
  floatScratch[0] = 1;
  return wordScratch[1] === HIGH_WORD_OF_ONE ? 1 : 0;
})();
const LOW_WORD = 1 - HIGH_WORD;

/**
 * The index of the bucket that holds `value` at `scale`: the `i` with
 * `base^i < value <= base^(i+1)`, `base = 2^(2^-scale)`.
 * `value` must be positive and finite; values below the smallest normal double are
 * mapped as the smallest normal double.
 */
export function bucketIndex(value: number, scale: number): number {
  if (value < SMALLEST_NORMAL) value = SMALLEST_NORMAL;
  // Multiplying by a power of two is exact, so the product carries only log2's rounding.
  const scaled = Math.log2(value) * SCALE_FACTORS[scale - MINIMUM_SCALE];
  const index = Math.floor(scaled);
  const fraction = scaled - index;
  if (fraction >= BOUNDARY_TOLERANCE && fraction <= 1 - BOUNDARY_TOLERANCE) return index;
  return exactBucketIndex(value, scale);
}

/**
 * The same index decided from the value's bits alone: the exponent is exact, an exact power
 * of two goes to the bucket it closes (as in the SDK's ExponentMapping and
 * LogarithmMapping), and any other significand's sub-bucket is settled by `exactSubBucket`.
 */
function exactBucketIndex(value: number, scale: number): number {
  floatScratch[0] = value;
  const highWord = wordScratch[HIGH_WORD];
  const exponent = (highWord >>> 20) - EXPONENT_BIAS;
  const significandHigh = highWord & SIGNIFICAND_HIGH_MASK;
  const isPowerOfTwo = significandHigh === 0 && wordScratch[LOW_WORD] === 0;
  if (scale <= 0) return (isPowerOfTwo ? exponent - 1 : exponent) >> -scale;
  if (isPowerOfTwo) return (exponent << scale) - 1;
  wordScratch[HIGH_WORD] = significandHigh | HIGH_WORD_OF_ONE;
  return (exponent << scale) + exactSubBucket(floatScratch[0], scale);
}

/**
 * `floor(2^scale * log2(significand))` for a significand in (1, 2) that is not 1, decided by
 * squaring the significand `scale` times in double-double arithmetic (about 104 bits),
 * halving whenever the running power reaches 2. Each halving is one bit of the answer.
 * The relative error after 20 squarings is about 2^-83, so a significand is misjudged only
 * if it lies within about 2^-103 of a bucket boundary. The doubles nearest a boundary are
 * spread over 2^-53, so across all 2^20 boundaries of scale 20 about 2^-29 such doubles
 * are expected. Allocation-free, so it may run inside `record()`.
 */
function exactSubBucket(significand: number, scale: number): number {
  let high = significand;
  let low = 0;
  let subBucket = 0;
  for (let step = 0; step < scale; step++) {
    const product = high * high;
    const split = SPLITTER * high;
    const highHalf = split - (split - high);
    const lowHalf = high - highHalf;
    const productError = highHalf * highHalf - product + 2 * highHalf * lowHalf + lowHalf * lowHalf;
    const tail = productError + 2 * high * low + low * low;
    high = product + tail;
    low = tail - (high - product);
    subBucket *= 2;
    if (high > 2 || (high === 2 && low >= 0)) {
      high *= 0.5;
      low *= 0.5;
      subBucket += 1;
    }
  }
  return subBucket;
}

/** The lower bound `base^index` of bucket `index` at `scale` (exclusive, as in the data model). */
export function bucketLowerBoundary(index: number, scale: number): number {
  return 2 ** (index * 2 ** -scale);
}

/** The geometric mean of a bucket's bounds: the point that halves its worst relative error. */
function bucketLogMidpoint(index: number, scale: number): number {
  return 2 ** ((index + 0.5) * 2 ** -scale);
}

/** The number of halvings that bring the index span [low, high] within `maxSize` buckets. */
function downscaleNeeded(low: number, high: number, maxSize: number): number {
  let change = 0;
  while (high - low >= maxSize) {
    high >>= 1;
    low >>= 1;
    change++;
  }
  return change;
}

/**
 * A quantile outside [0, 1] is a bug in the caller, so it throws instead of returning NaN. Any q
 * that is not a number is outside too: a numeric string is not converted (`"0.5" >= 0` would run
 * the conversion, and an object's own valueOf or toString), and the message describes q by its
 * type only, never through code of its own (a throwing toString, a Symbol, a deep array).
 */
function assertQuantile(q: number): void {
  if (typeof q !== "number" || !(q >= 0 && q <= 1)) {
    throw new OutOfRangeError(`quantile q must be a number in [0, 1], got ${describe(q)}`);
  }
}

/** A value by its type (and a number by its value), running none of its code. */
function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return String(value);
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

export interface ExponentialHistogramOptions {
  /** The most buckets kept; the histogram downscales rather than exceed it. Default 160. */
  maxSize?: number;
  /** The scale recording starts at, in [-10, 20]. Default 20. */
  maxScale?: number;
}

/** What collection and readers need of a histogram, without the ability to change it. */
export interface ReadonlyExponentialHistogram {
  readonly maxSize: number;
  readonly maxScale: number;
  /** The current scale; the one every bucket index refers to. */
  readonly scale: number;
  /** Values recorded as exactly 0. */
  readonly zeroCount: number;
  /** All values recorded, zeros included. */
  readonly count: number;
  readonly sum: number;
  /** NaN when nothing was recorded. */
  readonly min: number;
  /** NaN when nothing was recorded. */
  readonly max: number;
  /** The index of the first positive bucket; 0 when there are none. */
  readonly positiveOffset: number;
  /** Counts of the positive buckets from `positiveOffset` on, in a fresh array. */
  positiveBucketCounts(): number[];
  quantile(q: number): number;
  clone(): ExponentialHistogram;
}

export class ExponentialHistogram implements ReadonlyExponentialHistogram {
  readonly maxSize: number;
  readonly maxScale: number;
  private currentScale: number;
  /** Bucket counts; slot `(index - ringOrigin) mod maxSize` holds bucket `index`. */
  private readonly ring: Float64Array;
  /** The bucket index kept in slot 0; always inside the occupied window. */
  private ringOrigin = 0;
  private indexStart = 0;
  private indexEnd = 0;
  /** Values in positive buckets; the window above is meaningful only when this is > 0. */
  private bucketedCount = 0;
  private totalCount = 0;
  private zeros = 0;
  private total = 0;
  private minimum = Infinity;
  private maximum = -Infinity;

  constructor(options: ExponentialHistogramOptions = {}) {
    const maxSize = options.maxSize ?? DEFAULT_MAX_SIZE;
    const maxScale = options.maxScale ?? MAXIMUM_SCALE;
    if (!Number.isInteger(maxSize) || maxSize < MINIMUM_MAX_SIZE || maxSize > MAXIMUM_MAX_SIZE) {
      throw new OutOfRangeError(
        `maxSize must be an integer in [${MINIMUM_MAX_SIZE}, ${MAXIMUM_MAX_SIZE}], got ${String(maxSize)}`,
      );
    }
    if (!Number.isInteger(maxScale) || maxScale < MINIMUM_SCALE || maxScale > MAXIMUM_SCALE) {
      throw new OutOfRangeError(
        `maxScale must be an integer in [${MINIMUM_SCALE}, ${MAXIMUM_SCALE}], got ${String(maxScale)}`,
      );
    }
    this.maxSize = maxSize;
    this.maxScale = maxScale;
    this.currentScale = maxScale;
    this.ring = new Float64Array(maxSize);
  }

  get scale(): number {
    return this.currentScale;
  }

  get zeroCount(): number {
    return this.zeros;
  }

  get count(): number {
    return this.totalCount;
  }

  get sum(): number {
    return this.total;
  }

  get min(): number {
    return this.totalCount === 0 ? NaN : this.minimum;
  }

  get max(): number {
    return this.totalCount === 0 ? NaN : this.maximum;
  }

  get positiveOffset(): number {
    return this.bucketedCount === 0 ? 0 : this.indexStart;
  }

  /**
   * Counts one value. Returns false, counting nothing, for NaN, negative values and
   * Infinity, which belong in no bucket; the caller decides how to report the drop.
   */
  record(value: number): boolean {
    if (!(value >= 0) || value === Infinity) return false;
    this.recordChecked(value);
    return true;
  }

  /** @internal `record()` of a value already known to be finite and non-negative. */
  recordChecked(value: number): void {
    this.totalCount += 1;
    if (value === 0) {
      // -0 arrives here too; the comparisons store +0 so min and max never show -0.
      this.zeros += 1;
      if (this.minimum > 0) this.minimum = 0;
      if (this.maximum < 0) this.maximum = 0;
      return;
    }
    this.total += value;
    if (value < this.minimum) this.minimum = value;
    if (value > this.maximum) this.maximum = value;
    this.incrementBucket(bucketIndex(value, this.currentScale), 1);
  }

  /**
   * Adds `other`'s counts. Both are brought to the largest scale at which the union of
   * their ranges fits into this histogram's `maxSize`, which is the scale recording all
   * the samples into one histogram would have reached; with equal maxSize and maxScale the
   * result is identical to that histogram.
   */
  merge(other: ReadonlyExponentialHistogram): void {
    const source = other === this ? this.clone() : asHistogram(other);
    if (source.totalCount === 0) return;
    this.totalCount += source.totalCount;
    this.zeros += source.zeros;
    this.total += source.total;
    if (source.minimum < this.minimum) this.minimum = source.minimum;
    if (source.maximum > this.maximum) this.maximum = source.maximum;
    if (source.bucketedCount === 0) return;

    let targetScale = Math.min(this.currentScale, source.currentScale);
    let low = source.indexStart >> (source.currentScale - targetScale);
    let high = source.indexEnd >> (source.currentScale - targetScale);
    if (this.bucketedCount > 0) {
      low = Math.min(low, this.indexStart >> (this.currentScale - targetScale));
      high = Math.max(high, this.indexEnd >> (this.currentScale - targetScale));
    }
    targetScale -= downscaleNeeded(low, high, this.maxSize);
    this.downscale(this.currentScale - targetScale);

    const shift = source.currentScale - targetScale;
    for (let index = source.indexStart; index <= source.indexEnd; index++) {
      const bucketCount = source.countAt(index);
      if (bucketCount !== 0) this.incrementBucket(index >> shift, bucketCount);
    }
  }

  /**
   * An estimate of the nearest-rank q-quantile: the log midpoint of the bucket holding
   * the sample of rank ceil(q * count), clamped to [min, max]. Relative error at most
   * `2^(2^-(scale+1)) - 1` (see the module comment). NaN when empty; q = 0 and q = 1 give
   * min and max exactly. Throws RangeError for q outside [0, 1] or NaN.
   */
  quantile(q: number): number {
    assertQuantile(q);
    if (this.totalCount === 0) return NaN;
    if (q === 0) return this.minimum;
    if (q === 1) return this.maximum;
    const rank = q * this.totalCount;
    let cumulative = this.zeros;
    if (cumulative >= rank) return 0;
    for (let index = this.indexStart; index <= this.indexEnd; index++) {
      cumulative += this.countAt(index);
      if (cumulative >= rank) {
        const estimate = bucketLogMidpoint(index, this.currentScale);
        return Math.min(Math.max(estimate, this.minimum), this.maximum);
      }
    }
    // Only reachable if rounding made q * count exceed the total count.
    return this.maximum;
  }

  positiveBucketCounts(): number[] {
    if (this.bucketedCount === 0) return [];
    const counts = new Array<number>(this.indexEnd - this.indexStart + 1);
    for (let index = this.indexStart; index <= this.indexEnd; index++) {
      counts[index - this.indexStart] = this.countAt(index);
    }
    return counts;
  }

  /** Forgets everything, including the scale, which returns to `maxScale`. */
  reset(): void {
    if (this.bucketedCount > 0) this.ring.fill(0);
    this.currentScale = this.maxScale;
    this.ringOrigin = 0;
    this.indexStart = 0;
    this.indexEnd = 0;
    this.bucketedCount = 0;
    this.totalCount = 0;
    this.zeros = 0;
    this.total = 0;
    this.minimum = Infinity;
    this.maximum = -Infinity;
  }

  clone(): ExponentialHistogram {
    const copy = new ExponentialHistogram({ maxSize: this.maxSize, maxScale: this.maxScale });
    copy.ring.set(this.ring);
    copy.currentScale = this.currentScale;
    copy.ringOrigin = this.ringOrigin;
    copy.indexStart = this.indexStart;
    copy.indexEnd = this.indexEnd;
    copy.bucketedCount = this.bucketedCount;
    copy.totalCount = this.totalCount;
    copy.zeros = this.zeros;
    copy.total = this.total;
    copy.minimum = this.minimum;
    copy.maximum = this.maximum;
    return copy;
  }

  private countAt(index: number): number {
    let slot = index - this.ringOrigin;
    if (slot < 0) slot += this.maxSize;
    return this.ring[slot];
  }

  /**
   * Adds to bucket `index` (at the current scale), widening the occupied window and
   * downscaling first if the window would exceed `maxSize` buckets.
   */
  private incrementBucket(index: number, increment: number): void {
    if (this.bucketedCount === 0) {
      this.indexStart = index;
      this.indexEnd = index;
      this.ringOrigin = index;
    } else if (index < this.indexStart) {
      if (this.indexEnd - index >= this.maxSize) {
        const change = downscaleNeeded(index, this.indexEnd, this.maxSize);
        this.downscale(change);
        index >>= change;
      }
      if (index < this.indexStart) this.indexStart = index;
    } else if (index > this.indexEnd) {
      if (index - this.indexStart >= this.maxSize) {
        const change = downscaleNeeded(this.indexStart, index, this.maxSize);
        this.downscale(change);
        index >>= change;
      }
      if (index > this.indexEnd) this.indexEnd = index;
    }
    let slot = index - this.ringOrigin;
    if (slot < 0) slot += this.maxSize;
    this.ring[slot] += increment;
    this.bucketedCount += increment;
  }

  /**
   * Lowers the scale by `change`, adding each run of 2^change adjacent buckets into one.
   * Bucket boundaries of lower scales are a subset of those of higher scales, so a value's
   * bucket at the new scale is exactly its old index >> change.
   */
  private downscale(change: number): void {
    if (change <= 0) return;
    if (this.bucketedCount > 0) {
      this.rotateWindowToSlotZero();
      const oldStart = this.indexStart;
      const newStart = oldStart >> change;
      // Slot `to` never exceeds slot `from`, and every slot below `from` has already been
      // emptied or kept, so compacting front to back in place loses nothing.
      for (let index = oldStart; index <= this.indexEnd; index++) {
        const from = index - oldStart;
        const to = (index >> change) - newStart;
        if (from !== to) {
          this.ring[to] += this.ring[from];
          this.ring[from] = 0;
        }
      }
      this.indexStart = newStart;
      this.indexEnd >>= change;
      this.ringOrigin = newStart;
    }
    this.currentScale -= change;
  }

  /** Rotates the ring left so that `indexStart` sits in slot 0 (three in-place reversals). */
  private rotateWindowToSlotZero(): void {
    let rotation = this.indexStart - this.ringOrigin;
    if (rotation < 0) rotation += this.maxSize;
    if (rotation !== 0) {
      reverse(this.ring, 0, rotation);
      reverse(this.ring, rotation, this.maxSize);
      reverse(this.ring, 0, this.maxSize);
    }
    this.ringOrigin = this.indexStart;
  }
}

/** The interface exists for read-only views; every implementation is this class. */
function asHistogram(histogram: ReadonlyExponentialHistogram): ExponentialHistogram {
  if (!(histogram instanceof ExponentialHistogram)) {
    throw new InvalidArgumentError("merge expects an ExponentialHistogram");
  }
  return histogram;
}

function reverse(values: Float64Array, start: number, end: number): void {
  for (let left = start, right = end - 1; left < right; left++, right--) {
    const held = values[left];
    values[left] = values[right];
    values[right] = held;
  }
}
