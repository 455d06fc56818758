/**
 * What the counting benchmarks' runners (bench/guard/check.ts, bench/job-queue-instructions.ts) share:
 * a driver bundled with taskjourney's sources, and a child process run to its end with its output
 * kept. What their drivers share is in heap-growth.ts (bundled into them: no esbuild there).
 */
import { spawn } from "node:child_process";
import { buildSync } from "esbuild";

export interface Captured {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` in `cwd`; resolves with its exit code and everything it printed. */
export function runCaptured(command: string, args: string[], cwd: string): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Bundles the driver `entry` into `outfile`, one file: its start-up is small, and its counts do not
 * depend on a build.
 */
export function bundleDriver(entry: string, outfile: string): void {
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    // taskjourney from its sources (no build needed); OpenTelemetry as installed.
    conditions: ["taskjourney-source"],
    external: ["@opentelemetry/*"],
    outfile,
    logLevel: "error",
  });
}
