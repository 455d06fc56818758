/**
 * Every export of the three entry points has a one-line doc, a stability tag (`@stable`,
 * `@experimental`, and `@deprecated` where deprecated) and an `@example`, as OpenTelemetry JS tags
 * its surface. The doc is read by the TypeScript compiler from the export itself in the entry
 * file (an export specifier's JSDoc, `export * as`'s), else from the declaration it names.
 */
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./pages.js";

const ENTRIES = { taskjourney: "src/index.ts", "taskjourney/sdk": "src/sdk.ts", "taskjourney/report": "src/report.ts" };
const STABILITY = ["stable", "experimental"];

function program(): ts.Program {
  const configFile = ts.readConfigFile(`${ROOT}tsconfig.json`, (file) => ts.sys.readFile(file));
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const files = Object.values(ENTRIES).map((file) => `${ROOT}${file}`);
  return ts.createProgram(files, { ...config.options, noEmit: true, types: [] });
}

/** The JSDoc blocks of a node (a `export * as` namespace's are its export declaration's). */
function jsDocs(node: ts.Node): ts.JSDoc[] {
  const owner = ts.isNamespaceExport(node) ? node.parent : node;
  return ts.getJSDocCommentsAndTags(owner).filter((doc): doc is ts.JSDoc => ts.isJSDoc(doc));
}

function text(comment: ts.JSDoc["comment"]): string {
  if (comment === undefined) return "";
  return typeof comment === "string" ? comment : comment.map((part) => part.text).join("");
}

/** What is wrong with an export's doc: "" when it has a summary line, a stability tag and an example. */
function problems(docs: readonly ts.JSDoc[]): string[] {
  // The block that tags the export: the export's own first, else its declaration's.
  const doc = docs.find((block) => (block.tags ?? []).some((tag) => STABILITY.includes(tag.tagName.text)));
  if (doc === undefined) return ["no @stable or @experimental tag"];
  const found: string[] = [];
  const summary = text(doc.comment).split("\n")[0].trim();
  if (summary === "") found.push("no one-line doc before its tags");
  const tags = (doc.tags ?? []).map((tag) => tag.tagName.text);
  if (tags.filter((tag) => STABILITY.includes(tag)).length !== 1)
    found.push("not exactly one of @stable, @experimental");
  const example = (doc.tags ?? []).find((tag) => tag.tagName.text === "example");
  if (example === undefined || text(example.comment).trim() === "") found.push("no @example with code");
  // Deprecated anywhere (the export or what it names) is deprecated where a user reads it.
  const deprecated = docs.some((block) => (block.tags ?? []).some((tag) => tag.tagName.text === "deprecated"));
  if (deprecated && !tags.includes("deprecated"))
    found.push("@deprecated where it is declared, not where it is exported");
  return found;
}

describe("every export's doc, stability and example", () => {
  const compiled = program();
  const checker = compiled.getTypeChecker();

  for (const [entry, file] of Object.entries(ENTRIES)) {
    it(`each export of ${entry} has a one-line doc, @stable or @experimental, and an @example`, () => {
      const module = checker.getSymbolAtLocation(compiled.getSourceFile(`${ROOT}${file}`)!)!;
      const exports = checker.getExportsOfModule(module);
      expect(exports.length).toBeGreaterThan(8);
      const missing: Record<string, string[]> = {};
      for (const symbol of exports) {
        const own = (symbol.declarations ?? []).flatMap(jsDocs);
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        const declared = target === symbol ? [] : (target.declarations ?? []).flatMap(jsDocs);
        const found = problems([...own, ...declared]);
        if (found.length > 0) missing[symbol.name] = found;
      }
      expect(missing).toEqual({});
    }, 60_000); // a TypeScript program over the three entries: seconds on a loaded machine
  }
});
