import {
  createTraceState,
  isSpanContextValid,
  isValidSpanId,
  isValidTraceId,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type HrTime,
  type SpanContext,
} from "@opentelemetry/api";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) for the messages a scheduler and its
 * workers exchange. taskjourney reads and writes `traceparent` / `tracestate` itself instead of
 * going through the global propagator: the format is small, and this way propagation works the
 * same whether or not the user registered a propagator (and whichever one), so a scheduler and
 * a worker configured differently still agree.
 *
 * Why not @opentelemetry/core's W3CTraceContextPropagator: the main entry's only runtime
 * dependency is @opentelemetry/api, and core is an optional peer. So the ids are checked with the
 * api's own isValidTraceId / isValidSpanId (plus lower case, which W3C requires and they do not),
 * tracestate is parsed by the api's createTraceState, and only the header's layout is ours.
 * test/otel/propagation-w3c.test.ts holds our inject and extract against core's propagator; where
 * they differ, on purpose: we trim any surrounding whitespace (core one character), keep only the
 * sampled flag (the only one defined), take the first of repeated tracestate headers (core joins
 * them), write no empty tracestate, and always write two flag digits.
 */

/** A message's headers, as taskjourney reads and writes them: lowercase names, string values. */
export type TraceCarrier = Record<string, string>;

export const TRACEPARENT = "traceparent";
export const TRACESTATE = "tracestate";
/**
 * Our tracestate member: the span id of the state span a carrier was made in. `traceparent`
 * names the task span, which covers everything the receiver does; the state span (e.g. the
 * scheduler's processing) becomes the receiver's link.
 */
export const TRACESTATE_STATE = "taskjourney";
/**
 * Our tracestate member on a hand-off carrier (`handOff()`): the producer's journey as far as the
 * hand-off (its start and the hand-off's time, epoch seconds and nanoseconds, and its prefix), so
 * that a consumer that keeps a journey the producer did not sample can emit the producer's span
 * in its stead: `<startSeconds>:<startNanos>:<endSeconds>:<endNanos>:<prefix, URI-encoded>`.
 */
export const TRACESTATE_HANDOFF = "taskjourney-handoff";
/** The prefix a hand-off member carries at most (before encoding): the member stays well under W3C's 256 characters. */
const HANDOFF_PREFIX_LIMIT = 64;

/** The producer's span as far as the hand-off, as a hand-off member carries it. */
export interface HandOffSpan {
  start: [number, number];
  end: [number, number];
  prefix: string;
}

/** The value of a hand-off member. */
export function formatHandOff(
  start: readonly [number, number],
  end: readonly [number, number],
  prefix: string,
): string {
  return `${start[0]}:${start[1]}:${end[0]}:${end[1]}:${encodeURIComponent(prefix.slice(0, HANDOFF_PREFIX_LIMIT))}`;
}

/** The hand-off member of a received context, or undefined when it has none (or a malformed one). */
export function handOffOf(spanContext: SpanContext): HandOffSpan | undefined {
  const value = spanContext.traceState?.get(TRACESTATE_HANDOFF);
  if (value === undefined) return undefined;
  const parts = value.split(":");
  if (parts.length !== 5) return undefined;
  const numbers = parts.slice(0, 4).map((part) => (/^[0-9]{1,16}$/.test(part) ? Number(part) : Number.NaN));
  if (numbers.some((n) => !Number.isSafeInteger(n)) || numbers[1] >= 1e9 || numbers[3] >= 1e9) return undefined;
  let prefix: string;
  try {
    prefix = decodeURIComponent(parts[4]).slice(0, HANDOFF_PREFIX_LIMIT);
  } catch {
    return undefined;
  }
  const start: [number, number] = [numbers[0], numbers[1]];
  let end: [number, number] = [numbers[2], numbers[3]];
  // Never a span ending before it began.
  if (end[0] < start[0] || (end[0] === start[0] && end[1] < start[1])) end = start;
  return { start, end, prefix };
}

/**
 * Our tracestate member on a carrier written after the journey ended (`inject()` then: the result
 * going back, the data a peer fetches): when its task span ended, epoch seconds and nanoseconds
 * (`<seconds>:<nanos>`), so that the journey the result goes back to (`resultFrom()`), the parent
 * of this one, ends its span no earlier (TaskSpans.taskEnd).
 */
export const TRACESTATE_END = "taskjourney-end";
/**
 * Our tracestate member on a sampled carrier written while the journey is live (`inject()` then:
 * the task going to a worker): when its task span started, epoch seconds and nanoseconds
 * (`<seconds>:<nanos>`), so that the journey it goes to (`continueFrom()`), its child, starts its
 * spans no earlier (TaskSpans.notBefore), as a hand-off member's start does for a consumer.
 */
export const TRACESTATE_START = "taskjourney-start";
/** Longest time member value (end, start): 16 digits of seconds, a colon, 9 of nanoseconds. */
const TIME_VALUE_LIMIT = 26;
const TIME_VALUE = /^([0-9]{1,16}):([0-9]{1,9})$/;

/** The value of a time member (end, start). */
export function formatTime(time: HrTime): string {
  return `${time[0]}:${time[1]}`;
}

/**
 * The time member `member` (TRACESTATE_END, TRACESTATE_START) of a received context: undefined
 * when it has none, null when it has one that is not one (garbled, or not ours), which the caller
 * counts. Never throws.
 */
export function timeOf(spanContext: SpanContext, member: string): [number, number] | undefined | null {
  const value = spanContext.traceState?.get(member);
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length > TIME_VALUE_LIMIT) return null;
  const match = TIME_VALUE.exec(value);
  if (match === null) return null;
  const seconds = Number(match[1]);
  return Number.isSafeInteger(seconds) ? [seconds, Number(match[2])] : null;
}

/** `spanContext` without our tracestate members (the same object when it has none): for a link kept to it. */
export function withoutOurState(spanContext: SpanContext): SpanContext {
  const traceState = spanContext.traceState;
  if (traceState === undefined) return spanContext;
  const stripped = withoutOurMembers(traceState);
  return stripped === traceState ? spanContext : { ...spanContext, traceState: stripped };
}

/** Lower-case hex: W3C forbids upper case, which the api's id checks accept. */
const HEX = /^[0-9a-f]*$/;

/**
 * The span context a `traceparent` header names, or undefined when the header is not a valid
 * one. Version 00 must be exactly 55 characters; later versions may append fields after a "-"
 * (the spec's forward compatibility); version ff and all-zero ids are invalid.
 */
export function parseTraceparent(traceparent: string, tracestate?: string): SpanContext | undefined {
  const header = traceparent.trim();
  if (header.length < 55) return undefined;
  if (header[2] !== "-" || header[35] !== "-" || header[52] !== "-") return undefined;
  const version = header.slice(0, 2);
  const traceId = header.slice(3, 35);
  const spanId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!HEX.test(version) || version === "ff") return undefined;
  if (version === "00" ? header.length !== 55 : header.length > 55 && header[55] !== "-") return undefined;
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags)) return undefined;
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId)) return undefined;
  const spanContext: SpanContext = {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (typeof tracestate === "string" && tracestate.trim().length > 0) {
    spanContext.traceState = createTraceState(tracestate.trim());
  }
  return spanContext;
}

/** The `traceparent` header of a span context (version 00). */
export function formatTraceparent(spanContext: SpanContext): string {
  const bits = spanContext.traceFlags & 0xff;
  // The two flag values there are, without formatting a number for each carrier.
  const flags = bits === 0 ? "00" : bits === 1 ? "01" : bits.toString(16).padStart(2, "0");
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/**
 * The `traceparent` of a carrier that says "not sampled" and nothing more: a plain object whose
 * header is exactly a version-00 one (55 characters, lower-case hex, non-zero ids, flags 00) and
 * that has no `tracestate`. Checked in place, character by character, without making a span
 * context: it is what the carriers of every task not sampled carry, so `parent()` keeps it as it
 * is (parsed only if the journey is kept) and `returned()` drops it. Undefined for anything else,
 * which parseTraceparent then decides.
 */
export function unsampledTraceparent(source: unknown): string | undefined {
  if (source === null || typeof source !== "object") return undefined;
  const headers = source as Record<string, unknown>;
  if (typeof headers.getValue === "function" || headers[TRACESTATE] !== undefined) return undefined;
  const header = headers[TRACEPARENT];
  if (typeof header !== "string" || header.length !== 55) return undefined;
  if (header.charCodeAt(0) !== 48 || header.charCodeAt(1) !== 48 || header.charCodeAt(53) !== 48) return undefined;
  if (header.charCodeAt(54) !== 48) return undefined;
  if (header.charCodeAt(2) !== 45 || header.charCodeAt(35) !== 45 || header.charCodeAt(52) !== 45) return undefined;
  return lowerHex(header, 3, 35) && lowerHex(header, 36, 52) ? header : undefined;
}

/** Whether `text` from `start` to `end` is lower-case hex digits, not all zeros. */
function lowerHex(text: string, start: number, end: number): boolean {
  let nonZero = false;
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 48) continue;
    if (!((code > 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
    nonZero = true;
  }
  return nonZero;
}

/** The trace id of a header unsampledTraceparent() accepted. */
export function traceIdOfHeader(header: string): string {
  return header.slice(3, 35);
}

/** The span context in `carrier`'s traceparent/tracestate, or undefined. Never throws. */
export function extractSpanContext(carrier: unknown): SpanContext | undefined {
  if (carrier === null || typeof carrier !== "object") return undefined;
  const headers = carrier as Record<string, unknown>;
  const traceparent = firstString(headers[TRACEPARENT]);
  if (traceparent === undefined) return undefined;
  return parseTraceparent(traceparent, firstString(headers[TRACESTATE]));
}

/** Writes `spanContext` into `carrier` as traceparent (and tracestate when there is one). */
export function injectSpanContext(spanContext: SpanContext, carrier: TraceCarrier): void {
  carrier[TRACEPARENT] = formatTraceparent(spanContext);
  const traceState = spanContext.traceState?.serialize();
  if (traceState !== undefined && traceState.length > 0) carrier[TRACESTATE] = traceState;
}

/** A span context from either a carrier or a Context returned by `extract()`; undefined if neither holds a valid one. */
export function spanContextFrom(source: unknown): SpanContext | undefined {
  if (source === null || typeof source !== "object") return undefined;
  if (
    typeof (source as Partial<Context>).getValue === "function" &&
    typeof (source as Partial<Context>).setValue === "function"
  ) {
    const spanContext = trace.getSpanContext(source as Context);
    return spanContext !== undefined && isSpanContextValid(spanContext) ? spanContext : undefined;
  }
  return extractSpanContext(source);
}

/** A Context whose span is the remote `spanContext`, as `propagation.extract` would give. */
export function remoteContext(spanContext: SpanContext): Context {
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

/** Whether the upstream decided to sample (the W3C sampled flag). */
export function isSampled(spanContext: SpanContext): boolean {
  return (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
}

function firstString(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  // Node's IncomingHttpHeaders may hold repeated headers as arrays.
  if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  return undefined;
}

/** `spanContext` as a remote parent that is sampled: for a journey kept, under ids handed out unsampled. */
export function sampledParent(spanContext: SpanContext): SpanContext {
  const traceState = spanContext.traceState;
  return {
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    traceFlags: spanContext.traceFlags | TraceFlags.SAMPLED,
    isRemote: true,
    // Our members name the sender's state span, hand-off, start and end; they must not travel on to the receiver's own spans.
    traceState: withoutOurMembers(traceState),
  };
}

function withoutOurMembers(traceState: SpanContext["traceState"]): SpanContext["traceState"] {
  if (traceState?.get(TRACESTATE_STATE) !== undefined) traceState = traceState.unset(TRACESTATE_STATE);
  if (traceState?.get(TRACESTATE_HANDOFF) !== undefined) traceState = traceState.unset(TRACESTATE_HANDOFF);
  if (traceState?.get(TRACESTATE_END) !== undefined) traceState = traceState.unset(TRACESTATE_END);
  if (traceState?.get(TRACESTATE_START) !== undefined) traceState = traceState.unset(TRACESTATE_START);
  return traceState;
}

/** The sender's state span named in a carrier's tracestate, as a context to link to, or undefined. */
export function stateSpanOf(spanContext: SpanContext): SpanContext | undefined {
  const spanId = spanContext.traceState?.get(TRACESTATE_STATE);
  if (spanId === undefined || !HEX.test(spanId) || !isValidSpanId(spanId)) return undefined;
  return { traceId: spanContext.traceId, spanId, traceFlags: spanContext.traceFlags, isRemote: true };
}

/**
 * What `inject()` writes for a task span: its ids, the head-sampling decision as the sampled flag
 * (a journey not yet kept says "not sampled", so the receiver does not head-sample for it) and,
 * when given, the state span it was made in and (a sampled span's) when the task span started
 * (formatTime()) as our tracestate members. The start is on a sampled carrier only: an unsampled
 * one (nearly every carrier) the receiver takes as it comes, unparsed, and a hand-off carrier's
 * own member has the producer's start.
 */
export function carrierContext(
  task: SpanContext,
  sampled: boolean,
  stateSpanId: string | undefined,
  start?: HrTime,
): SpanContext {
  let traceState = task.traceState;
  if (sampled && start !== undefined)
    traceState = (traceState ?? createTraceState()).set(TRACESTATE_START, formatTime(start));
  if (stateSpanId !== undefined) traceState = (traceState ?? createTraceState()).set(TRACESTATE_STATE, stateSpanId);
  else if (traceState?.get(TRACESTATE_STATE) !== undefined) traceState = traceState.unset(TRACESTATE_STATE);
  return {
    traceId: task.traceId,
    spanId: task.spanId,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    traceState,
  };
}
