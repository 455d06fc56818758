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
import { totalsOf, type Computation } from "./recorder/computations.js";
import type { ComputationTotals } from "./model/computation-totals.js";
import { serveNodes } from "./recorder/explain-serves.js";
import { fanOut, type RecorderListener } from "./recorder/listener.js";
import { observeThrough } from "./otel/observe-through.js";
import { JourneysPropagation } from "./journeys-propagation.js";
import { TaskMetricProducer, type MetricProducerOptions } from "./otel/metric-producer.js";
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
import { ServeLedger as ServeLedgerImpl } from "./recorder/serve-ledger.js";
import { INSTRUMENTATION_SCOPE } from "./otel/semconv.js";
import { SpanBridge } from "./otel/spans/bridge.js";
import { VERSION } from "./version.js";
import { tell } from "./otel/warn.js";
import { openJourneysLine } from "./recorder/open-journeys.js";
import { registerInternals } from "./internal.js";
import { guardedCheck } from "./configuration.js";
import { ProcessStalls } from "./runtime/process-stalls.js";
import { isCallOptions } from "./recorder/call-options.js";
import { executeWith, gatherWith, SERVE_OPTIONS, transitionWith } from "./journeys-calls.js";
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
  readonly propagation: Propagation<S>;
  readonly role: R;
  readonly instance: string;
  // Private (#) fields: the facade is sealed; sdk.ts, wrap/ and tests reach them through internal.ts.
  readonly #recorder: Recorder;
  readonly #spans: SpanBridge;
  /** The propagation calls (journeys-propagation.ts): `propagation`'s, and the deprecated verbs'. */
  readonly #propagation: JourneysPropagation<S>;
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
      maxComputations: resolved.maxComputations,
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
        this.#removeObservers = observeThrough(meterProvider, this.createMetricProducer({ temporality: "cumulative" }));
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
    const spans = bridge;
    this.#propagation = new JourneysPropagation<S>({
      recorder,
      spans,
      closed: () => this.#closed,
      tracing: () => this.#tracing(),
    });
    this.propagation = this.#propagation.sides();
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
    else transitionWith(this.#recorder, key, from, to, options, error);
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
    return executeWith(this.#recorder, key, options);
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
    if (options === undefined && legacyAt === undefined) return this.#recorder.gather(peer, keys, undefined, undefined);
    return gatherWith(this.#recorder, peer, keys, options, legacyAt);
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
        this.#propagation.badCarrier("serve()");
      }
    }
    return ledger;
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

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.sender.injectTransfer(ledger, carrier)`. */
  injectTransfer(ledger: GatherLedger | ServeLedger, carrier: TraceCarrier): boolean {
    this.#recorder.failures.deprecated(
      "journeys.injectTransfer(ledger, carrier)",
      "journeys.propagation.sender.injectTransfer(ledger, carrier)",
    );
    return this.#propagation.injectTransfer(ledger, carrier);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.replyFrom(ledger, carrier)`. */
  linkTransfer(ledger: GatherLedger, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.linkTransfer(ledger, carrier)",
      "journeys.propagation.receiver.replyFrom(ledger, carrier)",
    );
    return this.#propagation.linkTransfer(ledger, context);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.sender.inject(key, carrier)`. */
  inject(key: Key, carrier: TraceCarrier): boolean {
    this.#recorder.failures.deprecated(
      "journeys.inject(key, carrier)",
      "journeys.propagation.sender.inject(key, carrier)",
    );
    return this.#propagation.inject(key, carrier);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.extract(carrier)`. */
  extract(carrier: Readonly<Record<string, unknown>>): Context | undefined {
    this.#recorder.failures.deprecated("journeys.extract(carrier)", "journeys.propagation.receiver.extract(carrier)");
    return this.#propagation.extract(carrier);
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
    return this.#propagation.parent(key, context, options);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.resultFrom(key, carrier)`. */
  returned(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.returned(key, carrier)",
      "journeys.propagation.receiver.resultFrom(key, carrier)",
    );
    return this.#propagation.returned(key, context);
  }

  /** @deprecated Since 0.2.0, removed in the next minor release: write `journeys.propagation.receiver.dataFrom(key, carrier)`. */
  linkFrom(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    this.#recorder.failures.deprecated(
      "journeys.linkFrom(key, carrier)",
      "journeys.propagation.receiver.dataFrom(key, carrier)",
    );
    return this.#propagation.linkFrom(key, context);
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
    const computation = recorder.computationOfJourney(journey);
    if (computation !== undefined) {
      breakdown.computation = computation.name;
      breakdown.computationTotals = this.#totals(computation);
    }
    return breakdown;
  }

  /**
   * The computations kept here (live, and the most recently finished up to
   * `limits.maxComputations`), oldest first, with their totals: tasks, failures, task-seconds by
   * state, first start to last end. `name`: that one only (an empty array when not kept).
   */
  computations(name?: string): ComputationTotals[] {
    const kept = this.#recorder.computations;
    if (name !== undefined) {
      const one = typeof name === "string" ? kept.named(name) : undefined;
      return one === undefined ? [] : [this.#totals(one)];
    }
    return kept.all().map((computation) => this.#totals(computation));
  }

  #totals(computation: Computation): ComputationTotals {
    const recorder = this.#recorder;
    const machine = recorder.machine;
    return totalsOf(computation, machine.names, machine.failed, machine.terminal, recorder.clock());
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
}
