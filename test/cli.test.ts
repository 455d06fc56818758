/**
 * The `taskjourney` command, run in this process through its `main(argv, io)`, which returns the
 * exit code and writes through `io` what the bin writes to stdout and stderr. A few runs of the
 * real bin in a child process (bounded in time) check what only a process shows: the exit status
 * it sets and the streams it writes.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { main } from "../src/cli.js";
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

/** The command line `args`, in process: what the bin would print, and its exit code. */
async function run(...args: string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** The command line `args` in a process of its own, as the bin runs (`node --import tsx src/cli.ts`). */
function spawned(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { cwd: ROOT, timeout: 30_000, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A worker's journeys of inc-1 and sum-1 (waiting on a fetched x-1), as one OTLP/JSON line. */
function traceFile(): { file: string; journeys: TaskJourneys } {
  const clock = new FakeClock(10);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: exporter })] });
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
    expect(help.stdout).toContain(
      "taskjourney explain <key> [--from] <file or directory>... [--json] [--all] [--max-bytes <n>]",
    );
    expect(help.stdout).toContain(
      "taskjourney report [--from] <file or directory>... [--out <report.html>] [--title <text>] [--state <name>] [--max-bytes <n>]",
    );
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
    // Why a key a user knows ran may not be there: it was not sampled.
    expect(notFound.stderr).toContain(
      "Only journeys that became spans are there: sampled ones (sampling.ratio, 1% of keys by default), slow ones and failed ones",
    );
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
    expect(parsed.children.map((node: { name: string }) => node.name)).toEqual(
      expected.children.map((node) => node.name),
    );
    expect(parsed.seconds).toBeCloseTo(expected.seconds, 6);
  }, 60_000);

  it("a file whose last line is cut off (its process stopped while writing) is read up to it, with a warning", async () => {
    const killed = path.join(directory, "killed.jsonl");
    const whole = fs.readFileSync(file, "utf8");
    fs.writeFileSync(killed, `${whole}${whole.slice(0, 1000)}`);
    const result = await run("explain", "inc-1", killed);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${formatBreakdown(journeys.explain("inc-1")!)}\n`);
    expect(result.stderr).toMatch(
      new RegExp(
        `^taskjourney: warning: ${killed.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: line 2 \\(.+\\) is a request cut off, ` +
          "as a process stopped while writing leaves one: skipped; the 1 other request is read\n$",
      ),
    );
  }, 60_000);

  it("a request line repeated byte for byte (an OTLP retry in a Collector's file) is read once, with one warning per file; the same span id with other content is still refused", async () => {
    const whole = fs.readFileSync(file, "utf8");
    const retried = path.join(directory, "retried.jsonl");
    fs.writeFileSync(retried, `${whole}${whole}\n${whole}`);
    const copied = path.join(directory, "copied.jsonl");
    fs.writeFileSync(copied, whole);
    const changed = path.join(directory, "changed.jsonl");
    fs.writeFileSync(changed, `${whole}${whole.replace('"name":"task inc"', '"name":"task inc2"')}`);
    expect(fs.readFileSync(changed, "utf8")).not.toBe(`${whole}${whole}`);
    const [explained, reported, twoFiles, different] = await Promise.all([
      run("explain", "inc-1", retried),
      run("report", retried, "--out", path.join(directory, "retried.html")),
      run("explain", "inc-1", file, copied),
      run("explain", "inc-1", changed),
    ]);
    const warning =
      `taskjourney: warning: ${retried}: 2 lines are byte-identical copies of earlier ones (lines 2 (of line 1), 4 (of line 1); ` +
      "as an OTLP exporter's retry after a timeout leaves in a Collector's file): skipped\n";
    expect(explained).toEqual({
      code: 0,
      stdout: `${formatBreakdown(journeys.explain("inc-1")!)}\n`,
      stderr: warning,
    });
    expect(reported.code).toBe(0);
    expect(reported.stderr.split("\n").filter((line) => line.includes("byte-identical"))).toEqual([warning.trim()]);
    expect(twoFiles.code).toBe(0);
    expect(twoFiles.stderr).toBe(
      `taskjourney: warning: ${copied}: line 1 is a byte-identical copy of ${file}:1 ` +
        "(as an OTLP exporter's retry after a timeout leaves in a Collector's file): skipped\n",
    );
    expect(different.code).toBe(1);
    expect(different.stderr).toMatch(/span id [0-9a-f]{16} appears twice in trace/);
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
        prefixes: [
          {
            prefix: "inc",
            count: 1,
            p50: 2.25,
            p90: 2.25,
            p99: 2.25,
            stateSeconds: { waiting: 1, ready: 0.5, executing: 2.25 },
          },
        ],
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
    fs.writeFileSync(path.join(directory, "bad.json"), '{"resourceSpans": []}\nhello\n');
    const bad = await run("report", "--from", path.join(directory, "bad.json"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("is not JSON");
    // "{" begins a request but is not JSON: a request cut off, skipped and told; nothing is left to report.
    fs.writeFileSync(path.join(directory, "bad.json"), "{");
    const cut = await run("report", "--from", path.join(directory, "bad.json"));
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain("line 1 (");
    expect(cut.stderr).toContain("is a request cut off");
    expect(cut.stderr).toContain("no taskjourney spans, metrics or summary in");
    fs.writeFileSync(path.join(directory, "wrong.json"), '{"hello": 1}');
    const wrong = await run("report", "--from", path.join(directory, "wrong.json"));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("no taskjourney spans, metrics or summary in");
    expect(wrong.stderr).toContain("expected OTLP/JSON requests");
  }, 60_000);
});

describe("taskjourney CLI: several inputs, limits, hostile files", () => {
  const { file, journeys } = traceFile();

  it("explain --from takes several files and directories, or as arguments after the key; duplicated files are read once", async () => {
    const dir = path.join(directory, "split");
    fs.mkdirSync(dir, { recursive: true });
    // The one request split into one request per span, spread over two files as two processes would write them.
    const request = JSON.parse(fs.readFileSync(file, "utf8")) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }>;
    };
    const spans = request.resourceSpans[0].scopeSpans[0].spans;
    const line = (part: unknown[]) =>
      JSON.stringify({
        ...request,
        resourceSpans: [
          { ...request.resourceSpans[0], scopeSpans: [{ ...request.resourceSpans[0].scopeSpans[0], spans: part }] },
        ],
      });
    const half = Math.ceil(spans.length / 2);
    fs.writeFileSync(path.join(dir, "traces-a.jsonl"), `${line(spans.slice(0, half))}\n`);
    fs.writeFileSync(path.join(dir, "traces-b.jsonl"), `${line(spans.slice(half))}\n`);
    const expected = `${formatBreakdown(journeys.explain("inc-1")!)}\n`;
    const [fromDirectory, fromFiles, twice, asArguments] = await Promise.all([
      run("explain", "inc-1", "--from", dir),
      run("explain", "inc-1", "--from", path.join(dir, "traces-a.jsonl"), "--from", path.join(dir, "traces-b.jsonl")),
      run("explain", "inc-1", "--from", dir, "--from", path.join(dir, "traces-a.jsonl")),
      run("explain", "inc-1", path.join(dir, "traces-a.jsonl"), path.join(dir, "traces-b.jsonl")),
    ]);
    expect(fromDirectory).toEqual({ code: 0, stdout: expected, stderr: "" });
    expect(fromFiles).toEqual({ code: 0, stdout: expected, stderr: "" });
    expect(twice).toEqual({ code: 0, stdout: expected, stderr: "" });
    expect(asArguments).toEqual({ code: 0, stdout: expected, stderr: "" });
  }, 60_000);

  it("--max-bytes refuses larger files; /dev/zero and reused span ids end at once with a clear message", async () => {
    const size = fs.statSync(file).size;
    const crafted = path.join(directory, "crafted.jsonl");
    const request = JSON.parse(fs.readFileSync(file, "utf8")) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ spanId: string }> }> }>;
    };
    const spans = request.resourceSpans[0].scopeSpans[0].spans;
    spans.push({ ...spans[0] });
    fs.writeFileSync(crafted, JSON.stringify(request));
    const [limited, enough, zero, reused, badLimit] = await Promise.all([
      run("explain", "inc-1", "--from", file, "--max-bytes", String(size - 1)),
      run("explain", "inc-1", "--from", file, "--max-bytes", String(size)),
      run("explain", "inc-1", "--from", "/dev/zero"),
      run("explain", "inc-1", "--from", crafted),
      run("explain", "inc-1", "--from", file, "--max-bytes", "lots"),
    ]);
    expect(limited.code).toBe(1);
    expect(limited.stderr).toBe(
      `taskjourney: ${file} holds ${size} bytes, more than ${size - 1} bytes, the size limit (raise it with --max-bytes <bytes>, the maxBytes option)\n`,
    );
    expect(enough.code).toBe(0);
    expect(zero).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'taskjourney: /dev/zero: line 1 is not JSON (it begins with "\\x00"); expected OTLP/JSON requests, one per line\n',
    });
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain(`${crafted}: span id ${spans[0].spanId} appears twice in trace`);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain('--max-bytes takes a positive whole number of bytes, got "lots"');
  }, 60_000);

  it("a million nested arrays, or a summary's tree nested past its limit, is a message naming the file and where, not a stack overflow", async () => {
    const deep = path.join(directory, "deep.jsonl");
    fs.writeFileSync(deep, `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`);
    // 10,000 levels of children (as text: JSON.stringify itself would overflow the stack on it).
    const tree = `${'{"name":"a","seconds":1,"children":['.repeat(10_000)}${"]}".repeat(10_000)}`;
    const summary = path.join(directory, "deep-summary.json");
    fs.writeFileSync(summary, `{"prefixes":[],"slowest":[{"key":"k-1","seconds":1,"children":[${tree}]}]}`);
    const [explained, reported, deepTree] = await Promise.all([
      run("explain", "inc-1", deep),
      run("report", deep, "--out", path.join(directory, "deep.html")),
      run("report", summary, "--out", path.join(directory, "deep-summary.html")),
    ]);
    const nested = `taskjourney: ${deep}: line 1 nests arrays more than 4 deep; expected OTLP/JSON requests, one per line, or one JSON document holding a request or an array of them\n`;
    expect(explained).toEqual({ code: 1, stdout: "", stderr: nested });
    expect(reported).toEqual({ code: 1, stdout: "", stderr: nested });
    expect(deepTree).toEqual({
      code: 1,
      stdout: "",
      stderr: `taskjourney: ${summary}: slowest[0]: its children nest more than 256 levels deep\n`,
    });
  }, 60_000);

  it("prints nothing a terminal would act on: keys with escape sequences come out as visible escapes", async () => {
    const clock = new FakeClock(10);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const hostile = new TaskJourneys({
      role: "worker",
      instance: "w\u001b[31m",
      clock: clock.now,
      tracerProvider: provider,
      sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
    });
    const key = "k-\u001b]0;owned\u0007\u009b2J";
    hostile.transition(key, "released", "waiting");
    clock.advance(1);
    hostile.transition(key, "waiting", "ready");
    hostile.execute(key).end("memory");
    const hostileFile = path.join(directory, "hostile.jsonl");
    fs.writeFileSync(
      hostileFile,
      `${new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()))}\n`,
    );
    const [text, json, missing] = await Promise.all([
      run("explain", key, "--from", hostileFile),
      run("explain", key, "--from", hostileFile, "--json"),
      run("explain", "nope", "--from", hostileFile),
    ]);
    // eslint-disable-next-line no-control-regex
    const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
    for (const result of [text, json, missing]) {
      expect(result.stdout).not.toMatch(unsafe);
      expect(result.stderr).not.toMatch(unsafe);
    }
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toBe("k-\\x1b]0;owned\\x07\\x9b2J spent 1.0 s on worker w\\x1b[31m");
    expect(JSON.parse(json.stdout).key).toBe(key);
    expect(missing.stderr).toContain('its 1 task keys include "k-\\u001b]0;owned\\u0007\\x9b2J"');
  }, 60_000);
});

describe("taskjourney CLI as a process", () => {
  it("sets the exit status and writes stdout and stderr: 0 done, 1 bad data, 2 bad usage", async () => {
    const [version, missing, unknown] = await Promise.all([
      spawned("--version"),
      spawned("explain", "inc-1", "--from", path.join(directory, "nope.jsonl")),
      spawned("frobnicate"),
    ]);
    expect(version).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("nope.jsonl");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  }, 60_000);
});
