/**
 * The HTML report in a real browser: an application's fileDirectory output becomes a report
 * through the `taskjourney report` command, and headless Chromium opens the page from a file://
 * URL with the network unreachable. No console error, no request that leaves the page's file,
 * every chart drawn (a canvas with pixels on it), every table filled; a full-page screenshot is
 * kept in test-output/report-browser/ for a developer to look at.
 *
 * Without Chromium the test is skipped, except in CI (CI=true), where that is a failure.
 * Install: apt-get install -y chromium
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { runApplication } from "../helpers/application.js";
import { findChromium } from "../helpers/chromium.js";
import { expectChartsDrawnAndTablesFilled, openReportOffline } from "../helpers/report-page.js";

const ROOT = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const OUTPUT = path.join(ROOT, "test-output", "report-browser");
const chromium = findChromium();
const inCi = process.env.CI === "true";
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-report-browser-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

if (chromium === undefined && !inCi) {
  console.warn(
    "report-browser: skipped, Chromium is not installed (apt-get install -y chromium); in CI (CI=true) this fails instead",
  );
}

describe("the report in headless Chromium", () => {
  it.skipIf(chromium === undefined && !inCi)(
    "opens offline with no console error, every chart drawn and every table filled",
    async () => {
      expect(chromium, "Chromium is required in CI: apt-get install -y chromium").toBeDefined();
      const telemetryDir = path.join(directory, "telemetry");
      await runApplication(telemetryDir);
      fs.mkdirSync(OUTPUT, { recursive: true });
      const page = path.join(OUTPUT, "report.html");
      const printed: string[] = [];
      const code = await main(
        ["report", "--from", telemetryDir, "--out", page, "--title", "taskjourney report (browser test)"],
        { out: (text) => printed.push(text), err: (text) => printed.push(text) },
      );
      expect(printed.join("")).toBe(`wrote ${page}\n`);
      expect(code).toBe(0);

      const { state, problems, requests } = await openReportOffline(
        chromium!,
        page,
        path.join(OUTPUT, "report.png"),
        path.join(directory, "profile"),
      );
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);

      expect(state.title).toBe("taskjourney report (browser test)");
      // The worker and scheduler prefix tables, the execute and gather tables: rows, none empty.
      expectChartsDrawnAndTablesFilled(state, ["prefixes", "prefixes", "activities", "activities"], 2);
      // The kept traces' timelines as drawn, read from each chart's option: the slowest, inc-2's
      // on worker 2 (its task span, waiting, ready, executing, the gather_dep and its network, the
      // waiting state's link to the transfer), then inc-1's on worker 1 (its own trace: no carrier
      // went from the scheduler in this application).
      expect(state.timelines).toEqual([
        {
          id: "chart-timeline-0",
          bars: 6,
          links: 1,
          lanes: ["tcp://w2:1"],
          series: ["(task)", "waiting", "ready", "executing", "gather_dep", "network"],
        },
        {
          id: "chart-timeline-1",
          bars: 5,
          links: 0,
          lanes: ["tcp://w1:1"],
          series: ["(task)", "waiting", "ready", "executing", "deserialize"],
        },
      ]);
      for (const chart of state.charts.filter((chart) => chart.id.startsWith("chart-timeline-")))
        expect(chart.inked, chart.id).toBeGreaterThan(2000);
      expect(state.text).toContain("inc-2 — slowest #1; its trace 5.0 s");
      expect(state.text).toContain("trace");
      expect(state.trees).toBeGreaterThanOrEqual(2);
    },
    90_000,
  );
});
