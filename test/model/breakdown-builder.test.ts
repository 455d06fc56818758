import { describe, expect, it } from "vitest";
import { ActivityLevel, addNode, EPSILON, waitingNodes } from "../../src/model/breakdown-builder.js";
import type { BreakdownNode } from "../../src/model/breakdown.js";

describe("breakdown builder: the rules explain() and the trace rebuild share", () => {
  it("sums siblings of one name, merging their children", () => {
    const nodes: BreakdownNode[] = [];
    addNode(nodes, "spill", 1, [{ name: "serialize", seconds: 0.5, children: [] }]);
    addNode(nodes, "spill", 2, [{ name: "serialize", seconds: 0.25, children: [] }, { name: "disk-write", seconds: 1, children: [] }]);
    expect(nodes).toEqual([
      {
        name: "spill",
        seconds: 3,
        children: [
          { name: "serialize", seconds: 0.75, children: [] },
          { name: "disk-write", seconds: 1, children: [] },
        ],
      },
    ]);
  });

  it("keeps recorded order, puts nested thread digests after the activities (cpu first), then `other`", () => {
    const level = new ActivityLevel();
    level.digest("thread-noncpu", 0.25);
    level.add("deserialize", 1);
    level.digest("thread-cpu", 2);
    level.add("serialize", 0.5);
    level.digest("thread-cpu", 1);
    expect(level.finish(5, true).map((node) => [node.name, node.seconds])).toEqual([
      ["deserialize", 1],
      ["serialize", 0.5],
      ["thread-cpu", 3],
      ["thread-noncpu", 0.25],
      ["other", 0.25],
    ]);
  });

  it("adds no `other` without activities, without remainder, for rounding, or when told not to", () => {
    expect(new ActivityLevel().finish(3, true)).toEqual([]);
    const whole = new ActivityLevel();
    whole.add("compute", 3);
    expect(whole.finish(3, true).map((node) => node.name)).toEqual(["compute"]);
    const rounding = new ActivityLevel();
    rounding.add("compute", 3);
    expect(rounding.finish(3 + EPSILON / 2, true).map((node) => node.name)).toEqual(["compute"]);
    const current = new ActivityLevel();
    current.add("compute", 1);
    expect(current.finish(3, false).map((node) => node.name)).toEqual(["compute"]);
  });

  it("gives a waiting visit without apportioned parts its whole time as `dependencies`, else its parts largest first", () => {
    expect(waitingNodes([], 2)).toEqual([{ name: "dependencies", seconds: 2, children: [] }]);
    expect(waitingNodes([], EPSILON / 2)).toEqual([]);
    const parts: BreakdownNode[] = [
      { name: "network", seconds: 1, children: [] },
      { name: "dependencies", seconds: 3, children: [] },
      { name: "connect", seconds: 1, children: [] },
    ];
    expect(waitingNodes(parts, 5).map((node) => node.name)).toEqual(["dependencies", "connect", "network"]);
  });
});
