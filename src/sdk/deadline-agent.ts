/**
 * The HTTP agents of the OTLP exporters startTelemetry builds: every request made through one is
 * destroyed, its connection with it, once it has run for the exporter's timeout.
 *
 * Why: the OpenTelemetry exporters (otlp-exporter-base's Node.js transport, the 2.x and the 3.x
 * lines alike) bound a request only by `request.setTimeout(timeoutMillis)`, a socket's idle
 * timeout, restarted by every byte that arrives. An endpoint that answers a byte a second (a
 * status line whose headers never end, or 200 headers and a body that never ends) is never timed
 * out: the export never ends, the BatchSpanProcessor's or the exporter's concurrency limit fills,
 * sockets pile up, and shutdown waits for its whole deadline. CountedSpanExporter and
 * CountedMetricExporter count such an export as a timeout at the same deadline; this ends the
 * request itself, so that its socket is closed, the exporter's pending export settles (its
 * concurrency slot and its shutdown no longer wait), and retries stop.
 *
 * The agent is passed as the exporters' documented `httpAgentOptions` factory, which replaces
 * the one they would build from the environment: so it is built as theirs is, with keep-alive
 * and the certificates of OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]CERTIFICATE, _CLIENT_CERTIFICATE
 * and _CLIENT_KEY (the exporter reads those files too, and warns when one cannot be read: not
 * told twice here). `http` and `https` are imported when the exporter asks, as the exporters
 * advise, so that an HTTP instrumentation loaded later still patches them.
 */
import { readFileSync } from "node:fs";
import type { Agent, ClientRequest } from "node:http";
import { resolve } from "node:path";

/** The OTEL_EXPORTER_OTLP_<SIGNAL>_* part of the variables' names. */
export type SignalVariable = "TRACES" | "METRICS";

/** The exporters' `httpAgentOptions` factory: an agent for the URL's protocol ("http:" or "https:"). */
export type AgentFactory = (protocol: string) => Promise<Agent>;

/** What http.Agent does with each request it is given (not in Node.js's types, present since its first releases). */
interface AddsRequests {
  addRequest?: (request: ClientRequest, options: unknown) => void;
}

/** Why a request was destroyed: it ran past its deadline. */
export class RequestDeadline extends Error {
  override name = "RequestDeadline";
  readonly code = "TJ_REQUEST_DEADLINE";
  constructor(milliseconds: number) {
    super(`request timed out: not answered in whole within ${milliseconds} ms`);
  }
}

/** The contents of the file a variable names, the signal's own first; undefined when unset or unreadable. */
function fileOf(signal: SignalVariable, suffix: string): Buffer | undefined {
  const name =
    process.env[`OTEL_EXPORTER_OTLP_${signal}_${suffix}`]?.trim() ||
    process.env[`OTEL_EXPORTER_OTLP_${suffix}`]?.trim();
  if (!name) return undefined;
  try {
    return readFileSync(resolve(process.cwd(), name));
  } catch {
    return undefined; // The exporter's own configuration warns of it.
  }
}

export function deadlineAgentFactory(signal: SignalVariable, timeoutMillis: number): AgentFactory {
  // Read now, as the exporter reads its own when it is built.
  const tls = {
    ca: fileOf(signal, "CERTIFICATE"),
    cert: fileOf(signal, "CLIENT_CERTIFICATE"),
    key: fileOf(signal, "CLIENT_KEY"),
  };
  return async (protocol) => {
    const agent =
      protocol === "http:"
        ? new (await import("node:http")).Agent({ keepAlive: true })
        : new (await import("node:https")).Agent({ keepAlive: true, ...tls });
    return withRequestDeadlines(agent, timeoutMillis);
  };
}

/**
 * `agent`, each request it is given destroyed `timeoutMillis` after (unless closed before). A
 * request the exporter retries is a new one, with a deadline of its own. Left as it is should a
 * Node.js release not have addRequest: the exports are still counted at their deadline.
 */
export function withRequestDeadlines<A extends Agent>(agent: A, timeoutMillis: number): A {
  const adds = agent as A & AddsRequests;
  const addRequest = adds.addRequest;
  if (typeof addRequest !== "function") return agent;
  adds.addRequest = function (this: A, request: ClientRequest, options: unknown): void {
    const timer = setTimeout(() => {
      if (!request.destroyed) request.destroy(new RequestDeadline(timeoutMillis));
    }, timeoutMillis);
    // The request's socket keeps the process alive while it is open; the timer need not.
    timer.unref();
    request.once("close", () => clearTimeout(timer));
    addRequest.call(this, request, options);
  };
  return agent;
}
