/**
 * An OTLP/HTTP endpoint on loopback that fails on demand, for the export-fault tests and bench:
 * it answers, never answers, answers 500 or 429 (with Retry-After), resets the connection, or
 * answers slowly; `refusedUrl()` gives a port where nothing listens. Bodies it accepts are kept
 * (OTLP JSON: the tests export with http/json).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type FaultMode = "ok" | "black-hole" | "500" | "429" | "reset" | "slow";

export interface FaultServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  mode: FaultMode;
  /** Every request, with the mode that answered it. */
  readonly requests: Array<{ path: string; mode: FaultMode }>;
  /** Bodies of the requests answered 200, parsed. */
  readonly accepted: Array<{ path: string; body: unknown }>;
  /** Stops listening (connections are refused, open ones reset) until accept(): the endpoint is down. */
  refuse(): Promise<void>;
  /** Listens again, on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

const SLOW_MILLIS = 300;
const RETRY_AFTER_SECONDS = 1;

export async function startFaultServer(mode: FaultMode = "ok"): Promise<FaultServer> {
  const sockets = new Set<Socket>();
  const state: FaultServer = {
    url: "",
    mode,
    requests: [],
    accepted: [],
    refuse: () => stop(),
    accept: async () => {
      if (!server.listening) await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: () => stop(),
  };
  let port = 0;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  const answer = (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const path = (request.url ?? "/").split("?")[0];
    const current = state.mode;
    state.requests.push({ path, mode: current });
    switch (current) {
      case "black-hole":
        return; // read, never answered: the exporter's timeout ends it
      case "reset":
        request.socket.destroy();
        return;
      case "500":
        response.writeHead(500, { "content-type": "text/plain" }).end("boom");
        return;
      case "429":
        response
          .writeHead(429, { "retry-after": String(RETRY_AFTER_SECONDS), "content-type": "text/plain" })
          .end("slow down");
        return;
      case "slow":
      case "ok": {
        const reply = () => {
          state.accepted.push({ path, body: JSON.parse(body.toString("utf8")) });
          response.writeHead(200, { "content-type": "application/json" }).end("{}");
        };
        if (current === "slow") setTimeout(reply, SLOW_MILLIS);
        else reply();
        return;
      }
    }
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => answer(request, response, Buffer.concat(chunks)));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  (state as { url: string }).url = `http://127.0.0.1:${port}`;
  return state;
}

/** A loopback URL where nothing listens: a port just bound and closed again. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The value of a sum's point with exactly these attributes in an OTLP JSON metrics request, if any. */
export function sumPoint(body: unknown, name: string, attributes: Record<string, string>): number | undefined {
  const request = body as {
    resourceMetrics?: Array<{
      scopeMetrics: Array<{
        metrics: Array<{
          name: string;
          sum?: {
            dataPoints: Array<{
              attributes?: Array<{ key: string; value: { stringValue?: string } }>;
              asInt?: number | string;
              asDouble?: number;
            }>;
          };
        }>;
      }>;
    }>;
  };
  for (const resource of request.resourceMetrics ?? []) {
    for (const scope of resource.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.name !== name || metric.sum === undefined) continue;
        for (const point of metric.sum.dataPoints) {
          const given = Object.fromEntries(
            (point.attributes ?? []).map((attribute) => [attribute.key, attribute.value.stringValue]),
          );
          const wanted = Object.entries(attributes);
          if (Object.keys(given).length === wanted.length && wanted.every(([key, value]) => given[key] === value))
            return point.asDouble ?? Number(point.asInt ?? 0);
        }
      }
    }
  }
  return undefined;
}

/** Spans in an OTLP JSON traces request. */
export function spanCount(body: unknown): number {
  const request = body as { resourceSpans?: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> };
  let count = 0;
  for (const resource of request.resourceSpans ?? [])
    for (const scope of resource.scopeSpans) count += scope.spans.length;
  return count;
}
