/**
 * Global setup of the end-to-end suite: installs (cached) and starts the real backends —
 * the OpenTelemetry Collector built by ocb, Jaeger v2 and Prometheus — through
 * collector/backends.sh, hands their addresses to the tests (`inject("backends")`), and stops
 * them afterwards, whatever happened: in the teardown, when start fails, and on process exit.
 *
 * A fresh machine builds the Collector and Jaeger from the Go module proxy (10–17 min on two
 * cores, up to ~27 min on a loaded machine): the install may take up to TJ_E2E_INSTALL_TIMEOUT_MIN
 * minutes (default 45). Warm, install and start take about a second.
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

export type BackendsEnv = Record<string, string>;

declare module "vitest" {
  export interface ProvidedContext {
    /** `collector/backends.sh env --json` of the running backends. */
    backends: BackendsEnv;
  }
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = path.join(ROOT, "collector/backends.sh");
const MINUTE = 60_000;

function backends(args: string[], options: ExecFileSyncOptions & { timeout: number }): string {
  return execFileSync("bash", [SCRIPT, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    // Progress and errors of the script go straight to the terminal; stdout is parsed.
    stdio: ["ignore", "pipe", "inherit"],
    killSignal: "SIGKILL",
    ...options,
  }) as string;
}

let stopped = true;

function stopBackends(): void {
  if (stopped) return;
  stopped = true;
  try {
    backends(["stop"], { timeout: 2 * MINUTE });
  } catch (error) {
    process.stderr.write(`[e2e] backends.sh stop failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

export default function setup(project: TestProject): () => void {
  const installMinutes = Number(process.env.TJ_E2E_INSTALL_TIMEOUT_MIN ?? 45);
  const started = Date.now();
  backends(["install"], { timeout: Math.max(40, installMinutes) * MINUTE });
  const installed = Date.now();
  // From here on, whatever happens, the backends are stopped: a failed start stops what it
  // started by itself; the exit hook covers a runner that dies before its teardown.
  stopped = false;
  process.once("exit", stopBackends);
  try {
    backends(["start"], { timeout: 3 * MINUTE });
    const env = JSON.parse(backends(["env", "--json"], { timeout: MINUTE })) as BackendsEnv;
    project.provide("backends", env);
  } catch (error) {
    stopBackends();
    throw error;
  }
  process.stderr.write(
    `[e2e] backends installed in ${((installed - started) / 1000).toFixed(1)} s, started in ${((Date.now() - installed) / 1000).toFixed(1)} s\n`,
  );
  return () => {
    stopBackends();
    process.removeListener("exit", stopBackends);
  };
}
