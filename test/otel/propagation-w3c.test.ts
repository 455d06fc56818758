/**
 * Our traceparent / tracestate handling (src/otel/propagation.ts) against @opentelemetry/core's
 * W3CTraceContextPropagator, header by header: the same span context out of every header both
 * accept, none out of those both reject, and the few differences the module documents, each
 * pinned here so a change on either side shows.
 */
import { describe, expect, it } from "vitest";
import {
  createTraceState,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type SpanContext,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { extractSpanContext, injectSpanContext, isSampled, type TraceCarrier } from "../../src/otel/propagation.js";

const core = new W3CTraceContextPropagator();
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

function ours(carrier: Record<string, unknown>) {
  const context = extractSpanContext(carrier);
  return context === undefined
    ? undefined
    : {
        traceId: context.traceId,
        spanId: context.spanId,
        sampled: isSampled(context),
        isRemote: context.isRemote,
        traceState: context.traceState?.serialize(),
      };
}

function theirs(carrier: Record<string, unknown>) {
  const context = trace.getSpanContext(core.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
  return context === undefined
    ? undefined
    : {
        traceId: context.traceId,
        spanId: context.spanId,
        sampled: (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
        isRemote: context.isRemote,
        traceState: context.traceState?.serialize(),
      };
}

/** Headers both must read alike: valid ones (different versions, flags, tracestate) and invalid ones. */
const AGREED: Array<[string, Record<string, unknown>]> = [
  ["sampled", { traceparent: `00-${TRACE}-${SPAN}-01` }],
  ["not sampled", { traceparent: `00-${TRACE}-${SPAN}-00` }],
  ["other flag bits beside sampled", { traceparent: `00-${TRACE}-${SPAN}-03` }],
  ["other flag bits, not sampled", { traceparent: `00-${TRACE}-${SPAN}-fe` }],
  ["with tracestate", { traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE" }],
  ["a later version", { traceparent: `01-${TRACE}-${SPAN}-01` }],
  ["a later version with more fields", { traceparent: `cc-${TRACE}-${SPAN}-01-what-the-future-holds` }],
  ["one space around", { traceparent: ` 00-${TRACE}-${SPAN}-01 ` }],
  [
    "repeated headers (an array): the first",
    { traceparent: [`00-${TRACE}-${SPAN}-01`, `00-${"a".repeat(32)}-${"b".repeat(16)}-00`] },
  ],
  ["version 00 with more fields", { traceparent: `00-${TRACE}-${SPAN}-01-extra` }],
  ["version ff", { traceparent: `ff-${TRACE}-${SPAN}-01` }],
  ["all-zero trace id", { traceparent: `00-${"0".repeat(32)}-${SPAN}-01` }],
  ["all-zero span id", { traceparent: `00-${TRACE}-${"0".repeat(16)}-01` }],
  ["upper-case trace id", { traceparent: `00-${TRACE.toUpperCase()}-${SPAN}-01` }],
  ["upper-case version", { traceparent: `0A-${TRACE}-${SPAN}-01` }],
  ["upper-case flags", { traceparent: `00-${TRACE}-${SPAN}-0A` }],
  ["non-hex span id", { traceparent: `00-${TRACE}-${SPAN.slice(0, 15)}g-01` }],
  ["short trace id", { traceparent: `00-${TRACE.slice(1)}-${SPAN}-01` }],
  ["long span id", { traceparent: `00-${TRACE}-${SPAN}0-01` }],
  ["one-digit flags", { traceparent: `00-${TRACE}-${SPAN}-1` }],
  ["a later version, junk after the flags", { traceparent: `01-${TRACE}-${SPAN}-01x` }],
  ["wrong separators", { traceparent: `00_${TRACE}_${SPAN}_01` }],
  ["empty", { traceparent: "" }],
  ["no traceparent", { tracestate: "rojo=1" }],
  ["not a string", { traceparent: 42 }],
];

describe("extract: our traceparent parsing agrees with @opentelemetry/core's", () => {
  it.each(AGREED)("%s", (_name, carrier) => {
    expect(ours(carrier)).toEqual(theirs(carrier));
  });

  it("accepts the valid headers of the set and rejects the invalid ones (the set tests both sides)", () => {
    const accepted = AGREED.filter(([, carrier]) => ours(carrier) !== undefined).map(([name]) => name);
    expect(accepted).toEqual([
      "sampled",
      "not sampled",
      "other flag bits beside sampled",
      "other flag bits, not sampled",
      "with tracestate",
      "a later version",
      "a later version with more fields",
      "one space around",
      "repeated headers (an array): the first",
    ]);
  });

  it("differs where the module says: any surrounding whitespace, repeated tracestate headers", () => {
    const spaced = { traceparent: `\t  00-${TRACE}-${SPAN}-01  ` };
    expect(ours(spaced)?.spanId).toBe(SPAN);
    expect(theirs(spaced)).toBeUndefined();
    const states = { traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: ["rojo=1", "congo=2"] };
    expect(ours(states)?.traceState).toBe("rojo=1");
    expect(theirs(states)?.traceState).toBe("rojo=1,congo=2");
  });

  it("keeps only the sampled flag, core every bit", () => {
    const carrier = { traceparent: `00-${TRACE}-${SPAN}-03` };
    expect(extractSpanContext(carrier)?.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(trace.getSpanContext(core.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter))?.traceFlags).toBe(3);
  });
});

describe("inject: our headers are core's", () => {
  const contexts: Array<[string, SpanContext]> = [
    ["sampled", { traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED }],
    ["not sampled", { traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.NONE }],
    [
      "with tracestate",
      {
        traceId: TRACE,
        spanId: SPAN,
        traceFlags: TraceFlags.SAMPLED,
        traceState: createTraceState("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
      },
    ],
    ["remote", { traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true }],
  ];

  it.each(contexts)("%s", (_name, spanContext) => {
    const mine: TraceCarrier = {};
    injectSpanContext(spanContext, mine);
    const reference: Record<string, string> = {};
    core.inject(trace.setSpanContext(ROOT_CONTEXT, spanContext), reference, defaultTextMapSetter);
    expect(mine).toEqual(reference);
    // And each reads back the other's.
    expect(ours(reference)).toEqual(theirs(mine));
  });

  it("differs where the module says: no empty tracestate, two flag digits", () => {
    const empty: SpanContext = {
      traceId: TRACE,
      spanId: SPAN,
      traceFlags: TraceFlags.SAMPLED,
      traceState: createTraceState(""),
    };
    const mine: TraceCarrier = {};
    injectSpanContext(empty, mine);
    const reference: Record<string, string> = {};
    core.inject(trace.setSpanContext(ROOT_CONTEXT, empty), reference, defaultTextMapSetter);
    expect(mine).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01` });
    expect(reference).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: "" });
    const flags: TraceCarrier = {};
    injectSpanContext({ traceId: TRACE, spanId: SPAN, traceFlags: 0x81 }, flags);
    expect(flags.traceparent).toBe(`00-${TRACE}-${SPAN}-81`);
  });
});
