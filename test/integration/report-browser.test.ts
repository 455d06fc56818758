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
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import { runApplication } from "../helpers/application.js";
import { Chromium, findChromium, type CdpEvent } from "../helpers/chromium.js";

const ROOT = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const OUTPUT = path.join(ROOT, "test-output", "report-browser");
const chromium = findChromium();
const inCi = process.env.CI === "true";
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-report-browser-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

if (chromium === undefined && !inCi) {
  console.warn("report-browser: skipped, Chromium is not installed (apt-get install -y chromium); in CI (CI=true) this fails instead");
}

/** What the page holds once drawn, measured inside it. */
const INSPECT = `(() => {
  const charts = [...document.querySelectorAll(".chart")].map((element) => {
    const canvases = [...element.querySelectorAll("canvas")];
    let inked = 0;
    for (const canvas of canvases) {
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) inked++;
    }
    return { id: element.id, canvases: canvases.length, svgs: element.querySelectorAll("svg").length, inked, text: element.textContent.trim() };
  });
  const tables = [...document.querySelectorAll("table")].map((table) => ({
    className: table.className,
    rows: table.querySelectorAll("tbody tr").length,
    emptyRows: [...table.querySelectorAll("tbody tr")].filter((row) => row.textContent.trim() === "").length,
    placeholders: table.querySelectorAll("td.empty").length,
  }));
  const empty = [...document.querySelectorAll(".empty")].map((element) => element.textContent);
  return { charts, tables, empty, trees: document.querySelectorAll("pre").length, title: document.title };
})()`;

describe("the report in headless Chromium", () => {
  it.skipIf(chromium === undefined && !inCi)("opens offline with no console error, every chart drawn and every table filled", async () => {
    expect(chromium, "Chromium is required in CI: apt-get install -y chromium").toBeDefined();
    const telemetryDir = path.join(directory, "telemetry");
    await runApplication(telemetryDir);
    fs.mkdirSync(OUTPUT, { recursive: true });
    const page = path.join(OUTPUT, "report.html");
    const printed: string[] = [];
    const code = main(["report", "--from", telemetryDir, "--out", page, "--title", "taskjourney report (browser test)"], { out: (text) => printed.push(text), err: (text) => printed.push(text) });
    expect(printed.join("")).toBe(`wrote ${page}\n`);
    expect(code).toBe(0);

    const browser = new Chromium(chromium!, path.join(directory, "profile"));
    try {
      const { targetId } = (await browser.send("Target.createTarget", { url: "about:blank" })) as { targetId: string };
      const { sessionId } = (await browser.send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId: string };
      const send = (method: string, params: Record<string, unknown> = {}) => browser.send(method, params, sessionId);
      await Promise.all([send("Runtime.enable"), send("Log.enable"), send("Network.enable"), send("Page.enable")]);
      // Offline: any request that leaves the page's own file fails (and is reported below).
      await send("Network.emulateNetworkConditions", { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await send("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
      const loaded = browser.next("Page.loadEventFired");
      await send("Page.navigate", { url: pathToFileURL(page).href });
      await loaded;
      // Charts render on the next animation frames: wait for two before looking.
      await send("Runtime.evaluate", { expression: "new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))", awaitPromise: true });
      const inspected = (await send("Runtime.evaluate", { expression: INSPECT, returnByValue: true })) as { result: { value: any } };
      const state = inspected.result.value;

      const metrics = (await send("Page.getLayoutMetrics")) as { cssContentSize: { width: number; height: number } };
      const height = Math.ceil(metrics.cssContentSize.height);
      await send("Emulation.setDeviceMetricsOverride", { width: 1400, height, deviceScaleFactor: 1, mobile: false });
      const shot = (await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true })) as { data: string };
      fs.writeFileSync(path.join(OUTPUT, "report.png"), Buffer.from(shot.data, "base64"));

      const problems = browser.events.filter(
        (event: CdpEvent) =>
          event.method === "Runtime.exceptionThrown" ||
          (event.method === "Runtime.consoleAPICalled" && ["error", "assert", "warning"].includes(String(event.params.type))) ||
          (event.method === "Log.entryAdded" && ["error", "warning"].includes(String((event.params.entry as { level?: string }).level))),
      );
      expect(problems).toEqual([]);
      const requests = browser.events
        .filter((event) => event.method === "Network.requestWillBeSent")
        .map((event) => String((event.params.request as { url: string }).url))
        .filter((url) => url !== pathToFileURL(page).href && !url.startsWith("data:"));
      expect(requests).toEqual([]);

      expect(state.title).toBe("taskjourney report (browser test)");
      expect(state.charts.map((chart: { id: string }) => chart.id)).toEqual(["chart-states", "chart-execute", "chart-gather", "chart-wait", "chart-slowest"]);
      for (const chart of state.charts) {
        expect(chart.canvases + chart.svgs, `${chart.id} has a canvas`).toBeGreaterThan(0);
        expect(chart.inked, `${chart.id} has pixels drawn`).toBeGreaterThan(500);
      }
      // The worker and scheduler prefix tables, the execute and gather tables: rows, none empty.
      expect(state.tables.map((table: { className: string }) => table.className)).toEqual(["prefixes", "prefixes", "activities", "activities"]);
      for (const table of state.tables) {
        expect(table.rows).toBeGreaterThan(1);
        expect(table.emptyRows).toBe(0);
        expect(table.placeholders).toBe(0);
      }
      expect(state.empty).toEqual([]);
      expect(state.trees).toBeGreaterThanOrEqual(2);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
