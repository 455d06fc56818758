/**
 * A child process run to its end with its output kept: how the counting benchmarks run valgrind
 * and their drivers (bench/guard/check.ts, bench/job-queue-instructions.ts).
 */
import { spawn } from "node:child_process";

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
