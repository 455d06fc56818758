/**
 * A NodeSDK app (the real `@opentelemetry/sdk-node`) writing through `createFileSpanExporter` and
 * `createFileMetricExporter` as docs/exporting.md's recipe does (test/fixtures/nodesdk-files-app.ts,
 * held equal to the page by test/docs/exporting.test.ts), in a process of its own; then the
 * `taskjourney` command, run in this process through its main(argv, io), reads the files it wrote:
 * `explain` prints for each job what the app's own explain() gave, and `report` shows the slowest
 * job's tree as explain() gave it, the jobs counted from the metrics and the failed one with why.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, runScript } from "../helpers/run.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBreakdown, type Breakdown } from "../../src/index.js";
import { escapeHtml } from "../../src/report/html.js";
import { JOBS } from "../fixtures/nodesdk-work.js";

const APP = fileURLToPath(new URL("../fixtures/nodesdk-files-app.ts", import.meta.url));
// tsx by its path: the app runs in a directory of its own, where `--import tsx` would not resolve.

/** Runs the app to its end (bounded) in `cwd`, with no OTEL_* variable: its exit code and streams. */
function runApp(cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
  return runScript(APP, [], { env, cwd });
}

const cli = runCli;

describe("a NodeSDK app writing through taskjourney's file exporters, read by the taskjourney command", () => {
  let cwd: string;
  let explained: Record<string, Breakdown>;
  let otlp: string;
  beforeAll(async () => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-nodesdk-files-"));
    const { code, stdout, stderr } = await runApp(cwd);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    explained = JSON.parse(stdout) as Record<string, Breakdown>;
    otlp = path.join(cwd, "otlp");
  }, 90_000);
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it("writes one file per signal where the recipe says, OTLP/JSON of the instance it names", () => {
    expect(fs.readdirSync(otlp).sort()).toEqual(["metrics-worker-queue-1.jsonl", "traces-worker-queue-1.jsonl"]);
    for (const file of fs.readdirSync(otlp)) {
      const lines = fs.readFileSync(path.join(otlp, file), "utf8").split("\n");
      expect(lines.at(-1), `${file} ends with a newline`).toBe("");
      for (const line of lines.slice(0, -1)) {
        const request = JSON.parse(line) as Record<string, Array<{ resource: { attributes: unknown[] } }>>;
        const resources = request.resourceSpans ?? request.resourceMetrics;
        expect(resources.length).toBeGreaterThan(0);
        for (const { resource } of resources) {
          expect(resource.attributes).toContainEqual({ key: "service.instance.id", value: { stringValue: "queue-1" } });
          expect(resource.attributes).toContainEqual({ key: "taskjourney.role", value: { stringValue: "worker" } });
        }
      }
    }
  });

  it("explain gives each job's explain() from the app", async () => {
    expect(Object.keys(explained).sort()).toEqual(JOBS.map((job) => job.key).sort());
    for (const job of JOBS) {
      const result = await cli("explain", job.key, otlp);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${formatBreakdown(explained[job.key])}\n`);
    }
    expect(formatBreakdown(explained["load-1"])).toContain("error: Error: bad row 7 in load-1");
  });

  it("report shows the slowest job's explain(), the jobs counted from the metrics, the failed one and why", async () => {
    const out = path.join(cwd, "report.html");
    const result = await cli("report", otlp, "--out", out);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const page = fs.readFileSync(out, "utf8");
    // inc-2: 0.5 s waiting, 0.125 s ready, 2.25 s executing, the slowest of the three.
    // (toBe(true): the page inlines ECharts, too long to print on a failure.)
    const has = (text: string) => expect(page.includes(text), text).toBe(true);
    has(`<pre class="tree">${escapeHtml(formatBreakdown(explained["inc-2"]))}</pre>`);
    has('<td class="name">inc</td><td>2</td>');
    has('<td class="name">load</td><td>1</td>');
    has('<td class="why">Error: bad row 7 in load-1</td>');
  });
});
