/**
 * Looking at a written report page: the network references in its HTML, and the page opened in
 * headless Chromium offline (test/helpers/chromium.ts) — what it drew, what it logged, what it
 * tried to load — with a full-page screenshot for a developer to look at.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "vitest";
import { Chromium, type CdpEvent } from "./chromium.js";

/**
 * Every http(s) URL in a page but the XML namespaces and license links ECharts carries as
 * strings (which load nothing), and any construct that would load something from elsewhere:
 * a script, image, frame or stylesheet by http(s) or protocol-relative URL, `@import`, `url(…)`.
 */
export function networkReferences(html: string): string[] {
  const harmless = new Set([
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/2000/xmlns/",
    "http://www.w3.org/XML/1998/namespace",
    "http://www.apache.org/licenses/LICENSE-2.0",
    "https://github.com/ecomfe/zrender/blob/master/LICENSE",
  ]);
  const urls = [...html.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'<>)]*/gi)]
    .map((match) => match[0])
    .filter((url) => !harmless.has(url));
  const loads = [
    ...html.matchAll(
      /<(?:script|img|iframe|link)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:|\/\/)|@import|\burl\(\s*["']?(?:https?:|\/\/)/gi,
    ),
  ].map((match) => match[0]);
  return [...urls, ...loads];
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
  const failures = [...document.querySelectorAll("table.failures tbody tr")].map((row) => [...row.cells].map((cell) => cell.innerText));
  // Each kept trace's timeline as drawn: the option ECharts holds (bars per series, links, the lanes' names).
  const timelines = [...document.querySelectorAll(".chart.timeline")].map((element) => {
    const chart = typeof echarts === "undefined" ? undefined : echarts.getInstanceByDom(element);
    if (chart === undefined) return { id: element.id, bars: 0, links: 0, lanes: [], series: [] };
    const option = chart.getOption();
    const spans = option.series.filter((series) => series.name !== "lanes" && series.name !== "links");
    return {
      id: element.id,
      bars: spans.reduce((count, series) => count + series.data.length, 0),
      links: option.series.filter((series) => series.name === "links").reduce((count, series) => count + series.data.length, 0),
      lanes: option.yAxis[0].data.filter((name) => name !== ""),
      series: spans.map((series) => series.name),
    };
  });
  return { charts, tables, empty, failures, timelines, trees: document.querySelectorAll("pre").length, title: document.title, text: document.body.innerText };
})()`;

export interface PageState {
  charts: Array<{ id: string; canvases: number; svgs: number; inked: number; text: string }>;
  tables: Array<{ className: string; rows: number; emptyRows: number; placeholders: number }>;
  /** The text of every `.empty` placeholder ("(nothing recorded)"). */
  empty: string[];
  /** The "Failed tasks" table's rows, cell by cell, as rendered. */
  failures: string[][];
  /** Each kept trace's timeline, from its chart's option: bars drawn, links, its lanes' names, its series (span names). */
  timelines: Array<{ id: string; bars: number; links: number; lanes: string[]; series: string[] }>;
  trees: number;
  title: string;
  /** The page's visible text. */
  text: string;
}

export interface OpenedPage {
  state: PageState;
  /** Exceptions, console errors and warnings, and log entries of level error or warning. */
  problems: CdpEvent[];
  /** Requests for anything but the page's own file (and data: URLs). */
  requests: string[];
}

/**
 * Opens `page` from a file:// URL in headless Chromium with the network offline, waits for the
 * charts to draw, measures the page and writes a full-page PNG screenshot to `screenshot`.
 */
export async function openReportOffline(
  executable: string,
  page: string,
  screenshot: string,
  profile: string,
): Promise<OpenedPage> {
  const browser = new Chromium(executable, profile);
  try {
    const { targetId } = (await browser.send("Target.createTarget", { url: "about:blank" })) as { targetId: string };
    const { sessionId } = (await browser.send("Target.attachToTarget", { targetId, flatten: true })) as {
      sessionId: string;
    };
    const send = (method: string, params: Record<string, unknown> = {}) => browser.send(method, params, sessionId);
    await Promise.all([send("Runtime.enable"), send("Log.enable"), send("Network.enable"), send("Page.enable")]);
    // Offline: any request that leaves the page's own file fails (and is reported).
    await send("Network.emulateNetworkConditions", {
      offline: true,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await send("Emulation.setDeviceMetricsOverride", {
      width: 1400,
      height: 1000,
      deviceScaleFactor: 1,
      mobile: false,
    });
    const loaded = browser.next("Page.loadEventFired");
    await send("Page.navigate", { url: pathToFileURL(page).href });
    await loaded;
    // Charts render on the next animation frames: wait for two before looking.
    await send("Runtime.evaluate", {
      expression: "new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))",
      awaitPromise: true,
    });
    const inspected = (await send("Runtime.evaluate", { expression: INSPECT, returnByValue: true })) as {
      result: { value: PageState };
    };

    const metrics = (await send("Page.getLayoutMetrics")) as { cssContentSize: { width: number; height: number } };
    await send("Emulation.setDeviceMetricsOverride", {
      width: 1400,
      height: Math.ceil(metrics.cssContentSize.height),
      deviceScaleFactor: 1,
      mobile: false,
    });
    const shot = (await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true })) as {
      data: string;
    };
    fs.mkdirSync(path.dirname(screenshot), { recursive: true });
    fs.writeFileSync(screenshot, Buffer.from(shot.data, "base64"));

    const problems = browser.events.filter(
      (event) =>
        event.method === "Runtime.exceptionThrown" ||
        (event.method === "Runtime.consoleAPICalled" &&
          ["error", "assert", "warning"].includes(String(event.params.type))) ||
        (event.method === "Log.entryAdded" &&
          ["error", "warning"].includes(String((event.params.entry as { level?: string }).level))),
    );
    const requests = browser.events
      .filter((event) => event.method === "Network.requestWillBeSent")
      .map((event) => String((event.params.request as { url: string }).url))
      .filter((url) => url !== pathToFileURL(page).href && !url.startsWith("data:"));
    return { state: inspected.result.value, problems, requests };
  } finally {
    await browser.close();
  }
}

/**
 * Every chart of a full report drawn (a canvas or SVG with ink) and every table filled, of the
 * classes given in order; the kept traces' timelines after the other charts (`timelines` of them
 * when given, at least one otherwise), each with bars in its chart's option.
 */
export function expectChartsDrawnAndTablesFilled(state: PageState, tableClasses: string[], timelines?: number): void {
  const drawn = timelines ?? state.timelines.length;
  if (timelines === undefined) expect(drawn, "a kept trace's timeline").toBeGreaterThan(0);
  expect(state.charts.map((chart) => chart.id)).toEqual([
    "chart-states",
    "chart-execute",
    "chart-gather",
    "chart-wait",
    "chart-slowest",
    ...Array.from({ length: drawn }, (_, index) => `chart-timeline-${index}`),
  ]);
  for (const timeline of state.timelines) expect(timeline.bars, `${timeline.id} has bars`).toBeGreaterThan(0);
  for (const chart of state.charts) {
    expect(chart.canvases + chart.svgs, `${chart.id} has a canvas`).toBeGreaterThan(0);
    expect(chart.inked, `${chart.id} has pixels drawn`).toBeGreaterThan(500);
  }
  expect(state.tables.map((table) => table.className)).toEqual(tableClasses);
  for (const table of state.tables) {
    expect(table.rows).toBeGreaterThan(1);
    expect(table.emptyRows).toBe(0);
    expect(table.placeholders).toBe(0);
  }
  expect(state.empty).toEqual([]);
}
