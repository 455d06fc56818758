import type { ExplicitBuckets, ExponentialBuckets } from "./otlp-metrics.js";

/**
 * Duration histograms read back from several processes, merged as a metrics backend merges
 * them, and their quantiles: exponential histograms exactly (bucket indexes shifted to the
 * coarsest scale among them), explicit-bucket ones when their bounds agree.
 */

/** The most buckets a merged histogram keeps: a crafted offset cannot make it allocate more. */
const MAX_BUCKETS = 4096;
const MIN_SCALE = -10;
const MAX_SCALE = 20;

function valid(h: ExponentialBuckets): boolean {
  return (
    Number.isInteger(h.scale) &&
    h.scale >= MIN_SCALE &&
    h.scale <= MAX_SCALE &&
    Number.isSafeInteger(h.offset) &&
    Number.isFinite(h.count) &&
    h.count >= 0 &&
    h.counts.every((count) => Number.isFinite(count) && count >= 0)
  );
}

/**
 * Merges exponential histograms at the coarsest scale among them (bucket index >> scale
 * change), coarser still if their buckets would span more than 4096. Points that are not valid
 * histograms (a scale out of range, negative counts) are left out.
 */
export function mergeHistograms(histograms: readonly ExponentialBuckets[]): ExponentialBuckets {
  const usable = histograms.filter(valid);
  const merged: ExponentialBuckets = {
    count: 0,
    sum: 0,
    scale: MAX_SCALE,
    zeroCount: 0,
    offset: 0,
    counts: [],
    min: Infinity,
    max: -Infinity,
  };
  if (usable.length === 0) return { ...merged, min: Number.NaN, max: Number.NaN };
  let scale = Math.min(...usable.map((h) => h.scale));
  let low = Infinity;
  let high = -Infinity;
  for (const h of usable) {
    merged.count += h.count;
    merged.sum += Number.isFinite(h.sum) ? h.sum : 0;
    merged.zeroCount += Number.isFinite(h.zeroCount) ? h.zeroCount : 0;
    if (h.min < merged.min) merged.min = h.min;
    if (h.max > merged.max) merged.max = h.max;
    const first = h.counts.findIndex((count) => count > 0);
    if (first === -1) continue;
    const last = h.counts.length - 1 - [...h.counts].reverse().findIndex((count) => count > 0);
    low = Math.min(low, Math.floor((h.offset + first) / 2 ** (h.scale - scale)));
    high = Math.max(high, Math.floor((h.offset + last) / 2 ** (h.scale - scale)));
  }
  if (!(merged.min <= merged.max)) {
    merged.min = Number.NaN;
    merged.max = Number.NaN;
  }
  while (high - low + 1 > MAX_BUCKETS && scale > MIN_SCALE) {
    scale -= 1;
    low = Math.floor(low / 2);
    high = Math.floor(high / 2);
  }
  merged.scale = scale;
  if (low > high) return merged;
  merged.offset = low;
  merged.counts = new Array<number>(Math.min(MAX_BUCKETS, high - low + 1)).fill(0);
  for (const h of usable) {
    const divisor = 2 ** (h.scale - scale);
    h.counts.forEach((count, i) => {
      if (count === 0) return;
      const slot = Math.floor((h.offset + i) / divisor) - low;
      merged.counts[Math.max(0, Math.min(merged.counts.length - 1, slot))] += count;
    });
  }
  return merged;
}

/** Nearest-rank quantile: the log midpoint of the bucket holding rank ceil(q·count), clamped to [min, max]; NaN when empty. */
export function histogramQuantile(h: ExponentialBuckets, q: number): number {
  if (!(h.count > 0)) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * h.count));
  let cumulative = h.zeroCount;
  if (cumulative >= rank) return 0;
  for (let i = 0; i < h.counts.length; i++) {
    cumulative += h.counts[i];
    if (cumulative >= rank) {
      const midpoint = 2 ** ((h.offset + i + 0.5) * 2 ** -h.scale);
      return Number.isNaN(h.min) ? midpoint : Math.min(Math.max(midpoint, h.min), h.max);
    }
  }
  return h.max;
}

/** Merges explicit-bucket histograms with the same bounds as the first; others are left out. */
export function mergeExplicit(histograms: readonly ExplicitBuckets[]): ExplicitBuckets | undefined {
  const first = histograms[0];
  if (first === undefined) return undefined;
  const same = (h: ExplicitBuckets) =>
    h.bounds.length === first.bounds.length &&
    h.bounds.every((bound, i) => bound === first.bounds[i]) &&
    h.counts.length === first.bounds.length + 1;
  const merged: ExplicitBuckets = {
    count: 0,
    sum: 0,
    min: Infinity,
    max: -Infinity,
    bounds: first.bounds,
    counts: new Array<number>(first.bounds.length + 1).fill(0),
  };
  for (const h of histograms.filter(same)) {
    merged.count += h.count;
    merged.sum += h.sum;
    if (h.min < merged.min) merged.min = h.min;
    if (h.max > merged.max) merged.max = h.max;
    h.counts.forEach((count, i) => (merged.counts[i] += Number.isFinite(count) ? count : 0));
  }
  if (!(merged.min <= merged.max)) {
    merged.min = Number.NaN;
    merged.max = Number.NaN;
  }
  return merged;
}

/** Nearest-rank quantile of explicit buckets: interpolated linearly inside the bucket holding it, clamped to [min, max]. */
export function explicitQuantile(h: ExplicitBuckets, q: number): number {
  if (!(h.count > 0)) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * h.count));
  let cumulative = 0;
  for (let i = 0; i < h.counts.length; i++) {
    if (cumulative + h.counts[i] >= rank) {
      const lower = i === 0 ? (Number.isNaN(h.min) ? 0 : h.min) : h.bounds[i - 1];
      const upper = i === h.bounds.length ? (Number.isNaN(h.max) ? lower : h.max) : h.bounds[i];
      const estimate = lower + ((upper - lower) * (rank - cumulative)) / h.counts[i];
      return Number.isNaN(h.min) ? estimate : Math.min(Math.max(estimate, h.min), h.max);
    }
    cumulative += h.counts[i];
  }
  return h.max;
}
