/**
 * An export's problem is an export error (docs/glossary.md), not a failure: `exportErrors()` and
 * `taskjourney.export.errors`; the old `exportFailures()` still answers for one minor release,
 * told once per process as deprecated.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { METRIC_EXPORT_ERRORS, METRIC_EXPORT_FAILURES } from "../../src/otel/semconv.js";
import { forgetDeprecationsTold } from "../../src/recorder/deprecations.js";
import { startTelemetry } from "../../src/sdk.js";
import { captureDiag } from "../helpers/diag.js";

describe("export errors by their name", () => {
  beforeEach(() => forgetDeprecationsTold());

  it("names the metric taskjourney.export.errors (the old constant is the same name)", () => {
    expect(METRIC_EXPORT_ERRORS).toBe("taskjourney.export.errors");
    expect(METRIC_EXPORT_FAILURES).toBe(METRIC_EXPORT_ERRORS);
  });

  it("exportErrors() lists them; exportFailures() gives the same, told once as deprecated", async () => {
    const telemetry = await startTelemetry({
      role: "worker",
      instance: "w",
      registerGlobal: false,
      exporters: { traces: "none", metrics: "none" },
    });
    try {
      const told = captureDiag();
      expect(telemetry.exportErrors()).toEqual([]);
      expect(told).toEqual([]);
      expect(telemetry.exportFailures()).toEqual([]);
      expect(telemetry.exportFailures()).toEqual([]);
      expect(told).toEqual([
        "taskjourney: telemetry.exportFailures() is deprecated and will be removed in the next minor release; write telemetry.exportErrors() instead. (Told once per process.)",
      ]);
    } finally {
      await telemetry.shutdown();
    }
  });
});
