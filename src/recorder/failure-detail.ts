import { show } from "../model/show.js";

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
 * described by its type and, when it is a primitive, its text. An object without a string
 * `message` (a job queue's `{ code: 42, reason: "timeout" }`) gets a summary of its first own
 * properties as its message: a few keys with their primitive values, never its whole content.
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
    message: typeof message === "string" ? cap(message, MAX_FAILURE_MESSAGE) : summary(error),
    stack: typeof stack === "string" ? cap(stack, MAX_FAILURE_STACK) : "",
  };
}

/** Own properties a summary shows, and characters of each key and value. */
const SUMMARY_KEYS = 8;
const SUMMARY_TEXT = 64;

/**
 * `{ code: 42, reason: "timeout", … }`: the first SUMMARY_KEYS own enumerable properties, values
 * shown only when primitive (nested objects as `{…}` / `[…]`), getters not called. Cost: for-in
 * stops after SUMMARY_KEYS + 1 keys here, though V8 lists an object's keys up front, once per
 * failure. Empty when the object has no such property or it cannot be read (a trapping Proxy).
 */
function summary(value: object): string {
  try {
    const parts: string[] = [];
    let more = false;
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      if (parts.length === SUMMARY_KEYS) {
        more = true;
        break;
      }
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      parts.push(
        `${cap(key, SUMMARY_TEXT)}: ${descriptor === undefined || !("value" in descriptor) ? "[getter]" : shown(descriptor.value)}`,
      );
    }
    if (parts.length === 0) return "";
    return `{ ${parts.join(", ")}${more ? ", …" : ""} }`;
  } catch {
    return "";
  }
}

/** A property's value in a summary: text capped as keys are, objects by their kind, the rest as drops show them. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(cap(value, SUMMARY_TEXT));
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "[…]" : "{…}";
  return show(value);
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
