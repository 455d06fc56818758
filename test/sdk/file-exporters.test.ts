/**
 * `createFileSpanExporter` / `createFileMetricExporter` of `taskjourney/sdk`: bad options throw
 * naming the option; exports append OTLP/JSON lines in order, the directory made when missing;
 * an exporter shut down fails its exports.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { createFileMetricExporter, createFileSpanExporter } from "../../src/sdk.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-file-exporters-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

function spans(...names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] });
  for (const name of names) provider.getTracer("test").startSpan(name).end();
  return memory.getFinishedSpans();
}

function exported(exporter: { export(items: never, done: (result: ExportResult) => void): void }, items: unknown) {
  return new Promise<ExportResult>((resolve) => exporter.export(items as never, resolve));
}

describe("createFileSpanExporter / createFileMetricExporter", () => {
  it("bad options throw a TypeError naming the option", () => {
    expect(() => createFileSpanExporter(undefined as never)).toThrow(
      "createFileSpanExporter: options must be { path }, got undefined",
    );
    expect(() => createFileSpanExporter({ path: "" })).toThrow(
      'createFileSpanExporter: option "path" must be a file path',
    );
    expect(() => createFileMetricExporter({ path: 7 as never })).toThrow(
      'createFileMetricExporter: option "path" must be a file path, got 7',
    );
    expect(() => createFileMetricExporter({ path: "m.jsonl", temporality: "DELTA" as never })).toThrow(
      'createFileMetricExporter: option "temporality" must be "cumulative" or "delta"',
    );
  });

  it("appends one OTLP/JSON request a line, in order, into a directory it makes; shut down, it fails exports", async () => {
    const file = path.join(directory, "made", "here", "traces.jsonl");
    const exporter = createFileSpanExporter({ path: file });
    const results = await Promise.all([exported(exporter, spans("a")), exported(exporter, spans("b", "c"))]);
    expect(results.map((result) => result.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
    await exporter.shutdown();
    const lines = fs.readFileSync(file, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    const names = lines
      .slice(0, -1)
      .map((line) => JSON.parse(line).resourceSpans[0].scopeSpans[0].spans.map((span: { name: string }) => span.name));
    expect(names).toEqual([["a"], ["b", "c"]]);
    const late = await exported(exporter, spans("d"));
    expect(late.code).toBe(ExportResultCode.FAILED);
    expect(late.error?.message).toBe("exporter is shut down");
  });

  it("writes a meter provider's metrics, with the temporality asked", async () => {
    const file = path.join(directory, "metrics.jsonl");
    const exporter = createFileMetricExporter({ path: file, temporality: "delta" });
    expect(exporter.selectAggregationTemporality!(0 as never)).toBe(AggregationTemporality.DELTA);
    expect(createFileMetricExporter({ path: file }).selectAggregationTemporality!(0 as never)).toBe(
      AggregationTemporality.CUMULATIVE,
    );
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    provider.getMeter("test").createCounter("jobs").add(3);
    await provider.shutdown();
    const request = JSON.parse(fs.readFileSync(file, "utf8").trim());
    const metric = request.resourceMetrics[0].scopeMetrics[0].metrics[0];
    expect(metric.name).toBe("jobs");
    expect(metric.sum.dataPoints[0].asDouble).toBe(3);
  });
});
