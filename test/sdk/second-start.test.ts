/**
 * Two startTelemetry() in one process, both registering globally (the default): the second
 * cannot own the global API, and the OpenTelemetry API said so with four "duplicate
 * registration" errors and their stacks. taskjourney tells it once instead, naming the option
 * that fixes it, and the second telemetry still exports its journeys.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { diag, metrics, trace } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { startTelemetry } from "../../src/sdk.js";
import { captureDiag } from "../helpers/diag.js";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-second-start-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

describe("a second startTelemetry() in a process", () => {
  it("is told once, naming registerGlobal: false, with no duplicate-registration errors; it still exports", async () => {
    const messages = captureDiag();
    try {
      const first = await startTelemetry({ role: "worker", instance: "engine", fileDirectory: directory });
      const second = await startTelemetry({ role: "scheduler", instance: "engine", fileDirectory: directory });
      const third = await startTelemetry({ role: "scheduler", instance: "other", fileDirectory: directory });
      expect(messages.filter((message) => /duplicate registration/i.test(message))).toEqual([]);
      expect(messages).toEqual([
        expect.stringMatching(
          /^taskjourney: startTelemetry\(\) of the scheduler "engine" while the telemetry of the worker "engine" holds the global OpenTelemetry API .*Pass registerGlobal: false to every startTelemetry\(\) of a process but one\.$/,
        ),
      ]);
      second.journeys.transition("s-1", "released", "waiting");
      second.journeys.transition("s-1", "waiting", "processing");
      second.journeys.transition("s-1", "processing", "memory");
      await Promise.all([third.shutdown(), second.shutdown()]);
      // The first holds the API until its own shutdown; then a start registers again, untold.
      await first.shutdown();
      const again = await startTelemetry({ role: "worker", instance: "again", fileDirectory: directory });
      await again.shutdown();
      expect(messages.slice(1)).toEqual([]);
      expect(fs.readFileSync(path.join(directory, "metrics-scheduler-engine.jsonl"), "utf8")).toContain(
        '"name":"task.state.time"',
      );
    } finally {
      diag.disable();
      metrics.disable();
      trace.disable();
    }
  });
});
