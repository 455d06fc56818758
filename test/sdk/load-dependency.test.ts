import { describe, expect, it } from "vitest";
import { load } from "../../src/sdk/load-dependency.js";

describe("loading an exporter's package", () => {
  it("returns the module", async () => {
    await expect(load(() => Promise.resolve({ value: 1 }), "@opentelemetry/x", "traces")).resolves.toEqual({
      value: 1,
    });
  });

  it("names the missing package and the line that installs it", async () => {
    const missing = Object.assign(
      new Error("Cannot find package '@opentelemetry/exporter-prometheus' imported from x"),
      {
        code: "ERR_MODULE_NOT_FOUND",
      },
    );
    await expect(
      load(() => Promise.reject(missing), "@opentelemetry/exporter-prometheus", "prometheus"),
    ).rejects.toThrow(
      "startTelemetry: prometheus needs the package @opentelemetry/exporter-prometheus, a dependency of taskjourney missing from this installation; run: npm install taskjourney @opentelemetry/api",
    );
  });

  it("says which @opentelemetry/api the package needs when it cannot link against the project's", async () => {
    // What Node.js throws when a 3.x package imports a name api 1.9 does not have (seen in a user trial).
    const link = new SyntaxError(
      "The requested module '@opentelemetry/api' does not provide an export named 'SeverityNumber'",
    );
    const error = await load(() => Promise.reject(link), "@opentelemetry/otlp-transformer", "fileDirectory").catch(
      (thrown: unknown) => thrown as Error,
    );
    expect(error.message).toContain(
      "startTelemetry: @opentelemetry/otlp-transformer (for fileDirectory) needs a newer @opentelemetry/api",
    );
    expect(error.message).toContain("npm install @opentelemetry/api@^1.10");
    expect(error.cause).toBe(link);
  });

  it("passes any other failure through unchanged", async () => {
    const other = new TypeError("boom");
    await expect(load(() => Promise.reject(other), "@opentelemetry/x", "traces")).rejects.toBe(other);
  });
});
