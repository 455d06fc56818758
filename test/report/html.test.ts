import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { escapeHtml, renderHtmlReport, reportDataFrom, scriptJson, type ReportData } from "../../src/report/html.js";
import type { Breakdown } from "../../src/model/breakdown.js";
import { networkReferences } from "../helpers/report-page.js";

const EVIL_PREFIX = "<script>alert(1)</script>";
const EVIL_KEY = `<img src=x onerror="alert(2)">-1`;
const EVIL_ACTIVITY = `"quoted" & </script><b>bold</b>`;

const slowest: Breakdown = {
  key: EVIL_KEY,
  prefix: EVIL_PREFIX,
  instance: "tcp://10.0.0.7:40001",
  seconds: 10,
  kind: "compute",
  outcome: "memory",
  children: [
    {
      name: "waiting",
      seconds: 8,
      children: [
        { name: "network", seconds: 5, children: [] },
        { name: EVIL_ACTIVITY, seconds: 3, children: [] },
      ],
    },
    { name: "ready", seconds: 1.5, children: [] },
    { name: "executing", seconds: 0.5, children: [{ name: "thread-cpu", seconds: 0.5, children: [] }] },
  ],
};

function sample(): ReportData {
  return {
    title: "Run <1> & co",
    generatedAt: "2026-11-30T09:00:00.000Z",
    workload: "reduction",
    prefixes: [
      {
        prefix: "square",
        count: 858,
        p50: 0.0041,
        p90: 0.006,
        p99: 0.0099,
        stateSeconds: { waiting: 1.2, ready: 0.8, executing: 3.6 },
      },
      {
        prefix: EVIL_PREFIX,
        count: 3,
        p50: Number.NaN,
        p90: Number.NaN,
        p99: Number.NaN,
        stateSeconds: { waiting: 2, executing: 0.25, flight: 0.5 },
      },
    ],
    execute: { "thread-cpu": 3, "thread-noncpu": 0.5, other: 0.1, [EVIL_ACTIVITY]: 0.2 },
    gather: { network: 2, connect: 1, other: 0.25 },
    wait: { [EVIL_PREFIX]: { network: 5, [EVIL_ACTIVITY]: 3 }, square: { dependencies: 1.2 } },
    slowest: [slowest, { ...slowest, key: "second-1", seconds: 4 }],
  };
}

function scripts(page: string): string[] {
  return [...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((match) => match[0]);
}

function embeddedData(page: string): any {
  const match = /<script type="application\/json" id="taskjourney-data">([\s\S]*?)<\/script>/.exec(page);
  expect(match).not.toBeNull();
  return JSON.parse(match![1]);
}

describe("renderHtmlReport", () => {
  const page = renderHtmlReport(sample(), { inlineEcharts: false });

  it("escapes every user-controlled string: no markup from prefixes, keys or activity names", () => {
    expect(page).not.toContain(EVIL_PREFIX);
    expect(page).not.toContain("<img");
    expect(page).not.toContain("<b>bold");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;-1");
    expect(page).toContain("<title>Run &lt;1&gt; &amp; co</title>");
    // Exactly our script elements: the data block and the page script (ECharts not inlined here).
    expect(scripts(page)).toHaveLength(2);
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page.match(/<\/script/gi)).toHaveLength(2);
  });

  it("carries the chart data as valid JSON, with the raw names intact", () => {
    const data = embeddedData(page);
    expect(data.states.prefixes).toEqual(["square", EVIL_PREFIX]);
    expect(data.states.series.map((series: { name: string }) => series.name)).toEqual([
      "waiting",
      "flight",
      "ready",
      "executing",
    ]);
    expect(data.states.series[0].data).toEqual([1.2, 2]);
    // Largest first, `other` last.
    expect(data.execute).toEqual([
      ["thread-cpu", 3],
      ["thread-noncpu", 0.5],
      [EVIL_ACTIVITY, 0.2],
      ["other", 0.1],
    ]);
    expect(data.gather.map(([name]: [string]) => name)).toEqual(["network", "connect", "other"]);
    expect(data.wait.prefixes).toEqual([EVIL_PREFIX, "square"]);
    expect(data.wait.series.map((series: { name: string }) => series.name)).toEqual([
      "network",
      EVIL_ACTIVITY,
      "dependencies",
    ]);
    expect(data.slowest.name).toBe(EVIL_KEY);
    expect(data.slowest.children.map((node: { name: string }) => node.name)).toEqual(["waiting", "ready", "executing"]);
  });

  it("has the per-prefix table rows, NaN quantiles as '-', and a total row", () => {
    expect(page).toContain(
      '<tr><td class="name">square</td><td>858</td><td>4.1 ms</td><td>6.0 ms</td><td>9.9 ms</td><td>1.2 s</td><td>0 s</td><td>800.0 ms</td><td>3.6 s</td></tr>',
    );
    expect(page).toContain(
      '<tr><td class="name">&lt;script&gt;alert(1)&lt;/script&gt;</td><td>3</td><td>-</td><td>-</td><td>-</td><td>2.0 s</td><td>500.0 ms</td>',
    );
    expect(page).toContain('<tr class="total"><td class="name">total</td><td>861</td>');
    expect(page).toMatch(/<th>waiting<\/th><th>flight<\/th><th>ready<\/th><th>executing<\/th>/);
  });

  it("shows the slowest task's explain tree, escaped", () => {
    expect(page).toContain(
      "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;-1 spent 10.0 s on worker tcp://10.0.0.7:40001",
    );
    expect(page).toContain("gather: &quot;quoted&quot; &amp; &lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;");
    expect(page).toContain("<summary>second-1 — 4.0 s</summary>");
  });

  it("the page script parses", () => {
    const own = scripts(page)
      .at(-1)!
      .replace(/^<script>/, "")
      .replace(/<\/script>$/, "");
    expect(() => new Function(own)).not.toThrow();
  });

  it("inlines the page's script and style files (src/report/page/), without their header comments", () => {
    const file = (name: string) => readFileSync(new URL(`../../src/report/page/${name}`, import.meta.url), "utf8");
    const script = file("report.client.js");
    const style = file("report.css");
    expect(script.startsWith("/*")).toBe(true);
    expect(page).toContain(`<script>\n${script.slice(script.indexOf("*/\n") + 3)}</script>\n</body>`);
    expect(page).toContain(`<style>\n${style.slice(style.indexOf("*/\n") + 3)}</style>`);
    expect(page).not.toContain("inlines it into every page");
  });

  it("inlines ECharts by default; leaves the charts out when asked not to; never references the network", () => {
    const inlined = renderHtmlReport(sample());
    expect(inlined.length).toBeGreaterThan(500_000);
    expect(inlined).toMatch(/<!-- ECharts 6\.\d+\.\d+ \(Apache-2\.0\), inlined/);
    expect(scripts(inlined)).toHaveLength(3);
    expect(scripts(page)).toHaveLength(2);
    expect(page).toContain("<!-- ECharts not inlined (turned off): the charts are left out. -->");
    for (const html of [inlined, page]) expect(networkReferences(html)).toEqual([]);
  });

  it("adds the scheduler's table when there is one", () => {
    const withScheduler = renderHtmlReport(
      {
        ...sample(),
        schedulerPrefixes: [
          { prefix: "square", count: 858, p50: 0.01, p90: 0.02, p99: 0.03, stateSeconds: { queued: 4, processing: 9 } },
        ],
      },
      { inlineEcharts: false },
    );
    expect(withScheduler).toContain("<h3>On the scheduler</h3>");
    expect(withScheduler).toMatch(/<th colspan="3">processing duration<\/th>.*<th>queued<\/th><th>processing<\/th>/);
    expect(page).not.toContain("On the scheduler");
  });

  it("renders empty data without failing", () => {
    const empty = renderHtmlReport(
      { title: "empty", generatedAt: "now", prefixes: [], execute: {}, gather: {}, wait: {} },
      { inlineEcharts: false },
    );
    expect(empty).toContain("(no prefixes recorded)");
    expect(empty).toContain("(no journey breakdowns in the data)");
    expect(embeddedData(empty).slowest).toBeNull();
  });
});

describe("helpers", () => {
  it("escapeHtml and scriptJson", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    const json = scriptJson({ text: "</script><!-- \u2028", nan: Number.NaN });
    expect(json).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(json)).toEqual({ text: "</script><!-- \u2028", nan: null });
  });
});

describe("reportDataFrom", () => {
  it("reads ReportData back from its JSON (NaN quantiles written as null)", () => {
    const data = sample();
    const read = reportDataFrom(JSON.parse(JSON.stringify(data)));
    expect(read.prefixes[1].p50).toBeNaN();
    expect(read.prefixes[0]).toEqual(data.prefixes[0]);
    expect(read.execute).toEqual(data.execute);
    expect(read.wait).toEqual(data.wait);
    expect(read.slowest?.[0]).toEqual(slowest);
    expect(read.title).toBe(data.title);
  });

  it("reads the cluster example's run summary", () => {
    const read = reportDataFrom({
      workload: "shuffle",
      description: "a shuffle",
      report: {
        rows: [{ prefix: "x", count: 1, p50: null, p90: 1, p99: 1, stateSeconds: { executing: 1 } }],
        schedulerRows: [{ prefix: "x", count: 1, p50: 1, p90: 1, p99: 1, stateSeconds: { processing: 1 } }],
        execute: { "thread-cpu": 1 },
        gather: { network: 2 },
        wait: { network: 2 },
        waitByPrefix: { x: { network: 2 } },
        slowest: [
          { key: "x-1", seconds: 1, breakdown: slowest },
          { key: "x-2", seconds: 1, breakdown: null },
        ],
      },
    });
    expect(read.title).toBe("taskjourney: shuffle");
    expect(read.prefixes[0].p50).toBeNaN();
    expect(read.schedulerPrefixes?.[0].prefix).toBe("x");
    expect(read.wait).toEqual({ x: { network: 2 } });
    expect(read.slowest).toEqual([slowest]);
  });

  it("ranks a summary's slowest by the seconds the page shows, not the demo's own", () => {
    const tree = (key: string, seconds: number) => ({ ...slowest, key, seconds });
    const read = reportDataFrom({
      report: {
        rows: [],
        // The demo's order (its clock since arrival) is not the trees' (their journeys' seconds).
        slowest: [
          { key: "x-1", seconds: 9, breakdown: tree("x-1", 1) },
          { key: "x-2", seconds: 8, breakdown: tree("x-2", 3) },
          { key: "x-3", seconds: 7, breakdown: tree("x-3", 2) },
        ],
      },
    });
    expect(read.slowest!.map((breakdown) => [breakdown.key, breakdown.seconds])).toEqual([
      ["x-2", 3],
      ["x-3", 2],
      ["x-1", 1],
    ]);
  });

  it("names what is wrong", () => {
    expect(() => reportDataFrom([])).toThrow(/expected a JSON object/);
    expect(() => reportDataFrom({ hello: 1 })).toThrow(/expected ReportData/);
    expect(() => reportDataFrom({ prefixes: [{ count: 1 }] })).toThrow(/prefixes\[0\] must have a string prefix/);
    expect(() => reportDataFrom({ prefixes: [], execute: { cpu: "1" } })).toThrow(/execute\.cpu must be a number/);
  });
});
