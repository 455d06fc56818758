/** Small helpers of the end-to-end tests: bounded HTTP calls, polling with a deadline, PromQL. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The running backends' addresses (collector/backends.sh env --json), from the global setup. */
export function backendsEnv(): Record<string, string> {
  const env = inject("backends");
  if (env === undefined)
    throw new Error("the e2e global setup did not provide the backends (vitest.config.ts: globalSetup)");
  return env;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** GET (or POST a form) with a timeout; throws on a non-2xx answer, with the body. */
export async function http(
  url: string,
  init: { form?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: init.form === undefined ? "GET" : "POST",
    body: init.form === undefined ? undefined : new URLSearchParams(init.form),
    signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} from ${url}: ${text.slice(0, 500)}`);
  return { status: response.status, text };
}

export async function getJson<T>(url: string): Promise<T> {
  return JSON.parse((await http(url)).text) as T;
}

/**
 * Calls `probe` until it returns something other than undefined, every `intervalMs`, for at
 * most `timeoutMs`; then fails with `what` and the last error or result seen.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const result = await probe();
      if (result !== undefined) return result;
      last = "no result yet";
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}: ${last instanceof Error ? last.message : String(last)}`,
      );
    }
    await sleep(intervalMs);
  }
}

export interface PromSample {
  metric: Record<string, string>;
  value?: [number, string];
  histogram?: [number, unknown];
}

/** An instant PromQL query; throws on a Prometheus error. */
export async function promQuery(prometheusUrl: string, query: string): Promise<PromSample[]> {
  const { text } = await http(`${prometheusUrl}/api/v1/query`, { form: { query } });
  const body = JSON.parse(text) as {
    status: string;
    error?: string;
    data: { resultType: string; result: PromSample[] };
  };
  if (body.status !== "success") throw new Error(`PromQL error for ${query}: ${body.error}`);
  if (body.data.resultType !== "vector")
    throw new Error(`expected a vector from ${query}, got ${body.data.resultType}`);
  return body.data.result;
}

/** Runs a command to completion with a timeout; resolves with its exit code and output. */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs: number; cwd?: string },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? ROOT,
        env: options.env ?? process.env,
        timeout: options.timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: 64 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: failure === null ? 0 : typeof failure.code === "number" ? failure.code : null,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}
