/** Characters kept of a failure's message, and of its stack trace (span events, explain()). */
export const MAX_FAILURE_MESSAGE = 1024;
export const MAX_FAILURE_STACK = 4096;

/**
 * Why an execution or transfer failed, as `end("error", error)` was told: the error's type,
 * message and stack trace, as strings capped in length, read once when the ledger ends.
 */
export interface FailureDetail {
  readonly type: string;
  readonly message: string;
  /** Empty when the error had none. */
  readonly stack: string;
}

/**
 * The failure detail of whatever was thrown or rejected with. Never throws: every property is
 * read under guard (a getter may throw, a Proxy may trap), and a value that is no Error is
 * described by its type and, when it is a primitive, its text.
 */
export function failureDetail(error: unknown): FailureDetail {
  // A reason given as text (a job queue's failedReason) reads as an Error's message.
  if (typeof error === "string") return { type: "Error", message: cap(error, MAX_FAILURE_MESSAGE), stack: "" };
  if (error === null || (typeof error !== "object" && typeof error !== "function")) {
    const text = typeof error === "symbol" ? "a symbol" : String(error);
    return { type: error === null ? "null" : typeof error, message: cap(text, MAX_FAILURE_MESSAGE), stack: "" };
  }
  const record = error as { name?: unknown; message?: unknown; stack?: unknown; constructor?: unknown };
  const name = read(() => record.name);
  const constructorName = read(() => (record.constructor as { name?: unknown } | undefined)?.name);
  const type =
    typeof name === "string" && name !== ""
      ? name
      : typeof constructorName === "string" && constructorName !== ""
        ? constructorName
        : "Error";
  const message = read(() => record.message);
  const stack = read(() => record.stack);
  return {
    type: cap(type, 256),
    message: typeof message === "string" ? cap(message, MAX_FAILURE_MESSAGE) : "",
    stack: typeof stack === "string" ? cap(stack, MAX_FAILURE_STACK) : "",
  };
}

function read(get: () => unknown): unknown {
  try {
    return get();
  } catch {
    return undefined;
  }
}

function cap(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
