/**
 * The report of an application with a state machine of its own: the job queue of
 * examples/job-queue (its own machine, JOB_MACHINE, on the queue and on two workers) exports
 * through taskjourney/sdk's fileDirectory, and `taskjourney report --from` those files shows
 * the queue's own states, with quantiles of its executing state (`active`) found in the data,
 * and the state columns in the order the jobs lived them. The page opens in headless Chromium
 * (skipped without it, except in CI).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { TaskJourneys } from "../../src/index.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import { formatReportTables } from "../../src/report/text.js";
import { startTelemetry } from "../../src/sdk.js";
import {
  instrumentQueue,
  instrumentWorker,
  JOB_MACHINE,
  JOB_RUNTIME,
  type JobJourneyState,
} from "../../examples/job-queue/instrument.js";
import { startCluster } from "../../examples/job-queue/workload.js";
import { findChromium } from "../helpers/chromium.js";
import { openReportOffline } from "../helpers/report-page.js";

const ROOT = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const OUTPUT = path.join(ROOT, "test-output", "report-job-queue");
const chromium = findChromium();
const inCi = process.env.CI === "true";
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-report-job-queue-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

/** The example's workload, the queue and each worker a process of its own exporting to `into`. */
async function runJobQueue(into: string, ratio: number): Promise<void> {
  const start = (role: "worker" | "scheduler", instance: string) =>
    startTelemetry({
      role,
      instance,
      fileDirectory: into,
      registerGlobal: false,
      exporters: { traces: "otlp", metrics: "otlp" },
      // keepErrors (the default) keeps the failed jobs' journeys even at ratio 0.
      journeys: {
        machine: JOB_MACHINE,
        runtime: JOB_RUNTIME,
        sampling: { ratio, keepSlowerThan: 0 },
      },
    });
  const queue = await start("scheduler", "queue");
  const cluster = startCluster();
  instrumentQueue(cluster.queue, queue.journeys as unknown as TaskJourneys<"scheduler", JobJourneyState>);
  const workers = [];
  for (const worker of cluster.workers) {
    const telemetry = await start("worker", worker.name);
    instrumentWorker(worker, telemetry.journeys as unknown as TaskJourneys<"worker", JobJourneyState>);
    workers.push(telemetry);
  }
  for (const worker of cluster.workers) worker.start();
  cluster.submit();
  await cluster.queue.drained();
  cluster.stop();
  await Promise.all([queue.shutdown(), ...workers.map((telemetry) => telemetry.shutdown())]);
}

/** Each row's count of visits to the measured state, by prefix. */
const counts = (rows: ReadonlyArray<{ prefix: string; count: number }>) =>
  Object.fromEntries(rows.map((row) => [row.prefix, row.count]));

describe("the report of a job queue with its own state machine", () => {
  beforeAll(async () => {
    for (const ratio of [1, 0]) await runJobQueue(path.join(directory, `ratio-${ratio}`), ratio);
  }, 60_000);

  for (const ratio of [1, 0]) {
    it(`ratio ${ratio}: quantiles of the queue's executing state (active) on both sides, found in the data`, () => {
      const telemetryDir = path.join(directory, `ratio-${ratio}`);
      const data = reportDataFromTelemetry(readTelemetryFiles([telemetryDir], { metrics: true }));

      // Every attempt executed: three fetches, the merge, flaky twice (a retry), broken once.
      expect(data.durationOf).toBe("active");
      expect(counts(data.prefixes)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
      expect(data.schedulerDurationOf).toBe("active");
      expect(counts(data.schedulerPrefixes!)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
      for (const row of [...data.prefixes, ...data.schedulerPrefixes!]) {
        // Each handler sleeps 5 ms (a millisecond clock may read 4): the quantiles are durations of real runs, in order.
        expect(row.p50, row.prefix).toBeGreaterThan(0.003);
        expect(row.p90).toBeGreaterThanOrEqual(row.p50);
        expect(row.p99).toBeGreaterThanOrEqual(row.p90);
      }
      // The queue's own states by prefix: only the merge waited for children, only flaky backed off.
      const queueStates = Object.fromEntries(
        data.schedulerPrefixes!.map((row) => [row.prefix, Object.keys(row.stateSeconds).sort()]),
      );
      expect(queueStates).toEqual({
        fetch: ["active", "waiting"],
        merge: ["active", "waiting", "waiting-children"],
        flaky: ["active", "delayed", "waiting"],
        broken: ["active", "waiting"],
      });
      expect(data.description).not.toContain("no state to measure");
      // The order JOB_MACHINE declares (delayed before active), whichever journeys were sampled: the
      // metrics give each prefix's states in that order.
      expect(data.schedulerStates).toEqual(["waiting-children", "waiting", "delayed", "active"]);
      expect(data.states).toEqual(["active"]);

      // The failures in the queue's own terminal state, counted by role: broken on the queue, broken and
      // flaky's first attempt on their workers. Listed is the job whose last word is a failure (broken),
      // once, from the worker that knows why; flaky was retried to success and is not a failed job.
      expect(data.failureCounts).toEqual({ "scheduler:failed": 1, "worker:failed": 2 });
      const failures = data.failures!.map((failure) => [
        failure.prefix,
        failure.kind,
        failure.outcome,
        failure.state,
        failure.error,
      ]);
      expect(failures.sort()).toEqual([["broken", "compute", "failed", "active", "Error: always"]]);
    });
  }

  it("as text, both tables with the queue's measured state and its own column order", () => {
    const data = reportDataFromTelemetry(readTelemetryFiles([path.join(directory, "ratio-1")], { metrics: true }));
    const text = formatReportTables(data);
    // A machine of its own: the workers' journeys are attempts, the queue's tasks.
    const [attempts, scheduler] = text.split(
      "\n\nTasks (the scheduling process's journeys, one a task, retries included)\n",
    );
    const workers = attempts.slice(attempts.indexOf("\n") + 1);
    const header = (table: string) => table.split("\n")[1].trim().split(/\s+/);
    expect(workers.split("\n")[0].trim()).toMatch(/^active duration\s+time by state$/);
    expect(header(workers)).toEqual(["prefix", "visits", "p50", "p90", "p99", "active"]);
    expect(header(scheduler)).toEqual([
      "prefix",
      "visits",
      "p50",
      "p90",
      "p99",
      "waiting-children",
      "waiting",
      "delayed",
      "active",
    ]);
    expect(scheduler.split("\n")[0].trim()).toMatch(/^active duration\s+task-seconds by state$/);
    expect(scheduler).toContain("visits and quantiles: the visits to active; task-seconds: summed over the tasks");
    // The rows are the data's: flaky's two attempts, the totals of seven visits.
    const row = (table: string, prefix: string) =>
      table
        .split("\n")
        .find((line) => line.startsWith(`${prefix} `))!
        .trim()
        .split(/\s{2,}/);
    expect(row(scheduler, "flaky")[1]).toBe("2");
    expect(row(scheduler, "total")[1]).toBe("7");
    // broken failed for good; flaky's first attempt was retried.
    expect(text).toContain("failed: 1 task failed (ended in failed); 2 attempts failed, 1 of them retried");
    expect(text).toContain("ended: tasks: 5 completed, 1 failed; attempts: 5 completed, 2 failed");
  });

  it("from the spans alone (no metrics), the same executing state and its execute breakdown", () => {
    const telemetry = readTelemetryFiles([path.join(directory, "ratio-1")], { metrics: true });
    const data = reportDataFromTelemetry({ ...telemetry, metrics: [] });
    expect(data.durationOf).toBe("active");
    expect(counts(data.prefixes)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
    expect(counts(data.schedulerPrefixes!)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
    // The merge read its children's results inside its execution (`active`), as an activity of its
    // own (an in-memory read: a millisecond clock may see it take no time).
    expect(Object.keys(data.execute)).toContain("read-children");
    expect(Object.values(data.execute).reduce((sum, seconds) => sum + seconds, 0)).toBeGreaterThan(0.003 * 7);
    // No metrics, so no declared order: the order the jobs lived.
    expect(data.schedulerStates).toEqual(["waiting-children", "waiting", "active", "delayed"]);
  });

  it("from the metrics alone (no spans), the workers' executing state is the one whose time the execute ledgers took", () => {
    const telemetry = readTelemetryFiles([path.join(directory, "ratio-1")], { metrics: true });
    const data = reportDataFromTelemetry({ ...telemetry, spans: [] });
    expect([data.durationOf, data.schedulerDurationOf]).toEqual(["active", "active"]);
    expect(counts(data.prefixes)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
    expect(counts(data.schedulerPrefixes!)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
    // No spans, and still the declared order: the metrics' points give it.
    expect(data.schedulerStates).toEqual(["waiting-children", "waiting", "delayed", "active"]);
  });

  it("--state names the measured state; one the data does not have is an error naming those it has", async () => {
    const telemetryDir = path.join(directory, "ratio-1");
    const data = reportDataFromTelemetry(readTelemetryFiles([telemetryDir], { metrics: true }), { state: "waiting" });
    // The workers have no waiting state: they keep the one found in the data.
    expect([data.durationOf, data.schedulerDurationOf]).toEqual(["active", "waiting"]);
    expect(counts(data.schedulerPrefixes!)).toEqual({ fetch: 3, merge: 1, flaky: 2, broken: 1 });
    const printed: string[] = [];
    const code = await main(
      ["report", "--from", telemetryDir, "--state", "executing", "--out", path.join(directory, "unused.html")],
      { out: (text) => printed.push(text), err: (text) => printed.push(text) },
    );
    expect(code).toBe(1);
    expect(printed.join("")).toBe(
      'taskjourney: no state "executing" in the data to measure; its states: active, delayed, waiting, waiting-children\n',
    );
    printed.length = 0;
    expect(
      await main(["report", "--from", telemetryDir, "--state", " "], {
        out: (text) => printed.push(text),
        err: (text) => printed.push(text),
      }),
    ).toBe(2);
    expect(printed.join("")).toContain("--state takes a state's name");
  });

  it.skipIf(chromium === undefined && !inCi)(
    "the page renders offline with the queue's own state columns and no console error",
    async () => {
      expect(chromium, "Chromium is required in CI: apt-get install -y chromium").toBeDefined();
      const telemetryDir = path.join(directory, "ratio-1");
      fs.mkdirSync(OUTPUT, { recursive: true });
      const page = path.join(OUTPUT, "report.html");
      const printed: string[] = [];
      const code = await main(["report", "--from", telemetryDir, "--out", page, "--title", "job queue"], {
        out: (text) => printed.push(text),
        err: (text) => printed.push(text),
      });
      expect(printed.join("")).toBe(`wrote ${page}\n`);
      expect(code).toBe(0);
      const html = fs.readFileSync(page, "utf8");
      expect(html).toContain(
        "<th>p99</th><th>waiting-children</th><th>waiting</th><th>delayed</th><th>active</th></tr>",
      );
      expect(html).toContain("visits and quantiles: the visits to active; task-seconds by state:");

      const { state, problems, requests } = await openReportOffline(
        chromium!,
        page,
        path.join(OUTPUT, "report.png"),
        path.join(directory, "profile"),
      );
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
      expect(state.title).toBe("job queue");
      // The worker and queue prefix tables: a row per job name and a total, none empty.
      const prefixTables = state.tables.filter((table) => table.className === "prefixes");
      expect(prefixTables.map((table) => table.rows)).toEqual([5, 5]);
      for (const table of prefixTables) expect([table.emptyRows, table.placeholders]).toEqual([0, 0]);
      expect(state.text).toContain("visits to active;");
      expect(state.failures.map((row) => row[2])).toEqual(["active: failed"]);
      const statesChart = state.charts.find((chart) => chart.id === "chart-states")!;
      expect(statesChart.inked).toBeGreaterThan(500);
      // No transfers or waits for dependencies in a job queue: their sections are left out, in one
      // line; every chart left is drawn.
      expect(state.charts.map((chart) => chart.id)).toEqual([
        "chart-states",
        "chart-execute",
        "chart-slowest",
        ...state.timelines.map((timeline) => timeline.id),
      ]);
      // A timeline of each kept trace: the 5 slowest journeys' and the failed one's, each across
      // the queue and the workers that ran it, the queue's own states among its bars (read from each
      // chart's option), every one drawn. A trace chosen twice is drawn once with both reasons: two
      // attempts of one job (a retry) are two journeys of one trace, and may both be among the
      // slowest (a CI run drew 4 timelines so). Every reason is on exactly one timeline.
      const headings = [...state.text.matchAll(/\n\S+ — ([^;\n]+); its trace /g)].map((match) => match[1]);
      expect(headings.length).toBe(state.timelines.length);
      expect(
        headings
          .flatMap((heading) => heading.split(", "))
          .filter((reason) => reason !== "slowest traced")
          .sort(),
      ).toEqual(["failed", "slowest #1", "slowest #2", "slowest #3", "slowest #4", "slowest #5"]);
      expect(state.timelines.length).toBeLessThanOrEqual(6);
      for (const timeline of state.timelines) {
        expect(timeline.lanes[0], timeline.id).toBe("queue");
        expect(
          timeline.lanes.slice(1).every((lane) => /^worker-\d$/.test(lane)),
          timeline.id,
        ).toBe(true);
        expect(timeline.series.slice(0, 2), timeline.id).toEqual(["(task)", "active"]);
        expect(timeline.bars, timeline.id).toBeGreaterThanOrEqual(5);
        expect(timeline.links, timeline.id).toBeGreaterThanOrEqual(1);
        expect(state.charts.find((chart) => chart.id === timeline.id)!.inked, timeline.id).toBeGreaterThan(2000);
      }
      const failedKey = state.failures[0][0];
      expect(state.text).toMatch(new RegExp(`\\n${failedKey} — (slowest #\\d, )?failed; its trace `));
      // Every job waited in the queue's own waiting state (or for its children): on every timeline.
      for (const timeline of state.timelines)
        expect(
          timeline.series.some((name) => name === "waiting" || name === "waiting-children"),
          timeline.id,
        ).toBe(true);
      for (const chart of state.charts) expect(chart.inked, chart.id).toBeGreaterThan(500);
      expect(state.text).toContain(
        "Left out, as nothing applies: transfers between processes (none recorded); waiting for dependencies transferred from peers (none recorded).",
      );
      // The queue's own words: tasks and attempts, how they ended, none of Dask's.
      expect(state.text).toContain("1 task failed (ended in failed); 2 attempts failed, 1 of them retried.");
      expect(state.text).toContain("tasks: 5 completed, 1 failed; attempts: 5 completed, 2 failed.");
      expect(state.text).toContain("Longest in active");
      for (const word of ["processing", "gather", "Gather", "scheduler", "executing"])
        expect(state.text.match(new RegExp(`.{0,60}${word}.{0,60}`, "g")) ?? [], word).toEqual([]);
      // The workers are named by the example "worker-1", "worker-2": only there may the word appear.
      expect(state.text.replace(/worker-\d/g, "").match(/.{0,60}worker.{0,60}/g) ?? []).toEqual([]);
      // Every activity on the page explained, the merge's own read-children too.
      expect(state.text).toContain("Activities on this page");
      expect(state.text).toContain("read-children");
      expect(state.text).toMatch(/other\s+the part of a state's time that no metered activity claimed/);
    },
    90_000,
  );
});
