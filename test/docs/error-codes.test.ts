/**
 * docs/api.md's table of error codes against the sources: every `TJ_…` code in src/ is a row of
 * the table and every row a code of src/; and src/ makes no bare `Error`, `TypeError` or
 * `RangeError` (one without a code) but for the few listed below, each with why.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { page, quoted, ROOT, table } from "./pages.js";

function sources(directory: string): string[] {
  return fs.readdirSync(`${ROOT}${directory}`, { withFileTypes: true }).flatMap((entry) => {
    const file = `${directory}/${entry.name}`;
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith(".ts") ? [file] : [];
  });
}

/**
 * The built-in errors made without a code, by file, with how many: each a move away from gone
 * (the list only shrinks; a new one fails, and so does a listed one that is gone).
 */
const UNCODED = new Map<string, number>([
  // A Dask preset that does not compile: this package's own bug at load, never a user's input.
  ["src/model/states.ts", 1],
  // An extractor's or outcome mapper's wrong return value: reported through the one failure path
  // (counted, told as "TypeError: returned …"), never thrown out to the caller.
  ["src/wrap/extractors.ts", 1],
  ["src/wrap/ledgers.ts", 1],
  // Export results handed to OpenTelemetry's callbacks (serialization failed, exporter shut
  // down): counted as export errors, never thrown.
  ["src/sdk/file-exporters.ts", 3],
  ["src/sdk/zipkin-exporter.ts", 1],
  // The command's own usage and data errors, turned into exit codes and messages in main().
  ["src/cli.ts", 2],
]);

describe("error codes", () => {
  const files = sources("src").filter((file) => !file.startsWith("src/report/page/"));
  const text = new Map(files.map((file) => [file, fs.readFileSync(`${ROOT}${file}`, "utf8")]));

  it("every code in src/ is in docs/api.md's table, and every code of the table in src/", () => {
    const inSources = new Set<string>();
    for (const source of text.values()) for (const [code] of source.matchAll(/\bTJ_[A-Z_]+\b/g)) inSources.add(code);
    const rows = table(page("docs/api.md"), "docs/api.md", "| code | class (instance of) | thrown when |");
    const listed = rows.map(([code]) => quoted(code)[0]);
    expect(new Set(listed).size, "each code listed once").toBe(listed.length);
    expect(inSources.size).toBeGreaterThan(10);
    expect([...inSources].sort()).toEqual([...listed].sort());
    for (const [code, kind, when] of rows) {
      expect(kind, code).not.toBe("");
      expect(when, code).not.toBe("");
    }
  });

  it("every class of the table is one of src/shared/errors.ts or src/sdk/ with that code", () => {
    const rows = table(page("docs/api.md"), "docs/api.md", "| code | class (instance of) | thrown when |");
    const all = [...text.values()].join("\n");
    for (const [codeCell, kind] of rows) {
      const code = quoted(codeCell)[0];
      const [name, builtin] = quoted(kind);
      if (builtin === undefined) continue; // not thrown: the code's class is internal to the SDK wrapping
      const declaration = new RegExp(`class ${name} extends ${builtin} \\{[^}]*readonly code = "${code}";`);
      expect(all, `${name} extends ${builtin} with code ${code}`).toMatch(declaration);
    }
  });

  it("src/ makes no error without a code, but for the listed ones", () => {
    const found = new Map<string, number>();
    for (const [file, source] of text) {
      const count = [
        ...source.matchAll(/new (?:Error|TypeError|RangeError)\(|class \w+ extends Error \{(?![^}]*readonly code)/g),
      ].length;
      if (count > 0) found.set(file, count);
    }
    expect(Object.fromEntries(found)).toEqual(Object.fromEntries(UNCODED));
  });
});
