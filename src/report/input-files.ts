import { constants as bufferConstants } from "node:buffer";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { OutOfRangeError } from "../shared/errors.js";
import { markMeant, OtlpJsonError } from "./arguments.js";
import { terminalSafe } from "./terminal.js";

/**
 * Reading the JSON files the CLI and the report are given: one file at a time, a piece at a
 * time, each JSON document handed on as soon as it is complete, so memory holds the decoded
 * result and one line, not the file; files above a size limit are refused, and directories stand
 * for the JSON files in them (as `taskjourney/sdk`'s `fileDirectory` writes one file per process).
 */

// Defined beside the toolkit's other meant errors (arguments.ts, which the main entry loads for formatBreakdown).
export { OtlpJsonError } from "./arguments.js";

/** The default limit on one input file: 512 MiB. */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The longest line (or one JSON document over several lines) read: 256 Mi characters, below
 * V8's longest string (bufferConstants.MAX_STRING_LENGTH, 2^29 - 24 on 64-bit: a 512 MiB file of
 * one line would not even fit in one). A line is one OTLP request (a Collector's are a few MiB),
 * and parsing one of this length already takes gigabytes of heap.
 */
export const DEFAULT_MAX_LINE_CHARS = Math.min(256 * 1024 * 1024, bufferConstants.MAX_STRING_LENGTH - 1024 * 1024);

/**
 * Arrays within arrays followed (`[[request, …], …]`): deeper ones refuse the file, rather than
 * overflow the stack (a line of a million `[`) or be walked for nothing.
 */
export const MAX_ARRAY_NESTING = 4;

/** The file names a directory stands for. */
const JSON_FILE = /\.(jsonl|json|ndjson)$/i;

const CHUNK_BYTES = 1 << 20;

/** Broken lines named in a reader's `skipped` message; the rest are counted. */
const NAMED_BROKEN_LINES = 5;

/**
 * Splits OTLP/JSON text fed in pieces into its JSON documents: one per line (JSON lines), or,
 * when the first line is not a whole document, the whole text as one (pretty-printed) document.
 * A line that cannot begin a JSON object or array fails at once, before the rest of it is read,
 * so a binary file or /dev/zero is refused after its first bytes.
 *
 * With `skipBroken`, a line that begins as a request but is not JSON is skipped, and told in
 * `skipped`, instead of refusing the text: what a process killed while writing a request leaves,
 * at the end of its file or, when it was started again and appended to it, within it (the
 * exporter begins a new line then). The requests around it were recorded whole; refusing the file
 * for one would lose them all, and a command given a directory every file of it.
 */
export class OtlpDocumentReader {
  private pending = "";
  /** Whether the line being read has shown its first non-blank character (and it was checked). */
  private started = false;
  private line = 0;
  private documents = 0;
  /** The whole text so far, once the first line turned out not to be a document by itself. */
  private whole: string[] | undefined;
  private firstError: string | undefined;
  /** Reading the whole text again as lines, its first line having been neither a request nor the start of a document. */
  private rereading = false;
  /** Broken lines skipped: how many, and the first few with JSON.parse's message. */
  private brokenCount = 0;
  private readonly broken: string[] = [];
  /** Characters in `whole`. */
  private wholeChars = 0;
  /** Lines skipped as byte-identical copies of earlier ones: how many, and the first few with the line they copy. */
  private copyCount = 0;
  private readonly copies: Array<{ line: number; of: string }> = [];

  constructor(
    private readonly source: string,
    /** Each document, and where it was: "line 3", or "its one JSON document" (several lines). */
    private readonly onDocument: (document: unknown, where: string) => void,
    /** Skip lines that are broken requests (see `skipped`) rather than refuse the text for them. */
    private readonly skipBroken = false,
    /**
     * Lines the caller has no use for, by their beginning (a metrics request, to explain()): not
     * parsed, and never told as broken; each counts as a document read.
     */
    private readonly unwanted?: (line: string) => boolean,
    /** The longest line or document read (DEFAULT_MAX_LINE_CHARS; smaller in tests). */
    private readonly maxLineChars = DEFAULT_MAX_LINE_CHARS,
    /**
     * Lines read before (of this text and of others sharing the map), by a digest of their bytes,
     * to where they were: a line seen before is skipped and told in `duplicates`. Undefined: every
     * line is read.
     */
    private readonly seen?: Map<string, string>,
  ) {}

  /** What was skipped, naming the source and the lines, or undefined when nothing was. */
  get skipped(): string | undefined {
    const count = this.brokenCount;
    if (count === 0) return undefined;
    const more = count - this.broken.length;
    const lines = `${this.broken.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
    const read = this.documents === 1 ? "the 1 other request is read" : `the ${this.documents} others are read`;
    return count === 1
      ? `${this.source}: line ${lines} is a request cut off, as a process stopped while writing leaves one: skipped; ${read}`
      : `${this.source}: ${count} lines are requests cut off (lines ${lines}), as processes stopped while writing leave them: skipped; ${read}`;
  }

  /** What was skipped as copies of earlier lines, naming the source and the lines, or undefined. */
  get duplicates(): string | undefined {
    const count = this.copyCount;
    if (count === 0) return undefined;
    const why = "as an OTLP exporter's retry after a timeout leaves in a Collector's file";
    if (count === 1) {
      const { line, of } = this.copies[0];
      return `${this.source}: line ${line} is a byte-identical copy of ${of} (${why}): skipped`;
    }
    const more = count - this.copies.length;
    const lines = `${this.copies.map(({ line, of }) => `${line} (of ${of})`).join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
    return `${this.source}: ${count} lines are byte-identical copies of earlier ones (lines ${lines}; ${why}): skipped`;
  }

  /** The next piece of text; may end in the middle of a line. */
  feed(text: string): void {
    if (this.whole !== undefined) {
      this.addToWhole(text);
      return;
    }
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      // Checked before the line is made: one past V8's longest string would throw "Invalid string length".
      if (this.pending.length + (newline - start) > this.maxLineChars) throw this.lineTooLong();
      const line = this.pending + text.slice(start, newline);
      this.pending = "";
      this.started = false;
      start = newline + 1;
      this.completeLine(line);
      // completeLine may have switched to reading one whole document.
      const whole = this.whole as string[] | undefined;
      if (whole !== undefined) {
        this.addToWhole(text.slice(start));
        return;
      }
    }
    const rest = text.slice(start);
    if (this.pending.length + rest.length > this.maxLineChars) throw this.lineTooLong();
    this.pending += rest;
    // Only the new text is looked at, so a long line costs its length once.
    if (!this.started && /\S/.test(rest)) {
      this.started = true;
      this.checkStart(rest, this.line + 1);
    }
  }

  private addToWhole(text: string): void {
    this.wholeChars += text.length;
    if (this.wholeChars > this.maxLineChars)
      throw new OtlpJsonError(
        `${this.source}: line 1 is not JSON by itself, and the text from there, read as one JSON document, is longer than ${this.maxLineChars} characters, the longest document read; expected OTLP/JSON requests, one per line (as the Collector's file exporter writes them)`,
      );
    this.whole!.push(text);
  }

  /** The line being read (the next one) is longer than maxLineChars. */
  private lineTooLong(): OtlpJsonError {
    return new OtlpJsonError(
      `${this.source}: line ${this.line + 1} is longer than ${this.maxLineChars} characters, the longest line read (one OTLP request per line is expected, and a JavaScript string holds at most ${bufferConstants.MAX_STRING_LENGTH})`,
    );
  }

  /** The end of the text: decodes what is left. */
  end(): void {
    if (this.whole !== undefined) {
      const text = this.whole.join("");
      this.whole = [];
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {
        if (this.skipBroken) return this.reread(text);
        throw this.notJson();
      }
      this.onDocument(document, "its one JSON document");
      return;
    }
    if (this.pending !== "") {
      const line = this.pending;
      this.pending = "";
      this.completeLine(line, true);
      if (this.whole !== undefined) this.end();
    }
  }

  private notJson(): OtlpJsonError {
    return new OtlpJsonError(
      `${this.source}: line ${this.firstError} is not JSON; expected OTLP/JSON requests, one per line, or one JSON document`,
    );
  }

  /** Not one document: the text as JSON lines after all, its first line a broken one (a process stopped in its first write). */
  private reread(text: string): void {
    this.whole = undefined;
    this.wholeChars = 0;
    this.rereading = true;
    this.line = 0;
    try {
      this.feed(text);
      this.end();
    } catch (error) {
      // Not JSON lines either (a pretty-printed document's inner lines do not begin as requests).
      if (error instanceof OtlpJsonError) throw this.notJson();
      throw error;
    }
  }

  /** `last`: the text's last line, with no newline after it. */
  private completeLine(text: string, last = false): void {
    this.line++;
    const line = text.trim();
    if (line === "") return;
    this.checkStart(line, this.line);
    if (this.unwanted !== undefined && this.unwanted(line)) {
      this.documents++;
      return;
    }
    let document: unknown;
    try {
      document = JSON.parse(line);
    } catch (error) {
      const message = `${this.line} (${error instanceof Error ? error.message : String(error)})`;
      // Not JSON lines: perhaps one pretty-printed document, whose first line is not JSON alone
      // (a last line cannot begin one: that would have had a newline).
      if (this.documents === 0 && !this.rereading && !last) {
        this.firstError = message;
        this.whole = [];
        this.addToWhole(text);
        this.addToWhole("\n");
        return;
      }
      if (!this.skipBroken)
        throw new OtlpJsonError(
          `${this.source}: line ${message} is not JSON; expected OTLP/JSON requests, one per line`,
        );
      if (this.firstError === undefined) this.firstError = message;
      this.brokenCount++;
      if (this.broken.length < NAMED_BROKEN_LINES) this.broken.push(message);
      return;
    }
    // Only a line that parsed: a broken one stays told as broken, however often it recurs.
    if (this.seen !== undefined && this.isCopy(line)) return;
    this.documents++;
    this.onDocument(document, `line ${this.line}`);
  }

  /**
   * Whether `line` is byte for byte one read before (it is remembered if not). Kept as a digest,
   * not the text: memory grows by the lines of the files, not their size.
   */
  private isCopy(line: string): boolean {
    const digest = createHash("sha256").update(line).digest("base64");
    const first = this.seen!.get(digest);
    const here = `${this.source}:${this.line}`;
    if (first === undefined) {
      this.seen!.set(digest, here);
      return false;
    }
    this.copyCount++;
    if (this.copies.length < NAMED_BROKEN_LINES) {
      const sameSource = first.startsWith(`${this.source}:`);
      this.copies.push({ line: this.line, of: sameSource ? `line ${first.slice(this.source.length + 1)}` : first });
    }
    return true;
  }

  /** A line must begin (after blanks) with `{` or `[`: anything else is not OTLP/JSON. */
  private checkStart(text: string, line: number): void {
    const first = /\S/.exec(text);
    if (first === null || first[0] === "{" || first[0] === "[") return;
    throw new OtlpJsonError(
      `${this.source}: line ${line} is not JSON (it begins with "${terminalSafe(first[0])}"); expected OTLP/JSON requests, one per line`,
    );
  }
}

function bytes(count: number): string {
  return count >= 1024 * 1024
    ? `${(count / (1024 * 1024)).toFixed(count % (1024 * 1024) === 0 ? 0 : 1)} MiB`
    : `${count} bytes`;
}

function tooLarge(file: string, maxBytes: number, size?: number): OtlpJsonError {
  const what = size === undefined ? `more than ${bytes(maxBytes)}` : `${bytes(size)}, more than ${bytes(maxBytes)}`;
  return new OtlpJsonError(
    `${file} holds ${what}, the size limit (raise it with --max-bytes <bytes>, the maxBytes option)`,
  );
}

function readError(file: string, error: unknown, what: string): OtlpJsonError {
  const code = (error as { code?: string }).code;
  if (code === "ENOENT") return new OtlpJsonError(`${what} ${file} does not exist`);
  if (code === "EISDIR") return new OtlpJsonError(`${what} ${file} is a directory`);
  return new OtlpJsonError(`cannot read ${what} ${file}: ${(error as Error).message}`);
}

/**
 * Reads `file` a megabyte at a time and hands each JSON document in it (see
 * OtlpDocumentReader) to `onDocument`; with `skipBroken`, returns what was skipped of broken
 * lines. Refuses a file above `maxBytes` before reading it when
 * its size is known, and after `maxBytes` bytes when it is not (a pipe, a device).
 */
export function readInputFile(
  file: string,
  onDocument: (document: unknown, where: string) => void,
  options: {
    maxBytes?: number;
    what?: string;
    skipBroken?: boolean;
    unwanted?: (line: string) => boolean;
    /** @internal The longest line read; DEFAULT_MAX_LINE_CHARS but in tests. */
    maxLineChars?: number;
    /** Skip lines byte-identical to ones read before (see OtlpDocumentReader); shared across files. */
    seen?: Map<string, string>;
  } = {},
): { skipped: string | undefined; duplicates: string | undefined } {
  const { maxBytes = DEFAULT_MAX_BYTES, what = "file", skipBroken = false, unwanted, maxLineChars, seen } = options;
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0))
    throw markMeant(new OutOfRangeError(`maxBytes must be a positive integer, got ${String(maxBytes)}`));
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, "r");
  } catch (error) {
    throw readError(file, error, what);
  }
  try {
    const stat = fs.fstatSync(descriptor);
    if (stat.isDirectory()) throw new OtlpJsonError(`${what} ${file} is a directory`);
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(file, maxBytes, stat.size);
    const reader = new OtlpDocumentReader(file, onDocument, skipBroken, unwanted, maxLineChars, seen);
    const decoder = new StringDecoder("utf8");
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let total = 0;
    for (;;) {
      let read: number;
      try {
        read = fs.readSync(descriptor, buffer, 0, buffer.length, null);
      } catch (error) {
        throw readError(file, error, what);
      }
      if (read === 0) break;
      total += read;
      if (total > maxBytes) throw tooLarge(file, maxBytes);
      reader.feed(decoder.write(buffer.subarray(0, read)));
    }
    reader.feed(decoder.end());
    reader.end();
    return { skipped: reader.skipped, duplicates: reader.duplicates };
  } finally {
    fs.closeSync(descriptor);
  }
}

/**
 * The files that `inputs` name: a file as itself, a directory as its `.json`, `.jsonl` and
 * `.ndjson` files (not its subdirectories), by name. A file named twice is read once.
 */
export function expandInputs(inputs: readonly string[], what = "input"): string[] {
  const files: string[] = [];
  const seen = new Set<string>();
  const add = (file: string) => {
    let real: string;
    try {
      real = fs.realpathSync(file);
    } catch {
      real = path.resolve(file);
    }
    if (seen.has(real)) return;
    seen.add(real);
    files.push(file);
  };
  for (const input of inputs) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(input);
    } catch (error) {
      throw readError(input, error, what);
    }
    if (!stat.isDirectory()) {
      add(input);
      continue;
    }
    const names = fs
      .readdirSync(input, { withFileTypes: true })
      .filter((entry) => JSON_FILE.test(entry.name) && (entry.isFile() || entry.isSymbolicLink()))
      .map((entry) => entry.name)
      .sort();
    if (names.length === 0) throw new OtlpJsonError(`directory ${input} holds no .json or .jsonl file`);
    for (const name of names) add(path.join(input, name));
  }
  return files;
}
