export { TaskJourneys, DEFAULT_OPTIONS } from "./journeys.js";
export { keySplit, keySplitGroup, keyToText, isKey } from "./model/keys.js";
export { formatBreakdown, formatBytes, formatSeconds } from "./report/format.js";
export { breakdownFromSpans, breakdownsFromSpans, SpanIndex } from "./report/from-trace.js";
export { decodeOtlpJson, readOtlpJsonFile } from "./report/otlp-json.js";
export { renderHtmlReport, reportDataFrom } from "./report/html.js";
export { formatPrefixTable, formatActivityTable } from "./report/table.js";
export { InvalidTransition } from "./recorder/errors.js";
export type { TaskMetricProducer } from "./otel/metric-producer.js";
export type { MetricProducerOverrides } from "./journeys.js";
export { DurationStatistics, ExponentialHistogram } from "./model/statistics/index.js";
export {
  WORKER_STATES,
  SCHEDULER_STATES,
  TERMINAL_STATES,
} from "./model/states.js";
export {
  EXECUTE_ACTIVITIES,
  GATHER_ACTIVITIES,
  EXECUTE_OUTCOMES,
  TRANSFER_OUTCOMES,
} from "./model/activities.js";
export * as semconv from "./otel/semconv.js";
export { instrument } from "./wrap/instrument.js";
export { wrap } from "./wrap/wrap.js";
export { VERSION } from "./version.js";

export type {
  TaskJourneysOptions,
  SamplingOptions,
  ActivityLedger,
  ExecuteLedger,
  GatherLedger,
  TraceCarrier,
} from "./types.js";
export type { Key } from "./model/keys.js";
export type { Breakdown, BreakdownNode } from "./model/breakdown.js";
export type { BreakdownFromSpansOptions, JourneyKind } from "./report/from-trace.js";
export type { DecodedSpan } from "./report/otlp-json.js";
export type { ReportData, RenderOptions } from "./report/html.js";
export type { PrefixRow, PrefixTableOptions, ActivityTableOptions } from "./report/table.js";
export type { DurationStats } from "./model/statistics/index.js";
export type { Role, WorkerState, SchedulerState, TaskState } from "./model/states.js";
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
