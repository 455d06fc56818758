/**
 * Running count, mean, variance, min and max in O(1) memory, by Welford's recurrence,
 * with Chan et al.'s pairwise combination for merging accumulators recorded apart
 * (per worker, per thread, per collection interval).
 *
 * Welford rather than sums of squares because durations of one prefix are often nearly
 * equal: `sum(x^2) - n * mean^2` would then cancel to noise, or go negative, while the
 * running sum of squared deviations (`M2`) stays accurate.
 *
 * Variance is the population variance `M2 / n`. Dask's scheduler exposes no variance today
 * (TaskPrefix keeps only a 0.5-weighted moving average, `duration_average`); the proposal
 * discussed for it (distributed PR #4028, never merged) shows only the update,
 * `_update_duration_variance`, which is John D. Cook's recurrence, and Cook reads it out
 * as the sample variance `M2 / (n - 1)`. We pick `M2 / n` because these
 * statistics describe the durations that were observed, a single observation has a
 * defined spread (0) instead of NaN, which matters to a scheduler reading a prefix after
 * its first task, and the difference, a factor `n / (n - 1)`, is below 1 % after a hundred
 * tasks. `sampleVariance` gives the other reading for those who want the estimator.
 */
export class WelfordAccumulator {
  private observations = 0;
  private runningMean = 0;
  /** Sum of squared deviations from the running mean ("M2"). */
  private squaredDeviations = 0;
  private minimum = Infinity;
  private maximum = -Infinity;

  /** Adds one value. The caller filters out NaN and infinities, which would poison every moment. */
  record(value: number): void {
    const count = this.observations + 1;
    const deviation = value - this.runningMean;
    const mean = this.runningMean + deviation / count;
    this.squaredDeviations += deviation * (value - mean);
    this.runningMean = mean;
    this.observations = count;
    if (value < this.minimum) this.minimum = value;
    if (value > this.maximum) this.maximum = value;
  }

  /** Chan, Golub and LeVeque's combination: exact in exact arithmetic, stable in floating point. */
  merge(other: WelfordAccumulator): void {
    const otherCount = other.observations;
    if (otherCount === 0) return;
    const ownCount = this.observations;
    if (ownCount === 0) {
      this.observations = otherCount;
      this.runningMean = other.runningMean;
      this.squaredDeviations = other.squaredDeviations;
      this.minimum = other.minimum;
      this.maximum = other.maximum;
      return;
    }
    const count = ownCount + otherCount;
    const deviation = other.runningMean - this.runningMean;
    const mean = this.runningMean + deviation * (otherCount / count);
    const squaredDeviations =
      this.squaredDeviations + other.squaredDeviations + deviation * deviation * ((ownCount * otherCount) / count);
    const minimum = Math.min(this.minimum, other.minimum);
    const maximum = Math.max(this.maximum, other.maximum);
    this.observations = count;
    this.runningMean = mean;
    this.squaredDeviations = squaredDeviations;
    this.minimum = minimum;
    this.maximum = maximum;
  }

  get count(): number {
    return this.observations;
  }

  /** NaN when empty. */
  get mean(): number {
    return this.observations === 0 ? NaN : this.runningMean;
  }

  /** Population variance `M2 / n`; 0 for one value, NaN when empty. */
  get variance(): number {
    return this.observations === 0 ? NaN : this.squaredDeviations / this.observations;
  }

  /** Sample variance `M2 / (n - 1)`; NaN below two values. */
  get sampleVariance(): number {
    return this.observations < 2 ? NaN : this.squaredDeviations / (this.observations - 1);
  }

  /** Square root of the population variance. */
  get stddev(): number {
    return Math.sqrt(this.variance);
  }

  /** NaN when empty. */
  get min(): number {
    return this.observations === 0 ? NaN : this.minimum;
  }

  /** NaN when empty. */
  get max(): number {
    return this.observations === 0 ? NaN : this.maximum;
  }

  reset(): void {
    this.observations = 0;
    this.runningMean = 0;
    this.squaredDeviations = 0;
    this.minimum = Infinity;
    this.maximum = -Infinity;
  }

  clone(): WelfordAccumulator {
    const copy = new WelfordAccumulator();
    copy.merge(this);
    return copy;
  }
}
