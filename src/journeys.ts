import {
  metrics as metricsApi,
  ProxyTracerProvider,
  trace as traceApi,
  type Context,
  type MeterProvider,
  type TracerProvider,
} from "@opentelemetry/api";
import type { Key } from "./model/keys.js";
import { PRESETS, type Role, type SchedulerState, type WorkerState } from "./model/states.js";
import { Machine, type StateMachine } from "./model/machine.js";
import type { Breakdown } from "./model/breakdown.js";
import type { DurationStats } from "./model/statistics/index.js";
import { DurationStatistics } from "./model/statistics/index.js";
import { ratioSampler } from "./model/sampling.js";
import { DEFAULT_MAX_LIVE_JOURNEYS, Recorder } from "./recorder/recorder.js";
import { ambientLedger } from "./recorder/ambient.js";
import { explainJourney } from "./recorder/explain.js";
import { serveNodes } from "./recorder/explain-serves.js";
import type { RecorderListener } from "./recorder/listener.js";
import { METRIC_DESCRIPTORS, TaskMetricProducer, type MetricProducerOptions } from "./otel/metric-producer.js";
import type {
  ActivityLedger,
  ExecuteLedger,
  ExecuteOptions,
  GatherLedger,
  GatherOptions,
  ServeOptions,
  TransitionOptions,
  KeyDescription,
  ServeLedger,
  DeprecatedFlatOptions,
  MetricOptions,
  Propagation,
  SamplingOptions,
  TaskJourneysOptions,
  TraceCarrier,
} from "./types.js";
import { TransferLedger } from "./recorder/transfer-ledger.js";
import { ServeLedger as ServeLedgerImpl } from "./recorder/serve-ledger.js";
import { INSTRUMENTATION_SCOPE, METRIC_ACTIVE, METRIC_STATE_DURATION } from "./otel/semconv.js";
import { SpanBridge } from "./otel/spans/bridge.js";
import { extractSpanContext, remoteContext } from "./otel/propagation.js";
import { VERSION } from "./version.js";
import { tell } from "./otel/warn.js";
import { registerInternals } from "./internal.js";
import { configurationError, guardedCheck, defined, unknownOption } from "./configuration.js";
import { ProcessStalls } from "./runtime/process-stalls.js";
import { failureDetail } from "./recorder/failure-detail.js";
import { failureText } from "./model/breakdown.js";
import { isCallOptions } from "./recorder/call-options.js";
import { deprecated } from "./recorder/deprecations.js";
import {
  FLAT_OPTIONS,
  OPTION_GROUPS,
  OPTION_SUGGESTIONS,
  TOP_LEVEL_OPTIONS,
  type FlatOption,
  type OptionGroup,
} from "./option-groups.js";
import { show } from "./recorder/show.js";

/** The names of each call's trailing options object (call-options.ts tells them from the deprecated positional values). */
const TRANSITION_OPTIONS = ["at", "error", "prefix"] as const;
const EXECUTE_OPTIONS = ["at", "prefix"] as const;
const GATHER_OPTIONS = ["bytes", "at"] as const;
const SERVE_OPTIONS = ["context", "at"] as const;

/** Process stalls kept for explain() and the spans: a few minutes of a busy process's GC pauses. */
const STALLS_RETAINED = 256;

/** The states of a role: a worker's, the scheduler's, or either when the role is not known statically. */
export type StateOf<R extends Role> = { worker: WorkerState; scheduler: SchedulerState }[R];

/** Journeys of any role and machine: what instrument() and wrap() take. */
export type AnyTaskJourneys = TaskJourneys<Role, string>;

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
    // `performance` is taken once: in Node the global is a lazy getter, paid on every read otherwise.
    clock: (
      (timer: { now(): number }) => () =>
        timer.now() / 1000
    )(performance),
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
} as unknown as Required<
  Omit<FlatOptions, "tracerProvider" | "meterProvider" | "timeOrigin" | "keyPrefix" | "machine" | "sampling">
>;

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
  };

/** Refuses a bad value, naming its option by its grouped path (`limits.maxPrefixes`), whichever form was given. */
function fail(option: string, expected: string, value: unknown): never {
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
      const flatName = FLAT_BY_PATH.get(`${group}.${field}`)!;
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
function checkProducerOverrides(given: MetricProducerOverrides): Partial<MetricProducerOptions> {
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
    throw new TypeError(
      `TaskJourneys: option "runtime.clock" must be a function returning finite seconds >= 0, but it threw ${failureText(type, message)}`,
      { cause: error },
    );
  }
  if (typeof reading !== "number" || !(reading >= 0 && reading < Infinity))
    fail("clock", "a function returning finite seconds >= 0", reading);
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

/**
 * Where every task's time goes, as OpenTelemetry span trees and per-prefix metrics. Record with
 * `transition()` and the ledgers; read with `stats()`, `explain()` and `metricProducer`. `S`, the
 * state names `transition()` takes, are the `machine` option's, else the role's Dask preset's.
 */
export class TaskJourneys<R extends Role = Role, S extends string = StateOf<R>> {
  /** Pass to a MetricReader's `metricProducers` to export the task metrics. */
  readonly metricProducer: TaskMetricProducer;
  /**
   * Trace context across processes, by side: `propagation.sender.inject(key, carrier)` before
   * sending a message, `propagation.receiver.continueFrom(key, carrier)` (and `resultFrom`,
   * `dataFrom`, `replyFrom`, `extract`) on receiving one. One frozen object, made once.
   */
  readonly propagation: Propagation = Object.freeze({
    sender: Object.freeze({
      inject: (key: Key, carrier: TraceCarrier) => this.#inject(key, carrier),
      injectTransfer: (ledger: GatherLedger | ServeLedger, carrier: TraceCarrier) =>
        this.#injectTransfer(ledger, carrier),
    }),
    receiver: Object.freeze({
      extract: (carrier: Readonly<Record<string, unknown>>) => this.#extract(carrier),
      continueFrom: (key: Key, carrier: Readonly<Record<string, unknown>> | Context) => this.#parent(key, carrier),
      resultFrom: (key: Key, carrier: Readonly<Record<string, unknown>> | Context) => this.#returned(key, carrier),
      dataFrom: (key: Key, carrier: Readonly<Record<string, unknown>> | Context) => this.#linkFrom(key, carrier),
      replyFrom: (ledger: GatherLedger, carrier: Readonly<Record<string, unknown>> | Context) =>
        this.#linkTransfer(ledger, carrier),
    }),
  });
  readonly role: R;
  readonly instance: string;
  // Private (#) fields: the facade is sealed; sdk.ts, wrap/ and tests reach them through internal.ts.
  readonly #recorder: Recorder;
  readonly #spans: SpanBridge;
  /** The options every metric producer of these journeys starts from. */
  readonly #producerOptions: MetricProducerOptions;
  readonly #listeners: RecorderListener[] = [];
  #closed = false;
  /** Whether spans are made (the `traces` option, and a tracer provider that is not a no-op): the span bridge listens, inject() and parent() work. */
  #traces: boolean;
  /**
   * The global tracer provider before any SDK registered (an SDK started after these journeys,
   * as NodeSDK's readers want the metric producer before `start()`): asked again at each journey's
   * start, and at inject() and parent(), until it has one; then traces begin. Undefined once decided.
   */
  #pendingProvider: ProxyTracerProvider | undefined;
  #shutdownPromise: Promise<void> | undefined;
  #removeObservers: (() => void) | undefined;
  #processStalls: ProcessStalls | undefined;

  constructor(options: TaskJourneysOptions & DeprecatedFlatOptions & { role?: R; machine?: StateMachine<S> } = {}) {
    const resolved = resolveOptions(options);
    const tracerProvider = resolved.tracerProvider ?? traceApi.getTracerProvider();
    // No work for nothing: with spans going nowhere, no journey is sampled and no span object is
    // ever made (the bridge is not a listener), rather than building trees a no-op drops. A proxy
    // with no SDK behind it yet may get one later: its tracer delegates once it does.
    const expectedProvider = "a TracerProvider (an object with getTracer())";
    const [noop, tracer] = guardedCheck(
      "TaskJourneys",
      'option "tracerProvider"',
      expectedProvider,
      tracerProvider,
      () => {
        if (typeof (tracerProvider as Partial<TracerProvider> | null)?.getTracer !== "function")
          fail("tracerProvider", expectedProvider, tracerProvider);
        return [
          isNoopTracerProvider(tracerProvider),
          tracerProvider.getTracer(INSTRUMENTATION_SCOPE, VERSION),
        ] as const;
      },
    );
    this.#pendingProvider =
      resolved.traces && noop && tracerProvider instanceof ProxyTracerProvider ? tracerProvider : undefined;
    const traces = resolved.traces && !noop;
    this.#traces = traces;
    this.role = resolved.role as R;
    this.instance = resolved.instance;
    const histogramOptions = { maxSize: resolved.histogramMaxSize };
    // Head sampling: the key's hash against the ratio (every process decides alike), or a
    // sampled context propagated to this key with `parent()` (the trace flags win).
    const byRatio = ratioSampler(resolved.sampling.ratio);
    // (`bridge` is set below, before any transition can reach the sampler.)
    let bridge: SpanBridge | undefined = undefined;
    const sampler = (id: string | number): boolean =>
      this.#tracing() && ((byRatio !== undefined && byRatio(id)) || bridge!.hasParent(id));
    const recorder = new Recorder({
      role: resolved.role,
      machine: resolved.machine,
      instance: resolved.instance,
      clock: resolved.clock,
      clockReading: resolved.clockReading,
      prefixLimit: resolved.prefixLimit,
      activityLimit: resolved.activityLimit,
      retainedJourneys: resolved.retainedJourneys,
      retainedJourneyBytes: resolved.retainedJourneyBytes,
      maxLiveJourneys: resolved.maxLiveJourneys,
      maxKeyLength: resolved.maxKeyLength,
      strict: resolved.strict,
      asyncContext: resolved.asyncContext,
      maxClockSkew: resolved.maxClockSkew,
      keyPrefix: resolved.keyPrefix,
      sampler: traces || this.#pendingProvider !== undefined ? sampler : undefined,
      makeStatistics: () => new DurationStatistics(histogramOptions),
      tell: (message) => tell("warn", message),
    });
    this.#recorder = recorder;
    if (resolved.processStalls) {
      this.#processStalls = new ProcessStalls({
        // The guarded clock: a reading in a timer callback must not throw into the host.
        clock: recorder.clock,
        capacity: STALLS_RETAINED,
        // Ticks at the full rate only while journeys are live: an idle process's wakeups cost CPU.
        busy: () => recorder.live.size > 0,
      }).start();
      const stalls = this.#processStalls;
      recorder.onFirstLive = () => stalls.wake();
      recorder.stalls = this.#processStalls.ring;
    }
    this.#producerOptions = {
      temporality: resolved.temporality,
      histogram: resolved.histogram,
      explicitBuckets: resolved.explicitBuckets,
      executeTimeByPrefix: resolved.executeTimeByPrefix,
      processStalls: this.#processStalls,
    };
    this.metricProducer = new TaskMetricProducer(recorder, this.#producerOptions);
    // null: the global one (as it always was).
    const meterProvider = resolved.meterProvider === null ? metricsApi.getMeterProvider() : resolved.meterProvider;
    if (meterProvider !== undefined) {
      const expected = "a MeterProvider (an object with getMeter())";
      guardedCheck("TaskJourneys", 'option "meterProvider"', expected, meterProvider, () => {
        if (typeof (meterProvider as Partial<MeterProvider>).getMeter !== "function")
          fail("meterProvider", expected, meterProvider);
        this.#observeThrough(meterProvider);
      });
    }
    bridge = new SpanBridge(
      recorder,
      tracer,
      {
        role: resolved.role,
        instance: resolved.instance,
        timeOrigin: resolved.timeOrigin,
        keepSlowerThan: resolved.sampling.keepSlowerThan,
        keepErrors: resolved.sampling.keepErrors,
        maxLinksPerSpan: resolved.maxLinksPerSpan,
        maxChildrenPerSpan: resolved.maxChildrenPerSpan,
        maxAttributeLength: resolved.maxAttributeLength,
        maxKeysPerTransfer: resolved.maxKeysPerTransfer,
      },
      tracerProvider,
    );
    this.#spans = bridge;
    registerInternals(this, { recorder, options: resolved, spans: bridge, processStalls: this.#processStalls });
    if (traces) this.addListener(bridge);
  }

  /** Whether spans are made now: `#traces`, or an SDK registered since behind a pending global provider. */
  #tracing(): boolean {
    return this.#traces || this.#tracesBegun();
  }

  /**
   * Whether an SDK has registered behind the global provider these journeys were given before it
   * had one: if so, traces begin now (the span bridge listens from here on). False while none has.
   */
  #tracesBegun(): boolean {
    const pending = this.#pendingProvider;
    if (pending === undefined || this.#closed || isNoopTracerProvider(pending)) return false;
    this.#pendingProvider = undefined;
    this.#traces = true;
    this.addListener(this.#spans);
    return true;
  }

  /**
   * A metric producer of its own for another MetricReader: with delta temporality a producer
   * reports what changed since its own previous collection, so each reader needs one. Options
   * left out are those of these journeys (`temporality`, `histogram`, `explicitBuckets`); e.g.
   * `{ temporality: "cumulative", histogram: "explicit" }` for a pull-mode Prometheus exporter.
   */
  createMetricProducer(options: MetricProducerOverrides = {}): TaskMetricProducer {
    return new TaskMetricProducer(this.#recorder, { ...this.#producerOptions, ...checkProducerOverrides(options) });
  }

  /** Adds a listener of finished journeys and transfers (the span bridge is one). */
  addListener(listener: RecorderListener): void {
    this.#listeners.push(listener);
    this.#recorder.listener = this.#listeners.length === 1 ? listener : fanOut(this.#listeners);
  }

  /**
   * The hot path: `key` moved from state `from` to `to`, at `at` seconds (default: now). The
   * states are typed by the machine (the `machine` option's states, else the role's:
   * `new TaskJourneys({ role: "scheduler" })` takes scheduler states), so a misspelt state does
   * not compile; names from elsewhere are still checked at run time (`unknown-state`,
   * `wrong-role-state`). `error` says why the attempt being left failed (an Error or a message),
   * as a scheduler knows it: into a failure state, or a retry (active → delayed). The visit left
   * carries it (`task.outcome` error, `task.error`, explain(), the report) as an execution's error
   * does, and a failure state's task span its status; with a success state it is counted
   * (`invalid-outcome`), not recorded. `options`: `{ at, error, prefix }` (TransitionOptions).
   */
  transition(key: Key, from: S, to: S, options?: TransitionOptions): void;
  /** @deprecated Positional since 0.2.0, removed in the next minor release: write `transition(key, from, to, { at, error })`. */
  transition(key: Key, from: S, to: S, at: number | undefined, error?: unknown): void;
  transition(key: Key, from: S, to: S, options?: TransitionOptions | number, error?: unknown): void {
    if (this.#closed) return;
    // The hot path's usual call, with nothing after the states: nothing more is read.
    if (options === undefined && error === undefined) this.#recorder.transition(key, from, to, undefined, undefined);
    else this.#transitionWith(key, from, to, options, error);
  }

  /** transition() given options, or the deprecated positional `at, error`: apart, so the usual call stays small. */
  #transitionWith(key: Key, from: S, to: S, options: unknown, legacyError: unknown): void {
    const recorder = this.#recorder;
    if (legacyError !== undefined || !isCallOptions(options, TRANSITION_OPTIONS)) {
      recorder.failures.deprecated("transition(key, from, to, at, error)", "transition(key, from, to, { at, error })");
      recorder.transition(key, from, to, options as number | undefined, legacyError);
      return;
    }
    let at: unknown, error: unknown, prefix: unknown;
    try {
      ({ at, error, prefix } = options);
    } catch {
      recorder.drop("invalid-options", "transition() given options that threw when read; recorded as if given none");
      recorder.transition(key, from, to, undefined, undefined);
      return;
    }
    // No closure unless a prefix is given: a call with `{ at }` allocates nothing of its own.
    if (prefix === undefined) recorder.transition(key, from, to, at as number | undefined, error);
    else
      this.#withPrefix("transition()", prefix, () =>
        recorder.transition(key, from, to, at as number | undefined, error),
      );
  }

  /**
   * Runs `record` with `prefix` as the prefix of a journey it begins (the recorder's prefix hint,
   * cleared after: nothing is kept per key). A prefix that is not a non-empty string is counted
   * (`invalid-description`) and left out.
   */
  #withPrefix<T>(call: string, prefix: unknown, record: () => T): T {
    if (prefix === undefined) return record();
    if (typeof prefix !== "string" || prefix === "") {
      this.#recorder.drop(
        "invalid-description",
        `${call} given the prefix ${show(prefix)}, not a non-empty string; left out`,
      );
      return record();
    }
    const recorder = this.#recorder;
    recorder.prefixHint = prefix;
    try {
      return record();
    } finally {
      recorder.prefixHint = undefined;
    }
  }

  /**
   * Gives `key` its prefix (`task.prefix` in metrics and spans) and task group, instead of what
   * `keyPrefix` or Dask's key_split make of it: for keys that are ids (`"42"`, a UUID). Call it
   * before or during the key's journeys; it holds for every later journey of the key here (a
   * retry's too) until the key moves to `forgotten`. A journey under way keeps the prefix it began
   * with. At most 100,000 keys are described at once; further ones are counted (describe-overflow).
   */
  describe(key: Key, description: KeyDescription): void {
    if (this.#closed) return;
    this.#recorder.describe(key, description);
  }

  /** Tells which keys `key` depends on, for waiting-time apportioning and span links. */
  dependencies(key: Key, dependencies: readonly Key[]): void {
    if (this.#closed) return;
    this.#recorder.dependencies(key, dependencies);
  }

  /**
   * Opens the ledger of one execution of `key`, moving it to executing if it is not there yet.
   * `options`: `{ at, prefix }` (ExecuteOptions).
   */
  execute(key: Key, options?: ExecuteOptions): ExecuteLedger<S>;
  /** @deprecated Positional since 0.2.0, removed in the next minor release: write `execute(key, { at })`. */
  execute(key: Key, at: number | undefined): ExecuteLedger<S>;
  execute(key: Key, options?: ExecuteOptions | number): ExecuteLedger<S> {
    if (this.#closed) return this.#recorder.noLedger;
    if (options === undefined) return this.#recorder.execute(key, undefined);
    const recorder = this.#recorder;
    if (!isCallOptions(options, EXECUTE_OPTIONS)) {
      recorder.failures.deprecated("execute(key, at)", "execute(key, { at })");
      return recorder.execute(key, options as number);
    }
    let at: unknown, prefix: unknown;
    try {
      ({ at, prefix } = options);
    } catch {
      recorder.drop("invalid-options", "execute() given options that threw when read; recorded as if given none");
      return recorder.execute(key, undefined);
    }
    if (prefix === undefined) return recorder.execute(key, at as number | undefined);
    return this.#withPrefix("execute()", prefix, () => recorder.execute(key, at as number | undefined));
  }

  /**
   * Opens the ledger of one gather_dep transfer of `keys` from `peer`, moving them to flight.
   * `options`: `{ bytes, at }` (GatherOptions).
   */
  gather(peer: string, keys: readonly Key[], options?: GatherOptions): GatherLedger;
  /** @deprecated Positional since 0.2.0, removed in the next minor release: write `gather(peer, keys, { bytes, at })`. */
  gather(peer: string, keys: readonly Key[], bytes: number | undefined, at?: number): GatherLedger;
  gather(peer: string, keys: readonly Key[], options?: GatherOptions | number, legacyAt?: number): GatherLedger {
    if (this.#closed) return this.#recorder.noLedger;
    const recorder = this.#recorder;
    if (options === undefined && legacyAt === undefined) return recorder.gather(peer, keys, undefined, undefined);
    if (legacyAt !== undefined || !isCallOptions(options, GATHER_OPTIONS)) {
      recorder.failures.deprecated("gather(peer, keys, bytes, at)", "gather(peer, keys, { bytes, at })");
      return recorder.gather(peer, keys, options as number | undefined, legacyAt);
    }
    let bytes: unknown, at: unknown;
    try {
      ({ bytes, at } = options);
    } catch {
      recorder.drop("invalid-options", "gather() given options that threw when read; recorded as if given none");
      return recorder.gather(peer, keys, undefined, undefined);
    }
    return recorder.gather(peer, keys, bytes as number | undefined, at as number | undefined);
  }

  /**
   * Opens the ledger of one get_data request `peer` made of this worker for `keys` (the serving
   * side of its gather_dep): meter what answering takes (disk-read, serialize, network with the
   * bytes sent) and `end()` it. With the requester's trace context (`context`: the request's
   * carrier, filled by `injectTransfer(gatherLedger, …)` there), a traced transfer gets a
   * get_data span here, a child of its gather_dep. `options`: `{ context, at }` (ServeOptions).
   */
  serve(peer: string, keys: readonly Key[], options?: ServeOptions): ServeLedger;
  /** @deprecated Positional since 0.2.0, removed in the next minor release: write `serve(peer, keys, { context, at })`. */
  serve(
    peer: string,
    keys: readonly Key[],
    context: Readonly<Record<string, unknown>> | Context | undefined,
    at?: number,
  ): ServeLedger;
  serve(peer: string, keys: readonly Key[], options?: unknown, legacyAt?: number): ServeLedger {
    if (this.#closed) return this.#recorder.noLedger;
    const recorder = this.#recorder;
    let context: unknown = undefined;
    let at: unknown = undefined;
    if (options !== undefined || legacyAt !== undefined) {
      if (legacyAt === undefined && isCallOptions(options, SERVE_OPTIONS)) {
        try {
          ({ context, at } = options);
        } catch {
          recorder.drop("invalid-options", "serve() given options that threw when read; recorded as if given none");
        }
      } else {
        // A carrier ({ traceparent }) or a Context where the options go: the positional form.
        recorder.failures.deprecated("serve(peer, keys, context, at)", "serve(peer, keys, { context, at })");
        context = options;
        at = legacyAt;
      }
    }
    const ledger = recorder.serve(peer, keys, at as number | undefined);
    if (this.#tracing() && context !== undefined && ledger instanceof ServeLedgerImpl) {
      try {
        this.#spans.serveStarted(ledger.serve, context as Readonly<Record<string, unknown>> | Context);
      } catch {
        this.#badCarrier("serve()");
      }
    }
    return ledger;
  }

  /**
   * Writes the trace context of a ledger's live span into `carrier`: a gather ledger's gather_dep
   * (into the get_data request) or a serve ledger's get_data (into the reply). Returns false and
   * writes nothing when the transfer is not traced.
   */
  #injectTransfer(ledger: GatherLedger | ServeLedger, carrier: TraceCarrier): boolean {
    if (!this.#tracing()) return false;
    try {
      if (ledger instanceof TransferLedger) return this.#spans.injectTransfer(ledger.transfer, carrier);
      if (ledger instanceof ServeLedgerImpl) return this.#spans.injectTransfer(ledger.serve, carrier);
      return false;
    } catch {
      return this.#badCarrier("propagation.sender.injectTransfer()", "its ledger or carrier");
    }
  }

  /** Links a gather ledger's live gather_dep span to the get_data span whose context a reply carried. */
  #linkTransfer(ledger: GatherLedger, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.#closed || !this.#tracing()) return false;
    try {
      // Inside the guard: `instanceof` asks a Proxy's getPrototypeOf trap, which may throw.
      if (!(ledger instanceof TransferLedger)) return false;
      return this.#spans.linkTransfer(ledger.transfer, context);
    } catch {
      return this.#badCarrier("propagation.receiver.replyFrom()", "its ledger or carrier");
    }
  }

  /** Why `key` waits in fetch ("local-saturated", "remote-saturated"): its queue time is reported under that reason. */
  queued(key: Key, reason: string): void {
    if (this.#closed) return;
    this.#recorder.queued(key, reason);
  }

  /**
   * Meters `work` as `activity` of the execution or transfer surrounding this call (found through
   * AsyncLocalStorage, or only synchronously with `asyncContext: false`); outside any ledger it
   * just runs `work`.
   */
  meter<T>(activity: string, work: () => T): T {
    if (typeof work !== "function") {
      this.#recorder.drop("invalid-work", "meter() given something other than a function");
      return undefined as T;
    }
    const frame = ambientLedger.getStore();
    // A timer started inside a task may outlive it: an ended ledger is no ledger.
    if (frame === undefined || frame.ledger.ended) return work();
    return frame.ledger.meter(activity, work);
  }

  /** The ledger surrounding this call, if any. */
  currentLedger(): ActivityLedger | undefined {
    return ambientLedger.getStore()?.ledger;
  }

  /**
   * Writes the trace context of `key`'s journey here into `carrier` (W3C `traceparent`, and
   * `tracestate`), for the message that carries the task on: the key's task span, which covers
   * whatever the receiver does whichever state this journey is in (the state span it was made in
   * travels as a `taskjourney` tracestate member, for the receiver's link); after the journey
   * ended, its task span if it was emitted (for the data a peer fetches, or the result going back).
   * A journey that is not head-sampled hands out ids too, flagged not sampled: if it is kept at its
   * end it is emitted under them, so every journey of a task shares one trace. Returns false and
   * writes nothing when there is nothing to name (no journey here, or one ended long ago or unkept).
   */
  #inject(key: Key, carrier: TraceCarrier): boolean {
    if (!this.#tracing()) return false;
    try {
      return this.#spans.inject(key, carrier);
    } catch {
      return this.#badCarrier("propagation.sender.inject()");
    }
  }

  /**
   * The trace context in a received `carrier`, as an OpenTelemetry Context with the remote span
   * (for your own spans, or for `parent()` / `linkFrom()`), or undefined when it holds no valid
   * `traceparent`. Independent of the global propagator.
   */
  #extract(carrier: Readonly<Record<string, unknown>>): Context | undefined {
    let spanContext: ReturnType<typeof extractSpanContext>;
    try {
      spanContext = extractSpanContext(carrier);
    } catch {
      this.#badCarrier("propagation.receiver.extract()");
      return undefined;
    }
    return spanContext === undefined ? undefined : remoteContext(spanContext);
  }

  /**
   * Makes `key`'s next journey here a child of the span in `context` (a carrier or an extracted
   * Context): on a worker, call it with the compute-task message's carrier before the key's first
   * transition, and the worker's journey nests under the scheduler's task span, linked to the
   * state span the carrier was made in — one trace per task across processes. A sampled context
   * makes this journey head-sampled too, whatever the ratio says; an unsampled one is kept for
   * its ids, under which this journey is emitted if it is kept at its end (error, slow). Returns
   * true when queued. A journey already under way cannot be re-parented: its task span links to a
   * sampled context instead (returns false).
   */
  #parent(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.#closed || !this.#tracing()) return false;
    try {
      return this.#spans.parent(key, context);
    } catch {
      return this.#badCarrier("propagation.receiver.continueFrom()");
    }
  }

  /**
   * The second carrier of a task: the one that comes back with its result or error, which the
   * other side filled with `inject(key, …)` after its journey ended. When that side kept its
   * journey (the carrier says sampled: head-sampled, or kept at its end for an error or
   * slowness), `key`'s live journey here is kept too, so the task's trace holds both sides. Call
   * it before the transition that ends the journey. Returns true when it made the journey kept.
   */
  #returned(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.#closed) return false;
    try {
      return this.#spans.returned(key, context);
    } catch {
      return this.#badCarrier("propagation.receiver.resultFrom()");
    }
  }

  /**
   * Tells that the data of `key` came with this producer's trace context (a carrier the producer
   * filled with `inject(key, …)`, or an extracted Context): the task span of `key`'s journey here
   * and of every journey here that depends on `key` link to the producer's journey when they are
   * emitted. On the scheduler, `linkFrom(key, clientCarrier)` links a submission to a client's
   * span in another process.
   */
  #linkFrom(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.#closed || !this.#tracing()) return false;
    try {
      return this.#spans.linkFrom(key, context);
    } catch {
      return this.#badCarrier("propagation.receiver.dataFrom()");
    }
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.sender.injectTransfer(ledger, carrier)`. */
  injectTransfer(ledger: GatherLedger | ServeLedger, carrier: TraceCarrier): boolean {
    this.#recorder.failures.deprecated(
      "journeys.injectTransfer(ledger, carrier)",
      "journeys.propagation.sender.injectTransfer(ledger, carrier)",
    );
    return this.#injectTransfer(ledger, carrier);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.replyFrom(ledger, carrier)`. */
  linkTransfer(ledger: GatherLedger, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.linkTransfer(ledger, carrier)",
      "journeys.propagation.receiver.replyFrom(ledger, carrier)",
    );
    return this.#linkTransfer(ledger, context);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.sender.inject(key, carrier)`. */
  inject(key: Key, carrier: TraceCarrier): boolean {
    this.#recorder.failures.deprecated(
      "journeys.inject(key, carrier)",
      "journeys.propagation.sender.inject(key, carrier)",
    );
    return this.#inject(key, carrier);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.extract(carrier)`. */
  extract(carrier: Readonly<Record<string, unknown>>): Context | undefined {
    this.#recorder.failures.deprecated("journeys.extract(carrier)", "journeys.propagation.receiver.extract(carrier)");
    return this.#extract(carrier);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.continueFrom(key, carrier)`. */
  parent(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.parent(key, carrier)",
      "journeys.propagation.receiver.continueFrom(key, carrier)",
    );
    return this.#parent(key, context);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.resultFrom(key, carrier)`. */
  returned(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.returned(key, carrier)",
      "journeys.propagation.receiver.resultFrom(key, carrier)",
    );
    return this.#returned(key, context);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.dataFrom(key, carrier)`. */
  linkFrom(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.linkFrom(key, carrier)",
      "journeys.propagation.receiver.dataFrom(key, carrier)",
    );
    return this.#linkFrom(key, context);
  }

  /**
   * Duration statistics of visits to `state` by tasks of `prefix`; default the machine's
   * executing state (Dask: `executing` on a worker, `processing` on the scheduler).
   */
  stats(prefix: string, state?: S): DurationStats {
    const machine = this.#recorder.machine;
    return this.#recorder.stats(prefix, state ?? machine.names[machine.executing] ?? "executing");
  }

  /** Where the time of a live or recently finished journey of `key` went, or undefined. */
  explain(key: Key): Breakdown | undefined {
    const journey = this.#recorder.journeyOf(key);
    if (journey === undefined) return undefined;
    const recorder = this.#recorder;
    const names = {
      prefix: (id: number) => recorder.prefixes.name(id),
      activity: (id: number) => recorder.activities.name(id),
      unit: (id: number) => recorder.units.name(id),
    };
    const breakdown = explainJourney(
      journey,
      names,
      this.instance,
      recorder.clock(),
      recorder.machine,
      recorder.stalls,
    );
    const serves = recorder.servesOf(key);
    if (serves.length > 0) breakdown.served = serveNodes(serves, names);
    return breakdown;
  }

  /** Counts of dropped or repaired inputs by reason, as in taskjourney.dropped. */
  dropped(): Record<string, number> {
    return Object.fromEntries(this.#recorder.accumulators.dropped);
  }

  /** Stops recording; flushes what taskjourney holds. Never shuts down providers passed in. Idempotent. */
  shutdown(): Promise<void> {
    this.#shutdownPromise ??= (async () => {
      this.#closed = true;
      this.#removeObservers?.();
      this.#processStalls?.stop();
      for (const listener of this.#listeners) {
        const flushable = listener as RecorderListener & { shutdown?: () => Promise<void> };
        if (typeof flushable.shutdown === "function") {
          try {
            await flushable.shutdown();
          } catch (error) {
            tell("error", "taskjourney: flushing spans at shutdown failed", error);
          }
        }
      }
    })();
    return this.#shutdownPromise;
  }

  /** A carrier (or a ledger) that threw when read or written: counted (thrown when strict); the call did nothing. */
  #badCarrier(call: string, what = "its carrier"): false {
    this.#recorder.drop("invalid-carrier", `${call} could not read or write ${what}`);
    return false;
  }

  /**
   * For users who cannot add a metric producer to their reader: the sums and gauges (not the
   * duration histogram) as observable instruments on a MeterProvider they passed explicitly.
   */
  #observeThrough(meterProvider: MeterProvider): void {
    const meter = meterProvider.getMeter(INSTRUMENTATION_SCOPE, VERSION);
    const producer = this.createMetricProducer({ temporality: "cumulative" });
    const instruments = new Map<string, ReturnType<typeof meter.createObservableCounter>>();
    // The producer's own names, units, value types and descriptions; the histogram has no
    // observable instrument.
    for (const { name, unit, valueType, description } of Object.values(METRIC_DESCRIPTORS)) {
      if (name === METRIC_STATE_DURATION) continue;
      const instrumentOptions = { unit, valueType, description };
      instruments.set(
        name,
        name === METRIC_ACTIVE
          ? meter.createObservableGauge(name, instrumentOptions)
          : meter.createObservableCounter(name, instrumentOptions),
      );
    }
    const callback = (result: {
      observe(instrument: unknown, value: number, attributes?: Record<string, unknown>): void;
    }) => {
      const now: [number, number] = [0, 0];
      for (const metric of producer.produce(now, now)) {
        const instrument = instruments.get(metric.descriptor.name);
        if (instrument === undefined || metric.dataPointType === 0 || metric.dataPointType === 1) continue;
        for (const point of metric.dataPoints) result.observe(instrument, point.value as number, point.attributes);
      }
    };
    const observables = [...instruments.values()];
    meter.addBatchObservableCallback(callback as never, observables);
    this.#removeObservers = () => meter.removeBatchObservableCallback(callback as never, observables);
  }
}

function fanOut(listeners: RecorderListener[]): RecorderListener {
  return {
    journeyStarted: (journey) => listeners.forEach((listener) => listener.journeyStarted?.(journey)),
    stateEntered: (journey) => listeners.forEach((listener) => listener.stateEntered?.(journey)),
    journeyEnded: (journey) => listeners.forEach((listener) => listener.journeyEnded?.(journey)),
    journeyAbandoned: (journey) => listeners.forEach((listener) => listener.journeyAbandoned?.(journey)),
    transferStarted: (transfer) => listeners.forEach((listener) => listener.transferStarted?.(transfer)),
    transferEnded: (transfer) => listeners.forEach((listener) => listener.transferEnded?.(transfer)),
    serveEnded: (serve) => listeners.forEach((listener) => listener.serveEnded?.(serve)),
  };
}
