/**
 * The shape of `new TaskJourneys(options)`: the names at the top, the fields of each group, and the
 * flat names of 0.1 that still work for one minor release (each told once as deprecated) with the
 * grouped path each one became. journeys.ts checks options against it once, at construction.
 */

/** The groups of options and their fields, by concern (as OpenTelemetry groups `spanLimits`). */
export const OPTION_GROUPS = {
  sampling: ["ratio", "keepSlowerThan", "keepErrors"],
  limits: ["maxPrefixes", "maxActivities", "maxLiveJourneys", "maxKeyLength", "maxClockSkew", "maxComputations"],
  retention: ["journeys", "bytes"],
  spans: ["maxLinks", "maxChildren", "maxAttributeLength", "maxKeysPerTransfer"],
  metrics: ["temporality", "histogram", "explicitBuckets", "histogramMaxSize", "executeTimeByPrefix"],
  runtime: ["clock", "timeOrigin", "asyncContext", "processStalls"],
} as const;

export type OptionGroup = keyof typeof OPTION_GROUPS;

/** The options that are no group: who these journeys are, where their signals go, and two switches. */
export const TOP_LEVEL_OPTIONS = [
  "role",
  "machine",
  "instance",
  "keyPrefix",
  "tracerProvider",
  "meterProvider",
  "traces",
  "strict",
] as const;

/** The flat names of 0.1 (deprecated) and the grouped path each one became. */
export const FLAT_OPTIONS = {
  prefixLimit: "limits.maxPrefixes",
  activityLimit: "limits.maxActivities",
  maxLiveJourneys: "limits.maxLiveJourneys",
  maxKeyLength: "limits.maxKeyLength",
  maxClockSkew: "limits.maxClockSkew",
  retainedJourneys: "retention.journeys",
  retainedJourneyBytes: "retention.bytes",
  maxLinksPerSpan: "spans.maxLinks",
  maxChildrenPerSpan: "spans.maxChildren",
  maxAttributeLength: "spans.maxAttributeLength",
  maxKeysPerTransfer: "spans.maxKeysPerTransfer",
  temporality: "metrics.temporality",
  histogram: "metrics.histogram",
  explicitBuckets: "metrics.explicitBuckets",
  histogramMaxSize: "metrics.histogramMaxSize",
  executeTimeByPrefix: "metrics.executeTimeByPrefix",
  clock: "runtime.clock",
  timeOrigin: "runtime.timeOrigin",
  asyncContext: "runtime.asyncContext",
  processStalls: "runtime.processStalls",
} as const;

export type FlatOption = keyof typeof FLAT_OPTIONS;

/** Every valid path ("role", "sampling.ratio", …). */
export const OPTION_PATHS: readonly string[] = [
  ...TOP_LEVEL_OPTIONS,
  ...Object.entries(OPTION_GROUPS).flatMap(([group, fields]) => fields.map((field) => `${group}.${field}`)),
];

/**
 * What a user might write, to the path to suggest when a name is unknown: each path, a group's
 * field alone (`ratio`), an old flat name (`prefixLimit`), the group names themselves.
 */
export const OPTION_SUGGESTIONS: ReadonlyMap<string, string> = new Map<string, string>([
  ...OPTION_PATHS.map((path) => [path, path] as [string, string]),
  ...OPTION_PATHS.filter((path) => path.includes(".")).map((path) => [path.split(".")[1], path] as [string, string]),
  ...Object.entries(FLAT_OPTIONS),
  ...Object.keys(OPTION_GROUPS).map((group) => [group, group] as [string, string]),
]);
