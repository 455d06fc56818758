/**
 * An OTLP/HTTP endpoint on loopback that fails on demand, for the export-fault tests and bench:
 * it answers, never answers, answers 500 or 429 (with Retry-After), resets the connection, or
 * answers slowly; `refusedUrl()` gives a port where nothing listens. Bodies it accepts are kept
 * (OTLP JSON: the tests export with http/json).
 *
 * And the endpoints that never finish while never going quiet, which an idle timeout cannot end:
 * "drip-headers" sends a 200 status line and then its header lines a byte at a time, "drip-body"
 * sends whole 200 headers and then a body a byte at a time, both every `dripMillis` and forever;
 * "no-read" accepts the TCP connection and never reads a byte of it. `openSockets()` counts the
 * connections open on the server's side, to see whether a client lets them pile up.
 * "garbage-200" answers 200 with a body that is neither an OTLP JSON nor an OTLP protobuf response.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";

export type FaultMode =
  "ok" | "black-hole" | "500" | "429" | "reset" | "slow" | "drip-headers" | "drip-body" | "no-read" | "garbage-200";

export interface FaultServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  mode: FaultMode;
  /** Every request, with the mode that answered it (a "no-read" connection makes none). */
  readonly requests: Array<{ path: string; mode: FaultMode }>;
  /** Bodies of the requests answered 200, parsed. */
  readonly accepted: Array<{ path: string; body: unknown }>;
  /** Connections open now, on the server's side (accepted and not yet closed). */
  openSockets(): number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Stops listening (connections are refused, open ones reset) until accept(): the endpoint is down. */
  refuse(): Promise<void>;
  /** Listens again, on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

const SLOW_MILLIS = 300;
const RETRY_AFTER_SECONDS = 1;
/** What the dripping modes send, a byte at a time: never the blank line that ends the headers, nor the body's end. */
const DRIPPED_HEADERS = "HTTP/1.1 200 OK\r\n" + "X-Drip: " + ".".repeat(1 << 20);
const DRIPPED_BODY = " ".repeat(1 << 20);

export async function startFaultServer(mode: FaultMode = "ok", { dripMillis = 100 } = {}): Promise<FaultServer> {
  const sockets = new Set<Socket>();
  const drips = new Set<ReturnType<typeof setInterval>>();
  let connections = 0;
  const state: FaultServer = {
    url: "",
    mode,
    requests: [],
    accepted: [],
    openSockets: () => sockets.size,
    get connections() {
      return connections;
    },
    refuse: () => stop(),
    accept: async () => {
      if (!front.listening) await new Promise<void>((resolve) => front.listen(port, "127.0.0.1", resolve));
    },
    close: () => stop(),
  };
  let port = 0;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const drip of drips) clearInterval(drip);
      drips.clear();
      if (!front.listening) return resolve();
      front.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  /** Writes `text` to `socket` a byte every dripMillis, until it ends or closes. */
  const drip = (socket: Socket, text: string, write: (byte: string) => void) => {
    let at = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || at >= text.length) {
        clearInterval(timer);
        drips.delete(timer);
        return;
      }
      write(text[at++]);
    }, dripMillis);
    drips.add(timer);
    socket.once("close", () => {
      clearInterval(timer);
      drips.delete(timer);
    });
  };
  const answer = (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const path = (request.url ?? "/").split("?")[0];
    const current = state.mode;
    state.requests.push({ path, mode: current });
    switch (current) {
      case "black-hole":
      case "no-read": // a connection made before the mode changed: answered as silence
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
      case "garbage-200":
        response
          .writeHead(200, { "content-type": "application/x-protobuf" })
          .end(Buffer.from([0xff, 0xff, 0xff, 0xff]));
        return;
      case "drip-headers": {
        // Raw bytes on the socket, past the response object: the status line and a header line that never ends.
        const socket = request.socket;
        drip(socket, DRIPPED_HEADERS, (byte) => socket.write(byte));
        return;
      }
      case "drip-body":
        response.writeHead(200, { "content-type": "application/json" });
        response.flushHeaders();
        drip(request.socket, DRIPPED_BODY, (byte) => response.write(byte));
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
  // A TCP server in front, so that a connection can be held without reading it ("no-read"); the
  // others are handed to the HTTP server as it would have accepted them.
  const front = createNetServer({ pauseOnConnect: true }, (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    // Never read, never answered: the client's write fills the socket's buffers and stops there.
    if (state.mode === "no-read") return;
    server.emit("connection", socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  port = (front.address() as AddressInfo).port;
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
