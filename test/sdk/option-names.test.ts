/** startTelemetry() refuses a name it does not read (a typo in plain JavaScript), naming the nearest valid one. */
import { describe, expect, it } from "vitest";
import { startTelemetry } from "../../src/sdk.js";

describe("startTelemetry's option names", () => {
  it("refuses fileDirectry, naming fileDirectory, before anything is made", async () => {
    await expect(startTelemetry({ role: "worker", instance: "w", fileDirectry: "/tmp/x" } as never)).rejects.toThrow(
      /^startTelemetry: unknown option "fileDirectry"; did you mean "fileDirectory"\?/,
    );
  });

  it("refuses an exporters name it does not read, by its path", async () => {
    await expect(
      startTelemetry({ role: "worker", instance: "w", exporters: { tracesEndpiont: "http://127.0.0.1:1" } } as never),
    ).rejects.toThrow(
      /^startTelemetry: unknown option "exporters\.tracesEndpiont"; did you mean "exporters\.tracesEndpoint"\?/,
    );
  });

  it("refuses an unknown journeys option as TaskJourneys does", async () => {
    await expect(
      startTelemetry({ role: "worker", instance: "w", journeys: { samplingRatio: 1 } } as never),
    ).rejects.toThrow(/^TaskJourneys: unknown option "samplingRatio"; did you mean "sampling\.ratio"\?/);
  });
});
