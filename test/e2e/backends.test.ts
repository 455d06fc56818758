/**
 * collector/backends.sh between checkouts: each has its own run directory, PID files and ports
 * by default (so a second checkout on the machine never stops the first one's backends), and a
 * caller that waits for another's lock says so, who holds it, and for how long it waited.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backendsEnv, ROOT, run } from "./helpers.js";

const SCRIPT = path.join(ROOT, "collector/backends.sh");
const PORTS = [
  "TJ_OTLP_GRPC_PORT",
  "TJ_OTLP_HTTP_PORT",
  "TJ_COLLECTOR_HEALTH_PORT",
  "TJ_PROM_EXPORTER_PORT",
  "TJ_COLLECTOR_METRICS_PORT",
  "TJ_JAEGER_OTLP_GRPC_PORT",
  "TJ_JAEGER_OTLP_HTTP_PORT",
  "TJ_JAEGER_QUERY_PORT",
  "TJ_JAEGER_QUERY_GRPC_PORT",
  "TJ_PROMETHEUS_PORT",
  "TJ_ZIPKIN_PORT",
];
const tempDirs: string[] = [];

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-backends-"));
  tempDirs.push(dir);
  return dir;
}

/** The caller's environment without backends.sh settings: what a developer's shell has. */
function plainEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith("TJ_") && !name.startsWith("TASKJOURNEY_")) env[name] = value;
  return { ...env, ...extra };
}

/**
 * A second checkout: a copy of collector/ (backends.sh and the configs it starts the servers with)
 * in another directory, sharing the binary cache.
 */
function otherCheckout(): string {
  const collector = path.join(tempDir(), "other-checkout", "collector");
  fs.cpSync(path.dirname(SCRIPT), collector, { recursive: true, filter: (from) => !from.endsWith("/.cache") });
  return path.join(collector, "backends.sh");
}

async function backends(script: string, args: string[], env: NodeJS.ProcessEnv) {
  return run("bash", [script, ...args], { env, timeoutMs: 120_000 });
}

/**
 * Another checkout sharing our binary cache, on ports none of ours. Ports come from a hash of the
 * checkout's path, one of 99 offsets: a random other path lands on ours once in 99 (backends.sh then
 * says which port is taken; TJ_PORT_OFFSET moves it). Such a path is not the case under test, so
 * another is drawn, a few times at most. Its run directory (in the shared cache) is removed at the end.
 */
async function otherCheckoutApart(ours: Record<string, string>) {
  const cache = { TASKJOURNEY_CACHE: ours.TASKJOURNEY_CACHE };
  const ourPorts = new Set(PORTS.map((name) => ours[name]));
  let other = "";
  let theirs: Record<string, string> = {};
  for (let attempt = 0; attempt < 5; attempt++) {
    other = otherCheckout();
    const answer = await backends(other, ["env", "--json"], plainEnv(cache));
    expect(answer.code, answer.stderr).toBe(0);
    theirs = JSON.parse(answer.stdout) as Record<string, string>;
    if (!PORTS.some((name) => ourPorts.has(theirs[name]))) break;
  }
  tempDirs.push(theirs.TASKJOURNEY_RUN_DIR);
  return { other, theirs, cache };
}

describe("backends.sh: one set of backends per checkout", () => {
  it("another checkout has its own run directory and ports, and its stop leaves ours running", async () => {
    const ours = backendsEnv();
    const ourPorts = new Set(PORTS.map((name) => ours[name]));
    const { other, theirs, cache } = await otherCheckoutApart(ours);
    expect(theirs.TASKJOURNEY_CACHE).toBe(ours.TASKJOURNEY_CACHE);
    expect(theirs.TASKJOURNEY_RUN_DIR).not.toBe(ours.TASKJOURNEY_RUN_DIR);
    expect(path.basename(theirs.TASKJOURNEY_RUN_DIR)).toMatch(/^other-checkout-[0-9a-f]{8}$/);
    expect(
      PORTS.filter((name) => ourPorts.has(theirs[name])),
      "ports of ours the other checkout would use",
    ).toEqual([]);

    const before = await backends(SCRIPT, ["status", "--json"], plainEnv(cache));
    expect(before.code, before.stderr).toBe(0);
    const stopped = await backends(other, ["stop"], plainEnv(cache));
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).not.toMatch(/stopped \(pid/);
    const after = await backends(SCRIPT, ["status", "--json"], plainEnv(cache));
    expect(after.code, `our backends after the other checkout's stop: ${after.stdout}`).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual(JSON.parse(before.stdout));
  });

  it("a server whose exec is slow is waited for, not called exited", async () => {
    // A CI run on a busy machine failed with "collector exited during startup" and an empty log:
    // the check ran while the launched shell had not yet exec'd the collector, so the PID's
    // executable was still setsid's. A setsid on PATH that takes a second before the real one
    // gives every run that machine's timing.
    const { other, cache } = await otherCheckoutApart(backendsEnv());
    const shims = tempDir();
    const realSetsid = (await run("bash", ["-c", "command -v setsid"], { timeoutMs: 10_000 })).stdout.trim();
    fs.writeFileSync(path.join(shims, "setsid"), `#!/bin/sh\nsleep 1\nexec ${realSetsid} "$@"\n`, { mode: 0o755 });
    const env = plainEnv({ ...cache, PATH: `${shims}:${process.env.PATH ?? ""}` });
    try {
      const started = await backends(other, ["start"], env);
      expect(started.code, started.stderr).toBe(0);
      expect(started.stderr).not.toContain("exited during startup");
      expect(started.stderr).toMatch(/all ready in/);
    } finally {
      const stopped = await backends(other, ["stop"], plainEnv(cache));
      expect(stopped.code, stopped.stderr).toBe(0);
    }
    // What it stopped was the four servers it started, each by its PID file.
    const status = await backends(other, ["status"], plainEnv(cache));
    expect(status.code).not.toBe(0);
  });

  it("the ports are the documented ones with TJ_PORT_OFFSET=0, and a TJ_*_PORT still wins", async () => {
    const other = otherCheckout();
    const answer = await backends(
      other,
      ["env", "--json"],
      plainEnv({ TJ_PORT_OFFSET: "0", TJ_PROMETHEUS_PORT: "29999" }),
    );
    expect(answer.code, answer.stderr).toBe(0);
    const env = JSON.parse(answer.stdout) as Record<string, string>;
    expect(PORTS.map((name) => env[name])).toEqual([
      "14317",
      "14318",
      "13133",
      "18889",
      "18888",
      "24317",
      "24318",
      "26686",
      "26685",
      "29999",
      "19411",
    ]);
    const bad = await backends(other, ["env"], plainEnv({ TJ_PORT_OFFSET: "ten" }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("TJ_PORT_OFFSET");
  });

  it("install waiting for another's lock says who holds it and how long it waited", async () => {
    // A cache of its own, locked by a stand-in for another checkout's install; GO=/bin/false
    // makes the install stop right after it got the lock.
    const cache = tempDir();
    const lock = path.join(cache, ".lock");
    const holder = spawn("flock", [lock, "-c", "echo locked; sleep 2"], {
      cwd: cache,
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once("data", () => resolve());
      holder.once("error", reject);
    });
    const result = await backends(SCRIPT, ["install"], plainEnv({ TASKJOURNEY_CACHE: cache, GO: "/bin/false" }));
    expect(result.code).not.toBe(0);
    const lines = result.stderr.split("\n");
    expect(lines[0]).toContain(
      `[backends] waiting for another install of the shared binaries: ${lock} is held by pid ${holder.pid} (flock ${lock} -c echo locked; sleep 2, in ${fs.realpathSync(cache)})`,
    );
    expect(lines[1]).toMatch(
      new RegExp(`^\\[backends\\] got ${lock.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} after waiting \\d+\\.\\d s$`),
    );
  });
});
