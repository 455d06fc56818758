/** The cluster's benchmark switches (examples/cluster/parts.ts): what TASKJOURNEY_CLUSTER_OFF may name. */
import { describe, expect, it } from "vitest";
import { PARTS, parseParts } from "../../examples/cluster/parts.js";

describe("TASKJOURNEY_CLUSTER_OFF", () => {
  it("unset or empty: every part on", () => {
    expect([...parseParts(undefined)]).toEqual([]);
    expect([...parseParts(" ")]).toEqual([]);
  });

  it("names parts, comma-separated, spaces allowed", () => {
    expect([...parseParts("carriers, stalls,,export")]).toEqual(["carriers", "stalls", "export"]);
    expect([...parseParts(Object.keys(PARTS).join(","))].sort()).toEqual(Object.keys(PARTS).sort());
  });

  it("an unknown part throws, naming the variable, the value and the parts there are", () => {
    expect(() => parseParts("carriers,wrappers")).toThrow(
      /TASKJOURNEY_CLUSTER_OFF: unknown part "wrappers" in "carriers,wrappers"; the parts are worker-instrument, .*carriers/,
    );
  });
});
