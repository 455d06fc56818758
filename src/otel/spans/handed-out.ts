import { TraceFlags, type Link, type SpanContext, type TraceState } from "@opentelemetry/api";
import { sampledParent } from "../propagation.js";
import { randomHexInto } from "../span-ids.js";

/**
 * The ids `inject()` hands out for a journey that was not head-sampled, when the tracer provider
 * lets the bridge choose ids (see ../span-ids.ts): no span exists until the journey is kept at its
 * end, when its task span is started with these ids. Nearly every journey hands out ids and ends
 * unkept, so what they are is kept as the one thing every carrier writes, the `traceparent`
 * (flagged not sampled), made as one string at once (handOutIds()); the span context is made from
 * it only for a journey kept. Made as a trace id and a span id formatted apart, joined and
 * flattened, they were ~850 B a journey (issue 34).
 */
export class HandedOutIds {
  /** Links to sampled contexts that arrived once the journey had begun (`parent()` too late), for its task span if kept. */
  links: Link[] | undefined = undefined;
  linksDropped = 0;

  constructor(
    /** `00-<trace id>-<span id>-00`: the task span's ids, not sampled. */
    readonly header: string,
    /** The parent's tracestate (without our members), which the carriers and the task span carry. */
    readonly traceState: TraceState | undefined,
  ) {}

  /** What the carriers said, as a span context. */
  get spanContext(): SpanContext {
    return {
      traceId: this.header.slice(3, 35),
      spanId: this.header.slice(36, 52),
      traceFlags: TraceFlags.NONE,
      traceState: this.traceState,
    };
  }
}

/** A traceparent being made: "00-", 32 hex digits, "-", 16, "-00"; latin1 bytes. */
const HEADER = Buffer.from(`00-${"0".repeat(32)}-${"0".repeat(16)}-00`, "latin1");
const TRACE_ID_AT = 3;
const SPAN_ID_AT = 36;

/**
 * Ids for `journey`'s task span: the parent's trace (its span context, or the raw header kept by
 * `parent()`) or a new random one, a new random span id, and the parent's tracestate. Random as
 * the SDK's RandomIdGenerator makes ids: Math.random, lower-case hex, never all zeros.
 */
export function handOutIds(parent: SpanContext | string | undefined): HandedOutIds {
  if (parent === undefined) randomHexInto(HEADER, TRACE_ID_AT, 4);
  else {
    // A span context's trace id, or a header's that unsampledTraceparent() accepted (at the same
    // place as here): 32 lower-case hex digits, copied without a string made.
    const from = typeof parent === "string" ? parent : parent.traceId;
    const start = typeof parent === "string" ? TRACE_ID_AT : 0;
    for (let digit = 0; digit < 32; digit++) HEADER[TRACE_ID_AT + digit] = from.charCodeAt(start + digit);
  }
  randomHexInto(HEADER, SPAN_ID_AT, 2);
  return new HandedOutIds(
    HEADER.toString("latin1", 0, HEADER.length),
    typeof parent === "object" ? sampledParent(parent).traceState : undefined,
  );
}
