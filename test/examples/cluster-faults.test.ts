/**
 * The cluster example with a dead OTLP endpoint (a refused port) and a silent one (a server that
 * reads and never answers): it still computes, every process flushes for at most its deadline
 * and reports, nobody is killed, the run exits by itself with code 0, and the export failures
 * are on stderr (each process's taskjourney warning and the cluster's summary line) and in
 * summary.json. And with one of its workers killed mid-run: the survivors' telemetry and the
 * summary are kept.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { RunSummary } from "../../examples/cluster/cluster.js";
import { refusedUrl, startFaultServer, type FaultServer } from "../integration/fault-server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = path.join(ROOT, "examples/cluster/main.ts");
const outDirs: string[] = [];
const servers: FaultServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  for (const outDir of outDirs) {
    try {
      const pids = JSON.parse(fs.readFileSync(path.join(outDir, "pids.json"), "utf8")) as {
        workers: number[];
        spillRoot: string;
      };
      for (const pid of pids.workers) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone, as it should be
        }
      }
      fs.rmSync(pids.spillRoot, { recursive: true, force: true });
    } catch {
      // no pids.json: the run never started its workers
    }
    fs.rmSync(outDir, { recursive: true, force: true });
  }
});

/** Runs the demo to its end with OTLP going to `endpoint`; kills it only past `timeoutMs` (a failure). */
function runTo(endpoint: string, timeoutMs: number): Promise<{ code: number | null; stderr: string; outDir: string }> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-cluster-faults-"));
  outDirs.push(outDir);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_")) delete env[name];
  env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "--size", "60", "--workers", "2", "--trace-ratio", "1", "--out", outDir, "--quiet"],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the cluster did not exit by itself within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, outDir });
    });
  });
}

describe("the cluster example with an OTLP endpoint that fails", () => {
  it.each([
    { endpoint: "refused", errorType: "ECONNREFUSED" },
    { endpoint: "black-hole", errorType: "timeout" },
  ] as const)(
    "$endpoint: exits by itself with code 0 and reports the export failures ($errorType)",
    async ({ endpoint, errorType }) => {
      let url: string;
      if (endpoint === "refused") {
        url = await refusedUrl();
      } else {
        const server = await startFaultServer("black-hole");
        servers.push(server);
        url = server.url;
      }
      // A bound for a stuck run on a loaded machine, not a timing claim: the run itself takes seconds.
      const { code, stderr, outDir } = await runTo(url, 120_000);
      expect(code, stderr).toBe(0);
      // No worker was killed.
      expect(stderr).not.toContain("killed");
      // Each process's own warning, with the endpoint and the error type.
      expect(stderr).toContain(`taskjourney: exporting traces to ${url}/v1/traces failed`);
      expect(stderr).toContain(`error.type="${errorType}"`);
      expect(stderr).toMatch(
        new RegExp(`cluster: export errors: \\d+ spans in \\d+ exports to ${url}/v1/traces \\(${errorType}\\)`),
      );

      const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8")) as RunSummary;
      expect(summary.erred).toBe(0);
      const traces = summary.exportErrors.filter((failure) => failure.signal === "traces");
      expect(traces.every((failure) => failure.destination === `${url}/v1/traces`)).toBe(true);
      // Each export fails by itself within the flush deadline; one still under way when a loaded
      // machine made a process miss it is counted too, as shutdown_deadline.
      expect(traces.map((failure) => failure.errorType)).toContain(errorType);
      expect(
        traces.every((failure) => failure.errorType === errorType || failure.errorType === "shutdown_deadline"),
      ).toBe(true);
      // Every span of the run was lost: at ratio 1, at least one per task.
      expect(traces.reduce((sum, failure) => sum + failure.items, 0)).toBeGreaterThanOrEqual(summary.tasks);
      expect(
        summary.exportErrors.some(
          (failure) => failure.signal === "metrics" && failure.destination === `${url}/v1/metrics`,
        ),
      ).toBe(true);
    },
  );
});

/** The resource attribute `key` of each OTLP JSON line's resources in the files of `outDir`/otlp named `prefix`*, with the items each carried. */
function itemsByInstance(outDir: string, prefix: "traces-worker-" | "metrics-worker-"): Map<string, number> {
  const directory = path.join(outDir, "otlp");
  const found = new Map<string, number>();
  for (const file of fs.readdirSync(directory).filter((name) => name.startsWith(prefix))) {
    for (const line of fs.readFileSync(path.join(directory, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const request = JSON.parse(line) as {
        resourceSpans?: Array<{ resource: Resource; scopeSpans: Array<{ spans: unknown[] }> }>;
        resourceMetrics?: Array<{ resource: Resource; scopeMetrics: Array<{ metrics: unknown[] }> }>;
      };
      for (const resource of request.resourceSpans ?? []) {
        const items = resource.scopeSpans.reduce((sum, scope) => sum + scope.spans.length, 0);
        const instance = instanceOf(resource.resource);
        found.set(instance, (found.get(instance) ?? 0) + items);
      }
      for (const resource of request.resourceMetrics ?? []) {
        const items = resource.scopeMetrics.reduce((sum, scope) => sum + scope.metrics.length, 0);
        const instance = instanceOf(resource.resource);
        found.set(instance, (found.get(instance) ?? 0) + items);
      }
    }
  }
  return found;
}

interface Resource {
  attributes: Array<{ key: string; value: { stringValue?: string } }>;
}

function instanceOf(resource: Resource): string {
  return resource.attributes.find((attribute) => attribute.key === "service.instance.id")?.value.stringValue ?? "";
}

/** Whether `pid` is a running process (a zombie waiting to be reaped is not). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

interface KillableRun {
  child: ChildProcess;
  outDir: string;
  stderr: () => string;
  exited: Promise<number | null>;
  pids: { scheduler: number; workers: number[] };
}

/**
 * Starts the demo on three workers with telemetry to files, and resolves once it computes: quick
 * tasks of its own done, a few holding their thread for seconds, so that the run is under way
 * with journeys recorded on every process when one is killed. `detached`: its own process group.
 */
async function startKillable(detached = false): Promise<KillableRun> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-cluster-kill-"));
  outDirs.push(outDir);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_")) delete env[name];
  const child = spawn(
    process.execPath,
    [
      ...["--import", "tsx", MAIN, "--size", "60", "--workers", "3", "--trace-ratio", "1"],
      ...["--slow-every", "10", "--slow-seconds", "5", "--out", outDir, "--quiet", "--verbose"],
    ],
    { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"], detached },
  );
  let stderr = "";
  const exited = new Promise<number | null>((resolve, reject) => {
    // A bound for a stuck run, not a timing claim.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the cluster did not exit by itself:\n${stderr}`));
    }, 90_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  await new Promise<void>((resolve) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (stderr.includes("] workers registered")) resolve();
    });
  });
  // Let the quick tasks finish (the slow ones hold their threads for seconds).
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const pids = JSON.parse(fs.readFileSync(path.join(outDir, "pids.json"), "utf8")) as KillableRun["pids"];
  return { child, outDir, stderr: () => stderr, exited, pids };
}

/** Every worker's and the scheduler's spans and metrics are in their OTLP files. */
function expectEveryProcessFlushed(outDir: string, workers: number, why: string): void {
  const spans = itemsByInstance(outDir, "traces-worker-");
  const metrics = itemsByInstance(outDir, "metrics-worker-");
  expect([...spans.keys()], why).toHaveLength(workers);
  expect([...metrics.keys()], why).toHaveLength(workers);
  for (const count of [...spans.values(), ...metrics.values()]) expect(count).toBeGreaterThan(0);
}

describe("the cluster example when one of its processes dies", () => {
  it("a worker SIGKILLed mid-run: the survivors flush their telemetry before they stop, and the summary and report are written, naming the dead worker", async () => {
    const { outDir, exited, stderr: output, pids } = await startKillable();
    const { workers } = pids;
    const [victim, ...survivors] = workers;
    process.kill(victim, "SIGKILL");
    const code = await exited;
    const stderr = output();

    // The run failed, and says which worker died.
    expect(code, stderr).toBe(1);
    expect(stderr).toContain(`cluster: worker pid ${victim} `);
    expect(stderr).toContain("died (SIGKILL) during the run");
    // No survivor was killed: each flushed and exited when told.
    expect(stderr).not.toContain("did not exit after closing; killed");

    const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.result).toBeNull();
    expect(summary.aborted?.died.map((death) => [death.pid, death.exit])).toEqual([[victim, "SIGKILL"]]);
    // The survivors' summaries are in it.
    expect(summary.report.workers.map((worker) => worker.pid).sort()).toEqual([...survivors].sort());
    const report = fs.readFileSync(path.join(outDir, "report.txt"), "utf8");
    expect(report).toContain(`Worker pid ${victim}`);
    expect(report).toContain("died (SIGKILL)");
    expect(fs.readFileSync(path.join(outDir, "report.html"), "utf8")).toContain(`worker pid ${victim} died (SIGKILL)`);

    // Every survivor's spans and metrics are in its OTLP files.
    const spans = itemsByInstance(outDir, "traces-worker-");
    const metrics = itemsByInstance(outDir, "metrics-worker-");
    for (const worker of summary.report.workers) {
      expect(spans.get(worker.address), `spans of ${worker.address}`).toBeGreaterThan(0);
      expect(metrics.get(worker.address), `metrics of ${worker.address}`).toBeGreaterThan(0);
    }
  });

  it("the scheduler SIGKILLed mid-run: every worker flushes its telemetry before it exits", async () => {
    const { child, outDir, exited, stderr, pids } = await startKillable();
    child.kill("SIGKILL");
    await exited;
    // A bound for a stuck worker, not a timing claim: each flushes for at most its deadline.
    for (let waited = 0; pids.workers.some(alive) && waited < 30_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pids.workers.filter(alive)).toEqual([]);
    expectEveryProcessFlushed(outDir, 3, stderr());
  });

  it.each([
    { target: "the scheduler", group: false },
    { target: "the whole process group", group: true },
  ])(
    "SIGTERM to $target mid-run: every process flushes its telemetry, the summary says the run was stopped, and it exits 143",
    async ({ group }) => {
      const { child, outDir, exited, stderr, pids } = await startKillable(group);
      process.kill(group ? -child.pid! : child.pid!, "SIGTERM");
      expect(await exited, stderr()).toBe(143);
      expect(pids.workers.filter(alive)).toEqual([]);
      expect(stderr()).not.toContain("did not exit after closing; killed");
      expectEveryProcessFlushed(outDir, 3, stderr());
      expect(itemsByInstance(outDir, "metrics-worker-").size).toBe(3);
      const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8")) as RunSummary;
      expect(summary.result).toBeNull();
      expect(summary.aborted?.error).toBe("stopped by SIGTERM");
      expect(fs.readFileSync(path.join(outDir, "report.txt"), "utf8")).toContain("Not finished: stopped by SIGTERM.");
      // The scheduler's own, too.
      const schedulerFiles = fs.readdirSync(path.join(outDir, "otlp")).filter((name) => name.includes("-scheduler-"));
      expect(schedulerFiles).toHaveLength(2);
    },
  );
});
