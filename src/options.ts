/**
 * The options of `new TaskJourneys(options)`: their defaults, their grouped shape read and
 * checked once (unknown names refused, the deprecated flat names told once), and the metric
 * producer overrides. A bad value throws a TypeError naming the option by its path.
 */
import { performanceSeconds } from "./runtime/clock.js";
import { ProxyTracerProvider, type TracerProvider } from "@opentelemetry/api";
import { PRESETS } from "./model/states.js";
import { Machine } from "./model/machine.js";
import { DEFAULT_MAX_COMPUTATIONS, DEFAULT_MAX_LIVE_JOURNEYS, MAX_CLOCK_SECONDS } from "./recorder/recorder-config.js";
import { type MetricProducerOptions } from "./otel/metric-producer.js";
import type { DeprecatedFlatOptions, MetricOptions, SamplingOptions, TaskJourneysOptions } from "./types.js";
import { tell } from "./otel/warn.js";
import { InvalidOptionError } from "./shared/errors.js";
import { configurationError, guardedCheck, defined, unknownOption } from "./configuration.js";
import { failureDetail } from "./recorder/failure-detail.js";
import { failureText } from "./model/breakdown.js";
import { show } from "./model/show.js";
import { deprecated } from "./recorder/deprecations.js";
import {
  FLAT_OPTIONS,
  OPTION_GROUPS,
  OPTION_SUGGESTIONS,
  TOP_LEVEL_OPTIONS,
  type FlatOption,
  type OptionGroup,
} from "./option-groups.js";

/** Every option's default, in one place, grouped as the options are. */
export const DEFAULT_OPTIONS = {
  role: "worker",
  instance: "",
  strict: false,
  traces: true,
  sampling: { ratio: 0.01, keepSlowerThan: 0.99, keepErrors: true },
  limits: {
    maxPrefixes: 100,
    maxActivities: 64,
    maxLiveJourneys: DEFAULT_MAX_LIVE_JOURNEYS,
    maxKeyLength: 4096,
    maxClockSkew: 86_400,
    maxComputations: DEFAULT_MAX_COMPUTATIONS,
  },
  retention: { journeys: 1000, bytes: 64 * 1024 * 1024 },
  spans: { maxLinks: 128, maxChildren: 256, maxAttributeLength: 256, maxKeysPerTransfer: 32 },
  metrics: {
    temporality: "cumulative",
    histogram: "exponential",
    explicitBuckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
    histogramMaxSize: 512,
    executeTimeByPrefix: false,
  },
  runtime: {
    // performance.now() in seconds, read without allocating (runtime/clock.ts).
    clock: performanceSeconds(),
    asyncContext: true,
    // Off with a custom clock (see resolveOptions): stalls are timed on the performance clock.
    processStalls: true,
  },
} as const;

/** The defaults under the flat names the checks below read (as 0.1 named the options). */
const FLAT_DEFAULTS = {
  role: DEFAULT_OPTIONS.role,
  instance: DEFAULT_OPTIONS.instance,
  strict: DEFAULT_OPTIONS.strict,
  traces: DEFAULT_OPTIONS.traces,
  ...Object.fromEntries(
    Object.entries(FLAT_OPTIONS).flatMap(([flat, path]) => {
      const [group, field] = path.split(".") as [OptionGroup, string];
      const defaults = DEFAULT_OPTIONS[group] as Record<string, unknown>;
      return field in defaults ? [[flat, defaults[field]]] : [];
    }),
  ),
  // Options added since 0.1 have no flat name: read under their field's name.
  maxComputations: DEFAULT_OPTIONS.limits.maxComputations,
} as unknown as Required<
  Omit<FlatOptions, "tracerProvider" | "meterProvider" | "timeOrigin" | "keyPrefix" | "machine" | "sampling">
> & { maxComputations: number };

/** The API's no-op tracer provider: what a ProxyTracerProvider with no delegate hands out. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether spans made through `provider` would go nowhere: the API's no-op provider, or a proxy
 * (the global one) delegating to it, as when no SDK was registered. Decided at construction.
 */
export function isNoopTracerProvider(provider: TracerProvider): boolean {
  if (provider instanceof ProxyTracerProvider) provider = provider.getDelegate();
  return provider === NOOP_TRACER_PROVIDER || provider.constructor === NOOP_TRACER_PROVIDER.constructor;
}

/** The options under the flat names of 0.1: what the checks read, whichever form was given. */
type FlatOptions = Omit<TaskJourneysOptions, OptionGroup> & DeprecatedFlatOptions & { sampling?: SamplingOptions };

/** @internal Every option checked and defaulted, as the parts of a TaskJourneys read them. */
export type ResolvedOptions = Required<
  Omit<FlatOptions, "tracerProvider" | "meterProvider" | "timeOrigin" | "sampling" | "keyPrefix" | "machine">
> &
  Pick<FlatOptions, "tracerProvider" | "meterProvider"> & {
    /** The `machine` option compiled, or the role's Dask preset. */
    machine: Machine;
    sampling: Required<SamplingOptions>;
    timeOrigin: number;
    keyPrefix: TaskJourneysOptions["keyPrefix"];
    /** The clock's first reading, taken (and checked) at construction: the recorder's first good one. */
    clockReading: number;
    /** `limits.maxComputations` (no flat name of 0.1). */
    maxComputations: number;
  };

/** Refuses a bad value, naming its option by its grouped path (`limits.maxPrefixes`), whichever form was given. */
export function fail(option: string, expected: string, value: unknown): never {
  // createMetricProducer()'s own flat names (`temporality`) come marked, not mapped.
  const path = option.startsWith("=") ? option.slice(1) : ((FLAT_OPTIONS as Record<string, string>)[option] ?? option);
  configurationError("TaskJourneys", `option "${path}"`, expected, value);
}

/** The flat name of 0.1 each grouped path stands for (sampling's fields stay in their object). */
const FLAT_BY_PATH = new Map<string, string>(Object.entries(FLAT_OPTIONS).map(([flat, path]) => [path, flat]));

/**
 * The options given, grouped or by their deprecated flat names (each told once per process), under
 * the flat names the checks read. Read once; a name nothing reads is refused, naming the nearest
 * valid one; a flat name and its grouped path given different values are refused too.
 */
function flatOptions(options: object): Partial<FlatOptions> {
  const given = readable("options", options) as Record<string, unknown>;
  const flat: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (Object.hasOwn(OPTION_GROUPS, name)) continue;
    if ((TOP_LEVEL_OPTIONS as readonly string[]).includes(name)) {
      flat[name] = value;
    } else if (Object.hasOwn(FLAT_OPTIONS, name)) {
      const [group, field] = FLAT_OPTIONS[name as FlatOption].split(".");
      deprecated(warn, `option "${name}"`, `${group}: { ${field} }`);
      flat[name] = value;
    } else {
      unknownOption("TaskJourneys", name, OPTION_SUGGESTIONS);
    }
  }
  for (const group of Object.keys(OPTION_GROUPS) as OptionGroup[]) {
    const value = given[group];
    if (value === undefined || value === null) continue;
    const names: readonly string[] = OPTION_GROUPS[group];
    if (typeof value !== "object") fail(group, `an object: { ${names.join("?, ")}? }`, value);
    const fields = readable(group, value) as Record<string, unknown>;
    for (const [field, inner] of Object.entries(fields)) {
      if (!names.includes(field)) unknownOption("TaskJourneys", `${group}.${field}`, OPTION_SUGGESTIONS);
      if (group === "sampling") continue;
      // An option added since 0.1 has no flat name: read under its field's name (never given flat: refused).
      const flatName = FLAT_BY_PATH.get(`${group}.${field}`) ?? field;
      if (flat[flatName] !== undefined && !Object.is(flat[flatName], inner))
        fail(
          `${group}.${field}`,
          `the value of the deprecated "${flatName}" given with it, ${show(flat[flatName])}`,
          inner,
        );
      flat[flatName] = inner;
    }
    if (group === "sampling") flat.sampling = fields;
  }
  return flat as Partial<FlatOptions>;
}

const warn = (message: string): void => tell("warn", message);

function wholeNumber(option: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(option, max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`, value);
  }
  return value;
}

function fraction(option: string, value: number): number {
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) fail(option, "a number from 0 to 1", value);
  return value;
}

/** The name of a metric option in an error: its path, or as createMetricProducer() takes it (flat, `producer`). */
const metricOption = (name: string, producer: boolean): string => (producer ? `=${name}` : `metrics.${name}`);

function temporality(value: unknown, producer = false): "cumulative" | "delta" {
  if (value !== "cumulative" && value !== "delta")
    fail(metricOption("temporality", producer), '"cumulative" or "delta"', value);
  return value;
}

function histogram(value: unknown, producer = false): "exponential" | "explicit" {
  if (value !== "exponential" && value !== "explicit")
    fail(metricOption("histogram", producer), '"exponential" or "explicit"', value);
  return value;
}

function explicitBuckets(buckets: unknown, producer = false): readonly number[] {
  const expected = "an increasing array of finite numbers";
  const option = metricOption("explicitBuckets", producer);
  // A copy, read once: the array given may change (or a Proxy of one answer otherwise) later.
  const copy = guardedCheck("TaskJourneys", `option "${option.replace(/^=/, "")}"`, expected, buckets, () =>
    Array.isArray(buckets) ? Array.from(buckets as unknown[]) : undefined,
  );
  if (
    copy === undefined ||
    copy.some((b, i) => typeof b !== "number" || !Number.isFinite(b) || (i > 0 && b <= (copy[i - 1] as number)))
  ) {
    fail(option, expected, buckets);
  }
  return copy as number[];
}

/** An option object's own values (undefined ones left out), read once; one that throws when read is refused, naming it. */
function readable<T extends object>(option: string, value: T | undefined | null): Partial<T> {
  return guardedCheck("TaskJourneys", `option "${option}"`, "an object whose properties can be read", value, () =>
    defined(value ?? undefined),
  );
}

/** What `createMetricProducer()` may choose per reader; the rest follows the journeys' options. */
export type MetricProducerOverrides = Pick<MetricOptions, "temporality" | "histogram" | "explicitBuckets">;

/** The overrides given (undefined ones left out), checked as the constructor checks those options. */
export function checkProducerOverrides(given: MetricProducerOverrides): Partial<MetricProducerOptions> {
  if (given === null || typeof given !== "object") fail("options", "an object", given);
  const options = readable("options", given);
  const checked: Partial<MetricProducerOptions> = {};
  if (options.temporality !== undefined) checked.temporality = temporality(options.temporality, true);
  if (options.histogram !== undefined) checked.histogram = histogram(options.histogram, true);
  if (options.explicitBuckets !== undefined) checked.explicitBuckets = explicitBuckets(options.explicitBuckets, true);
  return checked;
}

/**
 * The clock's first reading, at construction: a clock that cannot give one good reading (finite
 * seconds >= 0) is bad configuration, refused here naming the option, as every other option is.
 * A clock that fails only later is the recorder's to guard (`invalid-clock`, counted, its last
 * good reading used: this one at first), since it already worked once and a time source that
 * hiccups must not throw into the host mid-run.
 */
function firstReading(clock: () => unknown): number {
  let reading: unknown;
  try {
    reading = clock();
  } catch (error) {
    const { type, message } = failureDetail(error);
    throw new InvalidOptionError(
      `TaskJourneys: option "runtime.clock" must be a function returning seconds from 0 to 1e12, but it threw ${failureText(type, message)}`,
      { cause: error },
    );
  }
  if (typeof reading !== "number" || !(reading >= 0 && reading <= MAX_CLOCK_SECONDS))
    fail("clock", "a function returning seconds from 0 to 1e12", reading);
  return reading;
}

/** Checks every option once, at construction, and fills in the defaults. */
export function resolveOptions(options: TaskJourneysOptions & DeprecatedFlatOptions): ResolvedOptions {
  if (options === null || typeof options !== "object") fail("options", "an object", options);
  // Every option read once, here: a getter or a Proxy is not asked again (nor can it throw later).
  const given = flatOptions(options);
  const merged = {
    ...FLAT_DEFAULTS,
    ...given,
    sampling: { ...DEFAULT_OPTIONS.sampling, ...given.sampling },
  };
  if (merged.role !== "worker" && merged.role !== "scheduler") fail("role", '"worker" or "scheduler"', merged.role);
  if (typeof merged.instance !== "string") fail("instance", "a string", merged.instance);
  if (typeof merged.clock !== "function") fail("clock", "a function returning seconds", merged.clock);
  const keyPrefix = given.keyPrefix;
  if (keyPrefix !== undefined && typeof keyPrefix !== "function")
    fail("keyPrefix", "a function from a key to its prefix", keyPrefix);
  const probe = firstReading(merged.clock);
  fraction("sampling.ratio", merged.sampling.ratio);
  fraction("sampling.keepSlowerThan", merged.sampling.keepSlowerThan);
  if (typeof merged.sampling.keepErrors !== "boolean")
    fail("sampling.keepErrors", "a boolean", merged.sampling.keepErrors);
  // Upper bounds keep typed arrays sized (prefixes × states, prefixes × activities) allocatable.
  wholeNumber("prefixLimit", merged.prefixLimit, 1, 100_000);
  wholeNumber("activityLimit", merged.activityLimit, 1, 4096);
  // The ring is allocated as it fills, but a million slots is already more than explain() needs.
  wholeNumber("retainedJourneys", merged.retainedJourneys, 0, 1_000_000);
  wholeNumber("retainedJourneyBytes", merged.retainedJourneyBytes, 0);
  // At least one: a journey must fit. No upper bound: live journeys take memory only as they come.
  wholeNumber("maxLiveJourneys", merged.maxLiveJourneys, 1);
  wholeNumber("maxKeyLength", merged.maxKeyLength, 1);
  // Slots of computations live in a journey's flags (journey.ts): bounded well below 2^25.
  wholeNumber("limits.maxComputations", merged.maxComputations, 1, 100_000);
  wholeNumber("histogramMaxSize", merged.histogramMaxSize, 2, 2 ** 16);
  wholeNumber("maxLinksPerSpan", merged.maxLinksPerSpan, 0);
  wholeNumber("maxAttributeLength", merged.maxAttributeLength, 8);
  wholeNumber("maxKeysPerTransfer", merged.maxKeysPerTransfer, 0);
  wholeNumber("maxChildrenPerSpan", merged.maxChildrenPerSpan, 0);
  if (typeof merged.maxClockSkew !== "number" || !(merged.maxClockSkew > 0))
    fail("maxClockSkew", "a number of seconds > 0 (Infinity: no limit)", merged.maxClockSkew);
  if (typeof merged.strict !== "boolean") fail("strict", "a boolean", merged.strict);
  if (typeof merged.asyncContext !== "boolean") fail("asyncContext", "a boolean", merged.asyncContext);
  if (typeof merged.traces !== "boolean") fail("traces", "a boolean", merged.traces);
  if (typeof merged.processStalls !== "boolean") fail("processStalls", "a boolean", merged.processStalls);
  // A clock of the caller's (a test's fake one) has no known relation to the times perf_hooks
  // gives GC pauses: stalls are watched with it only when asked for.
  const processStalls = given.processStalls ?? (given.clock === undefined && merged.processStalls);
  if (typeof merged.executeTimeByPrefix !== "boolean")
    fail("executeTimeByPrefix", "a boolean", merged.executeTimeByPrefix);
  temporality(merged.temporality);
  histogram(merged.histogram);
  const buckets = explicitBuckets(merged.explicitBuckets);
  // The default clock is performance.now(), whose epoch is performance.timeOrigin to the
  // microsecond. Date.now() is whole milliseconds: an origin taken from it is up to 1 ms early, a
  // different error in each process, and a worker's span seen from the scheduler's ended up to
  // 1 ms after its parent (190 µs in a CI run). A clock of the caller's has only Date.now().
  const timeOrigin =
    given.timeOrigin ?? (given.clock === undefined ? performance.timeOrigin / 1000 : Date.now() / 1000 - probe);
  if (typeof timeOrigin !== "number" || !Number.isFinite(timeOrigin))
    fail("timeOrigin", "finite seconds since the epoch", timeOrigin);
  // Compiled once, here: the recorder only reads its tables.
  const declared = given.machine;
  const machine =
    declared === undefined
      ? PRESETS[merged.role]
      : guardedCheck(
          "TaskJourneys",
          'option "machine"',
          "a state machine",
          declared,
          () => new Machine(declared, (part, expected, value) => fail(`machine${part}`, expected, value)),
        );
  return {
    ...(merged as unknown as ResolvedOptions),
    explicitBuckets: buckets,
    timeOrigin,
    machine,
    processStalls,
    clockReading: probe,
  };
}
