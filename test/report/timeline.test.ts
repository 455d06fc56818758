/**
 * The kept traces' timelines (src/report/timeline.ts): which traces the report draws (its
 * slowest journeys' and failed tasks', bounded, the rest counted), each span's bar at its exact
 * offset from the trace's start, in a lane per process and a row per depth there, the links
 * between drawn spans, and the bounds on spans read and drawn. The fixture is the failing
 * application of test/helpers/application.ts, on fake clocks, exported to files and read back.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { SpanIndex } from "../../src/report/from-trace.js";
import { renderHtmlReport } from "../../src/report/html.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import type { DecodedSpan } from "../../src/report/otlp-json.js";
import { timelineCharts } from "../../src/report/timeline-page.js";
import { keptTraces } from "../../src/report/timeline.js";
import { runFailingApplication } from "../helpers/application.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-timeline-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

/** A span of trace `trace` on process `instance`, `start` to `end` in ms from 1,000 s. */
function span(
  trace: string,
  id: string,
  parent: string | undefined,
  name: string,
  instance: string,
  start: number,
  end: number,
  attributes: Record<string, string> = {},
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
    attributes,
    links: [],
    statusCode: 0,
    resource: { "service.instance.id": instance },
    scope: "taskjourney",
  };
}

describe("the kept traces' timelines", () => {
  beforeAll(() => runFailingApplication(directory), 60_000);

  it("draws each span of a kept trace at its offset, a lane per process, a row per depth", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([directory]));
    const kept = data.keptTraces!;
    // load-1 is the slowest journey and a failed task: one trace, both reasons. sum-1 erred on
    // the scheduler (never ran): its own trace.
    expect(kept.timelines.map((timeline) => [timeline.key, timeline.reasons])).toEqual([
      ["load-1", ["slowest #1", "failed"]],
      ["sum-1", ["failed"]],
    ]);
    expect([kept.notFound, kept.leftOut]).toEqual([[], { slowest: 0, failed: 0 }]);
    const [load] = kept.timelines;
    // The scheduler's journey (2.5 s from dispatch to erred) and the worker's (0.5 s waiting,
    // ready at once, 1.5 s executing that threw), both from 10 s on their fake clocks.
    expect(load.duration).toBe(2_500_000);
    expect(load.lanes).toEqual([
      { name: "tcp://s:1", first: 0, rows: 2 },
      { name: "tcp://w1:1", first: 2, rows: 2 },
    ]);
    expect(load.bars.map(({ lane, row, start, end, name, kind }) => [lane, row, start, end, name, kind])).toEqual([
      [0, 0, 0, 2_500_000, "task load", "task"],
      [0, 1, 0, 0, "waiting", "state"],
      [0, 1, 0, 2_500_000, "processing", "state"],
      [1, 2, 0, 2_000_000, "task load", "task"],
      [1, 3, 0, 500_000, "waiting", "state"],
      [1, 3, 500_000, 500_000, "ready", "state"],
      [1, 3, 500_000, 2_000_000, "executing", "state"],
    ]);
    // What failed, and why when the span says (not the words written when no reason is known).
    expect(load.bars.filter((bar) => bar.failed).map((bar) => [bar.name, bar.key, bar.error])).toEqual([
      ["task load", "load-1", undefined],
      ["task load", "load-1", "no such file: load-1.csv"],
      ["executing", undefined, "TypeError: no such file: load-1.csv"],
    ]);
    // The worker's task span links to the scheduler's state the task was sent from.
    expect(load.links).toEqual([[3, 2]]);
    expect([load.spans, load.elided, load.linksNotDrawn]).toEqual([7, 0, 0]);
    // sum-1's task span links to its dependency's, in load-1's trace: counted, not drawn.
    expect(kept.timelines[1].linksNotDrawn).toBe(1);
  });

  it("bounds the traces drawn, the spans read and drawn; counts what it leaves out and the keys no trace holds", () => {
    const spans: DecodedSpan[] = [];
    for (const trace of ["a", "b", "c"]) {
      const task = span(trace, `${trace}0`, undefined, "task job", "queue", 0, 1000, { "task.key": `job-${trace}` });
      spans.push(task, span(trace, `${trace}1`, `${trace}0`, "active", "queue", 0, 1000));
    }
    // Trace a: 500 activities of 1 ms under its active state, one after the other, on a worker.
    for (let n = 0; n < 500; n++) spans.push(span("a", `a-${n}`, "a1", "step", "worker-1", n, n + 1 + (n % 7)));
    const index = new SpanIndex(spans);
    const kept = keptTraces(
      index,
      { slowest: ["job-a", "job-gone", "job-b"], failed: ["job-c", "job-b"] },
      { slowest: 2, failed: 1, maxBars: 100, maxSpansRead: 300 },
    );
    // job-b is left out of the slowest (past 2), and of the failed (past 1); job-gone is in no trace.
    expect(kept.timelines.map((timeline) => [timeline.key, timeline.reasons])).toEqual([
      ["job-a", ["slowest #1"]],
      ["job-c", ["failed"]],
    ]);
    expect(kept.notFound).toEqual(["job-gone"]);
    expect(kept.leftOut).toEqual({ slowest: 1, failed: 1 });
    const [a] = kept.timelines;
    // 502 spans in the trace, 300 read (the task, its state, steps 0 to 297), 100 drawn: the task
    // span and its state first (though deeper in their process than the steps on the worker),
    // then the longest steps: the 42 of 7 ms (n % 7 = 6), the 42 of 6 ms, the first 14 of 5 ms.
    expect([a.spans, a.bars.length, a.elided]).toEqual([502, 100, 402]);
    expect(a.bars.slice(0, 2).map((bar) => bar.name)).toEqual(["task job", "active"]);
    const steps = a.bars.filter((bar) => bar.name === "step");
    const lengths = steps.map((bar) => bar.end - bar.start).sort((x, y) => y - x);
    expect(lengths).toEqual([
      ...Array<number>(42).fill(7000),
      ...Array<number>(42).fill(6000),
      ...Array<number>(14).fill(5000),
    ]);
    const fives = steps
      .filter((bar) => bar.end - bar.start === 5000)
      .map((bar) => bar.start)
      .sort((x, y) => x - y);
    expect(fives).toEqual(Array.from({ length: 14 }, (_, at) => (4 + 7 * at) * 1000).sort((x, y) => x - y));
    // Overlapping steps of one depth are packed into rows none of which overlaps itself.
    const byRow = new Map<number, Array<[number, number]>>();
    for (const bar of steps) byRow.set(bar.row, [...(byRow.get(bar.row) ?? []), [bar.start, bar.end]]);
    for (const intervals of byRow.values())
      for (let at = 1; at < intervals.length; at++)
        expect(intervals[at][0]).toBeGreaterThanOrEqual(intervals[at - 1][1]);
    expect(a.lanes).toEqual([
      { name: "queue", first: 0, rows: 2 },
      { name: "worker-1", first: 2, rows: byRow.size },
    ]);
  });

  it("on the page: a chart per kept trace, the states in the states chart's colours, bounded bytes", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([directory]));
    const html = renderHtmlReport(data, { inlineEcharts: false });
    expect(html).toContain('<section id="timelines">');
    expect(html).toContain('<div class="chart timeline" id="chart-timeline-0"></div>');
    expect(html).toContain('<div class="chart timeline" id="chart-timeline-1"></div>');
    expect(html).toContain("<h3>load-1 — slowest #1, failed; its trace 2.5 s</h3>");
    const charts = timelineCharts(data.keptTraces, ["waiting", "ready", "executing"]);
    const colors = Object.fromEntries(charts[0].series.map((series) => [series.name, series.color]));
    // Dask's states keep the page's colours; task spans one neutral colour.
    expect(colors).toEqual({
      "(task)": "#d0d7de",
      waiting: "#f2a93b",
      ready: "#6fa8dc",
      executing: "#6aa84f",
      processing: "#93c47d",
    });
    expect(charts[0].series.reduce((count, series) => count + series.bars.length, 0)).toBe(7);
    expect(charts[0].notes).toEqual({
      0: "task load: load-1",
      3: "task load: load-1 — no such file: load-1.csv",
      6: "TypeError: no such file: load-1.csv",
    });
  });

  it("draws the slowest traced journey's trace too when the slowest was not traced (the demo's summary says which)", () => {
    const spans: DecodedSpan[] = [];
    for (const trace of ["a", "b", "c"])
      spans.push(span(trace, `${trace}0`, undefined, "task job", "w", 0, 10, { "task.key": `job-${trace}` }));
    const index = new SpanIndex(spans);
    const drawn = (kept: ReturnType<typeof keptTraces>) =>
      kept.timelines.map((timeline) => [timeline.key, timeline.reasons]);
    // After the slowest, before the failed; job-x (the slowest) is in no trace.
    const kept = keptTraces(index, { slowest: ["job-x", "job-a"], failed: ["job-c"], traced: "job-b" });
    expect(drawn(kept)).toEqual([
      ["job-a", ["slowest #2"]],
      ["job-b", ["slowest traced"]],
      ["job-c", ["failed"]],
    ]);
    expect(kept.notFound).toEqual(["job-x"]);
    // One of the slowest already: drawn once, with both reasons.
    expect(drawn(keptTraces(index, { slowest: ["job-x", "job-a"], failed: [], traced: "job-a" }))).toEqual([
      ["job-a", ["slowest #2", "slowest traced"]],
    ]);
    // No slowest drawn at all: nor the slowest traced, counted as left out.
    const none = keptTraces(index, { slowest: ["job-x", "job-a"], failed: [], traced: "job-b" }, { slowest: 0 });
    expect([none.timelines, none.leftOut]).toEqual([[], { slowest: 3, failed: 0 }]);

    // From the demo's summary: its slowest (not traced) and its slowest traced task, whose tree it prints.
    const tree = (key: string, seconds: number) => ({
      key,
      prefix: "job",
      instance: "w",
      seconds,
      kind: "compute",
      children: [],
    });
    const summary = (traced: boolean) => ({
      workload: "reduction",
      report: {
        rows: [],
        slowest: [
          { key: "job-x", seconds: 2, traced, breakdown: tree("job-x", 2) },
          { key: "job-a", seconds: 1.5, traced: true, breakdown: tree("job-a", 1.5) },
        ],
        slowestTraced: { key: "job-b", seconds: 1, traced: true, breakdown: tree("job-b", 1) },
      },
    });
    const fromSummary = (traced: boolean) =>
      reportDataFromTelemetry({
        spans,
        metrics: [],
        summaries: [{ file: "summary.json", summary: summary(traced) }],
        files: ["summary.json", "traces.jsonl"],
      });
    const untraced = fromSummary(false);
    expect(untraced.slowestTraced?.key).toBe("job-b");
    expect(drawn(untraced.keptTraces!)).toEqual([
      ["job-a", ["slowest #2"]],
      ["job-b", ["slowest traced"]],
    ]);
    expect(renderHtmlReport(untraced, { inlineEcharts: false })).toContain(
      "<h3>job-b — slowest traced; its trace 10.0 ms</h3>",
    );
    // Its slowest traced: nothing more (it is slowest #1 there, had its spans been kept).
    const traced = fromSummary(true);
    expect(traced.slowestTraced).toBeUndefined();
    expect(drawn(traced.keptTraces!)).toEqual([["job-a", ["slowest #2"]]]);
  });

  it("refuses a bound that is not a whole number, naming it", () => {
    const index = new SpanIndex([span("a", "a0", undefined, "task job", "queue", 0, 1, { "task.key": "job" })]);
    expect(() => keptTraces(index, { slowest: ["job"], failed: [] }, { maxBars: -1 })).toThrow(
      "timelines.maxBars must be a whole number >= 0 (default 300), got -1",
    );
    expect(() =>
      reportDataFromTelemetry(
        { spans: [...index.spans], metrics: [], summaries: [], files: ["x"] },
        { timelines: { slowest: 1.5 } },
      ),
    ).toThrow("timelines.slowest must be a whole number >= 0 (default 5), got 1.5");
  });

  it("a trace of hundreds of spans adds a bounded number of bytes to the page", () => {
    const spans: DecodedSpan[] = [span("t", "t0", undefined, "task job", "queue", 0, 100_000, { "task.key": "job" })];
    for (let n = 0; n < 5000; n++)
      spans.push(span("t", `s${n}`, "t0", `activity-${n % 20}`, `worker-${n % 4}`, n, n + 3));
    const data = reportDataFromTelemetry({ spans, metrics: [], summaries: [], files: ["crafted"] });
    const [timeline] = data.keptTraces!.timelines;
    expect([timeline.spans, timeline.bars.length, timeline.elided]).toEqual([5001, 300, 4701]);
    const json = JSON.stringify(timelineCharts(data.keptTraces, []));
    expect(json.length).toBeLessThan(300 * 45);
  });
});
