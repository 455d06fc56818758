export {
  ExponentialHistogram,
  bucketIndex,
  bucketLowerBoundary,
  type ExponentialHistogramOptions,
  type ReadonlyExponentialHistogram,
} from "./exponential-histogram.js";
export { WelfordAccumulator } from "./welford.js";
export {
  DurationStatistics,
  type DurationStatisticsOptions,
  type DurationStats,
} from "./duration-statistics.js";
