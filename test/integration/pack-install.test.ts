/**
 * The package as it reaches users: `npm pack`, then the README's install line in an empty project
 * (`npm install taskjourney @opentelemetry/api`, here with the tarball for the name, offline from
 * the npm cache where it can), then an application's journey through `taskjourney/sdk` to files,
 * read back with `npx taskjourney explain --from`. What npm resolves is the point: the
 * OpenTelemetry JS line whose `engines` match the running Node.js (3.x from 22.15 on, else 2.x),
 * with no peer conflict.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
let directory: string;

interface MetricsRequest {
  resourceMetrics: Array<{
    scopeMetrics: Array<{
      metrics: Array<{ name: string; sum?: { dataPoints: Array<{ asDouble?: number; attributes: Array<{ key: string; value: { stringValue?: string } }> }> } }>;
    }>;
  }>;
}

async function newest(path: string): Promise<number> {
  const entries = await readdir(path, { withFileTypes: true, recursive: true });
  const times = await Promise.all(entries.filter((entry) => entry.isFile()).map(async (entry) => (await stat(join(entry.parentPath, entry.name))).mtimeMs));
  return Math.max(0, ...times);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "taskjourney-pack-"));
});
afterAll(async () => {
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe("npm install of the packed package", () => {
  it("gives a working taskjourney/sdk and taskjourney command, on the OpenTelemetry line of this Node.js", { timeout: 300_000 }, async () => {
    // npm packs dist/ as it is: it must be built from the current sources.
    const [built, sources] = await Promise.all([newest(join(root, "dist")).catch(() => 0), newest(join(root, "src"))]);
    expect(built, "dist/ is missing or older than src/: run `npm run build` (npm test does) before this suite").toBeGreaterThanOrEqual(sources);

    const { stdout: packed } = await run(npm, ["pack", "--silent", "--pack-destination", directory], { cwd: root });
    const tarball = join(directory, packed.trim().split("\n").pop()!);
    const app = join(directory, "app");
    await run("mkdir", [app]);
    await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }));
    const install = await run(npm, ["install", tarball, "@opentelemetry/api", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: app });
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/ERESOLVE|peer dep|--force|--legacy-peer-deps/i);

    const version = async (name: string) => JSON.parse(await readFile(join(app, "node_modules", name, "package.json"), "utf8")).version as string;
    const [major, minor] = process.versions.node.split(".").map(Number);
    const line = major > 22 || (major === 22 && minor >= 15) ? "3" : "2";
    for (const name of ["@opentelemetry/core", "@opentelemetry/sdk-trace", "@opentelemetry/sdk-metrics", "@opentelemetry/resources"]) {
      expect(`${name}@${(await version(name)).split(".")[0]}`).toBe(`${name}@${line}`);
    }
    expect((await version("@opentelemetry/api")).startsWith(line === "3" ? "1.10." : "1.9.")).toBe(true);

    await copyFile(join(import.meta.dirname, "fixtures/pack-app.mjs"), join(app, "app.mjs"));
    // As a user's shell has it: no OTEL_* of ours, and not the source condition vitest.config.ts puts
    // into NODE_OPTIONS (under it the installed package would resolve to its unshipped src/).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_") && name !== "NODE_OPTIONS"));
    const nodeOptions = (process.env.NODE_OPTIONS ?? "").replace(/--conditions[= ]taskjourney-source/g, "").trim();
    if (nodeOptions !== "") env.NODE_OPTIONS = nodeOptions;
    const { stdout: destinations } = await run(process.execPath, ["app.mjs", "out"], { cwd: app, env });
    const traces = "out/traces-worker-tcp_127.0.0.1_40001.jsonl";
    const metrics = "out/metrics-worker-tcp_127.0.0.1_40001.jsonl";
    expect(JSON.parse(destinations)).toEqual({ traces: [{ kind: "file", path: traces }], metrics: [{ kind: "file", path: metrics }] });

    const { stdout: explained } = await run(npm, ["exec", "--offline", "--", "taskjourney", "explain", "inc-1", "--from", traces], { cwd: app, env });
    expect(explained.split("\n").map((line) => line.replace(/\s+/g, " ").trim())).toEqual([
      "inc-1 spent 2.8 s on worker tcp://127.0.0.1:40001",
      "├─ waiting 2.0 s",
      "│ └─ dependencies 2.0 s",
      "├─ ready 500.0 ms",
      "└─ executing 250.0 ms",
      "└─ thread-cpu 250.0 ms",
      "",
    ]);
    // The metrics file holds the task's time by state, as OTLP JSON.
    const requests = (await readFile(join(app, metrics), "utf8")).trim().split("\n").map((text) => JSON.parse(text) as MetricsRequest);
    const waiting = requests
      .flatMap((request) => request.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)))
      .filter((metric) => metric.name === "task.state.time")
      .flatMap((metric) => metric.sum?.dataPoints ?? [])
      .filter((point) => point.attributes.some((attribute) => attribute.key === "task.state" && attribute.value.stringValue === "waiting"));
    expect(waiting.at(-1)?.asDouble).toBe(2);
  });
});
