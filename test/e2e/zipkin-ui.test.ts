/**
 * A task's trace looked at in a real trace UI on this machine: the cluster example (a scheduler
 * and two worker processes on loopback) exports its spans with OTEL_TRACES_EXPORTER=zipkin to
 * the Zipkin server collector/backends.sh runs (Jaeger built from Go source serves no UI); a
 * task's trace is found through Zipkin's API, then opened at Zipkin's own trace page in headless
 * Chromium (Debian's), which must show the trace's spans by name, across the scheduler and the
 * worker. A screenshot is kept in test-output/zipkin-ui/ for a developer to look at.
 *
 * Without Chromium the test is skipped, except in CI (CI=true), where that is a failure.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Chromium, findChromium } from "../helpers/chromium.js";
import { backendsEnv, getJson, pollUntil, ROOT, run, sleep } from "./helpers.js";

const SERVICE = "taskjourney-e2e-zipkin";
const OUTPUT = path.join(ROOT, "test-output", "zipkin-ui");
const chromium = findChromium();
const inCi = process.env.CI === "true";
const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
}

/** The span names Zipkin's trace page shows, the one asserted in the page below. */
function spanNames(trace: ZipkinSpan[]): Set<string> {
  return new Set(trace.map((span) => span.name));
}

/** Opens `url` in headless Chromium, waits (at most 60 s) until its text shows every one of `expected`, screenshots it. */
async function openTracePage(url: string, expected: string[], screenshot: string): Promise<string> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-zipkin-ui-"));
  tempDirs.push(profile);
  const browser = new Chromium(chromium!, profile);
  try {
    const { targetId } = (await browser.send("Target.createTarget", { url: "about:blank" })) as { targetId: string };
    const { sessionId } = (await browser.send("Target.attachToTarget", { targetId, flatten: true })) as {
      sessionId: string;
    };
    const send = (method: string, params: Record<string, unknown> = {}) => browser.send(method, params, sessionId);
    await send("Page.enable");
    await send("Emulation.setDeviceMetricsOverride", {
      width: 1400,
      height: 1000,
      deviceScaleFactor: 1,
      mobile: false,
    });
    const loaded = browser.next("Page.loadEventFired");
    await send("Page.navigate", { url });
    await loaded;
    // Zipkin's UI (a React app) fetches the trace after loading: its text is asked until it shows the spans.
    let text = "";
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = (await send("Runtime.evaluate", {
        expression: "document.body.innerText",
        returnByValue: true,
      })) as { result: { value: string } };
      text = answer.result.value;
      if (expected.every((name) => text.includes(name)) || Date.now() >= deadline) break;
      await sleep(500);
    }
    const shot = (await send("Page.captureScreenshot", { format: "png" })) as { data: string };
    fs.mkdirSync(path.dirname(screenshot), { recursive: true });
    fs.writeFileSync(screenshot, Buffer.from(shot.data, "base64"));
    return text;
  } finally {
    await browser.close();
  }
}

if (chromium === undefined && !inCi) {
  console.warn("zipkin-ui: skipped, Chromium is not installed (apt-get install -y chromium); in CI this fails instead");
}

describe("a task's trace in Zipkin's UI", () => {
  it.skipIf(chromium === undefined && !inCi)(
    "the cluster example exports to Zipkin; the trace page of a task shows its spans across scheduler and worker",
    async () => {
      expect(chromium, "Chromium is required in CI: apt-get install -y chromium").toBeDefined();
      const env = backendsEnv();
      const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-zipkin-"));
      tempDirs.push(outDir);
      const childEnv: NodeJS.ProcessEnv = {};
      for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("OTEL_")) childEnv[name] = value;
      const result = await run(
        process.execPath,
        [
          "--import",
          "tsx",
          "examples/cluster/main.ts",
          "--workload",
          "reduction",
          "--size",
          "40",
          "--workers",
          "2",
          "--trace-ratio",
          "1",
          "--quiet",
          "--json",
          "--out",
          outDir,
        ],
        {
          env: {
            ...childEnv,
            OTEL_SERVICE_NAME: SERVICE,
            OTEL_TRACES_EXPORTER: "zipkin",
            OTEL_EXPORTER_ZIPKIN_ENDPOINT: env.OTEL_EXPORTER_ZIPKIN_ENDPOINT,
            OTEL_METRICS_EXPORTER: "none",
          },
          timeoutMs: 120_000,
        },
      );
      expect(result.code, `cluster example failed (signal ${result.signal}):\n${result.stderr.slice(-3000)}`).toBe(0);
      const summary = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as { tasks: number; destination: string };
      expect(summary.destination).toContain(env.OTEL_EXPORTER_ZIPKIN_ENDPOINT);
      expect(result.stderr).not.toMatch(/failed to export|export.*fail/i);

      // A task that went from the scheduler to a worker: its trace holds both sides' journeys.
      const trace = await pollUntil(
        "a trace of a `sum` task with its worker side in Zipkin",
        async () => {
          const traces = await getJson<ZipkinSpan[][]>(
            `${env.ZIPKIN_URL}/api/v2/traces?serviceName=${SERVICE}&spanName=executing&limit=100&lookback=3600000`,
          );
          return traces.find((spans) => {
            const names = spanNames(spans);
            return names.has("task sum") && names.has("processing") && names.has("executing") && names.has("waiting");
          });
        },
        30_000,
      );
      const traceId = trace[0].traceId;
      const root = trace.filter((span) => span.parentId === undefined);
      expect(root.map((span) => span.name)).toEqual(["task sum"]);
      expect(root[0].tags?.["taskjourney.role"]).toBe("scheduler");
      const worker = trace.find((span) => span.name === "task sum" && span.tags?.["taskjourney.role"] === "worker");
      expect(worker, "the worker's journey in the trace").toBeDefined();
      // The worker's journey nests under the scheduler's task span (docs/spans.md).
      expect(worker!.parentId).toBe(root[0].id);
      expect(root[0].tags?.["task.key"]).toMatch(/^sum-\d+-\d+$/);

      const expected = ["task sum", "processing", "waiting", "ready", "executing", SERVICE];
      const text = await openTracePage(
        `${env.ZIPKIN_URL}/zipkin/traces/${traceId}`,
        expected,
        path.join(OUTPUT, "trace.png"),
      );
      for (const name of expected) expect(text, `the trace page shows "${name}"`).toContain(name);
      // The page is this trace's: its id is on it, and so is its span count.
      expect(text).toContain(traceId);
      expect(text).toMatch(new RegExp(`\\b${trace.length}\\b`));
    },
    240_000,
  );
});
