/**
 * The report and `taskjourney explain` of an in-process workflow engine: one process, role
 * "worker", a machine of its own (pending → blocked → ready → running → done / failed /
 * retrying → ready, skipped) that keeps all of a step's attempts in one journey. Its journeys are
 * tasks, not attempts; its count column counts visits; no Dask word (compute journey, scheduler,
 * worker) on a machine that has none; the execute table's failed lump apart from the state `failed`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { defineMachine, type TaskJourneys } from "../../src/index.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { renderHtmlReport } from "../../src/report/html.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import { formatReportTables } from "../../src/report/text.js";
import { startTelemetry } from "../../src/sdk.js";
import { FakeClock } from "../helpers/clock.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-engine-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

const ENGINE = defineMachine({
  states: ["pending", "blocked", "ready", "running", "done", "failed", "retrying", "skipped"],
  transitions: {
    pending: ["blocked", "ready", "skipped"],
    blocked: ["ready", "skipped"],
    ready: ["running"],
    running: ["done", "failed", "retrying"],
    retrying: ["ready"],
  },
  terminal: { success: "done", failure: "failed", cancelled: "skipped" },
  initial: "pending",
  queued: "ready",
  executing: "running",
});
type Engine = TaskJourneys<"worker", (typeof ENGINE.states)[number]>;

/**
 * On a fake clock from 100 s: score-1 fails once (0.5 s) and succeeds (1 s); mail-2 fails three
 * attempts of 0.25 s, the last for good; load-3 waits 1 s blocked, runs 2 s, and again 0.5 s in a
 * second journey; skip-4 is skipped. Seven visits to running (score 2, mail 3, load 2).
 */
async function runEngine(into: string): Promise<void> {
  const clock = new FakeClock(100);
  const telemetry = await startTelemetry({
    role: "worker",
    instance: "engine-1",
    fileDirectory: into,
    registerGlobal: false,
    exporters: { traces: "otlp", metrics: "otlp" },
    journeys: {
      machine: ENGINE,
      runtime: { clock: clock.now, timeOrigin: 1_700_000_000 },
      sampling: { ratio: 1, keepSlowerThan: 0 },
    },
  });
  const engine = telemetry.journeys as unknown as Engine;
  const attempt = (key: string, seconds: number, last: "done" | "failed" | "retrying") => {
    const ledger = engine.execute(key);
    clock.advance(seconds);
    if (last === "done") ledger.end("done");
    else ledger.end(last, { error: new Error(`${key} timed out`) });
    if (last === "retrying") {
      clock.advance(0.125);
      engine.transition(key, "retrying", "ready");
    }
  };
  engine.describe("score-1", { prefix: "score" });
  engine.transition("score-1", "pending", "ready", { computation: "flow-1" });
  attempt("score-1", 0.5, "retrying");
  attempt("score-1", 1, "done");
  engine.describe("mail-2", { prefix: "mail" });
  engine.transition("mail-2", "pending", "ready", { computation: "flow-1" });
  attempt("mail-2", 0.25, "retrying");
  attempt("mail-2", 0.25, "retrying");
  attempt("mail-2", 0.25, "failed");
  engine.describe("load-3", { prefix: "load" });
  engine.transition("load-3", "pending", "blocked", { computation: "flow-1" });
  clock.advance(1);
  engine.transition("load-3", "blocked", "ready");
  attempt("load-3", 2, "done");
  // load-3 is run again later (a second run of the workflow): its key's second journey.
  clock.advance(1);
  engine.transition("load-3", "pending", "ready");
  attempt("load-3", 0.5, "done");
  engine.describe("skip-4", { prefix: "skip" });
  engine.transition("skip-4", "pending", "skipped");
  await telemetry.shutdown();
}

const read = () => reportDataFromTelemetry(readTelemetryFiles([directory], { metrics: true }));

/** The command line, in process: what it prints. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { out: (text) => (stdout += text), err: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

beforeAll(() => runEngine(directory), 60_000);

/** The page's visible text: no script, style or markup. */
function visibleText(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<style[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

describe("the report of an in-process engine that keeps a task's attempts in one journey", () => {
  it("calls its journeys tasks, and its column counts visits (7 for 3 tasks), in the text and on the page", () => {
    const data = read();
    expect(data.prefixes.map((row) => [row.prefix, row.count])).toEqual([
      ["load", 2],
      ["score", 2],
      ["mail", 3],
    ]);
    // skip-4 went straight from its initial state to an end (pending → skipped): a task ended there too.
    expect({ ...data.outcomes }).toEqual({ "worker:done": 3, "worker:failed": 1, "worker:skipped": 1 });
    const text = formatReportTables(data);
    const lines = text.split("\n");
    expect(lines[0]).toBe("Tasks (the journeys of the processes that run them, one a task, its attempts included)");
    expect(lines[2].split(/\s+/)).toEqual(["prefix", "visits", "p50", "p90", "p99", "blocked", "running", "retrying"]);
    expect(text).toContain("visits and quantiles: the visits to running (a task retried visits it once per attempt)");
    expect(text).toContain("ended: tasks: 3 done, 1 failed, 1 skipped");
    expect(text).toContain("failed: 1 task failed (ended in failed)");
    for (const word of ["attempts:", "Attempts", "attempt failed", "count"]) expect(text, word).not.toContain(word);
    const page = visibleText(renderHtmlReport(data, { inlineEcharts: false }));
    expect(page).toContain("Tasks (the journeys of the processes that run them, one a task, its attempts included)");
    expect(page).toContain("tasks: 3 done, 1 failed, 1 skipped.");
    expect(page).toContain("1 task failed (ended in failed).");
    expect(page).toContain("visits and quantiles: the visits to running;");
    expect(page).not.toMatch(/\bcount\b|Attempts|attempts:/);
  });
});

describe("taskjourney explain of the engine's journeys: no Dask word", () => {
  it("a journey is on its instance, not 'on worker'; several are numbered, not '[compute journey]'", async () => {
    const mail = await cli("explain", "mail-2", directory);
    expect(mail.code).toBe(0);
    expect(mail.stdout.split("\n")[0]).toBe("mail-2 spent 1.0 s on engine-1 (ended in failed)");
    const load = await cli("explain", "load-3", "--all", directory);
    expect(load.code).toBe(0);
    const heads = load.stdout.split("\n").filter((line) => line.startsWith("[") || line.startsWith("load-3"));
    expect(heads).toEqual([
      "[journey 1 of 2]",
      "load-3 spent 3.0 s on engine-1",
      "[journey 2 of 2]",
      "load-3 spent 500.0 ms on engine-1",
    ]);
    // Skipped from its initial state: a journey of its own, of no time (explain names failed ends only).
    const skip = await cli("explain", "skip-4", directory);
    expect(skip.code).toBe(0);
    expect(skip.stdout).toBe("skip-4 spent 0 s on engine-1\n");
    for (const word of ["compute", "fetch", "worker", "scheduler"])
      expect(mail.stdout + load.stdout + skip.stdout, word).not.toContain(word);
  });

  it("the page's trees and notes say no Dask word either, its Computations section's neither", () => {
    const data = read();
    expect(data.computations!.map((row) => [row.name, row.tasks, row.from])).toEqual([["flow-1", 3, "workers"]]);
    const page = visibleText(renderHtmlReport(data, { inlineEcharts: false }));
    expect(page).toContain(
      "Rows no process handing out the tasks reported are the totals of those that ran them, summed.",
    );
    for (const word of ["compute journey", "fetch journey", "scheduler", "worker", "processing", "gather"])
      expect(page.match(new RegExp(`.{0,60}${word}.{0,60}`, "g")) ?? [], word).toEqual([]);
  });
});

describe("the execute table's failed lump, apart from the machine's state `failed`", () => {
  it("is 'failed (lump)' in the text table, the page's table, chart and glossary", () => {
    const data = read();
    // Every attempt that did not succeed, retried ones included: score 0.5 s, mail 3 × 0.25 s.
    expect(data.execute.failed).toBe(1.25);
    const text = formatReportTables(data);
    const execute = text.split("\n\n").find((section) => section.startsWith("execute"))!;
    expect(execute.split("\n").map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ["execute", "seconds", "share"],
      ["failed (lump)", "1.3 s", "26.3%"],
      ["other", "3.5 s", "73.7%"],
      ["total", "4.8 s", "100.0%"],
    ]);
    const page = renderHtmlReport(data, { inlineEcharts: false });
    expect(page).toContain('<td class="name">failed (lump)</td>');
    expect(page).not.toContain('<td class="name">failed</td>');
    expect(page).toContain('"execute":[["failed (lump)",1.25]');
    expect(page).toContain("<dt>failed (lump)</dt><dd>the whole time of an execution or transfer that failed");
  });
});
