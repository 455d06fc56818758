/**
 * taskjourney's errors, each with a stable `code` (as undici's and Node.js's own): a program
 * branches on `error.code`, which does not change between releases, never on the message, which
 * may. Each class is still an instance of the built-in class it replaced (`TypeError`,
 * `RangeError` or `Error`), so a catch written against that keeps working. docs/api.md's table of
 * error codes lists every code (test/docs/error-codes.test.ts holds the two to each other).
 *
 * This file sits at the bottom of the layers (src/shared/): every layer may throw these.
 */

/** Every code an error of taskjourney carries. */
export type TaskJourneyErrorCode =
  | "TJ_INVALID_OPTION"
  | "TJ_INVALID_ARGUMENT"
  | "TJ_OUT_OF_RANGE"
  | "TJ_ALREADY_WRAPPED"
  | "TJ_INVALID_TRANSITION"
  | "TJ_INVALID_INPUT"
  | "TJ_INVALID_DATA"
  | "TJ_UNKNOWN_STATE"
  | "TJ_MISSING_DEPENDENCY"
  | "TJ_INCOMPATIBLE_DEPENDENCY"
  | "TJ_LISTEN_FAILED"
  | "TJ_BACKEND_FAILED"
  | "TJ_EXPORT_TIMEOUT"
  | "TJ_EXPORT_REJECTED"
  | "TJ_SHUTDOWN_DEADLINE"
  | "TJ_QUEUE_FULL"
  | "TJ_REQUEST_DEADLINE";

/**
 * Bad configuration: an option of `new TaskJourneys()` or `startTelemetry()`, or an `OTEL_*`
 * variable, refused at construction with the option's name, the value and what would be right.
 */
export class InvalidOptionError extends TypeError {
  readonly code = "TJ_INVALID_OPTION";
}

/** A function was called with an argument it cannot use (`instrument()`'s target or spec, `wrap()`'s function, …). */
export class InvalidArgumentError extends TypeError {
  readonly code = "TJ_INVALID_ARGUMENT";
}

/** A number outside the range a function accepts (a quantile outside [0, 1], a histogram's size, a byte limit). */
export class OutOfRangeError extends RangeError {
  readonly code = "TJ_OUT_OF_RANGE";
}

/** A function or method wrapped a second time, or named twice by one `instrument()` spec: a method is wrapped once. */
export class AlreadyWrappedError extends Error {
  readonly code = "TJ_ALREADY_WRAPPED";
}

/** Thrown only with `strict: true`: bad data that would otherwise be counted and repaired. */
export class InvalidTransition extends Error {
  override readonly name = "InvalidTransition";
  readonly code = "TJ_INVALID_TRANSITION";

  constructor(
    message: string,
    /** What went wrong, as counted in `taskjourney.dropped{reason}`. */
    readonly reason: string,
    /** The key's recent story: its last state visits, oldest first, e.g. "waiting@1.000". */
    readonly story: readonly string[],
  ) {
    super(story.length > 0 ? `${message}; recent story: ${story.join(" → ")}` : message);
  }
}

/** An input file that cannot be read as telemetry: missing, too large, not JSON, not OTLP; with where it was found. */
export class OtlpJsonError extends Error {
  override name = "OtlpJsonError";
  readonly code = "TJ_INVALID_INPUT";
}

/** Data read well but not of the shape a report needs: a summary of the wrong form, several summaries, no spans or metrics of taskjourney. */
export class InvalidDataError extends TypeError {
  readonly code = "TJ_INVALID_DATA";
}

/** A state asked for by name that the data or the machine does not have. */
export class UnknownStateError extends TypeError {
  readonly code = "TJ_UNKNOWN_STATE";
}

/** A package taskjourney needs is missing from the installation (an `--omit`, a copied node_modules). */
export class MissingDependencyError extends Error {
  readonly code = "TJ_MISSING_DEPENDENCY";
}

/** A package present in a version taskjourney cannot work with (an `@opentelemetry/api` older than an SDK package needs). */
export class IncompatibleDependencyError extends Error {
  readonly code = "TJ_INCOMPATIBLE_DEPENDENCY";
}

/** A server taskjourney was told to start (the Prometheus endpoint) cannot listen on its address. */
export class ListenError extends Error {
  readonly code = "TJ_LISTEN_FAILED";
}

/**
 * A backend of the report toolkit (Jaeger's or Prometheus's query API) that could not be asked or
 * did not answer as its API does: the URL and what went wrong. The CLI reports it as a data error.
 */
export class BackendError extends Error {
  override name = "BackendError";
  readonly code = "TJ_BACKEND_FAILED";
}

// The class's name on its prototype, not as a field: the stack's first line is written in the
// constructor, before a field would be set, and it should say which error this is.
for (const type of [
  InvalidOptionError,
  InvalidArgumentError,
  OutOfRangeError,
  AlreadyWrappedError,
  InvalidDataError,
  UnknownStateError,
  MissingDependencyError,
  IncompatibleDependencyError,
  ListenError,
])
  Object.defineProperty(type.prototype, "name", { value: type.name, writable: true, configurable: true });
