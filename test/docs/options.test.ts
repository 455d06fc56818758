/**
 * docs/options.md's table is the user's reference: it must name every option of
 * `TaskJourneysOptions` (read from the package entry's types by the TypeScript compiler, so an
 * option added to the interface and not to the page fails here) and give the default
 * `DEFAULT_OPTIONS` really has.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS } from "../../src/journeys.js";
import { table } from "./pages.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Row {
  option: string;
  defaultCell: string;
  doc: string;
}

/** The rows of docs/options.md's table, by option name. */
function documentedOptions(): Map<string, Row> {
  const text = fs.readFileSync(`${ROOT}docs/options.md`, "utf8");
  const rows = new Map<string, Row>();
  for (const [cell, defaultCell, doc] of table(text, "docs/options.md", "| option | default | |")) {
    const option = /^`([^`]+)`$/.exec(cell);
    expect(option, `the option cell ${cell} is one name in backticks`).not.toBeNull();
    expect(rows.has(option![1]), `${option![1]} listed once`).toBe(false);
    rows.set(option![1], { option: option![1], defaultCell, doc });
  }
  return rows;
}

/** The option paths of TaskJourneysOptions as the package entry exports it: "role", "sampling.ratio", … */
function declaredOptions(): string[] {
  const configFile = ts.readConfigFile(`${ROOT}tsconfig.json`, (file) => ts.sys.readFile(file));
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const entry = `${ROOT}src/index.ts`;
  // Without Node's types (`types: []`) the program is a third of the size and as exact here: only
  // the options interface is read, and none of its members is typed by Node.
  const program = ts.createProgram([entry], { ...config.options, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const exported = checker.getExportsOfModule(module).find((symbol) => symbol.name === "TaskJourneysOptions");
  expect(exported, "the package entry exports TaskJourneysOptions").toBeDefined();
  const options = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(exported!));
  const paths: string[] = [];
  for (const property of options.getProperties()) {
    const type = checker.getNonNullableType(checker.getTypeOfSymbol(property));
    // Plain option objects (sampling) are listed by their fields; providers and functions as one row.
    const isOptionObject =
      type.isClassOrInterface() && type.getCallSignatures().length === 0 && type.symbol.name.endsWith("Options");
    if (isOptionObject) for (const field of type.getProperties()) paths.push(`${property.name}.${field.name}`);
    else paths.push(property.name);
  }
  return paths;
}

/** DEFAULT_OPTIONS flattened like the table: "sampling.ratio" → 0.01. */
function defaults(): Map<string, unknown> {
  const flat = new Map<string, unknown>();
  for (const [name, value] of Object.entries(DEFAULT_OPTIONS)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [field, inner] of Object.entries(value)) flat.set(`${name}.${field}`, inner);
    } else {
      flat.set(name, value);
    }
  }
  return flat;
}

describe("docs/options.md's table", () => {
  const rows = documentedOptions();

  it("lists every option of TaskJourneysOptions, and nothing else, each with a one-line doc", () => {
    const declared = declaredOptions();
    expect(declared.length).toBeGreaterThanOrEqual(24);
    expect([...rows.keys()].sort()).toEqual([...declared].sort());
    for (const row of rows.values()) expect(row.doc, row.option).not.toBe("");
  }, 60_000); // a TypeScript program over the package entry: seconds on a loaded machine

  it("gives every default of DEFAULT_OPTIONS exactly", () => {
    for (const [option, value] of defaults()) {
      const row = rows.get(option);
      expect(row, `${option} is in the table`).toBeDefined();
      if (typeof value === "function") {
        // The default clock: the page names what it reads, as a call of it shows. It reads it
        // through process.hrtime() (runtime/clock.ts), aligned to performance.now() to well
        // under a microsecond, the slack allowed here (as in test/otel/spans/time-origin.test.ts).
        expect(row!.defaultCell).toBe("`performance.now() / 1000`");
        const before = performance.now() / 1000;
        const read = (value as () => number)();
        expect(read).toBeGreaterThanOrEqual(before - 1e-6);
        expect(read).toBeLessThanOrEqual(performance.now() / 1000 + 1e-6);
        continue;
      }
      const literal = /^`(.*)`$/.exec(row!.defaultCell);
      expect(literal, `${option}'s default is one code literal: ${row!.defaultCell}`).not.toBeNull();
      expect(JSON.parse(literal![1]), option).toEqual(value);
    }
  });

  it("describes the options that have no entry in DEFAULT_OPTIONS", () => {
    const withDefaults = defaults();
    const others = [...rows.keys()].filter((option) => !withDefaults.has(option));
    expect(others.sort()).toEqual(["keyPrefix", "machine", "meterProvider", "runtime.timeOrigin", "tracerProvider"]);
    for (const option of others) expect(rows.get(option)!.defaultCell, option).not.toBe("");
  });
});
