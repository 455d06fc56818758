/**
 * A report for any machine: the job-queue example's machine (JOB_MACHINE) and a hand-made one,
 * recorded on fake clocks through taskjourney/sdk into files, read back as `taskjourney report`
 * reads them. The declared state order whatever was sampled; failures per task, attempts apart;
 * how journeys ended (cancelled and removed ones too); the slowest by total and by the executing
 * state; sections that do not apply left out with one line why; no Dask word on the page; no
 * colour twice in a chart; every activity on the page explained; the scheduler's task-seconds.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineMachine, type TaskJourneys } from "../../src/index.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { renderHtmlReport, type ReportData } from "../../src/report/html.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import { formatReportTables } from "../../src/report/text.js";
import { activityMeaning } from "../../src/report/glossary.js";
import { startTelemetry } from "../../src/sdk.js";
import { JOB_MACHINE, type JobJourneyState } from "../../examples/job-queue/instrument.js";
import { FakeClock } from "../helpers/clock.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-any-machine-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

type Queue = TaskJourneys<"scheduler", JobJourneyState>;
type Runner = TaskJourneys<"worker", JobJourneyState>;

/**
 * The job queue's two sides on fake clocks, times in seconds after 100:
 * resize-1 runs 2 s (1 s of it `thumbnail`); email-2 fails three attempts of 0.5 s with 10 s
 * backoffs between (a job retried twice then failing: 1 failed task, 3 attempts, 2 retried);
 * merge-3 waits 1 s for its children, runs 0.25 s; resize-4 runs 3 s, the slowest run.
 */
async function runQueue(into: string, ratio: number): Promise<void> {
  const clock = new FakeClock(100);
  const start = (role: "worker" | "scheduler", instance: string) =>
    startTelemetry({
      role,
      instance,
      fileDirectory: into,
      registerGlobal: false,
      exporters: { traces: "otlp", metrics: "otlp" },
      // One epoch for both sides' fake clock, as two processes' clocks agree: without it each
      // side's origin is the wall clock at its start, milliseconds apart, and a worker's span
      // would end that much after the queue's (its parent ends no earlier: ended-before-result).
      journeys: {
        machine: JOB_MACHINE,
        runtime: { clock: clock.now, timeOrigin: 1_700_000_000 },
        sampling: { ratio, keepSlowerThan: 0 },
      },
    });
  const queueTelemetry = await start("scheduler", "queue");
  const runnerTelemetry = await start("worker", "runner-1");
  const queue = queueTelemetry.journeys as unknown as Queue;
  const runner = runnerTelemetry.journeys as unknown as Runner;
  const run = (job: number, name: string, seconds: number, fails: boolean, activity?: number) => {
    const out: Record<string, string> = {};
    queue.transition(job, "waiting", "active");
    queue.inject(job, out);
    runner.describe(job, { prefix: name });
    runner.parent(job, out);
    runner.transition(job, "waiting", "active");
    const ledger = runner.execute(job);
    if (activity !== undefined) ledger.meter("thumbnail", () => clock.advance(activity));
    clock.advance(seconds - (activity ?? 0));
    if (fails) ledger.end("failed", new Error("SMTP said 451"));
    else ledger.end("completed");
    const back: Record<string, string> = {};
    runner.inject(job, back);
    queue.returned(job, back);
  };
  const add = (job: number, name: string, children = false) => {
    queue.describe(job, { prefix: name });
    queue.transition(job, "added", children ? "waiting-children" : "waiting");
  };

  add(1, "resize");
  clock.advance(0.5);
  run(1, "resize", 2, false, 1);
  queue.transition(1, "active", "completed");

  add(2, "email");
  for (let attempt = 1; attempt <= 3; attempt++) {
    clock.advance(0.25);
    run(2, "email", 0.5, true);
    if (attempt === 3) {
      queue.transition(2, "active", "failed", undefined, new Error("SMTP said 451"));
      break;
    }
    queue.transition(2, "active", "delayed", undefined, new Error("SMTP said 451"));
    clock.advance(10);
    queue.transition(2, "delayed", "waiting");
  }

  add(3, "merge", true);
  clock.advance(1);
  queue.transition(3, "waiting-children", "waiting");
  run(3, "merge", 0.25, false);
  queue.transition(3, "active", "completed");

  add(4, "resize");
  run(4, "resize", 3, false);
  queue.transition(4, "active", "completed");
  await Promise.all([queueTelemetry.shutdown(), runnerTelemetry.shutdown()]);
}

/** The page's visible text: no script, style or markup. */
function visibleText(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<style[\s\S]*?<\/style>/g, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** The chart data the page embeds. */
function chartData(html: string): {
  states: { series: Array<{ name: string; color: string }> };
  wait: { series: Array<{ name: string; color: string }> };
  slowest: { children: Array<{ name: string; itemStyle: { color: string } }> } | null;
} {
  const json = /<script type="application\/json" id="taskjourney-data">([\s\S]*?)<\/script>/.exec(html)![1];
  return JSON.parse(json);
}

describe("the report of the job-queue example's machine", () => {
  const read = (ratio: number) =>
    reportDataFromTelemetry(readTelemetryFiles([path.join(directory, `queue-${ratio}`)], { metrics: true }), {
      generatedAt: "2026-12-05T00:00:00Z",
    });
  beforeAll(async () => {
    for (const ratio of [1, 0]) await runQueue(path.join(directory, `queue-${ratio}`), ratio);
  }, 60_000);

  it("the declared state order, the same whichever journeys were sampled, from the metrics alone too", () => {
    // Declared: added, waiting-children, waiting, delayed, active, completed, failed (the jobs lived
    // delayed after active: the columns follow the declaration, not the order lived).
    const declared = ["waiting-children", "waiting", "delayed", "active"];
    for (const ratio of [1, 0]) {
      const data = read(ratio);
      expect(data.schedulerStates, `ratio ${ratio}`).toEqual(declared);
      const telemetry = readTelemetryFiles([path.join(directory, `queue-${ratio}`)], { metrics: true });
      expect(
        reportDataFromTelemetry({ ...telemetry, spans: [] }).schedulerStates,
        `ratio ${ratio}, metrics only`,
      ).toEqual(declared);
    }
    const text = formatReportTables(read(0));
    const scheduler = text.slice(text.indexOf("Tasks ("));
    expect(scheduler.split("\n")[2].trim().split(/\s+/)).toEqual([
      "prefix",
      "visits",
      "p50",
      "p90",
      "p99",
      ...declared,
    ]);
  });

  it("failures per task, attempts apart: 1 failed task, 3 failed attempts, 2 of them retried", () => {
    const data = read(1);
    expect({ ...data.failureCounts }).toEqual({ "scheduler:failed": 1, "worker:failed": 3 });
    expect(data.failures!.map((failure) => [failure.key, failure.outcome, failure.attempts, failure.error])).toEqual([
      ["2", "failed", 3, "Error: SMTP said 451"],
    ]);
    const text = formatReportTables(data);
    expect(text).toContain("failed: 1 task failed (ended in failed); 3 attempts failed, 2 of them retried");
    expect(text).toContain("ended: tasks: 3 completed, 1 failed; attempts: 3 completed, 3 failed");
    const page = renderHtmlReport(data, { inlineEcharts: false });
    expect(page).toContain("1 task failed (ended in failed); 3 attempts failed, 2 of them retried.");
    expect(page).toContain("tasks: 3 completed, 1 failed; attempts: 3 completed, 3 failed.");
  });

  it("the slowest by total (the backoffs of email) and by the executing state (the slowest runs)", () => {
    const data = read(1);
    // By total: the runner's attempts, resize-4's 3 s run first.
    expect(data.slowest!.map((breakdown) => [breakdown.key, breakdown.seconds])).toEqual([
      ["4", 3],
      ["1", 2],
      ["2", 0.5],
      ["2", 0.5],
      ["2", 0.5],
      ["3", 0.25],
    ]);
    expect(data.slowestIn!.state).toBe("active");
    expect(data.slowestIn!.journeys.map(({ key, seconds }) => [key, seconds])).toEqual([
      ["4", 3],
      ["1", 2],
      ["2", 0.5],
      ["2", 0.5],
      ["2", 0.5],
      ["3", 0.25],
    ]);
    const text = formatReportTables(data);
    expect(text).toContain("slowest by total: 4 3.0 s, 1 2.0 s, 2 500.0 ms, 2 500.0 ms, 2 500.0 ms");
    expect(text).toContain("longest in active: 4 3.0 s, 1 2.0 s, 2 500.0 ms, 2 500.0 ms, 2 500.0 ms");
  });

  it("the queue side alone: slowest by total is email's backoffs, by active its runs", async () => {
    const telemetry = readTelemetryFiles([path.join(directory, "queue-1")], { metrics: true });
    const onlyQueue = (file: string) => path.basename(file).includes("-scheduler-");
    const data = reportDataFromTelemetry({
      ...telemetry,
      files: telemetry.files.filter(onlyQueue),
      spans: telemetry.spans.filter((span) => span.resource["taskjourney.role"] === "scheduler"),
      metrics: telemetry.metrics.filter((point) => point.resource["taskjourney.role"] === "scheduler"),
    });
    expect(data.slowest![0].key).toBe("2");
    expect(data.slowest![0].seconds).toBe(0.25 + 3 * 0.5 + 2 * 0.25 + 2 * 10);
    expect(data.slowestIn!.journeys.map(({ key, seconds }) => [key, seconds])).toEqual([
      ["4", 3],
      ["1", 2],
      ["2", 0.5],
      ["3", 0.25],
    ]);
    // Its one failed task was tried three times, by its visits to active.
    expect(data.failures!.map((failure) => [failure.key, failure.attempts])).toEqual([["2", 3]]);
    const page = renderHtmlReport(data, { inlineEcharts: false });
    expect(page).toContain("<h2>Slowest task: 2</h2>");
    expect(page).toContain("<summary>4 — 3.0 s in active (3.0 s in all)</summary>");
    expect(page).toContain("<summary>2 — 500.0 ms in active (22.3 s in all) (failed)</summary>");
  });

  it("the page: no Dask word, sections that do not apply left out in one line, task-seconds, every activity explained", () => {
    const data = read(1);
    const page = renderHtmlReport(data, { inlineEcharts: false });
    const text = visibleText(page);
    for (const word of ["processing", "gather", "Gather", "scheduler", "worker", "executing"])
      expect(text.match(new RegExp(`.{0,60}${word}.{0,60}`, "g")) ?? [], word).toEqual([]);
    expect(text).toContain(
      "Left out, as nothing applies: transfers between processes (none recorded); waiting for dependencies transferred from peers (none recorded).",
    );
    expect(page).not.toContain('id="chart-gather"');
    expect(page).not.toContain('id="chart-wait"');
    expect(page).toContain("<h2>Execute: where active time went</h2>");
    // The runner's attempts are one visit each: the longest in active are the slowest, said once.
    expect(page).toContain("The same journeys as the slowest above: each of them is its time in active.");
    expect(page).toContain('<th colspan="4">task-seconds by state</th>');
    expect(text).toContain("task-seconds by state: each task's seconds in the state, summed over the prefix's tasks");
    // The glossary: every activity the page shows, once, with what it means.
    const glossary = [...page.matchAll(/<dt>([^<]*)<\/dt><dd>([^<]*)<\/dd>/g)].map((match) => [match[1], match[2]]);
    // The lump of the failed attempts' time, apart from the machine's state `failed`.
    expect(glossary.map(([name]) => name)).toEqual(["failed (lump)", "other", "thumbnail"]);
    expect(glossary[2][1]).toBe("an activity the application metered under this name");
    expect(glossary[0][1]).toBe(activityMeaning("failed"));
    expect(Object.keys(data.execute).sort()).toEqual(["failed", "other", "thumbnail"]);
  });
});

/** A hand-made machine with two ways not to run: cancelled (by the user) and removed (expired). */
const SHOP = defineMachine({
  states: ["placed", "queued", "packing", "retry", "shipped", "lost", "cancelled", "removed"],
  transitions: {
    placed: ["queued"],
    queued: ["packing", "cancelled", "removed"],
    packing: ["shipped", "lost", "retry"],
    retry: ["queued"],
  },
  terminal: { success: "shipped", failure: "lost", cancelled: ["cancelled", "removed"] },
  initial: "placed",
  queued: "queued",
  executing: "packing",
});

describe("the report of a hand-made machine recorded on its scheduler side only", () => {
  const into = path.join(directory, "shop");
  beforeAll(async () => {
    const clock = new FakeClock(50);
    const telemetry = await startTelemetry({
      role: "scheduler",
      instance: "shop",
      fileDirectory: into,
      registerGlobal: false,
      exporters: { traces: "otlp", metrics: "otlp" },
      journeys: { machine: SHOP, clock: clock.now, sampling: { ratio: 1, keepSlowerThan: 0 } },
    });
    const shop = telemetry.journeys as unknown as TaskJourneys<"scheduler", (typeof SHOP.states)[number]>;
    for (const order of ["book-1", "book-2", "book-3", "lamp-1"]) shop.transition(order, "placed", "queued");
    clock.advance(1);
    shop.transition("book-1", "queued", "packing");
    clock.advance(2);
    shop.transition("book-1", "packing", "shipped");
    shop.transition("book-2", "queued", "cancelled");
    clock.advance(4);
    shop.transition("book-3", "queued", "removed");
    shop.transition("lamp-1", "queued", "removed");
    await telemetry.shutdown();
  }, 60_000);

  it("cancelled and removed orders shown; declared order; no Dask name where no state was measured", () => {
    const telemetry = readTelemetryFiles([into], { metrics: true });
    for (const data of [reportDataFromTelemetry(telemetry), reportDataFromTelemetry({ ...telemetry, spans: [] })]) {
      expect({ ...data.outcomes }).toEqual({
        "scheduler:shipped": 1,
        "scheduler:cancelled": 1,
        "scheduler:removed": 2,
      });
      expect(data.schedulerStates).toEqual(["queued", "packing"]);
      expect(formatReportTables(data)).toContain("ended: tasks: 2 removed, 1 cancelled, 1 shipped");
      const text = visibleText(renderHtmlReport(data, { inlineEcharts: false }));
      expect(text).toContain("tasks: 2 removed, 1 cancelled, 1 shipped.");
      for (const word of ["processing", "gather", "Gather", "scheduler", "worker", "executing"])
        expect(text, word).not.toContain(word);
    }
    // Metrics alone, without execute ledgers: no state to measure is found, and the page says so
    // rather than naming Dask's `processing`.
    const metricsOnly = reportDataFromTelemetry({ ...telemetry, spans: [] });
    expect(metricsOnly.schedulerDurationOf).toBeUndefined();
    const page = renderHtmlReport(metricsOnly, { inlineEcharts: false });
    expect(page).toContain("visits and quantiles: no state to measure found in the data (give one with --state)");
  });
});

describe("the page's charts and glossary for any data", () => {
  const row = (prefix: string, stateSeconds: Record<string, number>) => ({
    prefix,
    count: 1,
    p50: 1,
    p90: 1,
    p99: 1,
    stateSeconds,
  });
  const base: ReportData = {
    title: "t",
    generatedAt: "2026-12-05T00:00:00Z",
    prefixes: [],
    execute: {},
    gather: {},
    wait: {},
  };

  it("never repeats a colour within a chart: fourteen waiting activities, states Dask's and not", () => {
    const activities = Array.from({ length: 14 }, (_, index) => `activity-${index}`);
    const page = renderHtmlReport(
      {
        ...base,
        prefixes: [
          row("a", { waiting: 1, executing: 2, packing: 3, "no-worker": 1, queued: 1, "long-running": 1 }),
          row("b", Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`state-${index}`, index + 1]))),
        ],
        wait: { a: Object.fromEntries(activities.map((name, index) => [name, index + 1])) },
      },
      { inlineEcharts: false },
    );
    const data = chartData(page);
    const states = data.states.series.map((series) => series.color);
    expect(states).toHaveLength(26);
    expect(new Set(states).size).toBe(26);
    // Dask's states keep their colours.
    expect(data.states.series.find((series) => series.name === "executing")!.color).toBe("#6aa84f");
    const waits = data.wait.series.map((series) => series.color);
    expect(waits).toHaveLength(14);
    expect(new Set(waits).size).toBe(14);
    for (const color of [...states, ...waits]) expect(color).toMatch(/^#[0-9a-f]{6}$/);
  });

  it("explains every activity on a Dask page: executor, thread-noncpu, other, and the fetches' activities", () => {
    const page = renderHtmlReport(
      {
        ...base,
        prefixes: [row("inc", { executing: 2 })],
        execute: { executor: 3, "thread-cpu": 1, "thread-noncpu": 0.5, other: 0.25 },
        gather: { network: 1 },
        wait: { inc: { dependencies: 1, "queued (busy)": 0.5 } },
      },
      { inlineEcharts: false },
    );
    const glossary = new Map(
      [...page.matchAll(/<dt>([^<]*)<\/dt><dd>([^<]*)<\/dd>/g)].map((match) => [match[1], match[2]]),
    );
    expect([...glossary.keys()]).toEqual([
      "dependencies",
      "executor",
      "network",
      "other",
      "queued (busy)",
      "thread-cpu",
      "thread-noncpu",
    ]);
    for (const [name, meaning] of glossary)
      expect(meaning, name).not.toBe("an activity the application metered under this name");
    // A Dask page keeps its sections and names.
    expect(page).toContain("<h2>Gather: where gathering time went</h2>");
    expect(page).toContain("<h2>Execute: where executing time went</h2>");
  });
});
