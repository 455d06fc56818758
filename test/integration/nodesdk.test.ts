/**
 * docs/exporting.md's NodeSDK recipe with the real `@opentelemetry/sdk-node`, run as the page
 * writes it (test/fixtures/nodesdk-otlp-app.ts, held equal to the page by
 * test/docs/exporting.test.ts) in a process of its own, exporting OTLP to a loopback receiver:
 * the instance and role it names are on every exported span and metric. NodeSDK merges what its
 * resource detectors find over the `resource` it is given, and its detectors include
 * serviceInstanceIdDetector (a random UUID per start) by default on the 3.x line and with
 * OTEL_NODE_RESOURCE_DETECTORS=all on the 2.x line: both are run here.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runScript } from "../helpers/run.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockOtlp, type Attributes, type MockOtlp } from "./mockotlp.js";

const APP = fileURLToPath(new URL("../fixtures/nodesdk-otlp-app.ts", import.meta.url));
// tsx by its path: the app runs in a directory of its own, where `--import tsx` would not resolve.

/** process.env without OTEL_* (the app's environment is the test's to set), plus `extra`. */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
  return { ...env, ...extra };
}

/** Runs the app to its end (bounded): its exit code and stderr. */
function runApp(env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stderr: string }> {
  return runScript(APP, [], { env, cwd });
}

describe("docs/exporting.md's NodeSDK recipe, with the real NodeSDK", () => {
  let receiver: MockOtlp;
  let cwd: string;
  beforeAll(async () => {
    receiver = await startMockOtlp();
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-nodesdk-"));
  });
  afterAll(async () => {
    await receiver?.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  const cases: Array<[string, Record<string, string>]> = [
    ["NodeSDK's default detectors", {}],
    ["OTEL_NODE_RESOURCE_DETECTORS=all", { OTEL_NODE_RESOURCE_DETECTORS: "all" }],
    [
      "OTEL_RESOURCE_ATTRIBUTES naming another instance",
      { OTEL_RESOURCE_ATTRIBUTES: "service.instance.id=from-env,deployment.environment.name=staging" },
    ],
  ];
  for (const [name, extra] of cases) {
    it(`${name}: every span and metric is of service.instance.id queue-1, taskjourney.role worker`, async () => {
      receiver.traces.length = 0;
      receiver.metrics.length = 0;
      const { code, stderr } = await runApp(environment({ ...extra, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }), cwd);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      // The app exits once sdk.shutdown() has exported both signals: all of it has arrived.
      const spanResources = receiver.traces.flatMap((request) => request.resourceSpans);
      const metricResources = receiver.metrics.flatMap((request) => request.resourceMetrics);
      const spanNames = spanResources.flatMap((r) => r.scopeSpans.flatMap((scope) => scope.spans.map((s) => s.name)));
      const metricNames = metricResources.flatMap((r) =>
        r.scopeMetrics.flatMap((scope) => scope.metrics.map((m) => m.name)),
      );
      // The failed job is kept at the default 1% sampling; the metrics are the journeys' producer's.
      expect(spanNames).toContain("task load");
      expect(metricNames).toContain("task.transitions");
      const resources: Attributes[] = [...spanResources, ...metricResources].map((r) => r.resource?.attributes ?? {});
      expect(resources.length).toBeGreaterThanOrEqual(2);
      for (const attributes of resources) {
        expect(attributes["service.instance.id"]).toBe("queue-1");
        expect(attributes["taskjourney.role"]).toBe("worker");
        // What the detectors find is still there.
        expect(attributes["host.name"]).toBe(os.hostname());
        expect(attributes["process.pid"]).toEqual(expect.any(Number));
        if (extra.OTEL_RESOURCE_ATTRIBUTES !== undefined)
          expect(attributes["deployment.environment.name"]).toBe("staging");
      }
    }, 90_000);
  }
});
