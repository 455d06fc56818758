/**
 * The demo's report.html (examples/cluster/report-page.ts): its summary with the timelines of the
 * kept traces from the trace files in otlp/; past its byte bound, or with a trace file it cannot
 * read, the summary's page alone and one line on stderr saying why and the command that draws them.
 * The trace files are a real SDK's (the failing application of test/helpers/application.ts).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReportPage } from "../../examples/cluster/report-page.js";
import { runFailingApplication } from "../helpers/application.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-report-page-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

const tree = { key: "load-1", prefix: "load", instance: "tcp://w1:1", seconds: 2, kind: "compute", children: [] };
const summary = {
  workload: "reduction",
  description: "a crafted run",
  report: {
    rows: [],
    execute: {},
    gather: {},
    waitByPrefix: {},
    slowest: [{ key: "load-1", seconds: 2, traced: true, breakdown: tree }],
  },
  failed: ["load-1"],
  erred: 2,
};

/** A copy of the run's out directory (summary.json, otlp/ with its trace and metric files). */
function outDir(name: string): string {
  const out = path.join(directory, name);
  fs.cpSync(path.join(directory, "run"), out, { recursive: true });
  return out;
}

function page(out: string): string {
  return fs.readFileSync(path.join(out, "report.html"), "utf8");
}

describe("the demo's report.html", () => {
  beforeAll(async () => {
    await runFailingApplication(path.join(directory, "run", "otlp"));
    fs.writeFileSync(path.join(directory, "run", "summary.json"), JSON.stringify(summary));
  }, 60_000);

  it("draws the kept traces from the trace files, saying nothing", () => {
    const out = outDir("whole");
    const warnings: string[] = [];
    expect(writeReportPage(out, (line) => warnings.push(line))).toEqual({ timelines: 2 });
    expect(warnings).toEqual([]);
    const html = page(out);
    expect(html).toContain("<h3>load-1 — slowest #1, failed; its trace 2.5 s</h3>");
    expect(html).toContain('<div class="chart timeline" id="chart-timeline-1"></div>');
  });

  it("past its byte bound: the summary's page, and one line saying why and how to draw them", () => {
    const out = outDir("large");
    const warnings: string[] = [];
    const bytes = fs
      .readdirSync(path.join(out, "otlp"))
      .filter((name) => name.startsWith("traces-"))
      .reduce((sum, name) => sum + fs.statSync(path.join(out, "otlp", name)).size, 0);
    const written = writeReportPage(out, (line) => warnings.push(line), bytes - 1);
    expect(written).toEqual({
      timelines: 0,
      without: `its trace files hold ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the 0 MiB read at the end of a run`,
    });
    expect(warnings).toEqual([
      `cluster: report.html has no timelines of the kept traces: ${written.without}; to draw them: npx taskjourney report ${path.relative(process.cwd(), path.join(out, "summary.json"))} ${path.relative(process.cwd(), path.join(out, "otlp"))}`,
    ]);
    const html = page(out);
    expect(html).not.toContain('<section id="timelines">');
    expect(html).toContain("load-1");
    // At the bound exactly: read.
    expect(writeReportPage(out, (line) => warnings.push(line), bytes).timelines).toBe(2);
  });

  it("a trace file it cannot read: the summary's page, and one line naming the file", () => {
    const out = outDir("broken");
    const file = fs.readdirSync(path.join(out, "otlp")).find((name) => name.startsWith("traces-"))!;
    fs.appendFileSync(path.join(out, "otlp", file), "not a request\n");
    const warnings: string[] = [];
    const written = writeReportPage(out, (line) => warnings.push(line));
    expect(written.timelines).toBe(0);
    expect(written.without).toMatch(/^its trace files could not be read \(.*traces-.*\)$/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file);
    expect(page(out)).toContain("load-1");
  });

  it("no otlp/ directory (spans sent to an endpoint): the summary's page, nothing said", () => {
    const out = outDir("endpoint");
    fs.rmSync(path.join(out, "otlp"), { recursive: true });
    const warnings: string[] = [];
    expect(writeReportPage(out, (line) => warnings.push(line))).toEqual({ timelines: 0, without: "no trace files" });
    expect(warnings).toEqual([]);
    expect(page(out)).toContain("load-1");
  });
});
