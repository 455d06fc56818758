export {
  ExponentialHistogram,
  bucketIndex,
  bucketLowerBoundary,
  type ReadonlyExponentialHistogram,
} from "./exponential-histogram.js";
export { WelfordAccumulator } from "./welford.js";
export { DurationStatistics, type DurationStats } from "./duration-statistics.js";
