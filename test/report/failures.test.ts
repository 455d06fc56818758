/**
 * Failed tasks in the report: an application's task throws on a worker and errs on the scheduler
 * (with a dependent that never ran), and the report built from the exported files lists each
 * failed task once, with where and why it failed, and counts every failure the metrics saw. Why
 * comes from the failed attempt's `task.error`, else its `exception` event, else the task span's
 * status, so a trace written without taskjourney's own attribute still says why.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBreakdown } from "../../src/index.js";
import { failedTasks } from "../../src/report/failures.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { breakdownFromSpans, SpanIndex } from "../../src/report/from-trace.js";
import { renderHtmlReport, reportDataFrom } from "../../src/report/html.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import type { DecodedSpan } from "../../src/report/otlp-json.js";
import { runFailingApplication, runRetryingQueue } from "../helpers/application.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-failures-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

const LOAD_1 = {
  key: "load-1",
  prefix: "load",
  instance: "tcp://w1:1",
  kind: "compute",
  outcome: "error",
  state: "executing",
  error: "TypeError: no such file: load-1.csv",
  seconds: 2,
  attempts: 1,
};
const SUM_1 = { key: "sum-1", prefix: "sum", instance: "tcp://s:1", kind: "scheduler", outcome: "erred", seconds: 2.5 };

describe("failed tasks in the report", () => {
  beforeAll(() => runFailingApplication(directory), 60_000);

  it("lists each failed task once, earliest first, with where and why; counts every failure from the metrics", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([directory]));
    // load-1 failed on the worker and erred on the scheduler, in one trace: listed once, by the
    // worker's journey, which knows why. sum-1 erred on the scheduler only: no reason is known.
    expect(data.failures).toEqual([LOAD_1, SUM_1]);
    expect({ ...data.failureCounts }).toEqual({ "worker:error": 1, "scheduler:erred": 2 });
    // The failed execution's time is the `failed` lump, not useful work.
    expect(data.execute).toEqual({ failed: 1.5 });
  });

  it("without metrics: counts the failed journeys the spans hold", () => {
    const traces = fs
      .readdirSync(directory)
      .filter((name) => name.startsWith("traces-"))
      .map((name) => path.join(directory, name));
    const data = reportDataFromTelemetry(readTelemetryFiles(traces));
    expect(data.failures).toEqual([LOAD_1, SUM_1]);
    expect({ ...data.failureCounts }).toEqual({ "worker:error": 1, "scheduler:erred": 2 });
  });

  it("why, from the exception event or the status message when the trace has no task.error", () => {
    const spans = readTelemetryFiles([directory]).spans;
    const executing = spans.find((span) => span.name === "executing" && span.attributes["task.outcome"] === "error")!;
    expect(executing.exception).toEqual({ type: "TypeError", message: "no such file: load-1.csv" });
    expect(executing.statusMessage).toBe("no such file: load-1.csv");

    const withoutAttribute = spans.map((span): DecodedSpan => {
      if (span !== executing) return span;
      const attributes = { ...span.attributes };
      delete attributes["task.error"];
      return { ...span, attributes };
    });
    expect(failedTasks(new SpanIndex(withoutAttribute), 10).failures[0].error).toBe(
      "TypeError: no such file: load-1.csv",
    );
    // explain --from says why the same way.
    expect(formatBreakdown(breakdownFromSpans(withoutAttribute, "load-1")!)).toMatch(
      /└─ executing +1\.5 s {2}error: TypeError: no such file: load-1\.csv$/m,
    );

    const withoutEvent = withoutAttribute.map((span): DecodedSpan =>
      span.name === "executing" ? { ...span, exception: undefined } : span,
    );
    // The task span's status: the error's message, without its type.
    expect(failedTasks(new SpanIndex(withoutEvent), 10).failures[0].error).toBe("no such file: load-1.csv");
    // taskjourney's own status texts when it knew no reason are not reasons.
    const generic = withoutEvent.map((span): DecodedSpan =>
      span.statusCode === 2
        ? { ...span, statusMessage: span.name.startsWith("task ") ? "task ended in error" : "executing error" }
        : span,
    );
    expect(failedTasks(new SpanIndex(generic), 10).failures[0].error).toBeUndefined();
    expect(failedTasks(new SpanIndex(spans), 1)).toEqual({ failures: [LOAD_1], total: 2 });
  });

  it("the page shows the failed tasks first, why escaped; a task that failed among the slowest says why in its tree", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([directory]));
    data.failures!.push({ ...SUM_1, key: "<b>k</b>", error: "Error: </script><img src=x>" });
    const page = renderHtmlReport(data, { inlineEcharts: false });
    const section = /<section id="failures">[\s\S]*?<\/section>/.exec(page)![0];
    expect(page.indexOf('id="failures"')).toBeLessThan(page.indexOf('id="prefixes"'));
    expect(section).toContain(
      '<tr><td class="name">load-1</td><td class="name">load</td><td class="name">executing: error</td><td class="name">worker tcp://w1:1</td><td>2.0 s</td><td class="why">TypeError: no such file: load-1.csv</td></tr>',
    );
    expect(section).toContain(
      '<tr><td class="name">sum-1</td><td class="name">sum</td><td class="name">erred</td><td class="name">scheduler tcp://s:1</td><td>2.5 s</td><td class="why unknown">(no reason recorded)</td></tr>',
    );
    expect(section).toContain('<td class="name">&lt;b&gt;k&lt;/b&gt;</td>');
    expect(section).toContain("Error: &lt;/script&gt;&lt;img src=x&gt;");
    expect(section).toContain(
      "1 ended in error on workers, 2 erred on the scheduler. Listed: the 3 failed tasks known by key, earliest first",
    );
    expect(page).toMatch(/load-1 spent 2\.0 s on worker tcp:\/\/w1:1 \(ended in error\)/);
    expect(page).toMatch(/└─ executing +1\.5 s {2}error: TypeError: no such file: load-1\.csv/);

    const none = renderHtmlReport({ ...data, failures: [], failureCounts: {} }, { inlineEcharts: false });
    expect(none).not.toContain('id="failures"');
    const countedOnly = renderHtmlReport(
      { ...data, failures: [], failureCounts: { error: 3 } },
      { inlineEcharts: false },
    );
    expect(countedOnly).toContain(
      "3 ended in error on workers. No failed task is known by key (none among the traces), so none is listed.",
    );
  });

  it("from a summary: ReportData's failures as written, the cluster example's failed keys, reasons and erred count", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([directory]));
    const read = reportDataFrom(JSON.parse(JSON.stringify(data)));
    expect(read.failures).toEqual(data.failures);
    expect(read.failureCounts).toEqual({ "worker:error": 1, "scheduler:erred": 2 });
    // A failed attempt in a tree keeps its outcome and reason through JSON.
    expect(read.slowest![0].children.at(-1)).toEqual({
      name: "executing",
      seconds: 1.5,
      children: [],
      outcome: "error",
      error: "TypeError: no such file: load-1.csv",
    });

    const cluster = reportDataFrom({
      workload: "reduction",
      failed: ["square-3", "inc-7"],
      failures: [
        {
          key: "square-3",
          error:
            "ValueError: bad input\n    at square (file:///app/functions.mjs:12:9)\n    at run (file:///app/tasks.mjs:3:1)",
        },
      ],
      erred: 5,
      report: { rows: [], execute: {}, gather: {}, waitByPrefix: {} },
    });
    expect(cluster.failures).toEqual([
      {
        key: "square-3",
        prefix: "square",
        instance: "",
        kind: "compute",
        outcome: "error",
        error: "ValueError: bad input",
      },
      { key: "inc-7", prefix: "inc", instance: "", kind: "compute", outcome: "error" },
    ]);
    expect({ ...cluster.failureCounts }).toEqual({ error: 2, erred: 5 });
    expect(
      reportDataFrom({ workload: "reduction", failed: [], erred: 0, report: { rows: [] } }).failures,
    ).toBeUndefined();
    expect(() => reportDataFrom({ prefixes: [], failures: [{ key: 1 }] })).toThrow(
      /failures\[0\] must be a failure with a string key/,
    );
  });
});

describe("failed tasks of a job queue that retries", () => {
  const queue = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-retries-"));
  afterAll(() => fs.rmSync(queue, { recursive: true, force: true }));
  beforeAll(() => runRetryingQueue(queue), 60_000);

  it("lists only the job whose last word is a failure; a failed attempt retried to success is no failed task", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([queue]));
    // Job 2 failed on its first attempt and was retried to success; job 6 failed twice and for good.
    // Job 6 was tried twice: its attempts apart from the one failed task it is.
    expect(
      data.failures?.map((failure) => [failure.key, failure.kind, failure.outcome, failure.error, failure.attempts]),
    ).toEqual([["6", "compute", "dead", "Error: upstream said 503 (attempt 2)", 2]]);
    // Counted by role: the worker's failed attempts apart from the scheduler's failed job.
    expect({ ...data.failureCounts }).toEqual({ "worker:dead": 3, "scheduler:dead": 1 });
    const page = renderHtmlReport(data, { inlineEcharts: false });
    // One failed task, not four failures: three failed attempts, two of them retried (job 2's and job 6's first).
    expect(page).toContain("1 task failed (ended in dead); 3 attempts failed, 2 of them retried.");
    expect(page).toContain("<th>attempts</th>");
    // No transfers and no waits for dependencies here: left out, in one line saying so.
    expect(page).toContain(
      "Left out, as nothing applies: transfers between processes (none recorded); waiting for dependencies transferred from peers (none recorded).",
    );
    expect(page).not.toContain('id="chart-gather"');
    expect(page).not.toContain('id="chart-wait"');
  });
});
