import { describe, expect, it } from "vitest";
import { ExportResultCode } from "@opentelemetry/core";
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { diag } from "@opentelemetry/api";
import { emptyResource } from "@opentelemetry/resources";
import { captureDiag } from "../helpers/diag.js";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { ExportFailures } from "../../src/sdk/export-failures.js";
import { CountedMetricExporter, CountedSpanExporter } from "../../src/sdk/counted-exporters.js";

class OTLPExporterError extends Error {
  override name = "OTLPExporterError";
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

const span = {} as ReadableSpan;

describe("CountedSpanExporter and CountedMetricExporter", () => {
  it("count a failed export, a thrown one included, and report it handled to the processor", async () => {
    const failures = new ExportFailures({ tell: () => {} });
    const results: number[] = [];
    let mode: "ok" | "fail" | "throw" = "fail";
    const inner: SpanExporter = {
      export(_spans, done) {
        if (mode === "throw") throw new Error("boom");
        done(
          mode === "ok"
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error: new OTLPExporterError("Service Unavailable", 503) },
        );
      },
      shutdown: () => Promise.resolve(),
    };
    const exporter = new CountedSpanExporter(inner, "http://x/v1/traces", failures);
    exporter.export([span, span], (result) => results.push(result.code));
    mode = "throw";
    exporter.export([span], (result) => results.push(result.code));
    mode = "ok";
    exporter.export([span], (result) => results.push(result.code));
    expect(results).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
    expect(failures.failures()).toEqual([
      { signal: "traces", destination: "http://x/v1/traces", errorType: "503", items: 2, exports: 1 },
      { signal: "traces", destination: "http://x/v1/traces", errorType: "_OTHER", items: 1, exports: 1 },
    ]);
    await expect(exporter.forceFlush()).resolves.toBeUndefined();
  });

  it("counts the data points of a failed metric export and keeps the inner exporter's temporality", () => {
    const failures = new ExportFailures({ tell: () => {} });
    const inner: PushMetricExporter = {
      export: (_metrics, done) => done({ code: ExportResultCode.FAILED, error: new Error("Request timed out") }),
      selectAggregationTemporality: () => AggregationTemporality.DELTA,
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const exporter = new CountedMetricExporter(inner, "http://x/v1/metrics", failures);
    const points = (count: number) => ({ dataPoints: new Array(count).fill({}) });
    const metrics = {
      resource: {},
      scopeMetrics: [
        { scope: { name: "a" }, metrics: [points(3), points(2)] },
        { scope: { name: "b" }, metrics: [points(4)] },
      ],
    } as unknown as ResourceMetrics;
    let code: number | undefined;
    exporter.export(metrics, (result) => (code = result.code));
    expect(code).toBe(ExportResultCode.SUCCESS);
    expect(failures.totals()).toEqual([{ signal: "metrics", errorType: "timeout", items: 9 }]);
    expect(exporter.selectAggregationTemporality!(0 as never)).toBe(AggregationTemporality.DELTA);
    expect(exporter.selectAggregation).toBeUndefined();
  });

  it("answer an export still in flight before the reader's timeout, so the SDK logs no 'export timed out' line, and count it when it ends", async () => {
    const messages = captureDiag();
    try {
      const failures = new ExportFailures({ tell: (message) => messages.push(message) });
      const ends: Array<() => void> = [];
      let exports = 0;
      // A write that takes longer than the interval (a slow disk, a loaded machine): the first
      // export fails when it ends at last, the others succeed.
      const inner: PushMetricExporter = {
        export: (_metrics, done) => {
          const failed = exports++ === 0;
          ends.push(() =>
            done(
              failed ? { code: ExportResultCode.FAILED, error: new Error("EIO") } : { code: ExportResultCode.SUCCESS },
            ),
          );
        },
        forceFlush: () => Promise.resolve(),
        shutdown: () => Promise.resolve(),
      };
      const reader = new PeriodicExportingMetricReader({
        exporter: new CountedMetricExporter(inner, "/x/metrics.jsonl", failures, 20),
        exportIntervalMillis: 20,
        exportTimeoutMillis: 20,
        // A collection that takes a few milliseconds, as a loaded process's does: the reader's
        // next interval tick is then due before an export's own timeout.
        metricProducers: [
          {
            collect: async () => {
              const until = performance.now() + 6;
              while (performance.now() < until);
              return { resourceMetrics: { resource: emptyResource(), scopeMetrics: [] }, errors: [] };
            },
          },
        ],
      });
      const provider = new MeterProvider({ readers: [reader] });
      provider.getMeter("test").createCounter("c").add(1);
      // The event loop blocked past both timeouts now and then, as on a loaded machine.
      const blocker = setInterval(() => {
        const until = performance.now() + 45;
        while (performance.now() < until);
      }, 30);
      await new Promise((resolve) => setTimeout(resolve, 400));
      clearInterval(blocker);
      expect(exports).toBeGreaterThanOrEqual(3);
      expect(messages.filter((message) => message.includes("timed out"))).toEqual([]);
      expect(failures.failures()).toEqual([]);
      for (const end of ends.splice(0)) end();
      expect(failures.failures()).toEqual([
        { signal: "metrics", destination: "/x/metrics.jsonl", errorType: "_OTHER", items: 1, exports: 1 },
      ]);
      await provider.shutdown({ timeoutMillis: 1000 }).catch(() => undefined);
      for (const end of ends.splice(0)) end();
      expect(messages.filter((message) => message.includes("timed out"))).toEqual([]);
    } finally {
      diag.disable();
    }
  });

  it("count an export still in flight at the inner exporter's own timeout as a timeout and answer it; a later report changes nothing", async () => {
    const failures = new ExportFailures({ tell: () => {} });
    const late: Array<() => void> = [];
    // An export that ends, a success, only long after its deadline (an endpoint dripping its answer).
    const inner: SpanExporter = {
      export: (_spans, done) => late.push(() => done({ code: ExportResultCode.SUCCESS })),
      shutdown: () => Promise.resolve(),
    };
    const exporter = new CountedSpanExporter(inner, "http://x/v1/traces", failures, 30_000, 20);
    const answered = new Promise<number>((resolve) =>
      exporter.export([span, span, span], (result) => resolve(result.code)),
    );
    expect(await answered).toBe(ExportResultCode.SUCCESS);
    expect(failures.failures()).toEqual([
      { signal: "traces", destination: "http://x/v1/traces", errorType: "timeout", items: 3, exports: 1 },
    ]);
    for (const end of late) end();
    expect(failures.failures()[0].exports).toBe(1);
  });
});
