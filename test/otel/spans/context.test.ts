/**
 * ParentContext stands in for `trace.setSpan(ROOT_CONTEXT, span)` by answering the API's own
 * span key, which the API does not export (src/otel/spans/context.ts learns it by a probe). These
 * tests fail if @opentelemetry/api ever stores or reads a context's span another way.
 */
import { describe, expect, it } from "vitest";
import { createContextKey, ROOT_CONTEXT, trace, type Span } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { ParentContext, SPAN_KEY } from "../../../src/otel/spans/context.js";

function sdk() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, tracer: provider.getTracer("context-test") };
}

describe("ParentContext: a span as a parent context without the API's context object", () => {
  it("uses the key under which the API's own setSpan stores a span", () => {
    const span: Span = trace.wrapSpanContext({ traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 });
    expect(trace.setSpan(ROOT_CONTEXT, span).getValue(SPAN_KEY)).toBe(span);
    const context = new ParentContext(span);
    expect(trace.getSpan(context)).toBe(span);
    expect(trace.getSpanContext(context)).toEqual(span.spanContext());
  });

  it("is read by the SDK as the parent, as trace.setSpan's context is", () => {
    const { exporter, tracer } = sdk();
    const parent = tracer.startSpan("parent");
    tracer.startSpan("ours", {}, new ParentContext(parent)).end();
    tracer.startSpan("api's", {}, trace.setSpan(ROOT_CONTEXT, parent)).end();
    parent.end();
    const [ours, api] = exporter.getFinishedSpans();
    expect(ours.name).toBe("ours");
    expect(ours.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(ours.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect({ traceId: ours.spanContext().traceId, parent: ours.parentSpanContext?.spanId }).toEqual({
      traceId: api.spanContext().traceId,
      parent: api.parentSpanContext?.spanId,
    });
  });

  it("writes make a real context that keeps the span", () => {
    const span: Span = trace.wrapSpanContext({ traceId: "c".repeat(32), spanId: "d".repeat(16), traceFlags: 1 });
    const other = createContextKey("other");
    const written = new ParentContext(span).setValue(other, 42);
    expect(written.getValue(other)).toBe(42);
    expect(trace.getSpan(written)).toBe(span);
    expect(trace.getSpan(new ParentContext(span).deleteValue(SPAN_KEY))).toBeUndefined();
    expect(new ParentContext(span).getValue(other)).toBeUndefined();
  });
});
