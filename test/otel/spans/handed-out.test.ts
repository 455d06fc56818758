import { afterEach, describe, expect, it, vi } from "vitest";
import { createTraceState, TraceFlags } from "@opentelemetry/api";
import { handOutIds } from "../../../src/otel/spans/handed-out.js";
import { unsampledTraceparent } from "../../../src/otel/propagation.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("handOutIds", () => {
  afterEach(() => vi.restoreAllMocks());

  it("makes a traceparent not sampled, with a new trace and span id, the span context from it", () => {
    const ids = handOutIds(undefined);
    expect(ids.header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(unsampledTraceparent({ traceparent: ids.header })).toBe(ids.header);
    expect(ids.spanContext).toEqual({
      traceId: ids.header.slice(3, 35),
      spanId: ids.header.slice(36, 52),
      traceFlags: TraceFlags.NONE,
      traceState: undefined,
    });
    const other = handOutIds(undefined);
    expect(other.header.slice(3, 35)).not.toBe(ids.header.slice(3, 35));
    // The header is a string of its own, not a view of a buffer reused for the next one.
    expect(ids.header).not.toBe(other.header);
    expect(ids.header).toBe(`00-${ids.spanContext.traceId}-${ids.spanContext.spanId}-00`);
  });

  it("keeps the parent's trace id, from a raw header or a span context, and the context's tracestate", () => {
    const fromHeader = handOutIds(`00-${TRACE}-${SPAN}-00`);
    expect(fromHeader.header.slice(0, 36)).toBe(`00-${TRACE}-`);
    expect(fromHeader.spanContext.spanId).not.toBe(SPAN);
    expect(fromHeader.traceState).toBeUndefined();
    const traceState = createTraceState("vendor=1");
    const fromContext = handOutIds({ traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED, traceState });
    expect(fromContext.spanContext.traceId).toBe(TRACE);
    expect(fromContext.header.endsWith("-00")).toBe(true);
    expect(fromContext.traceState?.serialize()).toBe("vendor=1");
  });

  it("never hands out all-zero ids", () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const ids = handOutIds(undefined);
    expect(ids.spanContext.traceId).toBe("00000000000000000000000000000001");
    expect(ids.spanContext.spanId).toBe("0000000000000001");
  });
});
