/**
 * `taskjourney`: what instrumenting a scheduler or worker needs. The trace and report toolkit is
 * `taskjourney/report`; the OpenTelemetry SDK setup is `taskjourney/sdk`.
 *
 * Each export has a one-line doc, a stability tag (`@stable`: kept through 1.x; `@experimental`:
 * may change in a minor release; `@deprecated`: going, with what replaces it) and an `@example`
 * (test/docs/api-tags.test.ts holds that).
 */
export {
  /**
   * Records task journeys of one process (a worker or the scheduler) and makes their spans and metrics.
   * @stable
   * @example
   * const journeys = new TaskJourneys({ role: "worker", instance: "tcp://10.0.0.7:40001" });
   * journeys.transition("inc-1", "waiting", "ready");
   */
  TaskJourneys,
} from "./journeys.js";
export {
  /**
   * Wraps an object's existing methods (transitions, dependencies, executions, transfers, activities); returns an `Unwrap`.
   * @stable
   * @example
   * const unwrap = instrument(worker, journeys, { execute: { method: "execute", key: (key) => key } });
   */
  instrument,
} from "./wrap/instrument.js";
export {
  /**
   * Wraps a plain function as an activity, metered in whatever ledger surrounds each call.
   * @stable
   * @example
   * const deserialize = wrap((bytes: Uint8Array) => decode(bytes), "deserialize");
   */
  wrap,
} from "./wrap/wrap.js";
export {
  /**
   * Dask's `key_split`: the prefix (family name) of a key.
   * @stable
   * @example
   * keySplit("inc-1f2e"); // "inc"
   */
  keySplit,
  /**
   * The finer task-group name of a key (Dask's `key_split_group`).
   * @stable
   * @example
   * keySplitGroup(["x-2", 1]); // "x-2"
   */
  keySplitGroup,
  /**
   * A key as text (the text `keySplit` reads), or undefined for a value that is not a key.
   * @stable
   * @example
   * keyToText(["x-2", 1]); // "('x-2', 1)"
   */
  keyToText,
  /**
   * Whether a value is a key: a string, a number, bytes, or a tuple of those.
   * @stable
   * @example
   * isKey(["x", 1]); // true
   */
  isKey,
} from "./model/keys.js";
export {
  /**
   * The text tree of a `Breakdown`, as `explain()` returns it.
   * @stable
   * @example
   * console.log(formatBreakdown(journeys.explain("inc-1")!));
   */
  formatBreakdown,
  /**
   * A byte count as text.
   * @stable
   * @example
   * formatBytes(65536); // "64.0 KiB"
   */
  formatBytes,
  /**
   * Seconds as text.
   * @stable
   * @example
   * formatSeconds(0.4); // "400.0 ms"
   */
  formatSeconds,
} from "./report/format.js";
export {
  /**
   * The error `strict: true` throws instead of counting bad input (code `TJ_INVALID_TRANSITION`), with its reason and the key's recent story.
   * @stable
   * @example
   * try { journeys.transition(key, "waiting", "ready"); } catch (error) { if (error instanceof InvalidTransition) console.log(error.reason); }
   */
  InvalidTransition,
  /**
   * Bad configuration, thrown at construction naming the option (a `TypeError`, code `TJ_INVALID_OPTION`).
   * @stable
   * @example
   * try { new TaskJourneys({ prefixLimit: -1 }); } catch (error) { if (error instanceof InvalidOptionError) console.error(error.message); }
   */
  InvalidOptionError,
  /**
   * An argument a function cannot use, e.g. `instrument()`'s spec (a `TypeError`, code `TJ_INVALID_ARGUMENT`).
   * @stable
   * @example
   * try { instrument(worker, journeys, spec); } catch (error) { if ((error as InvalidArgumentError).code === "TJ_INVALID_ARGUMENT") throw error; }
   */
  InvalidArgumentError,
  /**
   * A number outside what a function accepts (a `RangeError`, code `TJ_OUT_OF_RANGE`).
   * @stable
   * @example
   * try { journeys.stats("inc").quantile(2); } catch (error) { console.log((error as OutOfRangeError).code); } // "TJ_OUT_OF_RANGE"
   */
  OutOfRangeError,
  /**
   * A function or method wrapped a second time (code `TJ_ALREADY_WRAPPED`): wrap the original once.
   * @stable
   * @example
   * try { wrap(wrapped, "run"); } catch (error) { if (error instanceof AlreadyWrappedError) console.log(error.code); }
   */
  AlreadyWrappedError,
  /**
   * Every error code taskjourney's errors carry, as a type.
   * @stable
   * @example
   * const code: TaskJourneyErrorCode = "TJ_INVALID_OPTION";
   */
  type TaskJourneyErrorCode,
} from "./shared/errors.js";
export {
  /**
   * The Dask worker preset's state names, in lifecycle order.
   * @stable
   * @example
   * WORKER_STATES.includes("executing"); // true
   */
  WORKER_STATES,
  /**
   * The Dask scheduler preset's state names, in lifecycle order.
   * @stable
   * @example
   * SCHEDULER_STATES.includes("processing"); // true
   */
  SCHEDULER_STATES,
  /**
   * The Dask presets' terminal states.
   * @stable
   * @example
   * TERMINAL_STATES.includes("memory"); // true
   */
  TERMINAL_STATES,
  /**
   * The Dask worker preset as a state machine.
   * @stable
   * @example
   * new TaskJourneys({ role: "worker", machine: DASK_WORKER_MACHINE });
   */
  DASK_WORKER_MACHINE,
  /**
   * The Dask scheduler preset as a state machine.
   * @stable
   * @example
   * new TaskJourneys({ role: "scheduler", machine: DASK_SCHEDULER_MACHINE });
   */
  DASK_SCHEDULER_MACHINE,
} from "./model/states.js";
export {
  /**
   * Declares your own state machine, with its state names as a type.
   * @stable
   * @example
   * const machine = defineMachine({ states: ["queued", "active", "done", "failed"], transitions: { queued: ["active"], active: ["done", "failed"] }, terminal: { success: "done", failure: "failed" }, executing: "active" });
   */
  defineMachine,
} from "./model/machine.js";
export {
  /**
   * The standard activity names of executions (Dask's).
   * @stable
   * @example
   * EXECUTE_ACTIVITIES.includes("thread-cpu"); // true
   */
  EXECUTE_ACTIVITIES,
  /**
   * The standard activity names of gathers (Dask's).
   * @stable
   * @example
   * GATHER_ACTIVITIES.includes("network"); // true
   */
  GATHER_ACTIVITIES,
  /**
   * The outcomes an execute ledger's `end()` takes.
   * @stable
   * @example
   * EXECUTE_OUTCOMES.includes("memory"); // true
   */
  EXECUTE_OUTCOMES,
  /**
   * The outcomes a gather ledger's `end()` takes.
   * @stable
   * @example
   * TRANSFER_OUTCOMES.includes("busy"); // true
   */
  TRANSFER_OUTCOMES,
} from "./model/activities.js";
/**
 * The metric, span and attribute names, as constants.
 * @experimental names may still be renamed before 1.0 (issue 35: one word per concept)
 * @example
 * semconv.METRIC_STATE_TIME; // "task.state.time"
 */
export * as semconv from "./otel/semconv.js";
export {
  /**
   * This package's version.
   * @stable
   * @example
   * console.log(`taskjourney ${VERSION}`);
   */
  VERSION,
} from "./version.js";

export type {
  /**
   * The options of `new TaskJourneys()`.
   * @stable
   * @example
   * const options: TaskJourneysOptions = { role: "worker", prefixLimit: 100 };
   */
  TaskJourneysOptions,
  /**
   * The `sampling` option: head ratio and the tail rules.
   * @stable
   * @example
   * const sampling: SamplingOptions = { ratio: 0.01, keepSlowerThan: 0.99, keepErrors: true };
   */
  SamplingOptions,
  /**
   * The `limits` option group: prefixes, activities, live journeys, key length, clock skew.
   * @stable
   * @example
   * const limits: LimitOptions = { maxPrefixes: 100, maxLiveJourneys: 100_000 };
   */
  LimitOptions,
  /**
   * The `retention` option group: finished journeys kept for `explain()`.
   * @stable
   * @example
   * const retention: RetentionOptions = { journeys: 1000 };
   */
  RetentionOptions,
  /**
   * The `spans` option group: links, children and attribute lengths of the spans made.
   * @stable
   * @example
   * const spans: SpanOptions = { maxLinks: 32 };
   */
  SpanOptions,
  /**
   * The `metrics` option group: temporality and histograms of the task metrics.
   * @stable
   * @example
   * const metrics: MetricOptions = { temporality: "delta" };
   */
  MetricOptions,
  /**
   * The `runtime` option group: clock, time origin, AsyncLocalStorage, process stalls.
   * @stable
   * @example
   * const runtime: RuntimeOptions = { asyncContext: false };
   */
  RuntimeOptions,
  /**
   * The flat option names before the groups, still read for one minor release and told once.
   * @stable
   * @deprecated use the grouped options (`limits`, `retention`, `spans`, `metrics`, `runtime`)
   * @example
   * const old: DeprecatedFlatOptions = { prefixLimit: 100 };
   */
  DeprecatedFlatOptions,
  /**
   * What every ledger can do: `meter()`, `digest()`, `run()`.
   * @stable
   * @example
   * const meterIn = (ledger: ActivityLedger) => ledger.digest("thread-cpu", 0.25);
   */
  ActivityLedger,
  /**
   * The ledger of one execution, `journeys.execute(key)`.
   * @stable
   * @example
   * const ex: ExecuteLedger = journeys.execute("inc-1");
   * ex.end("memory");
   */
  ExecuteLedger,
  /**
   * The ledger of one gather (the requesting side of a transfer), `journeys.gather(peer, keys)`.
   * @stable
   * @example
   * const tr: GatherLedger = journeys.gather("tcp://10.0.0.8:40001", ["x-1"]);
   * tr.end("ok");
   */
  GatherLedger,
  /**
   * The ledger of one request a peer made of this worker, `journeys.serve(peer, keys)`.
   * @experimental
   * @example
   * const served: ServeLedger = journeys.serve("tcp://10.0.0.8:40001", ["x-1"]);
   * served.end("ok");
   */
  ServeLedger,
  /**
   * The options of `transition()`: `at`, `error`, `prefix`.
   * @stable
   * @example
   * journeys.transition("inc-1", "executing", "error", { error: "disk full" });
   */
  TransitionOptions,
  /**
   * The options of `execute()`: `at`, `prefix`.
   * @stable
   * @example
   * const ex = journeys.execute("inc-1", { at: 12.5 });
   */
  ExecuteOptions,
  /**
   * The options of `gather()`: `bytes`, `at`.
   * @stable
   * @example
   * const tr = journeys.gather("tcp://10.0.0.8:40001", ["x-1"], { bytes: 65536 });
   */
  GatherOptions,
  /**
   * The options of `serve()`: `context`, `at`.
   * @stable
   * @example
   * const served = journeys.serve("tcp://10.0.0.8:40001", ["x-1"], { context: carrier });
   */
  ServeOptions,
  /**
   * The options of a ledger's `end()`: `error`, `at`.
   * @stable
   * @example
   * ex.end("error", { error: "disk full" });
   */
  EndOptions,
  /**
   * A message's carrier: a record of strings trace context is written into.
   * @stable
   * @example
   * const carrier: TraceCarrier = {};
   */
  TraceCarrier,
  /**
   * What `describe()` takes: a key's prefix and group.
   * @stable
   * @example
   * const description: KeyDescription = { prefix: "fetch", group: "fetch-batch-7" };
   */
  KeyDescription,
  /**
   * A computation's totals (one graph submission, one flow): tasks, failures, task-seconds by state, first start to last end.
   * @experimental
   * @example
   * for (const c of journeys.computations()) console.log(c.name, c.tasks, c.failed, c.wall);
   */
  ComputationTotals,
  /**
   * `journeys.propagation`: the trace carriers, by the side that calls them.
   * @stable
   * @example
   * const { sender, receiver } = journeys.propagation;
   */
  Propagation,
  /**
   * `journeys.propagation.sender`: what the process that sends a task, a transfer or a job calls.
   * @stable
   * @example
   * journeys.propagation.sender.inject("inc-1", carrier);
   */
  PropagationSender,
  /**
   * `journeys.propagation.receiver`: what the process that receives a carrier calls.
   * @stable
   * @example
   * journeys.propagation.receiver.continueFrom("inc-1", carrier);
   */
  PropagationReceiver,
} from "./types.js";
export type {
  /**
   * What `createMetricProducer()` may choose per reader.
   * @experimental
   * @example
   * const overrides: MetricProducerOverrides = { temporality: "delta" };
   */
  MetricProducerOverrides,
  /**
   * A role's Dask state names, as a type.
   * @stable
   * @example
   * const state: StateOf<"worker"> = "executing";
   */
  StateOf,
} from "./journeys.js";
export type {
  /**
   * The type of `journeys.metricProducer`: an OpenTelemetry `MetricProducer`.
   * @stable
   * @example
   * const producer: TaskMetricProducer = journeys.metricProducer;
   */
  TaskMetricProducer,
} from "./otel/metric-producer.js";
export type {
  /**
   * A task's key: a string, a number, bytes or a tuple of those.
   * @stable
   * @example
   * const key: Key = ["x-1f2e", 0];
   */
  Key,
} from "./model/keys.js";
export type {
  /**
   * What `explain()` returns: a journey's states, their activities, waiting shares and served requests.
   * @stable
   * @example
   * const breakdown: Breakdown | undefined = journeys.explain("inc-1");
   */
  Breakdown,
  /**
   * One node of a `Breakdown`'s tree.
   * @stable
   * @example
   * const names = (nodes: BreakdownNode[]) => nodes.map((node) => node.name);
   */
  BreakdownNode,
} from "./model/breakdown.js";
export type {
  /**
   * What `stats()` returns: count, mean and quantiles of a (prefix, state) cell.
   * @stable
   * @example
   * const stats: DurationStats = journeys.stats("inc");
   */
  DurationStats,
} from "./model/statistics/index.js";
export type {
  /**
   * `"worker"` or `"scheduler"`.
   * @stable
   * @example
   * const role: Role = "worker";
   */
  Role,
  /**
   * The Dask worker preset's state names, as a type.
   * @stable
   * @example
   * const state: WorkerState = "flight";
   */
  WorkerState,
  /**
   * The Dask scheduler preset's state names, as a type.
   * @stable
   * @example
   * const state: SchedulerState = "no-worker";
   */
  SchedulerState,
  /**
   * A state of either Dask preset, as a type.
   * @stable
   * @example
   * const state: TaskState = "memory";
   */
  TaskState,
} from "./model/states.js";
export type {
  /**
   * What `defineMachine()` and the `machine` option take: states, moves, terminal states, roles of states.
   * @stable
   * @example
   * const machine: StateMachine<"queued" | "active" | "done"> = { states: ["queued", "active", "done"], transitions: { queued: ["active"], active: ["done"] }, terminal: { success: "done", failure: "done" } };
   */
  StateMachine,
  /**
   * One state, or several.
   * @stable
   * @example
   * const executing: OneOrMore<"active"> = ["active"];
   */
  OneOrMore,
} from "./model/machine.js";
export type {
  /**
   * The outcome names of an execution, as a type.
   * @stable
   * @example
   * const outcome: ExecuteOutcome = "memory";
   */
  ExecuteOutcome,
  /**
   * The outcome names of a transfer, as a type.
   * @stable
   * @example
   * const outcome: TransferOutcome = "busy";
   */
  TransferOutcome,
} from "./model/activities.js";
export type {
  /**
   * What `instrument()` takes: which methods to wrap, as what.
   * @stable
   * @example
   * const spec: InstrumentSpec<Worker> = { activities: { method: "deserialize", activity: "deserialize" } };
   */
  InstrumentSpec,
  /**
   * The `transition` part of an `InstrumentSpec`: a method that moves a key between states.
   * @stable
   * @example
   * const transition: TransitionSpec<Worker> = { method: "transition", key: (key) => key, from: (_key, start) => start, to: (_key, _start, finish) => finish };
   */
  TransitionSpec,
  /**
   * The `dependencies` part of an `InstrumentSpec`: a method that learns a task's dependencies.
   * @stable
   * @example
   * const dependencies: DependenciesSpec<Worker> = { method: "handleComputeTask", key: (task) => task.key, dependencies: (task) => task.deps };
   */
  DependenciesSpec,
  /**
   * The `execute` part of an `InstrumentSpec`: a method that runs a task.
   * @stable
   * @example
   * const execute: ExecuteSpec<Worker> = { method: "execute", key: (key) => key };
   */
  ExecuteSpec,
  /**
   * The `gather` part of an `InstrumentSpec`: a method that gathers keys from a peer.
   * @stable
   * @example
   * const gather: GatherSpec<Worker> = { method: "gatherDep", peer: (peer) => peer, keys: (_peer, keys) => keys };
   */
  GatherSpec,
  /**
   * The `activities` part of an `InstrumentSpec`: a method metered as an activity.
   * @stable
   * @example
   * const activity: ActivitySpec<Worker> = { method: "deserialize", activity: "deserialize" };
   */
  ActivitySpec,
  /**
   * A function of a wrapped method's `this` and arguments, as an `InstrumentSpec`'s extractors are typed.
   * @stable
   * @example
   * const key: Extractor<Worker, "execute", string> = (key) => key;
   */
  Extractor,
  /**
   * The names of an object's methods, as a type.
   * @stable
   * @example
   * const method: MethodName<Worker> = "execute";
   */
  MethodName,
  /**
   * A method's arguments, as a type.
   * @stable
   * @example
   * type ExecuteArgs = MethodArgs<Worker, "execute">;
   */
  MethodArgs,
  /**
   * A method's result, awaited, as a type.
   * @stable
   * @example
   * type ExecuteResult = MethodResult<Worker, "execute">;
   */
  MethodResult,
  /**
   * What `instrument()` returns: call it to restore the methods.
   * @stable
   * @example
   * const unwrap: Unwrap = instrument(worker, journeys, spec);
   * unwrap();
   */
  Unwrap,
} from "./wrap/instrument.js";
