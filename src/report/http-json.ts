import { BackendError, InvalidOptionError } from "../shared/errors.js";
import { terminalSafe } from "./terminal.js";

/**
 * One bounded HTTP request to a backend's query API (Jaeger, Prometheus) whose answer is JSON: a
 * deadline over the whole exchange (connecting, the headers and every byte of the body, so a
 * server that drips its answer is cut off too), a cap on the bytes read (counted as they arrive,
 * not trusted from Content-Length), and one error for each way it can fail, naming the URL and
 * what went wrong: never a hang, never an unbounded read.
 */

/** A backend that could not be asked, or did not answer as its API does (code TJ_BACKEND_FAILED); the CLI reports it as a data error. */
export { BackendError };

export interface RequestBounds {
  /** Milliseconds the whole request may take, the body's last byte included. */
  timeoutMs: number;
  /** Bytes of the answer read at most; a longer one is refused. */
  maxBytes: number;
  /**
   * Epoch milliseconds by which every request of one command must be done (a request's own
   * timeout is cut to what is left), so that many requests cannot add up to a hang.
   */
  deadline?: number;
}

/** The whole of a command's requests may take this many times one request's timeout. */
export const DEADLINE_TIMEOUTS = 10;

/** Default bounds of one request: 30 s and 64 MiB. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** An answer of a status other than 2xx, with its parsed JSON body when it had one (Jaeger's "No traces found" is a 404). */
export class HttpStatusError extends BackendError {
  override name = "HttpStatusError";
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** The URL `base` with `path` under it (a base with a path prefix keeps it) and `query` encoded. */
export function apiUrl(base: string, path: string, query: Record<string, string> = {}): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}

/** Checks a backend's base URL as given on the command line: http(s), no query. Throws an InvalidOptionError (a TypeError) naming the option. */
export function checkBaseUrl(option: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidOptionError(
      `${option} takes an http(s) URL such as http://localhost:16686, got ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidOptionError(`${option} takes an http(s) URL, got ${JSON.stringify(value)} (${url.protocol})`);
  if (url.search !== "" || url.hash !== "")
    throw new InvalidOptionError(`${option} takes the API's base URL without a query, got ${JSON.stringify(value)}`);
  return value;
}

function bytes(count: number): string {
  return count >= 1024 * 1024 ? `${(count / (1024 * 1024)).toFixed(1)} MiB` : `${count} bytes`;
}

/** Why fetch() failed, in words: connection refused, no such host, timed out. */
function failure(error: unknown, timeoutMs: number, cut: boolean): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const name = (error as { name?: string }).name;
  if (name === "TimeoutError")
    return cut
      ? `no whole answer by the end of the time all requests may take (${DEADLINE_TIMEOUTS} × the --timeout of ${timeoutMs / 1000} s; ask for less: --service, --limit)`
      : `no whole answer within ${timeoutMs / 1000} s (the --timeout)`;
  switch (cause?.code) {
    case "ECONNREFUSED":
      return "connection refused (is it running, on that port?)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "no such host";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "the connection was closed before a whole answer";
    case undefined:
      break;
    default:
      return `${cause?.code}: ${cause?.message ?? ""}`.trim();
  }
  return error instanceof Error ? (cause?.message ?? error.message) : String(error);
}

/**
 * GETs `url` (or POSTs `form`, URL-encoded) and parses its answer as JSON, within `bounds`.
 * `what` names the backend in errors ("Jaeger", "Prometheus"). Throws a BackendError naming the
 * URL for a request that fails, times out, answers more than maxBytes, or answers what is not JSON;
 * an HttpStatusError for a status other than 2xx.
 */
export async function requestJson(
  what: string,
  url: string,
  bounds: RequestBounds,
  form?: Record<string, string>,
): Promise<unknown> {
  const where = `${what} at ${url}`;
  const left = bounds.deadline === undefined ? Number.POSITIVE_INFINITY : bounds.deadline - Date.now();
  const cut = left < bounds.timeoutMs;
  const signal = AbortSignal.timeout(Math.max(1, Math.min(bounds.timeoutMs, left)));
  let text: string;
  let status: number;
  let contentType: string;
  try {
    const response = await fetch(url, {
      method: form === undefined ? "GET" : "POST",
      body: form === undefined ? undefined : new URLSearchParams(form),
      headers: { accept: "application/json" },
      redirect: "error",
      signal,
    });
    status = response.status;
    contentType = response.headers.get("content-type") ?? "";
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > bounds.maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new BackendError(
        `${where}: the answer is ${bytes(declared)}, more than ${bytes(bounds.maxBytes)}, the most read (raise --max-bytes, or ask for less: --limit, --since, --service)`,
      );
    }
    text = await readCapped(response, bounds.maxBytes, where);
  } catch (error) {
    if (error instanceof BackendError) throw error;
    throw new BackendError(`${where}: ${failure(error, bounds.timeoutMs, cut)}`);
  }
  let body: unknown;
  let parsed = true;
  try {
    body = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (status < 200 || status > 299) {
    const said = parsed ? JSON.stringify(body) : text;
    throw new HttpStatusError(
      `${where}: HTTP ${status}${status === 404 ? " (not found: is the URL the API's base, and the right server?)" : ""}: ${terminalSafe(said.slice(0, 300))}`,
      status,
      parsed ? body : undefined,
    );
  }
  if (!parsed) {
    const start = terminalSafe(JSON.stringify(text.trimStart().slice(0, 80)));
    throw new BackendError(
      `${where}: the answer is not JSON (${contentType === "" ? "no content type" : terminalSafe(contentType)}, beginning ${start}): is the URL ${what}'s API?`,
    );
  }
  return body;
}

/** The body as text, refused past maxBytes (counted as the bytes arrive). */
async function readCapped(response: Response, maxBytes: number, where: string): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new BackendError(
        `${where}: the answer is more than ${bytes(maxBytes)}, the most read (raise --max-bytes, or ask for less: --limit, --since, --service)`,
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString("utf8");
}
