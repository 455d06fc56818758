/**
 * `taskjourney`: what instrumenting a scheduler or worker needs. The trace and report toolkit is
 * `taskjourney/report`; the OpenTelemetry SDK setup is `taskjourney/sdk`.
 */
export { TaskJourneys } from "./journeys.js";
export { instrument } from "./wrap/instrument.js";
export { wrap } from "./wrap/wrap.js";
export { keySplit, keySplitGroup, keyToText, isKey } from "./model/keys.js";
export { formatBreakdown, formatBytes, formatSeconds } from "./report/format.js";
export {
  InvalidTransition,
  InvalidOptionError,
  InvalidArgumentError,
  OutOfRangeError,
  AlreadyWrappedError,
  type TaskJourneyErrorCode,
} from "./shared/errors.js";
export {
  WORKER_STATES,
  SCHEDULER_STATES,
  TERMINAL_STATES,
  DASK_WORKER_MACHINE,
  DASK_SCHEDULER_MACHINE,
} from "./model/states.js";
export { defineMachine } from "./model/machine.js";
export { EXECUTE_ACTIVITIES, GATHER_ACTIVITIES, EXECUTE_OUTCOMES, TRANSFER_OUTCOMES } from "./model/activities.js";
export * as semconv from "./otel/semconv.js";
export { VERSION } from "./version.js";

export type {
  TaskJourneysOptions,
  SamplingOptions,
  ActivityLedger,
  ExecuteLedger,
  GatherLedger,
  ServeLedger,
  TraceCarrier,
  KeyDescription,
} from "./types.js";
export type { MetricProducerOverrides, StateOf } from "./journeys.js";
export type { TaskMetricProducer } from "./otel/metric-producer.js";
export type { Key } from "./model/keys.js";
export type { Breakdown, BreakdownNode } from "./model/breakdown.js";
export type { DurationStats } from "./model/statistics/index.js";
export type { Role, WorkerState, SchedulerState, TaskState } from "./model/states.js";
export type { StateMachine, OneOrMore } from "./model/machine.js";
export type { ExecuteOutcome, TransferOutcome } from "./model/activities.js";
export type {
  InstrumentSpec,
  TransitionSpec,
  DependenciesSpec,
  ExecuteSpec,
  GatherSpec,
  ActivitySpec,
  Extractor,
  MethodName,
  MethodArgs,
  MethodResult,
  Unwrap,
} from "./wrap/instrument.js";
