import { describe, expect, it } from "vitest";
import { errorTypeOf, ExportFailures, QueueFull } from "../../src/sdk/export-failures.js";
import { ZipkinAnswerError } from "../../src/sdk/zipkin-exporter.js";

/** Errors as the OTLP/HTTP exporters of OpenTelemetry JS report them. */
function networkError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
class OTLPExporterError extends Error {
  override name = "OTLPExporterError";
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

describe("errorTypeOf", () => {
  it("names the failure as the semantic conventions' error.type: status, network code, timeout, retryable", () => {
    expect(errorTypeOf(new OTLPExporterError("Internal Server Error", 500))).toBe("500");
    expect(errorTypeOf(networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"))).toBe("ECONNREFUSED");
    expect(errorTypeOf(networkError("ECONNRESET", "socket hang up"))).toBe("ECONNRESET");
    expect(errorTypeOf(new Error("Request timed out"))).toBe("timeout");
    expect(errorTypeOf(new OTLPExporterError("Export failed with retryable status"))).toBe("retryable");
    expect(errorTypeOf(new Error("Concurrent export limit reached"))).toBe("concurrency_limit");
    expect(errorTypeOf(new QueueFull(2048))).toBe("queue_full");
    // Zipkin's answer: a stable code like every other error, the HTTP status on `status` as error.type.
    const zipkin = new ZipkinAnswerError(502, "Bad Gateway");
    expect([zipkin.code, zipkin.status, zipkin.message]).toEqual([
      "TJ_EXPORT_REJECTED",
      502,
      "Zipkin answered 502: Bad Gateway",
    ]);
    expect(errorTypeOf(zipkin)).toBe("502");
    expect(errorTypeOf(new RangeError("whatever"))).toBe("RangeError");
    expect(errorTypeOf(new Error("whatever"))).toBe("_OTHER");
    expect(errorTypeOf(undefined)).toBe("_OTHER");
    expect(errorTypeOf("text")).toBe("_OTHER");
    // Unbounded values never become the attribute.
    expect(errorTypeOf(Object.assign(new Error("x"), { code: "not a code 123" }))).toBe("_OTHER");
  });
});

describe("ExportFailures", () => {
  it("counts items and exports per kind, tells the first of each kind at once and repeats at most once per interval", () => {
    let now = 0;
    const told: string[] = [];
    const failures = new ExportFailures({
      tell: (message) => told.push(message),
      now: () => now,
      repeatMillis: 60_000,
    });
    const refused = networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9");
    failures.record("traces", "http://127.0.0.1:9/v1/traces", 512, refused);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("exporting traces to http://127.0.0.1:9/v1/traces failed (nothing listening)");
    expect(told[0]).toContain("connect ECONNREFUSED 127.0.0.1:9");
    expect(told[0]).toContain("512 spans lost");
    expect(told[0]).toContain('taskjourney.export.failures{signal="traces",error.type="ECONNREFUSED"}');
    for (let second = 1; second < 60; second++) {
      now = second * 1000;
      failures.record("traces", "http://127.0.0.1:9/v1/traces", 10, refused);
    }
    expect(told).toHaveLength(1);
    // Another kind is told at once.
    failures.record("metrics", "http://127.0.0.1:9/v1/metrics", 40, refused);
    expect(told).toHaveLength(2);
    expect(told[1]).toContain("40 metric data points lost");
    now = 60_000;
    failures.record("traces", "http://127.0.0.1:9/v1/traces", 10, refused);
    expect(told).toHaveLength(3);
    expect(told[2]).toBe(
      "taskjourney: exporting traces to http://127.0.0.1:9/v1/traces still fails (ECONNREFUSED): 60 more failed exports, 600 spans lost in the last 60 s.",
    );
    expect(failures.failures()).toEqual([
      {
        signal: "traces",
        destination: "http://127.0.0.1:9/v1/traces",
        errorType: "ECONNREFUSED",
        items: 512 + 60 * 10,
        exports: 61,
      },
      {
        signal: "metrics",
        destination: "http://127.0.0.1:9/v1/metrics",
        errorType: "ECONNREFUSED",
        items: 40,
        exports: 1,
      },
    ]);
  });

  it("tells at shutdown what each kind lost since it was last told, and nothing for kinds told in full", () => {
    let now = 0;
    const told: string[] = [];
    const failures = new ExportFailures({ tell: (message) => told.push(message), now: () => now });
    const refused = networkError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9");
    failures.record("traces", "http://127.0.0.1:9/v1/traces", 512, refused);
    now = 5_000;
    failures.record("traces", "http://127.0.0.1:9/v1/traces", 512, refused);
    failures.record("traces", "http://127.0.0.1:9/v1/traces", 125, refused);
    failures.record("metrics", "http://127.0.0.1:9/v1/metrics", 25, refused);
    expect(told).toHaveLength(2);
    failures.tellUntold();
    expect(told.slice(2)).toEqual([
      "taskjourney: exporting traces to http://127.0.0.1:9/v1/traces failed (ECONNREFUSED) until shutdown: 2 more failed exports, 637 more spans lost, 1149 in all.",
    ]);
    // Told once: a second shutdown call has nothing more to say.
    failures.tellUntold();
    expect(told).toHaveLength(3);
  });

  it("sums destinations into the totals of taskjourney.export.failures", () => {
    const failures = new ExportFailures({ tell: () => {} });
    failures.record("traces", "a", 3, new Error("Request timed out"));
    failures.record("traces", "b", 4, new Error("Request timed out"));
    failures.record("traces", "b", 5, new OTLPExporterError("Bad Gateway", 502));
    expect(failures.totals()).toEqual([
      { signal: "traces", errorType: "timeout", items: 7 },
      { signal: "traces", errorType: "502", items: 5 },
    ]);
  });

  it("counts the exports still under way when shutdown stops waiting, once, whatever their exporter reports later", () => {
    const told: string[] = [];
    const failures = new ExportFailures({ tell: (message) => told.push(message) });
    const done = failures.begin("traces", "http://x/v1/traces", 7);
    const stuck = failures.begin("traces", "http://x/v1/traces", 5);
    const stuckMetrics = failures.begin("metrics", "http://x/v1/metrics", 30);
    failures.settle(done, undefined, false);
    failures.abandonPending(3000);
    failures.settle(stuck, new Error("Request timed out"), true);
    failures.settle(stuckMetrics, undefined, false);
    expect(failures.failures()).toEqual([
      { signal: "traces", destination: "http://x/v1/traces", errorType: "shutdown_deadline", items: 5, exports: 1 },
      { signal: "metrics", destination: "http://x/v1/metrics", errorType: "shutdown_deadline", items: 30, exports: 1 },
    ]);
    expect(told[0]).toContain(
      "exporting traces to http://x/v1/traces failed (still under way when shutdown stopped waiting): ShutdownDeadline: not finished when shutdown stopped waiting after 3000 ms; 5 spans lost",
    );
    failures.abandonPending(3000);
    expect(failures.failures()).toHaveLength(2);
  });

  it("never throws, whatever the error or the warning sink does", () => {
    const failures = new ExportFailures({
      tell: () => {
        throw new Error("sink");
      },
    });
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("getter");
        },
      },
    );
    expect(() => failures.record("traces", "x", 1, hostile)).not.toThrow();
    expect(() => failures.record("traces", "x", 1, new Error("again"))).not.toThrow();
  });

  it("spans dropped before any export (a full queue) count items, no exports, and are told once, then as spans lost", () => {
    let now = 0;
    const told: string[] = [];
    const failures = new ExportFailures({ tell: (message) => told.push(message), now: () => now, repeatMillis: 1000 });
    const full = new QueueFull(2048);
    for (let span = 0; span < 5; span++) failures.record("traces", "traces.jsonl", 1, full, 0);
    expect(failures.failures()).toEqual([
      { signal: "traces", destination: "traces.jsonl", errorType: "queue_full", items: 5, exports: 0 },
    ]);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("exporting traces to traces.jsonl failed (the batch span processor's queue was full");
    expect(told[0]).toContain("maxQueueSize (2048)");
    expect(told[0]).toContain("1 span lost");
    now = 1000;
    failures.record("traces", "traces.jsonl", 1, full, 0);
    expect(told[1]).toBe(
      "taskjourney: exporting traces to traces.jsonl still fails (queue_full): 5 spans lost in the last 1 s.",
    );
  });
});
