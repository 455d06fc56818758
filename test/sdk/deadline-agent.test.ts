import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { deadlineAgentFactory, RequestDeadline } from "../../src/sdk/deadline-agent.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("deadlineAgentFactory", () => {
  it("builds the agent the exporter would have built from the environment: keep-alive, and the signal's certificates first", async () => {
    const directory = await mkdtemp(join(tmpdir(), "taskjourney-agent-"));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    await writeFile(join(directory, "ca.pem"), "any CA");
    await writeFile(join(directory, "traces-ca.pem"), "traces CA");
    await writeFile(join(directory, "key.pem"), "a key");
    vi.stubEnv("OTEL_EXPORTER_OTLP_CERTIFICATE", join(directory, "ca.pem"));
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", join(directory, "traces-ca.pem"));
    vi.stubEnv("OTEL_EXPORTER_OTLP_CLIENT_KEY", join(directory, "key.pem"));
    vi.stubEnv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", join(directory, "missing.pem"));
    const options = async (signal: "TRACES" | "METRICS", protocol: string) =>
      (await deadlineAgentFactory(signal, 1_000)(protocol)) as unknown as { options: Record<string, unknown> };
    const traces = (await options("TRACES", "https:")).options;
    expect(traces.keepAlive).toBe(true);
    expect(String(traces.ca)).toBe("traces CA");
    expect(String(traces.key)).toBe("a key");
    expect(traces.cert).toBeUndefined();
    expect(String((await options("METRICS", "https:")).options.ca)).toBe("any CA");
    // Plain HTTP takes no certificates.
    const plain = (await options("TRACES", "http:")).options;
    expect(plain.keepAlive).toBe(true);
    expect(plain.ca).toBeUndefined();
  });

  it("destroys a request whose answer is still dripping at its deadline, whatever the socket's idle timeout says", async () => {
    const drips = new Set<ReturnType<typeof setInterval>>();
    const server: Server = createServer((_request, response) => {
      response.writeHead(200).flushHeaders();
      drips.add(setInterval(() => response.write("."), 10));
    });
    cleanups.push(() => {
      for (const drip of drips) clearInterval(drip);
      return new Promise((resolve) => server.close(resolve));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const agent = await deadlineAgentFactory("TRACES", 200)("http:");
    cleanups.push(() => agent.destroy());
    const ended = await new Promise<{ error?: Error; bytes: number }>((resolve) => {
      let bytes = 0;
      const req = request({ host: "127.0.0.1", port, method: "POST", agent }, (response) => {
        response.on("data", (chunk: Buffer) => (bytes += chunk.length));
        response.on("error", () => {});
      });
      // An idle timeout, as the exporters set, that the drip never lets fire.
      req.setTimeout(100, () => resolve({ error: new Error("idle timeout fired"), bytes }));
      req.on("error", (error) => resolve({ error, bytes }));
      req.on("close", () => resolve({ error: req.errored ?? undefined, bytes }));
      req.end("{}");
    });
    expect(ended.error).toBeInstanceOf(RequestDeadline);
    // It did drip: some bytes came, never the end.
    expect(ended.bytes).toBeGreaterThan(0);
  });
});
