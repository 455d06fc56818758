import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { parseTraceparent, unsampledTraceparent, traceIdOfHeader } from "../../src/otel/propagation.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const header = (trace = TRACE, span = SPAN, flags = "00", version = "00") => `${version}-${trace}-${span}-${flags}`;

describe("unsampledTraceparent: the carrier of a task not sampled, checked in place", () => {
  it("takes a version-00 header with flags 00 and no tracestate, as it came", () => {
    const carrier = { traceparent: header() };
    expect(unsampledTraceparent(carrier)).toBe(carrier.traceparent);
    expect(traceIdOfHeader(carrier.traceparent)).toBe(TRACE);
  });

  it("leaves everything else to the full parse: sampled, tracestate, other versions, bad ids, spacing, Contexts", () => {
    const rejected: unknown[] = [
      { traceparent: header(TRACE, SPAN, "01") },
      { traceparent: header(), tracestate: "taskjourney=00f067aa0ba902b7" },
      { traceparent: header(), tracestate: "" },
      { traceparent: header(TRACE, SPAN, "00", "01") },
      { traceparent: header(TRACE.toUpperCase()) },
      { traceparent: header("0".repeat(32)) },
      { traceparent: header(TRACE, "0".repeat(16)) },
      { traceparent: ` ${header()}` },
      { traceparent: `${header()}-extra` },
      { traceparent: header().replace("-", "_") },
      { traceparent: [header()] },
      { traceparent: 55 },
      {},
      null,
      "00-x",
      ROOT_CONTEXT,
    ];
    for (const carrier of rejected) expect(unsampledTraceparent(carrier)).toBeUndefined();
  });

  it("agrees with parseTraceparent on every header: what it takes parses as not sampled, with its trace id and no tracestate", () => {
    const hexDigit = fc.constantFrom(..."0123456789abcdefA".split(""));
    const hex = (length: number) => fc.array(hexDigit, { minLength: length, maxLength: length }).map((d) => d.join(""));
    const flags = fc.constantFrom("00", "01", "02", "0g");
    fc.assert(
      fc.property(hex(32), hex(16), flags, fc.constantFrom("00", "01", "ff"), (trace, span, flag, version) => {
        const text = header(trace, span, flag, version);
        const fast = unsampledTraceparent({ traceparent: text });
        const full = parseTraceparent(text);
        if (fast !== undefined) {
          expect(full).toBeDefined();
          expect(full!.traceFlags).toBe(0);
          expect(full!.traceState).toBeUndefined();
          expect(traceIdOfHeader(fast)).toBe(full!.traceId);
        } else if (full !== undefined && version === "00") {
          // A valid version-00 header it leaves alone must be sampled or flagged otherwise.
          expect(flag).not.toBe("00");
        }
      }),
      { numRuns: 2000 },
    );
  });
});
