/**
 * Running things as a user would, for tests: a TypeScript script in a Node.js process of its own
 * (through tsx), bounded in time, and the taskjourney command in process (src/cli.ts's main()).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { main } from "../../src/cli.js";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface Ran {
  /** The exit code; null when it was killed (past `timeoutMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` (TypeScript, through tsx) with `args` to its end, killed after `timeoutMs`. */
export function runScript(
  script: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", TSX, script, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The taskjourney command with `args`, in process: its exit code and what it printed. */
export async function runCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}
