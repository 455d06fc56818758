import { describe, expect, it } from "vitest";
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider as BasicTracerProvider,
} from "@opentelemetry/sdk-trace";
import { hrTimeToMicroseconds } from "@opentelemetry/core";
import { TaskJourneys } from "../../../src/index.js";

// The epoch a span is stamped on decides whether a worker's task span, seen next to the
// scheduler's in another process, ends inside its parent: both processes must agree to well
// under the time a message takes between them.
describe("timeOrigin by default", () => {
  function spansOf(options: { clock?: () => number }) {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const journeys = new TaskJourneys({ role: "worker", tracerProvider, sampling: { ratio: 1 }, ...options });
    const before = performance.timeOrigin + performance.now();
    journeys.transition("x-1", "released", "waiting");
    const after = performance.timeOrigin + performance.now();
    journeys.transition("x-1", "waiting", "forgotten");
    const task = exporter.getFinishedSpans().find((span) => span.name.startsWith("task "))!;
    return { start: hrTimeToMicroseconds(task.startTime) / 1000, before, after };
  }

  it("with the default clock, performance.timeOrigin: a span starts when it did, to the microsecond", () => {
    // Taken from Date.now() (whole milliseconds) it was up to 1 ms early, differently in each process.
    for (let i = 0; i < 20; i++) {
      const { start, before, after } = spansOf({});
      expect(start).toBeGreaterThanOrEqual(before - 0.001);
      expect(start).toBeLessThanOrEqual(after + 0.001);
    }
  });

  it("with a clock of the caller's, from Date.now() at construction: the same instant to the millisecond", () => {
    const { start, before, after } = spansOf({ clock: () => performance.now() / 1000 });
    expect(start).toBeGreaterThanOrEqual(before - 1.001);
    expect(start).toBeLessThanOrEqual(after + 1.001);
  });
});
