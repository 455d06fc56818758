/**
 * Reading input files: a piece at a time, refused above the size limit whether or not the size
 * is known beforehand, binary data refused after its first bytes, directories expanded.
 */
import { spawn, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { constants as bufferConstants } from "node:buffer";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINE_CHARS,
  expandInputs,
  MAX_ARRAY_NESTING,
  OtlpDocumentReader,
  OtlpJsonError,
  readInputFile,
} from "../../src/report/input-files.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";

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

describe("lines too long and documents too deep", () => {
  it("the longest line read is below V8's longest string, whatever the file size limit", () => {
    expect(DEFAULT_MAX_LINE_CHARS).toBeLessThan(bufferConstants.MAX_STRING_LENGTH);
    // A file just under the size limit could be one line longer than any string.
    expect(DEFAULT_MAX_LINE_CHARS).toBeLessThan(DEFAULT_MAX_BYTES);
  });

  it("a line longer than the limit is refused naming the file and line, before it is all read", () => {
    const long = path.join(directory, "long-line.jsonl");
    // Lines 1 and 3 fit; line 2 (150 characters) does not.
    fs.writeFileSync(long, `{"a":1}\n{"b":"${"x".repeat(142)}"}\n{"c":3}\n`);
    const read = (maxLineChars: number, documents: unknown[] = []) =>
      readInputFile(long, (document) => documents.push(document), { maxLineChars });
    const message = `${long}: line 2 is longer than 100 characters, the longest line read (one OTLP request per line is expected, and a JavaScript string holds at most ${bufferConstants.MAX_STRING_LENGTH})`;
    expect(() => read(100)).toThrow(new OtlpJsonError(message));
    // Fed in pieces, the line is refused once its pieces pass the limit (here its first piece).
    const documents: unknown[] = [];
    const reader = new OtlpDocumentReader(long, (document) => documents.push(document), false, undefined, 100);
    reader.feed('{"a":1}\n{"b":"');
    expect(() => reader.feed("x".repeat(100))).toThrow(new OtlpJsonError(message));
    expect(documents).toEqual([{ a: 1 }]);
    // At the limit it is read.
    expect(() => read(150)).not.toThrow();
    // A last line, with no newline after it.
    fs.writeFileSync(long, `{"a":1}\n{"b":"${"x".repeat(142)}"}`);
    expect(() => read(100)).toThrow(new OtlpJsonError(message));
  });

  it("one JSON document over several lines longer than the limit is refused naming the file", () => {
    const pretty = path.join(directory, "long-document.json");
    fs.writeFileSync(pretty, JSON.stringify({ resourceSpans: [{ x: "y".repeat(200) }] }, null, 2));
    expect(() => readInputFile(pretty, () => undefined, { maxLineChars: 100 })).toThrow(
      `${pretty}: line 1 is not JSON by itself, and the text from there, read as one JSON document, is longer than 100 characters, the longest document read`,
    );
    expect(() => readInputFile(pretty, () => undefined, { maxLineChars: 1000 })).not.toThrow();
  });

  it("each document is handed on with the line it was on", () => {
    const lines = path.join(directory, "where.jsonl");
    fs.writeFileSync(lines, '{"a":1}\n\n{"b":2}\n');
    const where: string[] = [];
    readInputFile(lines, (_document, at) => where.push(at));
    expect(where).toEqual(["line 1", "line 3"]);
    fs.writeFileSync(lines, JSON.stringify({ a: [1] }, null, 2));
    where.length = 0;
    readInputFile(lines, (_document, at) => where.push(at));
    expect(where).toEqual(["its one JSON document"]);
  });

  it("a million nested arrays on one line: readTelemetryFiles names the file and line, no stack overflow", () => {
    const deep = path.join(directory, "deep.jsonl");
    fs.writeFileSync(deep, `{"resourceSpans":[]}\n${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`);
    expect(() => readTelemetryFiles([deep])).toThrow(
      new OtlpJsonError(
        `${deep}: line 2 nests arrays more than ${MAX_ARRAY_NESTING} deep; expected OTLP/JSON requests, one per line, or one JSON document holding a request or an array of them`,
      ),
    );
    // Arrays of requests within arrays, as deep as that, are read.
    fs.writeFileSync(deep, `${"[".repeat(MAX_ARRAY_NESTING)}{"resourceSpans":[]}${"]".repeat(MAX_ARRAY_NESTING)}\n`);
    expect(readTelemetryFiles([deep]).unused).toEqual([]);
  });
});

describe("byte-identical request lines", () => {
  it("are read once by readTelemetryFiles, told once per file; a broken line repeated stays told as broken", () => {
    const span = (id: string) =>
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: id, name: "s", startTimeUnixNano: "1" }],
              },
            ],
          },
        ],
      });
    const retried = path.join(directory, "retried.jsonl");
    fs.writeFileSync(
      retried,
      `${span("b7ad6b7169203331")}\n${span("b7ad6b7169203332")}\n${span("b7ad6b7169203331")}\n{"resourceSp\n{"resourceSp\n`,
    );
    const read = readTelemetryFiles([retried]);
    expect(read.spans.map((decoded) => decoded.spanId)).toEqual(["b7ad6b7169203331", "b7ad6b7169203332"]);
    expect(read.duplicates).toEqual([
      `${retried}: line 3 is a byte-identical copy of line 1 (as an OTLP exporter's retry after a timeout leaves in a Collector's file): skipped`,
    ]);
    expect(read.skipped).toEqual([expect.stringMatching(/: 2 lines are requests cut off \(lines 4 .*, 5 /)]);
    // Without a map of lines seen, readInputFile reads every line.
    const documents: unknown[] = [];
    readInputFile(retried, (document) => documents.push(document), { skipBroken: true });
    expect(documents).toHaveLength(3);
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
