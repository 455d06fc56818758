/**
 * The checkout's own commands: `npm run build` leaves the `taskjourney` bin executable (tsc writes
 * it without the bit, and `npx taskjourney` then failed with "Permission denied"), and
 * `npm run demo -- --help` answers without building. Run as the npm scripts run them, each in a
 * process bounded in time.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.join(import.meta.dirname, "../..");
const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-scripts-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

describe("npm run build", () => {
  it("ends by making every bin executable, after tsc has written it", () => {
    const steps = packageJson.scripts.build.split(" && ");
    expect(steps.at(-1)).toBe("node scripts/bin-executable.mjs");
    expect(steps.findIndex((step) => step.startsWith("tsc "))).toBeLessThan(steps.length - 1);
    expect(Object.values(packageJson.bin)).toEqual(["./dist/cli.js"]);
  });

  it("scripts/bin-executable.mjs sets the execute bits of the files package.json's bin names", async () => {
    const root = path.join(scratch, "package");
    fs.mkdirSync(path.join(root, "dist"), { recursive: true });
    fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ bin: { tool: "./dist/cli.js" } }));
    const bin = path.join(root, "dist", "cli.js");
    fs.writeFileSync(bin, "#!/usr/bin/env node\n", { mode: 0o644 });
    fs.chmodSync(bin, 0o644); // whatever the umask
    await run(process.execPath, [path.join(ROOT, "scripts", "bin-executable.mjs"), root], { timeout: 30_000 });
    expect(fs.statSync(bin).mode & 0o777).toBe(0o755);
  });
});

describe("npm run demo", () => {
  // With no PATH, npm cannot be found: a demo that tried to build would fail.
  const noPath = { ...process.env, PATH: "" };

  it("answers --help from the sources, without building", { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, ["scripts/demo.mjs", "--help"], {
      cwd: ROOT,
      env: noPath,
      timeout: 50_000,
    });
    // As the user typed it: `npm run demo -- --help`, not the script's own command line.
    expect(stdout).toMatch(/^Usage: npm run demo -- \[options\]\n/);
    expect(stdout).toContain("--workload");
  });

  it("builds before anything else", { timeout: 60_000 }, async () => {
    const failed = await run(process.execPath, ["scripts/demo.mjs", "--size", "3"], {
      cwd: ROOT,
      env: noPath,
      timeout: 50_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect("code" in failed && failed.code).not.toBe(0);
    expect((failed as { stderr: string }).stderr).toContain("spawnSync npm ENOENT");
  });
});
