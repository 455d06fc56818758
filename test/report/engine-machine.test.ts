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
 * attempts of 0.25 s, the last for good; load-3 waits 1 s blocked, runs 2 s; skip-4 is skipped.
 * Four tasks, six visits to running (score 2, mail 3, load 1).
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
  engine.transition("score-1", "pending", "ready");
  attempt("score-1", 0.5, "retrying");
  attempt("score-1", 1, "done");
  engine.describe("mail-2", { prefix: "mail" });
  engine.transition("mail-2", "pending", "ready");
  attempt("mail-2", 0.25, "retrying");
  attempt("mail-2", 0.25, "retrying");
  attempt("mail-2", 0.25, "failed");
  engine.describe("load-3", { prefix: "load" });
  engine.transition("load-3", "pending", "blocked");
  clock.advance(1);
  engine.transition("load-3", "blocked", "ready");
  attempt("load-3", 2, "done");
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
  it("calls its journeys tasks, and its column counts visits (6 for 3 tasks), in the text and on the page", () => {
    const data = read();
    expect(data.prefixes.map((row) => [row.prefix, row.count])).toEqual([
      ["load", 1],
      ["score", 2],
      ["mail", 3],
    ]);
    expect({ ...data.outcomes }).toEqual({ "worker:done": 2, "worker:failed": 1 });
    const text = formatReportTables(data);
    const lines = text.split("\n");
    expect(lines[0]).toBe("Tasks (the journeys of the processes that run them, one a task, its attempts included)");
    expect(lines[2].split(/\s+/)).toEqual(["prefix", "visits", "p50", "p90", "p99", "blocked", "running", "retrying"]);
    expect(text).toContain("visits and quantiles: the visits to running (a task retried visits it once per attempt)");
    expect(text).toContain("ended: tasks: 2 done, 1 failed");
    expect(text).toContain("failed: 1 task failed (ended in failed)");
    for (const word of ["attempts:", "Attempts", "attempt failed", "count"]) expect(text, word).not.toContain(word);
    const page = visibleText(renderHtmlReport(data, { inlineEcharts: false }));
    expect(page).toContain("Tasks (the journeys of the processes that run them, one a task, its attempts included)");
    expect(page).toContain("tasks: 2 done, 1 failed.");
    expect(page).toContain("1 task failed (ended in failed).");
    expect(page).toContain("visits and quantiles: the visits to running;");
    expect(page).not.toMatch(/\bcount\b|Attempts|attempts:/);
  });
});
