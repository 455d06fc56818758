/**
 * The report's Computations section: totals by computation read back from the task.computation.*
 * metrics a scheduler and a worker exported into files (the scheduler's win: it sees every task),
 * from a summary's JSON, and on the page.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TaskJourneys } from "../../src/index.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { renderHtmlReport, reportDataFrom } from "../../src/report/html.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";
import { computationsFromMetrics } from "../../src/report/computations.js";
import { startTelemetry } from "../../src/sdk.js";
import { FakeClock } from "../helpers/clock.js";
import { main } from "../../src/cli.js";
import type { Breakdown } from "../../src/model/breakdown.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-computations-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

/** The epoch second of the fake clock's 0 when `record()` writes traces. */
const ORIGIN = 1_700_000_000;

async function record(into: string, traces = false): Promise<void> {
  const clock = new FakeClock(0);
  const start = (role: "worker" | "scheduler") =>
    startTelemetry({
      role,
      instance: role,
      fileDirectory: into,
      registerGlobal: false,
      exporters: { traces: traces ? "otlp" : "none", metrics: "otlp" },
      journeys: {
        runtime: { clock: clock.now, timeOrigin: ORIGIN },
        sampling: { ratio: traces ? 1 : 0, keepSlowerThan: 0, keepErrors: false },
      },
    });
  const schedulerTelemetry = await start("scheduler");
  const workerTelemetry = await start("worker");
  const scheduler = schedulerTelemetry.journeys as TaskJourneys<"scheduler">;
  const worker = workerTelemetry.journeys as TaskJourneys<"worker">;
  // graph-1: two tasks, 1 s waiting each; inc-1 processes 2 s, inc-2 1 s and errs.
  for (const key of ["inc-1", "inc-2"]) scheduler.transition(key, "released", "waiting", { computation: "graph-1" });
  clock.advance(1);
  for (const key of ["inc-1", "inc-2"]) {
    scheduler.transition(key, "waiting", "processing");
    worker.transition(key, "released", "waiting", { computation: "graph-1" });
    worker.transition(key, "waiting", "ready");
    worker.transition(key, "ready", "executing");
  }
  clock.advance(1);
  worker.transition("inc-2", "executing", "error");
  scheduler.transition("inc-2", "processing", "erred");
  clock.advance(1);
  worker.transition("inc-1", "executing", "memory");
  scheduler.transition("inc-1", "processing", "memory");
  // graph-2 on the workers only: 0.5 s executing, still live.
  worker.transition("dec-1", "released", "waiting", { computation: "graph-2" });
  worker.transition("dec-1", "waiting", "ready");
  worker.transition("dec-1", "ready", "executing");
  clock.advance(0.5);
  await schedulerTelemetry.shutdown();
  await workerTelemetry.shutdown();
}

describe("the report's computations", () => {
  it("totals each computation from the metrics, the scheduler's where it reported one, and shows them on the page", async () => {
    await record(directory);
    const telemetry = readTelemetryFiles([directory]);
    const data = reportDataFromTelemetry(telemetry, { generatedAt: "2026-12-05T00:00:00Z" });
    expect(data.computations).toEqual([
      {
        name: "graph-1",
        tasks: 2,
        live: 0,
        failed: 1,
        ended: { memory: 1, erred: 1 },
        seconds: { waiting: 2, processing: 3 },
        wall: 3,
        from: "scheduler",
      },
      {
        name: "graph-2",
        tasks: 1,
        live: 1,
        failed: 0,
        ended: {},
        seconds: {},
        wall: 0.5,
        from: "workers",
      },
    ]);
    const page = renderHtmlReport(data, { inlineEcharts: false });
    const section = page.slice(
      page.indexOf('<section id="computations">'),
      page.indexOf("</section>", page.indexOf('<section id="computations">')),
    );
    expect(section).toContain("<h2>Computations</h2>");
    expect(section).toContain(
      '<tr><td class="name">graph-1</td><td>2</td><td>1</td><td>0</td><td>3.0 s</td><td>2.0 s</td><td>3.0 s</td></tr>',
    );
    expect(section).toContain("Rows no scheduler reported are the workers&#39; totals summed.");
  });

  it("taskjourney explain from files gives a computation's first start and last end from its task spans, never NaN", async () => {
    const into = path.join(directory, "with-traces");
    await record(into, true);
    const explain = async (key: string) => {
      let stdout = "";
      const code = await main(["explain", key, "--from", into, "--json"], {
        out: (text) => (stdout += text),
        err: () => {},
      });
      expect(code).toBe(0);
      return JSON.parse(stdout) as Breakdown;
    };
    const ended = await explain("inc-1");
    expect(ended.computation).toBe("graph-1");
    // The scheduler's inc-1 and inc-2 begin at 0; inc-1 ends last, at 3 (wall 3 s, as the metrics say).
    expect(ended.computationTotals).toMatchObject({
      name: "graph-1",
      live: 0,
      wall: 3,
      start: ORIGIN,
      end: ORIGIN + 3,
    });
    // Live when the metrics were taken: no end; its start is dec-1's, at 3.
    const live = await explain("dec-1");
    expect(live.computationTotals).toMatchObject({ name: "graph-2", live: 1, start: ORIGIN + 3 });
    expect(live.computationTotals).not.toHaveProperty("end");
  });

  it("reads computations back from a summary's JSON, and leaves the section out without any", () => {
    const fixture = {
      title: "t",
      generatedAt: "2026-12-05T00:00:00Z",
      prefixes: [],
      execute: {},
      gather: {},
      wait: {},
      computations: [
        {
          name: "flow-1",
          tasks: 3,
          live: 0,
          failed: 1,
          ended: { completed: 2, failed: 1 },
          seconds: { active: 1.5 },
          wall: 4,
        },
      ],
    };
    const data = reportDataFrom(fixture);
    expect(data.computations).toEqual([
      {
        name: "flow-1",
        tasks: 3,
        live: 0,
        failed: 1,
        ended: { completed: 2, failed: 1 },
        seconds: { active: 1.5 },
        wall: 4,
        from: "scheduler",
      },
    ]);
    expect(renderHtmlReport(data, { inlineEcharts: false })).toContain(
      '<td class="name">flow-1</td><td>3</td><td>1</td><td>0</td><td>4.0 s</td><td>1.5 s</td>',
    );
    expect(renderHtmlReport({ ...data, computations: undefined }, { inlineEcharts: false })).not.toContain(
      'id="computations"',
    );
    expect(() => reportDataFrom({ ...fixture, computations: [{ name: "x", tasks: -1 }] })).toThrow(
      "computations[0].tasks must be a number >= 0",
    );
    expect(computationsFromMetrics([], new Set())).toBeUndefined();
  });
});
