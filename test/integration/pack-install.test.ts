/**
 * The package as it reaches users: `npm pack`, then the install line of the README and
 * docs/runtimes.md in an empty project (`npm install ./taskjourney-<version>.tgz @opentelemetry/api`,
 * offline from the npm cache where it can), then an application — a tiny job runner, not the cluster example,
 * where one task throws an Error — through `taskjourney/sdk` to files, read back with the
 * installed `npx taskjourney explain --from` and `npx taskjourney report --from`. What npm
 * resolves is the point: the OpenTelemetry JS line whose `engines` match the running Node.js
 * (3.x from 22.15 on, else 2.x), with no peer conflict. The report must load nothing from the
 * network, and headless Chromium opens it offline: no console error, every chart drawn, every
 * table filled, the failed task's reason shown. The page and its screenshot are kept in
 * test-output/pack-install/ (gitignored), printed by the test. Without Chromium that part is
 * skipped, except in CI (CI=true), where it fails.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../helpers/chromium.js";
import { expectChartsDrawnAndTablesFilled, networkReferences, openReportOffline } from "../helpers/report-page.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const OUTPUT = join(root, "test-output", "pack-install");
const chromium = findChromium();
const inCi = process.env.CI === "true";
let directory: string;

interface MetricsRequest {
  resourceMetrics: Array<{
    scopeMetrics: Array<{
      metrics: Array<{
        name: string;
        sum?: {
          dataPoints: Array<{ asDouble?: number; attributes: Array<{ key: string; value: { stringValue?: string } }> }>;
        };
      }>;
    }>;
  }>;
}

async function newest(path: string): Promise<number> {
  const entries = await readdir(path, { withFileTypes: true, recursive: true });
  const times = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => (await stat(join(entry.parentPath, entry.name))).mtimeMs),
  );
  return Math.max(0, ...times);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "taskjourney-pack-"));
});
afterAll(async () => {
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe("npm install of the packed package", () => {
  it(
    "gives a working taskjourney/sdk and taskjourney command, on the OpenTelemetry line of this Node.js",
    { timeout: 300_000 },
    async () => {
      // npm packs dist/ as it is: it must be built from the current sources. (`npm pack` builds it
      // itself through the prepack script; skipped here, where other suites read dist/ meanwhile.)
      const [built, sources] = await Promise.all([
        newest(join(root, "dist")).catch(() => 0),
        newest(join(root, "src")),
      ]);
      expect(
        built,
        "dist/ is missing or older than src/: run `npm run build` (npm test does) before this suite",
      ).toBeGreaterThanOrEqual(sources);

      const { stdout: packed } = await run(
        npm,
        ["pack", "--silent", "--ignore-scripts", "--pack-destination", directory],
        {
          cwd: root,
        },
      );
      const tarball = join(directory, packed.trim().split("\n").pop()!);
      // Every module shipped is built from a source that still exists: nothing stale from a file
      // since removed or renamed (the build empties dist/ first).
      const { stdout: listing } = await run("tar", ["-tzf", tarball]);
      const shipped = listing
        .split("\n")
        .filter((entry) => /^package\/dist\/.*\.js$/.test(entry) && !entry.startsWith("package/dist/report/page/"));
      expect(shipped.length).toBeGreaterThan(50);
      const orphans = [];
      for (const entry of shipped) {
        const source = join(root, "src", entry.slice("package/dist/".length).replace(/\.js$/, ".ts"));
        if (!(await stat(source).catch(() => undefined))) orphans.push(entry);
      }
      expect(orphans, "modules in the package without a source in src/").toEqual([]);
      const app = join(directory, "app");
      await run("mkdir", [app]);
      await writeFile(
        join(app, "package.json"),
        JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
      );
      const install = await run(
        npm,
        ["install", tarball, "@opentelemetry/api", "--prefer-offline", "--no-audit", "--no-fund"],
        { cwd: app },
      );
      expect(`${install.stdout}${install.stderr}`).not.toMatch(/ERESOLVE|peer dep|--force|--legacy-peer-deps/i);

      const version = async (name: string) =>
        JSON.parse(await readFile(join(app, "node_modules", name, "package.json"), "utf8")).version as string;
      const [major, minor] = process.versions.node.split(".").map(Number);
      const line = major > 22 || (major === 22 && minor >= 15) ? "3" : "2";
      for (const name of [
        "@opentelemetry/core",
        "@opentelemetry/sdk-trace",
        "@opentelemetry/sdk-metrics",
        "@opentelemetry/resources",
      ]) {
        expect(`${name}@${(await version(name)).split(".")[0]}`).toBe(`${name}@${line}`);
      }
      expect((await version("@opentelemetry/api")).startsWith(line === "3" ? "1.10." : "1.9.")).toBe(true);

      await copyFile(join(import.meta.dirname, "fixtures/pack-app.mjs"), join(app, "app.mjs"));
      // As a user's shell has it: no OTEL_* of ours, and not the source condition vitest.config.ts puts
      // into NODE_OPTIONS (under it the installed package would resolve to its unshipped src/).
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_") && name !== "NODE_OPTIONS"),
      );
      const nodeOptions = (process.env.NODE_OPTIONS ?? "").replace(/--conditions[= ]taskjourney-source/g, "").trim();
      if (nodeOptions !== "") env.NODE_OPTIONS = nodeOptions;
      const { stdout: destinations } = await run(process.execPath, ["app.mjs", "out"], { cwd: app, env });
      const files = (role: string, instance: string) => ({
        traces: [{ kind: "file", path: `out/traces-${role}-${instance}.jsonl` }],
        metrics: [{ kind: "file", path: `out/metrics-${role}-${instance}.jsonl` }],
      });
      expect(JSON.parse(destinations)).toEqual([
        files("scheduler", "runner_scheduler"),
        files("worker", "runner_worker-1"),
        files("worker", "runner_worker-2"),
      ]);
      const metrics = "out/metrics-worker-runner_worker-1.jsonl";

      const taskjourney = async (...args: string[]) =>
        (await run(npm, ["exec", "--offline", "--", "taskjourney", ...args], { cwd: app, env })).stdout;
      const lines = (text: string) => text.split("\n").map((line) => line.replace(/\s+/g, " ").trim());
      // The failed task says why, as explain() did in the application.
      expect(lines(await taskjourney("explain", "parse-2", "--from", "out"))).toEqual([
        "parse-2 spent 500.0 ms on worker runner://worker-2 (ended in error)",
        "├─ waiting 0 s",
        "├─ ready 0 s",
        "└─ executing 500.0 ms error: Error: bad row 7 in load-2",
        "",
      ]);
      // A task that fetched a dependency from the other worker: its waiting is that transfer.
      expect(lines(await taskjourney("explain", "parse-1", "--from", "out"))).toEqual([
        "parse-1 spent 800.0 ms on worker runner://worker-1",
        "├─ waiting 300.0 ms",
        "│ ├─ gather: network 250.0 ms",
        "│ └─ gather: deserialize 50.0 ms",
        "├─ ready 0 s",
        "└─ executing 500.0 ms",
        "",
      ]);

      // The report from the application's files, with the installed command.
      expect(await taskjourney("report", "--from", "out", "--out", "report.html")).toBe("wrote report.html\n");
      const html = await readFile(join(app, "report.html"), "utf8");
      expect(networkReferences(html)).toEqual([]);
      await mkdir(OUTPUT, { recursive: true });
      const page = join(OUTPUT, "report.html");
      await copyFile(join(app, "report.html"), page);
      if (chromium === undefined && !inCi) {
        console.warn(
          "pack-install: the report's browser check skipped, Chromium is not installed (apt-get install -y chromium); in CI (CI=true) this fails instead",
        );
      } else {
        expect(chromium, "Chromium is required in CI: apt-get install -y chromium").toBeDefined();
        const screenshot = join(OUTPUT, "report.png");
        const { state, problems, requests } = await openReportOffline(
          chromium!,
          page,
          screenshot,
          join(directory, "profile"),
        );
        console.log(`pack-install: the installed package's report is ${page}, its screenshot ${screenshot}`);
        expect(problems).toEqual([]);
        expect(requests).toEqual([]);
        // The failed tasks, the worker and scheduler prefix tables, the execute and gather tables.
        expectChartsDrawnAndTablesFilled(state, ["failures", "prefixes", "prefixes", "activities", "activities"]);
        // parse-2 threw; total, which needed it, erred on the scheduler without running.
        expect(state.failures).toEqual([
          [
            "parse-2",
            "parse",
            "executing: error",
            "worker runner://worker-2",
            "500.0 ms",
            "Error: bad row 7 in load-2",
          ],
          ["total", "total", "erred", "scheduler runner://scheduler", "3.3 s", "(no reason recorded)"],
        ]);
        expect(state.text).toContain("1 ended in error on workers, 2 erred on the scheduler.");
      }
      // The metrics file holds the tasks' time by state, as OTLP JSON: parse-1 waited 0.3 s for its fetch.
      const requests = (await readFile(join(app, metrics), "utf8"))
        .trim()
        .split("\n")
        .map((text) => JSON.parse(text) as MetricsRequest);
      const waiting = requests
        .flatMap((request) =>
          request.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)),
        )
        .filter((metric) => metric.name === "task.state.time")
        .flatMap((metric) => metric.sum?.dataPoints ?? [])
        .filter((point) =>
          point.attributes.some(
            (attribute) => attribute.key === "task.state" && attribute.value.stringValue === "waiting",
          ),
        )
        .filter((point) =>
          point.attributes.some(
            (attribute) => attribute.key === "task.prefix" && attribute.value.stringValue === "parse",
          ),
        );
      expect(waiting.at(-1)?.asDouble).toBeCloseTo(0.3, 12);
    },
  );
});
