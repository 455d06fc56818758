/**
 * Reading input files: a piece at a time, refused above the size limit whether or not the size
 * is known beforehand, binary data refused after its first bytes, directories expanded.
 */
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expandInputs, OtlpDocumentReader, OtlpJsonError, readInputFile } from "../../src/report/input-files.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-input-files-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

function documentsOf(file: string, maxBytes?: number): unknown[] {
  const documents: unknown[] = [];
  readInputFile(file, (document) => documents.push(document), { maxBytes });
  return documents;
}

/** What JSON.parse says of `text`, as this runtime words it. */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} is JSON`);
}

describe("readInputFile", () => {
  it("JSON lines one document each, or one pretty-printed document, across any piece boundaries", () => {
    const lines = path.join(directory, "lines.jsonl");
    fs.writeFileSync(lines, '{"a":1}\n\n  [2, 3]\r\n{"b":"ü€"}');
    expect(documentsOf(lines)).toEqual([{ a: 1 }, [2, 3], { b: "ü€" }]);
    const pretty = path.join(directory, "pretty.json");
    fs.writeFileSync(pretty, JSON.stringify({ resourceSpans: [{ x: 1 }] }, null, 2));
    expect(documentsOf(pretty)).toEqual([{ resourceSpans: [{ x: 1 }] }]);
    // The same texts fed one character at a time.
    for (const text of ['{"a":1}\n[2]\n', JSON.stringify({ p: [1, 2] }, null, 2)]) {
      const documents: unknown[] = [];
      const reader = new OtlpDocumentReader("pieces", (document) => documents.push(document));
      for (const char of text) reader.feed(char);
      reader.end();
      expect(documents).toEqual(text.startsWith('{"a"') ? [{ a: 1 }, [2]] : [{ p: [1, 2] }]);
    }
  });

  it("a line that is not JSON is named; binary data (/dev/zero) is refused after its first bytes", () => {
    const bad = path.join(directory, "bad.jsonl");
    fs.writeFileSync(bad, '{"a":1}\n{"b":\n');
    expect(() => documentsOf(bad)).toThrow(/bad\.jsonl: line 2 \(.*\) is not JSON/);
    expect(() => documentsOf("/dev/zero")).toThrow(
      new OtlpJsonError(
        '/dev/zero: line 1 is not JSON (it begins with "\\x00"); expected OTLP/JSON requests, one per line',
      ),
    );
  });

  it("with skipBroken, requests cut off (lines that begin as one but are not JSON) are skipped and told, the others read; a line that is not a request still refuses the file", () => {
    const killed = path.join(directory, "killed.jsonl");
    const skip = (file: string, documents: unknown[] = []) =>
      readInputFile(file, (document) => documents.push(document), { skipBroken: true }).skipped;
    // A process killed while writing its third request.
    fs.writeFileSync(killed, '{"a":1}\n{"b":2}\n{"resourceSpans":[{"scopeSp');
    expect(() => documentsOf(killed)).toThrow(/killed\.jsonl: line 3 \(.*\) is not JSON/);
    const documents: unknown[] = [];
    expect(skip(killed, documents)).toBe(
      `${killed}: line 3 (${jsonError('{"resourceSpans":[{"scopeSp')}) is a request cut off, as a process stopped ` +
        "while writing leaves one: skipped; the 2 others are read",
    );
    expect(documents).toEqual([{ a: 1 }, { b: 2 }]);
    // Killed in its first request, then started again (the exporter begins a new line): the
    // first line is neither a request nor a document's start, and the rest is read as lines.
    const restarted = path.join(directory, "restarted.jsonl");
    fs.writeFileSync(restarted, '{"resourceSp\n{"a":1}\n[2\n{"b":2}\n');
    const again: unknown[] = [];
    expect(skip(restarted, again)).toMatch(
      /restarted\.jsonl: 2 lines are requests cut off \(lines 1 \(.+\), 3 \(.+\)\), as processes stopped while writing leave them: skipped; the 2 others are read$/,
    );
    expect(again).toEqual([{ a: 1 }, { b: 2 }]);
    // Five lines are named, the rest counted.
    fs.writeFileSync(restarted, `{"a":1}\n${"{\n".repeat(7)}`);
    expect(skip(restarted)).toMatch(/7 lines are requests cut off \(lines 2 .*, 6 \(.+\) and 2 more\), as processes/);
    // Killed in its first request and never started again: nothing to read, nothing refused.
    fs.writeFileSync(restarted, '{"resourceSp');
    expect(skip(restarted)).toMatch(/line 1 \(.+\) is a request cut off, .*; the 0 others are read$/);
    // Whole lines: nothing told.
    fs.writeFileSync(restarted, '{"a":1}\n{"b":2}');
    expect(skip(restarted)).toBeUndefined();
    // Refused: a line that does not begin as a request; a pretty-printed document's end missing.
    for (const text of ['{"a":1}\nhello\n', '{"a":\nhello\n', JSON.stringify({ p: [1, 2] }, null, 2).slice(0, -3)]) {
      fs.writeFileSync(restarted, text);
      expect(() => skip(restarted), text).toThrow(OtlpJsonError);
    }
    fs.writeFileSync(restarted, JSON.stringify({ p: [1, 2] }, null, 2).slice(0, -3));
    expect(() => skip(restarted)).toThrow(
      /line 1 \(.*\) is not JSON; expected OTLP\/JSON requests, one per line, or one JSON document/,
    );
  });

  it("a file above the limit is refused before it is read, naming the option", () => {
    const big = path.join(directory, "big.jsonl");
    fs.writeFileSync(big, `${'{"a":1}\n'.repeat(1000)}`);
    expect(documentsOf(big, 8000)).toHaveLength(1000);
    expect(() => documentsOf(big, 7999)).toThrow(
      `${big} holds 8000 bytes, more than 7999 bytes, the size limit (raise it with --max-bytes <bytes>, the maxBytes option)`,
    );
  });

  it("a pipe, whose size is unknown, is refused once it has given more than the limit", async () => {
    const fifo = path.join(directory, "fifo");
    execFileSync("mkfifo", [fifo]);
    // A writer that would send 64 MiB of one never-ending JSON line.
    const writer = spawn("sh", ["-c", `{ printf '['; head -c 67108864 /dev/zero | tr '\\000' ' '; } > '${fifo}'`], {
      stdio: "ignore",
    });
    const closed = new Promise((resolve) => writer.on("close", resolve));
    expect(() => documentsOf(fifo, 4 * 1024 * 1024)).toThrow(`${fifo} holds more than 4 MiB, the size limit`);
    writer.kill();
    await closed;
  });
});

describe("expandInputs", () => {
  it("a directory stands for its .json/.jsonl/.ndjson files by name; a file named twice is read once; a missing one is named", () => {
    const dir = path.join(directory, "telemetry");
    fs.mkdirSync(path.join(dir, "nested"), { recursive: true });
    for (const name of [
      "traces-b.jsonl",
      "metrics-a.jsonl",
      "summary.json",
      "report.html",
      "notes.txt",
      "nested/traces-c.jsonl",
    ])
      fs.writeFileSync(path.join(dir, name), "{}\n");
    expect(expandInputs([dir, path.join(dir, "summary.json")]).map((file) => path.relative(dir, file))).toEqual([
      "metrics-a.jsonl",
      "summary.json",
      "traces-b.jsonl",
    ]);
    expect(() => expandInputs([path.join(dir, "nope.jsonl")])).toThrow(/input .*nope\.jsonl does not exist/);
    expect(() => expandInputs([path.join(dir, "nested", "..", "nested")])).not.toThrow();
    fs.mkdirSync(path.join(directory, "empty"));
    expect(() => expandInputs([path.join(directory, "empty")])).toThrow(
      /directory .*empty holds no \.json or \.jsonl file/,
    );
  });
});
