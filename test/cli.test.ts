/**
 * The `taskjourney` command, run as a child process (`node --import tsx src/cli.ts`), each run
 * bounded in time.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { TaskJourneys, VERSION, formatBreakdown } from "../src/index.js";
import { FakeClock } from "./helpers/clock.js";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(ROOT, "src", "cli.ts");
const WORKER = "tcp://10.0.0.7:40001";
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-cli-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", CLI, ...args], { cwd: ROOT, timeout: 30_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A worker's journeys of inc-1 and sum-1 (waiting on a fetched x-1), as one OTLP/JSON line. */
function traceFile(): { file: string; journeys: TaskJourneys } {
  const clock = new FakeClock(10);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const journeys = new TaskJourneys({
    role: "worker",
    instance: WORKER,
    clock: clock.now,
    timeOrigin: 1_700_000_000,
    tracerProvider: provider,
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
  });
  journeys.transition("inc-1", "released", "waiting");
  clock.advance(1);
  journeys.transition("inc-1", "waiting", "ready");
  clock.advance(0.5);
  const ledger = journeys.execute("inc-1");
  ledger.meter("deserialize", () => clock.advance(0.25));
  clock.advance(2);
  ledger.digest("thread-cpu", 1.5);
  ledger.digest("thread-noncpu", 0.25);
  ledger.end("memory");
  journeys.transition("sum-1", "released", "waiting");
  journeys.dependencies("sum-1", ["x-1"]);
  journeys.transition("x-1", "released", "fetch");
  const transfer = journeys.gather("tcp://peer:1", ["x-1"], 100);
  transfer.meter("network", () => clock.advance(1));
  transfer.end("ok");
  journeys.transition("sum-1", "waiting", "ready");
  journeys.execute("sum-1").end("memory");
  const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()));
  const file = path.join(directory, "spans.jsonl");
  fs.writeFileSync(file, `${json}\n`);
  return { file, journeys };
}

describe("taskjourney CLI", () => {
  const { file, journeys } = traceFile();

  it("--help and --version", async () => {
    const [help, version] = await Promise.all([run("--help"), run("--version")]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("taskjourney explain <key> --from <file or directory>... [--json] [--all] [--max-bytes <n>]");
    expect(help.stdout).toContain("taskjourney report --from <file or directory>... [--out <report.html>] [--title <text>] [--max-bytes <n>]");
    expect(version).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  }, 60_000);

  it("usage errors exit with 2 and say what is wrong", async () => {
    const [none, unknown, noKey, noFrom, badOption, reportNoFrom] = await Promise.all([
      run(),
      run("frobnicate"),
      run("explain", "--from", file),
      run("explain", "inc-1"),
      run("explain", "inc-1", "--from", file, "--bogus"),
      run("report", "--out", path.join(directory, "x.html")),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Usage:");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("explain needs a key");
    expect(noFrom.code).toBe(2);
    expect(noFrom.stderr).toContain("explain needs --from <file>");
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain("--bogus");
    expect(reportNoFrom.code).toBe(2);
    expect(reportNoFrom.stderr).toContain("report needs --from <files or directories>");
  }, 60_000);

  it("data errors exit with 1: a missing file, a key not in the file (listing keys found), a file that is not JSON", async () => {
    const garbage = path.join(directory, "garbage.jsonl");
    fs.writeFileSync(garbage, "hello\n");
    const [missing, notFound, bad] = await Promise.all([
      run("explain", "inc-1", "--from", path.join(directory, "nope.jsonl")),
      run("explain", "dec-9", "--from", file),
      run("explain", "inc-1", "--from", garbage),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/input .*nope\.jsonl does not exist/);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toContain('no journey of key "dec-9"');
    expect(notFound.stderr).toMatch(/its 3 task keys include "inc-1", "(sum|x)-1", "(sum|x)-1"/);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("line 1 is not JSON");
  }, 60_000);

  it("explain prints the tree explain() gives, or its JSON", async () => {
    const text = await run("explain", "inc-1", "--from", file);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`${formatBreakdown(journeys.explain("inc-1")!)}\n`);
    const json = await run("explain", "sum-1", "--from", file, "--json");
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    const expected = journeys.explain("sum-1")!;
    expect(parsed.key).toBe("sum-1");
    expect(parsed.children.map((node: { name: string }) => node.name)).toEqual(expected.children.map((node) => node.name));
    expect(parsed.seconds).toBeCloseTo(expected.seconds, 6);
  }, 60_000);

  it("explain --all prints every journey of the key", async () => {
    const all = await run("explain", "x-1", "--from", file, "--all", "--json");
    expect(all.code).toBe(0);
    const parsed = JSON.parse(all.stdout);
    expect(Array.isArray(parsed)).toBe(true);
    expect(parsed.map((breakdown: { kind: string }) => breakdown.kind)).toEqual(["fetch"]);
  }, 60_000);

  it("report writes a self-contained HTML page from a summary", async () => {
    const summary = path.join(directory, "summary.json");
    fs.writeFileSync(
      summary,
      JSON.stringify({
        title: "cli <test>",
        generatedAt: "2026-11-30T00:00:00Z",
        prefixes: [{ prefix: "inc", count: 1, p50: 2.25, p90: 2.25, p99: 2.25, stateSeconds: { waiting: 1, ready: 0.5, executing: 2.25 } }],
        execute: { "thread-cpu": 1.5 },
        gather: {},
        wait: {},
        slowest: [journeys.explain("inc-1")],
      }),
    );
    const out = path.join(directory, "report.html");
    const result = await run("report", "--from", summary, "--out", out);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`wrote ${out}\n`);
    const page = fs.readFileSync(out, "utf8");
    expect(page).toContain("<title>cli &lt;test&gt;</title>");
    expect(page).toContain('<td class="name">inc</td><td>1</td>');
    // Default output: beside the summary, .html for .json.
    const beside = await run("report", "--from", summary, "--title", "other");
    expect(beside.code).toBe(0);
    expect(fs.readFileSync(path.join(directory, "summary.html"), "utf8")).toContain("<title>other</title>");
    fs.writeFileSync(path.join(directory, "bad.json"), "{");
    const bad = await run("report", "--from", path.join(directory, "bad.json"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("is not JSON");
    fs.writeFileSync(path.join(directory, "wrong.json"), '{"hello": 1}');
    const wrong = await run("report", "--from", path.join(directory, "wrong.json"));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("no taskjourney spans, metrics or summary in");
    expect(wrong.stderr).toContain("expected OTLP/JSON requests");
  }, 60_000);
});
