import { describe, expect, it } from "vitest";
import { randomSpanId, randomTraceId, SpanIds } from "../../src/otel/span-ids.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("SpanIds", () => {
  it("gives a preset pair to the next span only, then random ids again", () => {
    const ids = new SpanIds();
    ids.preset(TRACE, SPAN);
    expect(ids.generateSpanId()).toBe(SPAN);
    expect(ids.generateTraceId()).toBe(TRACE);
    expect(ids.generateSpanId()).not.toBe(SPAN);
    expect(ids.generateTraceId()).not.toBe(TRACE);
  });

  it("forgets a preset that was not taken", () => {
    const ids = new SpanIds();
    ids.preset(TRACE, SPAN);
    ids.clear();
    expect(ids.generateSpanId()).not.toBe(SPAN);
    expect(ids.generateTraceId()).not.toBe(TRACE);
  });

  it("makes valid W3C ids: lower-case hex of the right length, not all zeros, not repeating", () => {
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const trace = randomTraceId();
      const span = randomSpanId();
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      expect(span).toMatch(/^[0-9a-f]{16}$/);
      expect(trace).not.toBe("0".repeat(32));
      expect(span).not.toBe("0".repeat(16));
      traces.add(trace);
      spans.add(span);
    }
    expect(traces.size).toBe(1000);
    expect(spans.size).toBe(1000);
  });
});
