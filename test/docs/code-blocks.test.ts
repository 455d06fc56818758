/**
 * The TypeScript blocks of README.md and docs/*.md type-check against the sources, as far as a
 * block can. A block that begins with `import` is a program a reader pastes whole: whatever it
 * takes from taskjourney, from Node.js or from a library (a function of `taskjourney/report`,
 * `fs`, a class such as `TaskJourneys`) it imports, and it has no other type error, except on a
 * line marked `// does not compile` (which must then fail). Any other block continues its page:
 * it may use names of the reader's program (`journeys`, `worker`, `Payload`), and the imports of
 * the page's blocks before it, but a function or class of taskjourney it uses beyond those, it
 * imports itself, so that a reader who pastes it gets no "Cannot find name".
 */
import { execFile } from "node:child_process";
import { builtinModules } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { page, ROOT } from "./pages.js";

const run = promisify(execFile);
const PAGES = [
  "README.md",
  ...fs
    .readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

describe("the manual's TypeScript blocks", () => {
  it("import what they use, and type-check", { timeout: 80_000 }, async () => {
    const directory = path.join(ROOT, "test-output", "doc-blocks");
    fs.rmSync(directory, { recursive: true, force: true });
    fs.mkdirSync(directory, { recursive: true });
    const sources = new Map<string, { where: string; whole: boolean; offset: number }>();
    for (const name of PAGES) {
      let index = 0;
      const imports: string[] = [];
      for (const [, block] of page(name).matchAll(/^```ts\n([\s\S]*?)^```/gm)) {
        const file = `${name.replace(/\W/g, "_")}_${index++}.ts`;
        const whole = /^import\b/.test(block);
        // A module of its own: a block's names do not meet another block's. A continuation is
        // checked after the imports of the blocks before it.
        const prelude = whole ? [] : imports.slice();
        sources.set(file, { where: `${name}, TypeScript block ${index}`, whole, offset: prelude.length });
        fs.writeFileSync(path.join(directory, file), `${[...prelude, block].join("\n")}export {};\n`);
        imports.push(...(block.match(/^import\b[^;]*;$/gm) ?? []));
      }
    }
    expect(sources.size, "the pages' TypeScript blocks").toBeGreaterThan(20);
    fs.writeFileSync(
      path.join(directory, "tsconfig.json"),
      JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { noEmit: true }, include: ["*.ts"] }),
    );

    const exported = new Set(
      [
        await import("../../src/index.js"),
        await import("../../src/sdk.js"),
        await import("../../src/report.js"),
      ].flatMap((entry) => Object.keys(entry)),
    );
    /** Whether a block must import `name` itself rather than take it from the reader's program. */
    const toImport = (name: string, whole: boolean) =>
      exported.has(name) || builtinModules.includes(name) || (whole && /^[A-Z]/.test(name));

    const tsc = path.join(ROOT, "node_modules", ".bin", "tsc");
    const output = await run(tsc, ["-p", path.join(directory, "tsconfig.json")], { cwd: ROOT, timeout: 70_000 }).then(
      ({ stdout }) => stdout,
      (error: { stdout: string }) => error.stdout,
    );
    const problems: string[] = [];
    const failedOnPurpose = new Set<string>();
    for (const [, file, line, code, message] of output.matchAll(
      /^(?:.*[\\/])?([^\\/(]+\.ts)\((\d+),\d+\): error (TS\d+): (.*)$/gm,
    )) {
      const block = sources.get(file)!;
      const text = fs.readFileSync(path.join(directory, file), "utf8").split("\n")[Number(line) - 1];
      if (text.includes("// does not compile")) {
        failedOnPurpose.add(`${file}:${line}`);
        continue;
      }
      const missing = /^Cannot find name '([^']+)'/.exec(message);
      if (missing !== null && code === "TS2304" && !toImport(missing[1], block.whole)) continue;
      // A continuation's types come from the reader's program, which the page does not show.
      if (!block.whole && missing === null) continue;
      // A module of the reader's own (`./queue.js`) is theirs to have.
      if (code === "TS2307" && /module '\.\.?\//.test(message)) continue;
      problems.push(`${block.where}, line ${Number(line) - block.offset}: ${message}`);
    }
    const texts = new Map(
      [...sources.keys()].map((file) => [file, fs.readFileSync(path.join(directory, file), "utf8")]),
    );
    // Scratch, gone before anything else reads the tree (eslint and prettier would take it for code).
    fs.rmSync(directory, { recursive: true, force: true });
    expect(problems).toEqual([]);
    for (const [file, block] of sources) {
      texts
        .get(file)!
        .split("\n")
        .forEach((text, index) => {
          if (text.includes("// does not compile"))
            expect(
              failedOnPurpose,
              `${block.where}, line ${index + 1 - block.offset} says it does not compile`,
            ).toContain(`${file}:${index + 1}`);
        });
    }
  });
});
