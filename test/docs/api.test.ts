/**
 * docs/api.md names every export of the three entry points, each in its entry point's table with
 * a one-line doc, and every public member of `TaskJourneys`. The exports are read from the
 * sources by the TypeScript compiler, so an export added without its line here fails.
 */
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { page, quoted, ROOT, table } from "./pages.js";

const API = page("docs/api.md");

const ENTRIES = { taskjourney: "src/index.ts", "taskjourney/sdk": "src/sdk.ts", "taskjourney/report": "src/report.ts" };

/** One TypeScript program over the three entries (Node's types left out: only names are read). */
function program(): ts.Program {
  const configFile = ts.readConfigFile(`${ROOT}tsconfig.json`, (file) => ts.sys.readFile(file));
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const files = Object.values(ENTRIES).map((file) => `${ROOT}${file}`);
  return ts.createProgram(files, { ...config.options, noEmit: true, types: [] });
}

/** The section of docs/api.md under the heading `### \`entry\``, up to the next heading. */
function section(entry: string): string {
  const start = API.indexOf(`\n### \`${entry}\`\n`);
  expect(start, `docs/api.md has a section for ${entry}`).toBeGreaterThan(-1);
  return API.slice(start + 1).split(/\n#{2,3} /)[0];
}

/** The names in the first column of a table, with the row's doc: "`a`, `b`" gives a and b. */
function documented(text: string, name: string, header: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [first, doc] of table(text, name, header)) {
    for (const word of quoted(first)) {
      const member = /^[A-Za-z_$][\w$]*/.exec(word)![0];
      expect(names.has(member), `${member} listed once in ${name}`).toBe(false);
      names.set(member, doc);
    }
  }
  return names;
}

describe("docs/api.md", () => {
  const compiled = program();
  const checker = compiled.getTypeChecker();

  for (const [entry, file] of Object.entries(ENTRIES)) {
    it(`lists every export of ${entry}, and nothing else, each with a one-line doc`, () => {
      const module = checker.getSymbolAtLocation(compiled.getSourceFile(`${ROOT}${file}`)!)!;
      const exports = checker.getExportsOfModule(module).map((symbol) => symbol.name);
      expect(exports.length).toBeGreaterThan(8);
      const listed = documented(section(entry), `the ${entry} table`, "| export | what it is |");
      expect([...listed.keys()].sort()).toEqual(exports.sort());
      for (const [name, doc] of listed) expect(doc, name).not.toBe("");
    }, 60_000); // a TypeScript program over the three entries: seconds on a loaded machine
  }

  it("lists every public member of TaskJourneys, and nothing else", () => {
    const index = checker.getSymbolAtLocation(compiled.getSourceFile(`${ROOT}src/index.ts`)!)!;
    const exported = checker.getExportsOfModule(index).find((symbol) => symbol.name === "TaskJourneys")!;
    const type = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(exported));
    // ECMAScript private fields (#recorder) are no member a user can call.
    const members = type
      .getProperties()
      .map((symbol) => symbol.name)
      .filter((name) => !name.includes("#"));
    expect(members.length).toBeGreaterThan(20);
    const listed = documented(API, "the members table", "| member | what it does |");
    expect([...listed.keys()].sort()).toEqual(members.sort());
  }, 60_000);
});

describe("docs/api.md's reference of instrument()'s spec", () => {
  /** Each wrapper kind's fields, as src/wrap/spec.ts declares them (InstrumentSpec's members and their entry types). */
  function specFields(): Map<string, Set<string>> {
    const file = `${ROOT}src/wrap/spec.ts`;
    const source = ts.createSourceFile(file, ts.sys.readFile(file)!, ts.ScriptTarget.Latest, true);
    const entries = new Map<string, ts.TypeNode>();
    const kinds = new Map<string, string>();
    source.forEachChild((node) => {
      if (ts.isTypeAliasDeclaration(node)) entries.set(node.name.text, node.type);
      if (ts.isInterfaceDeclaration(node) && node.name.text === "InstrumentSpec")
        for (const member of node.members) {
          // transition?: OneOrMany<TransitionSpec<T, S>>: the kind and its entry type's name.
          const entry = /OneOrMany<(\w+)</.exec(member.getText())![1];
          kinds.set((member.name as ts.Identifier).text, entry);
        }
    });
    const fields = new Map<string, Set<string>>();
    for (const [kind, entry] of kinds) {
      const names = new Set<string>();
      const visit = (node: ts.Node): void => {
        if (ts.isTypeLiteralNode(node) && names.size === 0)
          for (const member of node.members) names.add((member.name as ts.Identifier).text);
        else node.forEachChild(visit);
      };
      visit(entries.get(entry)!);
      fields.set(kind, names);
    }
    return fields;
  }

  it("lists every field each wrapper kind takes, and no other", () => {
    const declared = specFields();
    expect([...declared.keys()]).toEqual(["transition", "dependencies", "execute", "gather", "activities"]);
    expect(declared.get("execute")).toEqual(new Set(["method", "key", "prefix", "at", "outcome"]));
    const listed = new Map<string, Set<string>>([...declared.keys()].map((kind) => [kind, new Set<string>()]));
    for (const [field, takenBy] of table(API, "docs/api.md", "| field | taken by | what it is |")) {
      const name = quoted(field)[0];
      for (const kind of takenBy.split(",").map((word) => word.trim())) {
        expect(listed.has(kind), `${name}: ${kind} is a wrapper kind`).toBe(true);
        listed.get(kind)!.add(name);
      }
    }
    expect(listed).toEqual(declared);
  });
});
