import { ExponentialHistogram } from "../model/statistics/index.js";

/** Journeys of a (prefix, kind) seen before slowness is judged at all: a quantile of fewer is noise. */
export const TAIL_MIN_JOURNEYS = 32;
/** At most this many journeys between two refreshes of a (prefix, kind)'s threshold. */
export const TAIL_MAX_REFRESH_INTERVAL = 1024;
/** Slow journeys a (prefix, kind) may keep beyond its (1 - quantile) share, for bursts. */
export const TAIL_KEEP_BURST = 8;

/**
 * In-process tail sampling: a journey is kept at its end when it failed, or when it took longer
 * than the `quantile` of the journeys of its (prefix, kind) seen so far. Every journey's duration
 * is recorded into one exponential histogram per (prefix, kind) — an add to a bucket, no
 * allocation — but the quantile itself is only recomputed when that slot's count reaches
 * 32, 64, 128, … doubling up to every 1024 journeys, so the per-journey cost stays a histogram
 * record and one comparison. Until a slot has seen TAIL_MIN_JOURNEYS journeys nothing in it is
 * judged slow.
 *
 * Slowness keeping also has a budget: a slot keeps at most (1 - quantile) of its journeys plus a
 * burst of TAIL_KEEP_BURST. Without it, durations that drift upwards (a scheduler's journeys when
 * a whole graph is submitted at once: each waits longer than the ones before) would be slower
 * than the quantile of the past almost every time, and nearly every journey would be kept.
 *
 * Why our own: OpenTelemetry JS has head samplers only (a Sampler decides as a span starts), and
 * the Collector's tailsamplingprocessor needs every span of a trace at one Collector and decides
 * on spans, not on a journey's end, which only this process sees.
 */
export class TailSampler {
  private readonly histograms: Array<ExponentialHistogram | undefined>;
  private readonly thresholds: Float64Array;
  private readonly nextRefresh: Float64Array;
  private readonly keptSlow: Float64Array;

  constructor(
    /** The keepSlowerThan quantile; 0 turns slowness keeping off. */
    readonly quantile: number,
    readonly keepErrors: boolean,
    slots: number,
    private readonly maxSize = 160,
  ) {
    this.histograms = new Array<ExponentialHistogram | undefined>(quantile > 0 ? slots : 0).fill(undefined);
    this.thresholds = new Float64Array(quantile > 0 ? slots : 0).fill(Infinity);
    this.nextRefresh = new Float64Array(quantile > 0 ? slots : 0).fill(TAIL_MIN_JOURNEYS);
    this.keptSlow = new Float64Array(quantile > 0 ? slots : 0);
  }

  /**
   * Records a finished journey's duration in its slot and tells whether to keep it. Call it for
   * every journey, sampled or not, so the thresholds describe them all.
   */
  observe(slot: number, seconds: number, failed: boolean): boolean {
    let count = 0;
    if (this.quantile > 0) {
      let histogram = this.histograms[slot];
      if (histogram === undefined) {
        histogram = new ExponentialHistogram({ maxSize: this.maxSize });
        this.histograms[slot] = histogram;
      }
      histogram.record(seconds);
      count = histogram.count;
      if (count >= this.nextRefresh[slot]) {
        this.thresholds[slot] = histogram.quantile(this.quantile);
        this.nextRefresh[slot] = count + Math.min(count, TAIL_MAX_REFRESH_INTERVAL);
      }
    }
    if (failed && this.keepErrors) return true;
    if (!(this.quantile > 0 && seconds > this.thresholds[slot])) return false;
    // Rounded down (with a hair of slack for 1 - 0.99 not being exactly 0.01 in binary).
    if (this.keptSlow[slot] >= Math.floor((1 - this.quantile) * count + 1e-9) + TAIL_KEEP_BURST) return false;
    this.keptSlow[slot] += 1;
    return true;
  }

  /** The current threshold of a slot in seconds (Infinity while not yet judged). */
  threshold(slot: number): number {
    return this.quantile > 0 ? this.thresholds[slot] : Infinity;
  }
}
