/**
 * Names taskjourney gives to attributes, metrics and spans. Task attributes have no registered
 * OpenTelemetry semantic convention yet; they live under `task.` and `transfer.`, as docs/metrics.md's
 * metrics table and docs/spans.md list them. Metric attribute values are bounded: prefixes
 * (capped), states, activities (capped), outcomes, reasons. Keys only ever appear on spans.
 */

export const ATTR_TASK_KEY = "task.key";
export const ATTR_TASK_PREFIX = "task.prefix";
export const ATTR_TASK_GROUP = "task.group";
export const ATTR_TASK_WORKER = "task.worker";
export const ATTR_TASK_OUTCOME = "task.outcome";
export const ATTR_TASK_STATE = "task.state";
export const ATTR_TASK_ACTIVITY = "task.activity";
export const ATTR_TASK_ROLE = "task.role";
export const ATTR_TASK_DEPENDENCIES = "task.dependencies";
/** On a state span that was an attempt that did not succeed: why, as explain() shows it ("TypeError: no such file"). */
export const ATTR_TASK_ERROR = "task.error";
/** The semantic conventions' exception event and its attributes (not imported: the core depends on the API only). */
export const EVENT_EXCEPTION = "exception";
export const ATTR_EXCEPTION_TYPE = "exception.type";
export const ATTR_EXCEPTION_MESSAGE = "exception.message";
export const ATTR_EXCEPTION_STACKTRACE = "exception.stacktrace";
export const ATTR_TRANSFER_PEER = "transfer.peer";
export const ATTR_TRANSFER_KEYS = "transfer.keys";
export const ATTR_TRANSFER_KEY_COUNT = "transfer.key_count";
export const ATTR_TRANSFER_BYTES = "transfer.bytes";
export const ATTR_TRANSFER_OUTCOME = "transfer.outcome";
export const ATTR_THREAD_CPU_TIME = "thread.cpu_time";
export const ATTR_THREAD_NONCPU_TIME = "thread.noncpu_time";
export const ATTR_DROPPED_REASON = "reason";
/** Links or children left out of a span because of a cap. */
export const ATTR_LINKS_DROPPED = "taskjourney.links_dropped";
export const ATTR_CHILDREN_DROPPED = "taskjourney.children_dropped";
/** Set on spans that `shutdown()` ended while their journey or transfer was still under way. */
export const ATTR_UNFINISHED = "taskjourney.unfinished";
/**
 * Why a journey's spans were ended before it reached a terminal state, beside `taskjourney.unfinished`:
 * "live-journeys-limit", evicted as the oldest live journey past maxLiveJourneys.
 */
export const ATTR_ABANDONED = "taskjourney.abandoned";
/**
 * On a producer's task span that a consumer emitted in its stead ("hand-off"): the producer handed
 * the task off unsampled, the consumer kept its journey, and the hand-off carrier said what the
 * producer's span was (docs/propagation.md#producers-and-consumers).
 */
export const ATTR_STAND_IN = "taskjourney.stand_in";

/** Span names: low-cardinality; the task span is `task <prefix>`, state spans carry the state's name. */
export const SPAN_TASK_PREFIX = "task ";
export const SPAN_GATHER_DEP = "gather_dep";
/** The serving side of a traced gather_dep, on the worker that sent the data (`journeys.serve`). */
export const SPAN_GET_DATA = "get_data";
/** The span made of top-level thread-cpu / thread-noncpu digests of an execution. */
export const SPAN_RUN = "run";

export const METRIC_STATE_TIME = "task.state.time";
export const METRIC_STATE_DURATION = "task.state.duration";
export const METRIC_EXECUTE_TIME = "task.execute.time";
export const METRIC_GATHER_TIME = "task.gather.time";
export const METRIC_WAIT_TIME = "task.wait.time";
export const METRIC_GATHER_SIZE = "task.gather.size";
/** get_data requests served to peers (`journeys.serve`): seconds by activity, bytes by outcome. */
export const METRIC_SERVE_TIME = "task.serve.time";
export const METRIC_SERVE_SIZE = "task.serve.size";
/** Bytes and counts digested into execute ledgers (`ledger.digest("disk-read", 65536, "bytes")`). */
export const METRIC_EXECUTE_SIZE = "task.execute.size";
export const METRIC_EXECUTE_COUNT = "task.execute.count";
export const METRIC_TRANSITIONS = "task.transitions";
export const METRIC_ACTIVE = "task.active";
/** Seconds since the oldest journey still live began: how long a key that never ends has been open. */
export const METRIC_OLDEST_ACTIVE = "task.active.oldest";
/**
 * By computation (one graph submission, one flow: `transition(…, { computation })`), only for the
 * live and recently finished ones up to `limits.maxComputations`: task-seconds by state, tasks
 * ended by terminal state, tasks live now, wall seconds from first start to last end (or now).
 */
export const METRIC_COMPUTATION_TIME = "task.computation.time";
export const METRIC_COMPUTATION_TASKS = "task.computation.tasks";
export const METRIC_COMPUTATION_ACTIVE = "task.computation.active";
export const METRIC_COMPUTATION_WALL = "task.computation.wall";
/** The computation a task was submitted in: on task.computation.* metrics and on a journey's task span. */
export const ATTR_TASK_COMPUTATION = "task.computation";
export const METRIC_DROPPED = "taskjourney.dropped";
/** Spans and metric data points that taskjourney/sdk's exporters did not export, by export error (`{item}`): by signal and error type. */
export const METRIC_EXPORT_ERRORS = "taskjourney.export.errors";
/** @deprecated The constant's old name (the metric is an export error count): write METRIC_EXPORT_ERRORS. */
export const METRIC_EXPORT_FAILURES = METRIC_EXPORT_ERRORS;
/** The signal of an export error: "traces" or "metrics". */
export const ATTR_SIGNAL = "signal";
/** The semantic conventions' error.type: an HTTP status, a network error code, "timeout", … */
export const ATTR_ERROR_TYPE = "error.type";

/** Resource attributes that identify the process, rather than metric attributes. */
export const RESOURCE_ROLE = "taskjourney.role";
export const RESOURCE_INSTANCE = "service.instance.id";

export const INSTRUMENTATION_SCOPE = "taskjourney";

/**
 * The waiting span's apportioned breakdown: one attribute per activity, `task.wait.<activity>`
 * = seconds (e.g. `task.wait.network`), so a trace alone can rebuild `explain()`.
 */
export const ATTR_TASK_WAIT_PREFIX = "task.wait.";

/**
 * A state span's digested quantities: `task.quantity.<unit>.<activity>` = the visit's total, e.g.
 * `task.quantity.bytes.disk-read` (units are single words; activity names may hold dots).
 */
export const ATTR_TASK_QUANTITY_PREFIX = "task.quantity.";

/** On a task span whose `task.key` was truncated to the attribute length limit: the key's full length. */
export const ATTR_TASK_KEY_LENGTH = "taskjourney.key_length";

/** On an activity span made by `digest()`: its interval is inferred, ending when the digest was taken. */
export const ATTR_DIGEST = "taskjourney.digest";

/**
 * A state span's process stalls: `task.stall.gc.<type>` (major, minor, incremental, weakcb) and
 * `task.stall.event-loop` = seconds of the visit they overlapped, as explain() shows them.
 */
export const ATTR_TASK_STALL_PREFIX = "task.stall.";
