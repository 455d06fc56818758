/**
 * The kept traces' timelines read back from JSON (src/report/kept-traces.ts through
 * reportDataFrom): a saved ReportData keeps its timelines, and the page made from it is the page
 * made from the data; a wrong or crafted `keptTraces` is refused naming the field, the value and
 * what would be right, and never makes the page draw more than its own size says.
 */
import { describe, expect, it } from "vitest";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { renderHtmlReport } from "../../src/report/html.js";
import type { DecodedSpan } from "../../src/report/otlp-json.js";
import { reportDataFrom, type ReportData } from "../../src/report/report-data.js";

/** A span of trace `trace` on process `instance`, `start` to `end` in ms from 1,000 s. */
function span(
  trace: string,
  id: string,
  parent: string | undefined,
  name: string,
  instance: string,
  start: number,
  end: number,
  more: Partial<DecodedSpan> = {},
): DecodedSpan {
  const at = (ms: number) => 1_000_000_000_000n + BigInt(ms) * 1_000_000n;
  return {
    traceId: trace,
    spanId: id,
    parentSpanId: parent,
    name,
    kind: 1,
    startNanos: at(start),
    endNanos: at(end),
    attributes: {},
    links: [],
    statusCode: 0,
    resource: { "service.instance.id": instance },
    scope: "taskjourney",
    ...more,
  };
}

/** Two traces across a scheduler and a worker: job-a slow, job-b failed on the worker with its reason. */
function data(): ReportData {
  const spans: DecodedSpan[] = [];
  for (const [trace, key, failed] of [
    ["a", "job-a", false],
    ["b", "job-b", true],
  ] as const) {
    const length = trace === "a" ? 900 : 300;
    spans.push(
      span(trace, `${trace}0`, undefined, "task job", "sched", 0, length, {
        attributes: { "task.key": key, "task.outcome": failed ? "erred" : "memory" },
        ...(failed ? { statusCode: 2 } : {}),
      }),
      span(trace, `${trace}1`, `${trace}0`, "processing", "sched", 0, length),
      span(trace, `${trace}2`, `${trace}0`, "task job", "worker-1", 10, length - 10, {
        attributes: { "task.key": key, "task.outcome": failed ? "error" : "memory" },
        links: [{ traceId: trace, spanId: `${trace}1`, attributes: {} }],
        ...(failed ? { statusCode: 2, statusMessage: "task ended in error" } : {}),
      }),
      span(trace, `${trace}3`, `${trace}2`, "executing", "worker-1", 20, length - 20, {
        ...(failed ? { statusCode: 2, statusMessage: "ValueError: bad row 7" } : {}),
      }),
    );
  }
  return reportDataFromTelemetry(
    { spans, metrics: [], summaries: [], files: ["crafted"] },
    { generatedAt: "2025-01-01T00:00:00.000Z" },
  );
}

/** `data()` saved, with `change` made to its keptTraces, read back. */
function readBack(change: (kept: Record<string, any>) => void): ReportData {
  const json = JSON.parse(JSON.stringify(data()));
  change(json.keptTraces);
  return reportDataFrom(json);
}

describe("the kept traces read back from JSON", () => {
  it("round-trips: a saved ReportData keeps its timelines, and its page is the same page", () => {
    const original = data();
    expect(original.keptTraces!.timelines.map((timeline) => [timeline.key, timeline.reasons])).toEqual([
      ["job-a", ["slowest #1", "slowest #2"]],
      ["job-b", ["slowest #3", "slowest #4", "failed"]],
    ]);
    const saved = reportDataFrom(JSON.parse(JSON.stringify(original)));
    expect(saved.keptTraces).toEqual(original.keptTraces);
    const page = renderHtmlReport(original, { inlineEcharts: false });
    expect(page).toContain('<div class="chart timeline" id="chart-timeline-1"></div>');
    expect(renderHtmlReport(saved, { inlineEcharts: false })).toBe(page);
    // Read back twice: the same again.
    expect(reportDataFrom(JSON.parse(JSON.stringify(saved))).keptTraces).toEqual(original.keptTraces);
    // Absent or null: none, as before.
    const without = JSON.parse(JSON.stringify(original));
    without.keptTraces = null;
    expect(reportDataFrom(without).keptTraces).toBeUndefined();
  });

  it("refuses a wrong keptTraces naming the field, the value and what would be right", () => {
    const cases: Array<[(kept: Record<string, any>) => void, string]> = [
      [
        (kept) => (kept.timelines[0].bars[1].row = 9),
        "keptTraces.timelines[0].bars[1].row must be a whole number from 0 to 3 (below the timeline's rows), got 9",
      ],
      [
        (kept) => (kept.timelines[0].bars[0].lane = -1),
        "keptTraces.timelines[0].bars[0].lane must be a whole number from 0 to 1 (an index into the timeline's lanes), got -1",
      ],
      [
        (kept) => (kept.timelines[1].bars[2].end = 1),
        "keptTraces.timelines[1].bars[2].end must be a number of microseconds >= its start (10000), got 1",
      ],
      [
        (kept) => (kept.timelines[0].bars[0].kind = "bar"),
        'keptTraces.timelines[0].bars[0].kind must be one of task, state, transfer, activity, other, got "bar"',
      ],
      [
        (kept) => (kept.timelines[1].bars[2].failed = "yes"),
        'keptTraces.timelines[1].bars[2].failed must be true when present, got "yes"',
      ],
      [
        (kept) => (kept.timelines[0].links[0] = [0, 4]),
        "keptTraces.timelines[0].links[0][1] must be a whole number from 0 to 3 (an index into the timeline's bars), got 4",
      ],
      [
        (kept) => (kept.timelines[0].links[0] = 2),
        "keptTraces.timelines[0].links[0] must be [from, to], two bar indexes, got 2",
      ],
      // A chart of a billion rows from a few bytes: no more rows than bars.
      [
        (kept) => (kept.timelines[0].rows = 1e9),
        "keptTraces.timelines[0].rows must be a whole number from 0 to 4 (its bars: a row holds at least one), got 1000000000",
      ],
      [
        (kept) => (kept.timelines[0].lanes[1].rows = 3),
        "keptTraces.timelines[0].lanes[1].rows must be a whole number from 0 to 2 (the timeline's rows after its first, 2), got 3",
      ],
      [
        (kept) => (kept.timelines[0].bars = []),
        "keptTraces.timelines[0].rows must be a whole number from 0 to 0 (its bars: a row holds at least one), got 4",
      ],
      [
        (kept) => (kept.timelines[0].lanes = []),
        "keptTraces.timelines[0].bars[0].lane must be a whole number (an index into the timeline's lanes), and there is none to be, got 0",
      ],
      // More than the bounds it says it was made under.
      [
        (kept) => (kept.bounds.maxBars = 3),
        "keptTraces.timelines[0].bars holds 4 items, more than 3 (keptTraces.bounds.maxBars)",
      ],
      [
        (kept) => Object.assign(kept.bounds, { slowest: 0, failed: 1 }),
        "keptTraces.timelines holds 2 items, more than 1 (keptTraces.bounds: 0 slowest, 1 failed)",
      ],
      [(kept) => (kept.bounds.failed = "5"), 'keptTraces.bounds.failed must be a whole number >= 0, got "5"'],
      [(kept) => delete kept.leftOut, "keptTraces.leftOut must be {slowest, failed}, got undefined"],
      [(kept) => (kept.notFound = [3]), "keptTraces.notFound[0] must be a string, got 3"],
      [(kept) => (kept.timelines[1].traceId = null), "keptTraces.timelines[1].traceId must be a string, got null"],
      [
        (kept) => (kept.timelines[1].duration = Number.POSITIVE_INFINITY),
        "keptTraces.timelines[1].duration must be a number of microseconds >= 0, got Infinity",
      ],
      [(kept) => (kept.timelines = {}), "keptTraces.timelines must be an array of timelines, got an object"],
    ];
    for (const [change, message] of cases) {
      let caught: unknown;
      try {
        readBack(change);
      } catch (error) {
        caught = error;
      }
      expect(caught, message).toBeInstanceOf(TypeError);
      expect((caught as Error).message).toBe(message);
      expect((caught as { code?: string }).code).toBe("TJ_INVALID_DATA");
    }
    expect(() => reportDataFrom({ ...JSON.parse(JSON.stringify(data())), keptTraces: [] })).toThrow(
      "keptTraces must be {timelines, notFound, leftOut, bounds} (as the report wrote it), got an object",
    );
  });
});
