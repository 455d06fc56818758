/**
 * docs/architecture.md's layers, held: `model ← recorder ← otel ← facade ← wrap, report ← sdk, cli`.
 * Every relative import of src/ is read (TypeScript's own pre-processor: imports, re-exports,
 * `import type` and dynamic imports alike) and checked against the layers a file's layer may
 * import, and the import graph must have no cycle at all (type-only imports count). Today's known
 * layering violations are listed below, each with what it is; the test fails on any new one, and
 * on a listed one that is gone (so the list only shrinks). No file of src/ is over 600 lines.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./pages.js";

type Layer =
  | "shared"
  | "model"
  | "runtime"
  | "recorder"
  | "otel"
  | "facade"
  | "wrap"
  | "report"
  | "main entry"
  | "report entry"
  | "sdk"
  | "cli";

/** The layer of a source file, by its folder or, at the top of src/, by its name. */
function layerOf(file: string): Layer {
  const folder = /^src\/([^/]+)\//.exec(file)?.[1];
  if (folder !== undefined) {
    if (["shared", "model", "runtime", "recorder", "otel", "wrap", "report", "sdk"].includes(folder))
      return folder as Layer;
    throw new Error(`${file}: a folder docs/architecture.md does not place; add it to its layers and here`);
  }
  const top: Record<string, Layer> = {
    "src/version.ts": "model", // a generated constant, at the bottom for everyone
    "src/journeys.ts": "facade",
    "src/journeys-propagation.ts": "facade",
    "src/journeys-calls.ts": "facade",
    "src/internal.ts": "facade",
    "src/types.ts": "facade",
    "src/configuration.ts": "facade",
    "src/option-groups.ts": "facade",
    "src/options.ts": "facade",
    "src/index.ts": "main entry",
    "src/report.ts": "report entry",
    "src/sdk.ts": "sdk",
    "src/cli.ts": "cli",
  };
  const layer = top[file];
  if (layer === undefined) throw new Error(`${file}: a file docs/architecture.md does not place`);
  return layer;
}

/** What each layer may import: itself and the layers below it, never above or beside. */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  // shared/: the helpers and errors every layer uses, at the very bottom; they import nothing of ours above.
  shared: ["shared"],
  model: ["shared", "model"],
  runtime: ["shared", "model", "runtime"],
  recorder: ["shared", "model", "runtime", "recorder"],
  otel: ["shared", "model", "runtime", "recorder", "otel"],
  facade: ["shared", "model", "runtime", "recorder", "otel", "facade"],
  // wrap/ calls the facade, as a user does; report/ reads exported files and knows model/ only.
  wrap: ["shared", "model", "facade", "wrap"],
  report: ["shared", "model", "report"],
  // The main entry re-exports the core (the facade and what its types name) and wrap/.
  "main entry": ["shared", "model", "recorder", "otel", "facade", "wrap", "main entry"],
  "report entry": ["shared", "model", "report"],
  sdk: ["shared", "model", "runtime", "recorder", "otel", "facade", "sdk"],
  cli: ["shared", "model", "report", "report entry", "cli"],
};

/**
 * Today's imports against the layers (issue 35), `from -> to`. Each is a move away from gone:
 * shared helpers (`show`, `functions`, `warn`, `failures`, the names of semconv.ts) into one
 * folder at the bottom, and wrap/ reaching the recorder through the facade's internals.
 */
const KNOWN_VIOLATIONS = new Set([
  // wrap/ past the facade, into recorder/ files: the ambient ledger, guards, errors, helpers.
  "src/wrap/function.ts -> src/recorder/ambient.ts",
  "src/wrap/guard.ts -> src/recorder/drop-reasons.ts",
  "src/wrap/guard.ts -> src/recorder/failures.ts",
  "src/wrap/execute.ts -> src/recorder/execution-ledger.ts",
  // wrap/ past the facade into otel/: the one-time warning ("tell") is a shared helper.
  "src/wrap/guard.ts -> src/otel/warn.ts",
  // The main entry pulls report/ for formatBreakdown, formatBytes and formatSeconds.
  "src/index.ts -> src/report/format.ts",
]);

/** The most lines a file of src/ may have: a file over it does more than one job (issue 35). */
const MAX_LINES = 600;

function sources(directory: string): string[] {
  return fs.readdirSync(`${ROOT}${directory}`, { withFileTypes: true }).flatMap((entry) => {
    const file = `${directory}/${entry.name}`;
    if (entry.isDirectory()) return file === "src/report/page" ? [] : sources(file); // the page's browser script
    return entry.name.endsWith(".ts") ? [file] : [];
  });
}

/** Every file of src/ with the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources("src")) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(`${ROOT}${file}`, "utf8"), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => {
        const target = path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, ".ts");
        return fs.existsSync(`${ROOT}${target}`) ? target : target.replace(/\.ts$/, "/index.ts");
      });
    for (const target of targets) expect(fs.existsSync(`${ROOT}${target}`), `${file} imports ${target}`).toBe(true);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The cycles of a graph: each strongly connected component of more than one file (or a self-import). */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe("docs/architecture.md's layers", () => {
  const graph = importGraph();

  it("reads the imports it checks", () => {
    expect(graph.size).toBeGreaterThan(80);
    expect(graph.get("src/index.ts")).toContain("src/journeys.ts");
  });

  it("no file imports a layer above or beside its own, but for today's listed violations", () => {
    const violations: string[] = [];
    for (const [file, targets] of graph)
      for (const target of targets)
        if (!MAY_IMPORT[layerOf(file)].includes(layerOf(target))) violations.push(`${file} -> ${target}`);
    expect(
      violations.filter((violation) => !KNOWN_VIOLATIONS.has(violation)),
      "new violations",
    ).toEqual([]);
    expect(
      [...KNOWN_VIOLATIONS].filter((violation) => !violations.includes(violation)),
      "listed violations that are gone: take them off the list",
    ).toEqual([]);
  });

  it("has no import cycle (type-only imports count)", () => {
    expect(cycles(graph).map((component) => component.join(" ↔ "))).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = [...graph.keys()]
      .map((file) => `${file}: ${fs.readFileSync(`${ROOT}${file}`, "utf8").split("\n").length - 1} lines`)
      .filter((line) => Number(/: (\d+) lines$/.exec(line)![1]) > MAX_LINES);
    expect(long).toEqual([]);
  });
});
