import {
  metrics as metricsApi,
  ProxyTracerProvider,
  trace as traceApi,
  type Context,
  type MeterProvider,
  type TracerProvider,
} from "@opentelemetry/api";
import type { Key } from "./model/keys.js";
import { type Role, type SchedulerState, type WorkerState } from "./model/states.js";
import { type StateMachine } from "./model/machine.js";
import type { Breakdown } from "./model/breakdown.js";
import type { DurationStats } from "./model/statistics/index.js";
import { DurationStatistics } from "./model/statistics/index.js";
import { ratioSampler } from "./model/sampling.js";
import { Recorder } from "./recorder/recorder.js";
import { ambientLedger } from "./recorder/ambient.js";
import { explainJourney } from "./recorder/explain.js";
import { serveNodes } from "./recorder/explain-serves.js";
import type { RecorderListener } from "./recorder/listener.js";
import {
  GAUGE_METRICS,
  METRIC_DESCRIPTORS,
  TaskMetricProducer,
  type MetricProducerOptions,
} from "./otel/metric-producer.js";
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
  Propagation,
  TaskJourneysOptions,
  TraceCarrier,
} from "./types.js";
import { TransferLedger } from "./recorder/transfer-ledger.js";
import { ServeLedger as ServeLedgerImpl } from "./recorder/serve-ledger.js";
import { INSTRUMENTATION_SCOPE, METRIC_STATE_DURATION } from "./otel/semconv.js";
import { SpanBridge } from "./otel/spans/bridge.js";
import { extractSpanContext, remoteContext } from "./otel/propagation.js";
import { VERSION } from "./version.js";
import { tell } from "./otel/warn.js";
import { openJourneysLine } from "./recorder/open-journeys.js";
import { registerInternals } from "./internal.js";
import { guardedCheck } from "./configuration.js";
import { ProcessStalls } from "./runtime/process-stalls.js";
import { isCallOptions } from "./recorder/call-options.js";
import { show } from "./model/show.js";
import {
  checkProducerOverrides,
  fail,
  isNoopTracerProvider,
  resolveOptions,
  type MetricProducerOverrides,
} from "./options.js";
// Where they were before options.ts: sdk.ts, internal.ts, the tests and the benches import them from here.
export {
  DEFAULT_OPTIONS,
  isNoopTracerProvider,
  resolveOptions,
  type MetricProducerOverrides,
  type ResolvedOptions,
} from "./options.js";

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
  readonly propagation: Propagation<S> = Object.freeze({
    sender: Object.freeze({
      inject: (key: Key, carrier: TraceCarrier) => this.#inject(key, carrier),
      injectTransfer: (ledger: GatherLedger | ServeLedger, carrier: TraceCarrier) =>
        this.#injectTransfer(ledger, carrier),
      handOff: (key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }) =>
        this.#handOff(key, carrier, options),
    }),
    receiver: Object.freeze({
      extract: (carrier: Readonly<Record<string, unknown>>) => this.#extract(carrier),
      continueFrom: (
        key: Key,
        carrier: Readonly<Record<string, unknown>> | Context,
        options?: { readonly attempt?: number },
      ) => this.#parent(key, carrier, options),
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
    // A journey that came with a producer's hand-off carrier follows the producer's decision alone.
    const sampler = (id: string | number): boolean =>
      this.#tracing() &&
      (bridge!.followsHandOff(id) ?? ((byRatio !== undefined && byRatio(id)) || bridge!.hasParent(id)));
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
   * The span ids for your own tracer provider to take (NodeSDK's or TracerProvider's `idGenerator`
   * option): taskjourney then chooses the ids it hands out in carriers, and a job kept only by its
   * consumers (it failed) is emitted with its producer's span as its root
   * ([propagation.md](../docs/propagation.md#producers-and-consumers)). Read it only to pass it on:
   * from the first read, carriers name ids that only this generator gives their spans (a provider
   * that does not take them is told once, and no more are handed out). taskjourney/sdk's provider
   * has it already.
   */
  get idGenerator(): { generateTraceId(): string; generateSpanId(): string } {
    return this.#spans.idGenerator();
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
    let written: boolean | "unknown";
    try {
      written = this.#spans.inject(key, carrier);
    } catch {
      return this.#badCarrier("propagation.sender.inject()");
    }
    if (written === true) return true;
    // Told outside the guard: when strict, the drop throws, and must not be taken for a carrier's throw.
    const recorder = this.#recorder;
    if (written === "unknown") {
      // A journey that ended unkept (not sampled) is there to name nothing: that is no mistake.
      // Not counted: a worker asked for data whose journey ended before the last retainedJourneys
      // is on a normal path; told once, so that the usual mistake (a key never seen here) is known.
      if (recorder.journeyOf(key) === undefined)
        recorder.failures.notice(
          "inject() unknown key",
          `inject(${show(key)}) wrote nothing: no journey of this key here, live or among the last retention.journeys ended. ` +
            "propagation.sender.inject() names the key's journey in this process: call it while the key's journey is under way here (when sending the task on), or after it ended and was kept",
        );
    } else if (carrier === null || typeof carrier !== "object")
      recorder.drop(
        "invalid-carrier",
        `inject(${show(key)}) given ${show(carrier)}, not a carrier (an object its headers are written into); nothing written`,
        undefined,
        "invalid-carrier inject()",
      );
    else recorder.idOf(key);
    return false;
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
  #parent(
    key: Key,
    context: Readonly<Record<string, unknown>> | Context,
    options?: { readonly attempt?: number },
  ): boolean {
    if (this.#closed || !this.#tracing()) return false;
    let attempt = 1;
    const given = options?.attempt;
    if (given !== undefined) {
      if (typeof given === "number" && Number.isSafeInteger(given) && given >= 1) attempt = given;
      else
        this.#recorder.drop(
          "invalid-value",
          `continueFrom() given attempt ${typeof given === "number" ? given : typeof given}, not an integer >= 1 (1: the first delivery); took 1`,
        );
    }
    let queued: boolean | "no-context" | "began";
    let problem: string | undefined;
    try {
      queued = this.#spans.parent(key, context, attempt);
      if (queued === "no-context") problem = carrierProblem(context);
    } catch {
      return this.#badCarrier("propagation.receiver.continueFrom()");
    }
    if (queued === true) return true;
    // Told outside the guard: when strict, the drop throws, and must not be taken for a carrier's throw.
    const recorder = this.#recorder;
    if (queued === "began") {
      const journey = recorder.journeyOf(key);
      const state = journey === undefined ? undefined : recorder.machine.names[journey.state];
      recorder.drop(
        "late-parent",
        `continueFrom(${show(key)}) after its journey here began (it is in ${state ?? "a live state"}): too late to make the context its parent; ` +
          "a sampled one is linked from its task span instead. Call propagation.receiver.continueFrom() with the message's carrier before the key's first transition here",
        undefined,
      );
    } else if (problem !== undefined)
      recorder.drop(
        "invalid-carrier",
        `continueFrom(${show(key)}) given ${problem}; nothing queued`,
        undefined,
        "invalid-carrier parent()",
      );
    else if (queued === false) recorder.idOf(key);
    return false;
  }

  /**
   * A producer's hand-off: `key`'s journey here passes the task on to consumers it never hears
   * from again (a job enqueued, a message published). Writes the journey into `carrier` as
   * `inject()` does, plus what the consumers need to keep the task's trace whole: the producer's
   * head-sampling decision (the consumers follow it, whatever their own ratio) and the producer's
   * span as far as now (`at`), which the first consumer attempt that keeps its journey emits in
   * the producer's stead when the producer did not sample it (docs/propagation.md). Put the
   * carrier in the message; consumers call `parent(key, carrier, { attempt })`.
   *
   * With `to`, the journey ends here too, moving from its current state to `to` at `at` (e.g.
   * `handOff(id, carrier, { to: "enqueued" })`); without it, end it yourself when the hand-off is
   * done (`transition(id, "sending", "enqueued", at)` once the queue confirmed it). Either way the
   * journey is exported from here only if it was head-sampled (or failed): its keeping, for slowness or
   * failure, is the consumers' to decide. Returns false (writing nothing) when `key` has no live
   * journey here or traces are off; `to` still ends a live journey.
   */
  #handOff(key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }): boolean {
    if (this.#closed) return false;
    let at: number | undefined;
    let to: S | undefined;
    try {
      at = options?.at;
      to = options?.to;
    } catch {
      return this.#badCarrier("propagation.sender.handOff()", "its options");
    }
    const recorder = this.#recorder;
    const journey = recorder.journeyOf(key);
    if (journey === undefined || journey.ended) {
      recorder.drop(
        "hand-off-without-journey",
        `handOff() of key ${show(key)} with no live journey of it here: begin one (a transition out of the machine's initial state) before handing it off; nothing written or ended`,
      );
      return false;
    }
    let written = false;
    if (this.#tracing()) {
      try {
        written = this.#spans.handOff(
          key,
          carrier,
          typeof at === "number" && Number.isFinite(at) ? at : recorder.clock(),
        );
      } catch {
        this.#badCarrier("propagation.sender.handOff()");
      }
    }
    if (to !== undefined) recorder.transition(key, recorder.machine.names[journey.state] as S, to, at);
    return written;
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

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.continueFrom(key, carrier, { attempt })`. */
  parent(
    key: Key,
    context: Readonly<Record<string, unknown>> | Context,
    options?: { readonly attempt?: number },
  ): boolean {
    this.#recorder.failures.deprecated(
      "journeys.parent(key, carrier)",
      "journeys.propagation.receiver.continueFrom(key, carrier)",
    );
    return this.#parent(key, context, options);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.sender.handOff(key, carrier, { at, to })`. */
  handOff(key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }): boolean {
    this.#recorder.failures.deprecated(
      "journeys.handOff(key, carrier, { at, to })",
      "journeys.propagation.sender.handOff(key, carrier, { at, to })",
    );
    return this.#handOff(key, carrier, options);
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
      // Before the span bridge ends them as unfinished: the journeys this process never ended, told once.
      const open = openJourneysLine(this.#recorder);
      if (open !== undefined) tell("warn", open);
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
        GAUGE_METRICS.has(name)
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

/**
 * What is wrong with a carrier in which parent() found no span context, or undefined when nothing
 * is: a carrier without a traceparent comes from a sender that does not trace (or a Context with
 * no span), which is no mistake. Reads the carrier (the caller guards it).
 */
function carrierProblem(source: unknown): string | undefined {
  if (source === null || typeof source !== "object")
    return `${show(source)}, not a carrier (an object of headers) or a Context from extract()`;
  if (typeof (source as Partial<Context>).getValue === "function") return undefined;
  const traceparent = (source as Record<string, unknown>).traceparent;
  if (traceparent === undefined) return undefined;
  return `a carrier whose traceparent ${show(traceparent)} is not a W3C one ("00-" 32 hex digits "-" 16 hex digits "-" 2 hex digits)`;
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
