/**
 * The README is the front door: short, the two commands early, an installation that works today
 * (the package is not on the npm registry yet), and a quick start that runs as printed. The quick
 * start is run in a process of its own, as a user would run it: its breakdown printed, its
 * journey's spans and metrics in the OTLP JSON files it names.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { page, ROOT } from "./pages.js";

const README = page("README.md");
const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const scratch: string[] = [];

afterAll(() => {
  for (const directory of scratch) fs.rmSync(directory, { recursive: true, force: true });
});

/** The fenced blocks of the README written in `language`. */
function blocks(language: string): string[] {
  return [...README.matchAll(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```", "gm"))].map((match) => match[1]);
}

/** The README's section under `## heading`. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  expect(start, `the README has ## ${heading}`).toBeGreaterThan(-1);
  return README.slice(start + 1).split(/\n## /)[0];
}

describe("the README", () => {
  it("is a front door: at most 250 lines, the two commands in its first 60", () => {
    const lines = README.split("\n");
    expect(lines.length).toBeLessThanOrEqual(250);
    const first = lines.slice(0, 60).join("\n");
    expect(first).toContain("npm ci && npm run demo");
    expect(first).toMatch(/^npm test\b/m);
  });

  it("installs from a tarball made in a checkout, with no install line the registry would fail", () => {
    const install = section("Installation");
    expect(install).toContain("not on the npm registry yet");
    expect(install).toMatch(/^npm ci && npm pack\b/m);
    expect(install).toMatch(/^npm install \S+\/taskjourney-[\d.]+\.tgz @opentelemetry\/api\b/m);
    // An install line naming the package as the registry knows it fails for everyone today.
    for (const block of blocks("sh")) expect(block).not.toMatch(/npm (install|i) taskjourney\b/);
  });

  it(
    "gives a quick start of about 15 lines that runs as printed, the way the README says",
    { timeout: 60_000 },
    async () => {
      const [quick] = blocks("ts");
      expect(quick, "the quick start is the README's first TypeScript block").toBeDefined();
      expect(quick.trimEnd().split("\n").length).toBeLessThanOrEqual(22);
      // The README says how to run it: in a project of `npm init -y` (npm 11 writes "type":
      // "commonjs" there, where top-level await fails), made an ES module, with tsx.
      const quickStart = section("Quick start");
      const how = [...quickStart.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]).join("\n");
      expect(how).toMatch(/^npm pkg set type=module\b/m);
      expect(how).toMatch(/^npx tsx quickstart\.ts$/m);
      expect(quickStart).toContain("`quickstart.ts`");
      // A project of its own, as a user's: "taskjourney" is this package, linked into its
      // node_modules (resolved to its sources through the test environment's export condition).
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-quick-start-"));
      scratch.push(cwd);
      await run(npm, ["init", "-y"], { cwd });
      fs.mkdirSync(path.join(cwd, "node_modules"));
      fs.symlinkSync(ROOT, path.join(cwd, "node_modules", "taskjourney"), "dir");
      fs.writeFileSync(path.join(cwd, "quickstart.ts"), quick);
      const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
      const quickstart = () => run(tsx, ["quickstart.ts"], { cwd, timeout: 50_000 });
      if (JSON.parse(fs.readFileSync(path.join(cwd, "package.json"), "utf8")).type !== "module") {
        // What a user meets who skips the README's line: the top-level await fails.
        await expect(quickstart()).rejects.toThrow(/top-level await/i);
      }
      await run(npm, ["pkg", "set", "type=module"], { cwd });
      const { stdout } = await quickstart();
      expect(stdout).toMatch(/^inc-1 spent .+ on worker worker-1\n/);
      for (const node of ["├─ waiting ", "├─ ready ", "└─ executing ", "   ├─ deserialize "])
        expect(stdout).toContain(node);
      const traces = fs.readFileSync(path.join(cwd, "otlp", "traces-worker-worker-1.jsonl"), "utf8");
      expect(traces).toContain('"stringValue":"inc-1"');
      const metrics = fs.readFileSync(path.join(cwd, "otlp", "metrics-worker-worker-1.jsonl"), "utf8");
      expect(metrics).toContain('"name":"task.state.time"');
    },
  );

  it("says the package is ESM-only, and what require() gives", () => {
    const install = section("Installation");
    expect(install).toContain("ESM-only");
    expect(install).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    expect(page("docs/runtimes.md")).toContain("ESM-only");
  });
});
