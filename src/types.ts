import type { Context, MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { Role } from "./model/states.js";
import type { StateMachine } from "./model/machine.js";
import type { Key } from "./model/keys.js";

/** Head and tail sampling of journeys into span trees. */
export interface SamplingOptions {
  /** Fraction of keys whose journeys become span trees, decided from the key so all processes agree. */
  ratio?: number;
  /** Also keep journeys slower than this quantile of their prefix's durations (0 disables). */
  keepSlowerThan?: number;
  /** Also keep journeys that ended in a failure state or had an attempt fail (a retry). */
  keepErrors?: boolean;
}

/** Bounds on what is recorded: each past its bound is counted, folded or dropped, never grown. */
export interface LimitOptions {
  /** Distinct task prefixes kept before further ones fold into "other". */
  maxPrefixes?: number;
  /** Distinct activity names kept before further ones fold into "other". */
  maxActivities?: number;
  /** Journeys live at once at most; past it the oldest is abandoned (counted, its spans ended) to make room. */
  maxLiveJourneys?: number;
  /** Longer keys are dropped (and counted) instead of recorded. */
  maxKeyLength?: number;
  /**
   * Seconds a time given to `transition()`, `execute()`, `gather()` or `end()` may lie from the
   * clock (earlier or later) before it is a `clock-skew` drop and the clock's reading is used;
   * also the longest duration `digest()` takes. Default a day; Infinity: no limit.
   */
  maxClockSkew?: number;
  /**
   * Computations (`transition(…, { computation })`) kept at once: the live ones and the most
   * recently finished; past it the one that finished first is retired, or, with all live, a new
   * one's journeys count under "other" (counted, `computation-limit`).
   */
  maxComputations?: number;
}

/** What is kept of finished journeys (and, apart, get_data serves) for `explain()`. */
export interface RetentionOptions {
  /** Finished journeys kept for `explain()`. */
  journeys?: number;
  /** Approximate bytes the finished journeys kept for `explain()` may hold (8 a number, 40 a journey), and the serves apart; the oldest go first past it. */
  bytes?: number;
}

/** Limits of the span trees (as OpenTelemetry's `spanLimits`). */
export interface SpanOptions {
  /** Links kept per span; further links are counted in an attribute. */
  maxLinks?: number;
  /** Child spans kept per span (states, activities, gather_deps); further ones are counted in an attribute. */
  maxChildren?: number;
  /** Characters kept of a key in span attributes. */
  maxAttributeLength?: number;
  /** Keys listed on a gather_dep span's attribute. */
  maxKeysPerTransfer?: number;
}

/** How `metricProducer` exports the task metrics. */
export interface MetricOptions {
  /** Metric temporality of `metricProducer`: "cumulative" or "delta". */
  temporality?: "cumulative" | "delta";
  /** Histogram kind of task.state.duration: "exponential", or "explicit" buckets for pull-mode Prometheus. */
  histogram?: "exponential" | "explicit";
  /** Bucket boundaries in seconds for `histogram: "explicit"`. */
  explicitBuckets?: readonly number[];
  /** Maximum buckets of the exponential histograms (statistics and task.state.duration). */
  histogramMaxSize?: number;
  /** Add task.prefix to task.execute.time (multiplies its series by the number of prefixes). */
  executeTimeByPrefix?: boolean;
}

/** The process these journeys run in: its clock, its async context, its stalls. */
export interface RuntimeOptions {
  /** Current time in seconds; injectable so tests are exact. */
  clock?: () => number;
  /** Seconds since the Unix epoch at which `clock()` read 0; spans are stamped with it. Default: `performance.timeOrigin` with the default clock, else from `Date.now()` at construction. */
  timeOrigin?: number;
  /**
   * How the ledger of an execution or transfer is found by `meter()`, `currentLedger()` and
   * instrumented activity methods. true (default): across awaits and timers, through
   * AsyncLocalStorage — on Node 20 that installs promise hooks which tax every promise in the
   * process. false: only in code that runs synchronously inside the wrapped method, `ledger.run()`
   * or `ledger.meter()`, with no AsyncLocalStorage at all; after an `await`, take
   * `currentLedger()` before it and re-enter with `ledger.run(() => ...)`.
   */
  asyncContext?: boolean;
  /**
   * Watch this process's GC pauses and event-loop stalls: the v8js.gc.duration and
   * nodejs.eventloop.delay.* metrics, and `gc` / `event-loop` in the breakdown of the states they
   * overlapped. Default true, false with a custom `clock` (stalls are timed on the performance clock).
   */
  processStalls?: boolean;
}

/** Options of `new TaskJourneys(options)`, grouped by concern; checked once, at construction (an unknown name is a TypeError naming the nearest valid one). */
export interface TaskJourneysOptions {
  /** Whose journeys these are: a worker's or the scheduler's. */
  role?: Role;
  /** Your scheduler's state machine (its states, moves, terminal states and roles), instead of the role's Dask preset. */
  machine?: StateMachine;
  /** This process's name among its peers, e.g. the worker address "tcp://10.0.0.7:40001". */
  instance?: string;
  /** Where span trees go; default: the global tracer provider. */
  tracerProvider?: TracerProvider;
  /** For readers that cannot take `metricProducer`: export the task sums and gauges (not the duration histogram) as observable instruments of this provider. */
  meterProvider?: MeterProvider;
  /** Which journeys become span trees. */
  sampling?: SamplingOptions;
  /** The prefix of a key nothing `describe()`d, for keys that encode it their own way (`"fetch:42"`); default Dask's key_split. */
  keyPrefix?: (key: Key) => string;
  /** Bounds on prefixes, activities, live journeys, key length and given times. */
  limits?: LimitOptions;
  /** What is kept of finished journeys for `explain()`. */
  retention?: RetentionOptions;
  /** Limits of the span trees. */
  spans?: SpanOptions;
  /** How the task metrics are exported. */
  metrics?: MetricOptions;
  /** The clock, the async context and the process's stalls. */
  runtime?: RuntimeOptions;
  /** Throw `InvalidTransition` on bad data instead of counting and repairing it; for your own tests. */
  strict?: boolean;
  /**
   * false: make no spans at all (no sampling, no span objects; the `propagation` calls
   * return false). Also the case, decided at construction, when the tracer provider
   * is the API's no-op one or the global provider with no SDK registered yet.
   */
  traces?: boolean;
}

/**
 * The flat option names of 0.1, each now a field of a group: they still work until the next minor
 * release, each told once per process as deprecated. Given with its grouped path too, the two must agree.
 */
export interface DeprecatedFlatOptions {
  /** @deprecated Since 0.2.0: write `limits: { maxPrefixes }`. */
  prefixLimit?: number;
  /** @deprecated Since 0.2.0: write `limits: { maxActivities }`. */
  activityLimit?: number;
  /** @deprecated Since 0.2.0: write `limits: { maxLiveJourneys }`. */
  maxLiveJourneys?: number;
  /** @deprecated Since 0.2.0: write `limits: { maxKeyLength }`. */
  maxKeyLength?: number;
  /** @deprecated Since 0.2.0: write `limits: { maxClockSkew }`. */
  maxClockSkew?: number;
  /** @deprecated Since 0.2.0: write `retention: { journeys }`. */
  retainedJourneys?: number;
  /** @deprecated Since 0.2.0: write `retention: { bytes }`. */
  retainedJourneyBytes?: number;
  /** @deprecated Since 0.2.0: write `spans: { maxLinks }`. */
  maxLinksPerSpan?: number;
  /** @deprecated Since 0.2.0: write `spans: { maxChildren }`. */
  maxChildrenPerSpan?: number;
  /** @deprecated Since 0.2.0: write `spans: { maxAttributeLength }`. */
  maxAttributeLength?: number;
  /** @deprecated Since 0.2.0: write `spans: { maxKeysPerTransfer }`. */
  maxKeysPerTransfer?: number;
  /** @deprecated Since 0.2.0: write `metrics: { temporality }`. */
  temporality?: "cumulative" | "delta";
  /** @deprecated Since 0.2.0: write `metrics: { histogram }`. */
  histogram?: "exponential" | "explicit";
  /** @deprecated Since 0.2.0: write `metrics: { explicitBuckets }`. */
  explicitBuckets?: readonly number[];
  /** @deprecated Since 0.2.0: write `metrics: { histogramMaxSize }`. */
  histogramMaxSize?: number;
  /** @deprecated Since 0.2.0: write `metrics: { executeTimeByPrefix }`. */
  executeTimeByPrefix?: boolean;
  /** @deprecated Since 0.2.0: write `runtime: { clock }`. */
  clock?: () => number;
  /** @deprecated Since 0.2.0: write `runtime: { timeOrigin }`. */
  timeOrigin?: number;
  /** @deprecated Since 0.2.0: write `runtime: { asyncContext }`. */
  asyncContext?: boolean;
  /** @deprecated Since 0.2.0: write `runtime: { processStalls }`. */
  processStalls?: boolean;
}

/**
 * Trace context as carried in a message between processes: W3C `traceparent` (and `tracestate`)
 * under lowercase names, string values. Write one with `journeys.propagation.sender.inject(key, carrier)`. Defined
 * once, beside the code that reads and writes it.
 */
export type { TraceCarrier } from "./otel/propagation.js";
import type { TraceCarrier } from "./otel/propagation.js";

/**
 * Trace context across processes, by side: who sends a message calls `sender`, who receives one
 * calls `receiver` (`journeys.propagation`). Every call returns false (extract: undefined) and does
 * nothing when there is nothing to carry: no traces, no journey, a carrier that cannot be read.
 */
export interface Propagation<S extends string = string> {
  /** The side that sends a message: writes a trace context into its carrier. */
  readonly sender: PropagationSender<S>;
  /** The side that receives a message: reads the trace context its carrier holds. */
  readonly receiver: PropagationReceiver;
}

/** What the sender of a message calls, just before sending it. */
export interface PropagationSender<S extends string = string> {
  /**
   * Writes the trace context of `key`'s journey here into `carrier`: the compute-task message (or a
   * job handed to a worker), the result or error going back, the data a peer gathers.
   */
  inject(key: Key, carrier: TraceCarrier): boolean;
  /** Writes a gather ledger's gather_dep (into the get_data request) or a serve ledger's get_data (into its reply). */
  injectTransfer(ledger: GatherLedger | ServeLedger, carrier: TraceCarrier): boolean;
  /**
   * A producer's hand-off: writes `key`'s journey into `carrier` as inject() does, plus the
   * producer's sampling decision and its span as far as `at`, for consumers it never hears from
   * again (a job enqueued); with `to`, the journey here ends too, moving to `to` (docs/propagation.md).
   */
  handOff(key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }): boolean;
}

/** What the receiver of a message calls, on receiving it. */
export interface PropagationReceiver {
  /** The trace context in `carrier` as an OpenTelemetry Context (for spans of your own), or undefined. */
  extract(carrier: Readonly<Record<string, unknown>>): Context | undefined;
  /**
   * On receiving the message that hands `key` over (compute-task, a job), before its first
   * transition here: the journey here continues the sender's trace, under its task span.
   */
  continueFrom(
    key: Key,
    carrier: Readonly<Record<string, unknown>> | Context,
    options?: { readonly attempt?: number },
  ): boolean;
  /**
   * On receiving `key`'s result or error back, before the transition that ends its journey here:
   * keeps this journey when the other side kept its own, so the trace holds both.
   */
  resultFrom(key: Key, carrier: Readonly<Record<string, unknown>> | Context): boolean;
  /** On receiving `key`'s data with its producer's carrier: the task spans of `key` and its dependents here link to it. */
  dataFrom(key: Key, carrier: Readonly<Record<string, unknown>> | Context): boolean;
  /** On receiving a get_data reply: the gather ledger's gather_dep span links to the get_data span it names. */
  replyFrom(ledger: GatherLedger, carrier: Readonly<Record<string, unknown>> | Context): boolean;
}

/** What `journeys.describe(key, …)` tells of a key, for its journeys until it is forgotten. */
export interface KeyDescription {
  /** The task's family name: its `task.prefix` in metrics and spans, instead of key_split's. */
  prefix?: string;
  /** The finer task group of its spans' `task.group`; default the prefix given, else key_split's group. */
  group?: string;
}

/** Meters activities of one execution or transfer; see `TaskJourneys.execute` and `gather`. */
export interface ActivityLedger {
  /** Times `work` (sync or async) as `activity`; its result, error or rejection pass through. */
  meter<T>(activity: string, work: () => T): T;
  /** Records a measurement taken elsewhere: seconds become activity time, other units quantities. */
  digest(activity: string, value: number, unit?: string): void;
  /** Runs `work` with this ledger as the ambient one for `journeys.meter()` inside it. */
  run<T>(work: () => T): T;
}

/** The trailing options of `journeys.transition(key, from, to, { at, error, prefix })`. */
export interface TransitionOptions {
  /** When the move happened, in the journeys' clock (seconds); default now. */
  at?: number;
  /** Why the attempt being left failed (an Error or a message): into a failure state, or a retry. */
  error?: unknown;
  /** The prefix of a journey this move begins, instead of `describe()`'s, `keyPrefix`'s or key_split's; nothing is kept per key. */
  prefix?: string;
  /**
   * The computation (one graph submission, one flow: what Dask calls a span) a journey this move
   * begins belongs to: its totals, the task.computation.* metrics, the root span's
   * `task.computation`. Read only by the move that begins a journey; nothing is kept per key.
   */
  computation?: string;
}

/** The trailing options of `journeys.execute(key, { at, prefix })`. */
export interface ExecuteOptions {
  /** When the execution began, in the journeys' clock (seconds); default now. */
  at?: number;
  /** The prefix of a journey this execution begins (see `TransitionOptions.prefix`). */
  prefix?: string;
}

/** The trailing options of `journeys.gather(peer, keys, { bytes, at })`. */
export interface GatherOptions {
  /** The bytes the transfer is expected to carry (Dask's total_nbytes); network bytes digested add to it. */
  bytes?: number;
  /** When the transfer began, in the journeys' clock (seconds); default now. */
  at?: number;
}

/** The trailing options of `journeys.serve(peer, keys, { context, at })`. */
export interface ServeOptions {
  /** The get_data request's carrier (or an extracted Context): a traced transfer gets a get_data span here. */
  context?: Readonly<Record<string, unknown>> | Context;
  /** When the request arrived, in the journeys' clock (seconds); default now. */
  at?: number;
}

/** The trailing options of a ledger's `end(outcome, { error, at })`. */
export interface EndOptions {
  /** What was thrown or rejected with, for a failed outcome: spans and explain() show its type and message. */
  error?: unknown;
  /** When it ended, in the journeys' clock (seconds); default now. */
  at?: number;
}

/**
 * The ledger of one execution; `end()` moves the key from executing to the outcome state: with a
 * `machine` of your own, "memory", "error" and "cancelled" mean its first success, failure and
 * cancelled state. With "error", pass what was thrown: spans and explain() show its type and message.
 * `S`: the machine's states; `end()` also takes one the executing state moves to: a success state
 * ends the execution as "memory", a cancelled one as "cancelled", any other (a failure, a retry's
 * `delayed`, Dask's `rescheduled`) as "error".
 */
export interface ExecuteLedger<S extends string = never> extends ActivityLedger {
  /** Ends the ledger: `end("memory")`, `end("error", { error })`, `end(outcome, { at })`. */
  end(outcome?: "memory" | "error" | "cancelled" | S, options?: EndOptions): void;
  /** @deprecated Positional since 0.2, removed in the next minor release: write `end(outcome, { error, at })`. */
  end(outcome: "memory" | "error" | "cancelled" | S, error: unknown, at?: number): void;
}

/**
 * The ledger of one gather (a gather_dep call); `end()` moves its keys on (ok → memory, busy → fetch, …).
 * With "failed", pass what was thrown: spans and explain() show its type and message.
 */
export interface GatherLedger extends ActivityLedger {
  /** Ends the ledger: `end("memory")`, `end("error", { error })`, `end(outcome, { at })`. */
  end(outcome?: "ok" | "busy" | "missing" | "failed" | "cancelled", options?: EndOptions): void;
  /** @deprecated Positional since 0.2, removed in the next minor release: write `end(outcome, { error, at })`. */
  end(outcome: "ok" | "busy" | "missing" | "failed" | "cancelled", error: unknown, at?: number): void;
}

/**
 * The ledger of one get_data request served to a peer (`TaskJourneys.serve`): meter its
 * disk-read, serialize and network (digest the bytes sent under `network`); `end()` settles it.
 * With "failed", pass what was thrown: the get_data span shows its type and message.
 */
export interface ServeLedger extends ActivityLedger {
  /** Ends the ledger: `end("memory")`, `end("error", { error })`, `end(outcome, { at })`. */
  end(outcome?: "ok" | "busy" | "missing" | "failed", options?: EndOptions): void;
  /** @deprecated Positional since 0.2, removed in the next minor release: write `end(outcome, { error, at })`. */
  end(outcome: "ok" | "busy" | "missing" | "failed", error: unknown, at?: number): void;
}

/** A computation's totals, as `journeys.computations()` and `explain()` give them. */
export type { ComputationTotals } from "./model/computation-totals.js";
