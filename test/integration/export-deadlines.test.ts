/**
 * Every OTLP export ends at its deadline (`exporters.timeoutMillis`), whatever the endpoint does:
 * answers that drip a byte at a time (a status line whose headers never end, or whole 200 headers
 * and a body that never ends: each byte restarts a socket's idle timeout, which is all the
 * OpenTelemetry exporters set), silence, and a connection accepted but never read. At the deadline
 * the connection is dropped (the server sees it close: sockets never pile up) and the export is
 * counted as `timeout` and told once; forceFlush() and shutdown() complete within their own
 * deadlines. Both signals, both protocols (fault-server.ts, on loopback).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { diag } from "@opentelemetry/api";
import { startTelemetry, type ExportErrorCount, type Telemetry } from "../../src/sdk.js";
import type { TaskJourneys } from "../../src/index.js";
import { captureDiag } from "../helpers/diag.js";
import { FakeClock } from "../helpers/clock.js";
import { startFaultServer, type FaultMode, type FaultServer } from "./fault-server.js";

/** The export deadline; the server drips a byte every DRIP_MILLIS, well inside it, so an idle timeout never fires. */
const EXPORT_TIMEOUT = 500;
const DRIP_MILLIS = 50;
const JOURNEYS = 50;
const FLUSHES = 3;
/** Far beyond EXPORT_TIMEOUT: a flush or shutdown that needs it has waited for more than one export's deadline. */
const FLUSH_DEADLINE = 10_000;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let instances = 0;

async function telemetryTo(server: FaultServer, protocol: "http/json" | "http/protobuf"): Promise<Telemetry> {
  const telemetry = await startTelemetry({
    role: "worker",
    instance: `tcp://127.0.0.1:${42000 + ++instances}`,
    registerGlobal: false,
    journeys: { runtime: { clock: new FakeClock(0).now }, sampling: { ratio: 1 } },
    exporters: { endpoint: server.url, protocol, timeoutMillis: EXPORT_TIMEOUT, metricExportIntervalMillis: 3_600_000 },
  });
  cleanups.push(() => telemetry.shutdown({ timeoutMillis: 1_000 }));
  return telemetry;
}

/** JOURNEYS tasks released → waiting → ready → executing → memory: 4 transitions, 4 spans each. */
function round(journeys: TaskJourneys, index: number): number {
  for (let task = 0; task < JOURNEYS; task++) {
    const key = `drip-${index}-${task}`;
    journeys.transition(key, "released", "waiting");
    journeys.transition(key, "waiting", "ready");
    journeys.transition(key, "ready", "executing");
    journeys.transition(key, "executing", "memory");
  }
  return 4 * JOURNEYS;
}

/** Waits (at most `millis`, polling) until `condition` holds; the caller asserts on what it then sees. */
async function until(condition: () => boolean, millis: number): Promise<void> {
  for (let waited = 0; !condition() && waited < millis; waited += 20) await new Promise((r) => setTimeout(r, 20));
}

function kinds(failures: ExportErrorCount[]): Array<[string, string, number]> {
  return failures
    .map((failure): [string, string, number] => [failure.signal, failure.errorType, failure.exports])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

const MODES: FaultMode[] = ["drip-headers", "drip-body", "black-hole", "no-read"];
const PROTOCOLS = ["http/json", "http/protobuf"] as const;
const MATRIX = MODES.flatMap((mode) => PROTOCOLS.map((protocol) => ({ mode, protocol })));

describe("an export's deadline covers the whole request", () => {
  it.each(MATRIX)(
    "$mode, $protocol: each export of traces and of metrics ends at its deadline as a timeout, its connection closed",
    async ({ mode, protocol }) => {
      const logged = captureDiag();
      cleanups.push(() => diag.disable());
      const server = await startFaultServer(mode, { dripMillis: DRIP_MILLIS });
      cleanups.push(() => server.close());
      const telemetry = await telemetryTo(server, protocol);

      let spans = 0;
      for (let flush = 1; flush <= FLUSHES; flush++) {
        spans += round(telemetry.journeys, flush);
        // Before: the exports dripped on past every deadline, and this waited its full FLUSH_DEADLINE.
        expect(await telemetry.forceFlush({ timeoutMillis: FLUSH_DEADLINE })).toEqual({ completed: true });
        // The dropped connections close on the server's side too (a "no-read" one cannot tell: it is
        // never read, so it never sees the client's close).
        if (mode !== "no-read") {
          await until(() => server.openSockets() === 0, 5_000);
          expect(server.openSockets()).toBe(0);
        }
      }
      // One export of each signal per flush, each a timeout, and every span of them counted.
      expect(kinds(telemetry.exportErrors())).toEqual([
        ["metrics", "timeout", FLUSHES],
        ["traces", "timeout", FLUSHES],
      ]);
      expect(telemetry.exportErrors().find((failure) => failure.signal === "traces")!.items).toBe(spans);
      // Each export made one connection: none was retried past its deadline.
      expect(server.connections).toBe(2 * FLUSHES);
      // Told once per signal.
      const warnings = logged.filter((line) => line.startsWith("taskjourney:"));
      expect(warnings, warnings.join("\n")).toHaveLength(2);
      expect(warnings.every((line) => line.includes('error.type="timeout"'))).toBe(true);

      // Shutdown: the last export ends at its deadline too, so shutdown completes within its own.
      round(telemetry.journeys, FLUSHES + 1);
      expect(await telemetry.shutdown({ timeoutMillis: FLUSH_DEADLINE })).toEqual({ completed: true });
      if (mode !== "no-read") {
        await until(() => server.openSockets() === 0, 5_000);
        expect(server.openSockets()).toBe(0);
      }
    },
  );
});

describe("over HTTPS, with the certificate authority of OTEL_EXPORTER_OTLP_CERTIFICATE", () => {
  it("exports through the agent taskjourney gives the exporters, and a dripping answer is cut off at the deadline", async () => {
    const logged = captureDiag();
    cleanups.push(() => diag.disable());
    // A self-signed certificate for 127.0.0.1, its own authority.
    const directory = mkdtempSync(join(tmpdir(), "taskjourney-tls-"));
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    const keyPath = join(directory, "key.pem");
    const certPath = join(directory, "cert.pem");
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"],
        ...["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyPath, "-out", certPath],
      ],
      { stdio: "ignore" },
    );
    let drip = false;
    const timers = new Set<ReturnType<typeof setInterval>>();
    const server = createHttpsServer(
      { key: readFileSync(keyPath), cert: readFileSync(certPath) },
      (request, response) => {
        request.resume();
        request.on("end", () => {
          if (!drip) return void response.writeHead(200, { "content-type": "application/json" }).end("{}");
          response.writeHead(200, { "content-type": "application/json" });
          response.flushHeaders();
          const timer = setInterval(() => response.write(" "), DRIP_MILLIS);
          timers.add(timer);
          response.on("close", () => clearInterval(timer));
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    vi.stubEnv("OTEL_EXPORTER_OTLP_CERTIFICATE", certPath);
    cleanups.push(() => {
      vi.unstubAllEnvs();
    });
    const telemetry = await startTelemetry({
      role: "worker",
      instance: `tcp://127.0.0.1:${42000 + ++instances}`,
      registerGlobal: false,
      journeys: { runtime: { clock: new FakeClock(0).now }, sampling: { ratio: 1 } },
      exporters: {
        endpoint: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        protocol: "http/json",
        timeoutMillis: EXPORT_TIMEOUT,
        metricExportIntervalMillis: 3_600_000,
      },
    });
    cleanups.push(() => telemetry.shutdown({ timeoutMillis: 1_000 }));
    // The authority from the environment reaches the agent: the exports succeed.
    round(telemetry.journeys, 1);
    expect(await telemetry.forceFlush({ timeoutMillis: FLUSH_DEADLINE })).toEqual({ completed: true });
    expect(telemetry.exportErrors()).toEqual([]);
    // And a dripping answer ends at the deadline, as over plain HTTP.
    drip = true;
    round(telemetry.journeys, 2);
    expect(await telemetry.forceFlush({ timeoutMillis: FLUSH_DEADLINE })).toEqual({ completed: true });
    expect(kinds(telemetry.exportErrors())).toEqual([
      ["metrics", "timeout", 1],
      ["traces", "timeout", 1],
    ]);
    expect(logged.filter((line) => line.startsWith("taskjourney:"))).toHaveLength(2);
    expect(await telemetry.shutdown({ timeoutMillis: FLUSH_DEADLINE })).toEqual({ completed: true });
  });
});
