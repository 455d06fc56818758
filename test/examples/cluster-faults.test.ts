/**
 * The cluster example with a dead OTLP endpoint (a refused port) and a silent one (a server that
 * reads and never answers): it still computes, every process flushes for at most its deadline
 * and reports, nobody is killed, the run exits by itself with code 0, and the export failures
 * are on stderr (each process's taskjourney warning and the cluster's summary line) and in
 * summary.json.
 */
import { spawn } from "node:child_process";
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
        new RegExp(`cluster: export failures: \\d+ spans in \\d+ exports to ${url}/v1/traces \\(${errorType}\\)`),
      );

      const summary = JSON.parse(fs.readFileSync(path.join(outDir, "summary.json"), "utf8")) as RunSummary;
      expect(summary.erred).toBe(0);
      const traces = summary.exportFailures.filter((failure) => failure.signal === "traces");
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
        summary.exportFailures.some(
          (failure) => failure.signal === "metrics" && failure.destination === `${url}/v1/metrics`,
        ),
      ).toBe(true);
    },
  );
});
