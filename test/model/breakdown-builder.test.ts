import { describe, expect, it } from "vitest";
import {
  ActivityLevel,
  addNode,
  addStallNodes,
  EPSILON,
  showsStalls,
  waitingNodes,
} from "../../src/model/breakdown-builder.js";
import type { BreakdownNode } from "../../src/model/breakdown.js";
import { STALL_KINDS } from "../../src/model/stalls.js";

const MAJOR = STALL_KINDS.indexOf("major");
const MINOR = STALL_KINDS.indexOf("minor");
const EVENT_LOOP = STALL_KINDS.indexOf("event-loop");

function node(name: string, seconds: number, children: BreakdownNode[] = []): BreakdownNode {
  return { name, seconds, children };
}

function overlapOf(seconds: Partial<Record<"major" | "minor" | "event-loop", number>>): Float64Array {
  const overlap = new Float64Array(STALL_KINDS.length);
  overlap[MAJOR] = seconds.major ?? 0;
  overlap[MINOR] = seconds.minor ?? 0;
  overlap[EVENT_LOOP] = seconds["event-loop"] ?? 0;
  return overlap;
}

/** Rounded to the nanosecond: the tree's names and seconds. */
function shape(nodes: BreakdownNode[]): unknown[] {
  return nodes.map((n) =>
    n.children.length === 0
      ? [n.name, Number(n.seconds.toFixed(9))]
      : [n.name, Number(n.seconds.toFixed(9)), shape(n.children)],
  );
}

describe("breakdown builder: the rules explain() and the trace rebuild share", () => {
  it("sums siblings of one name, merging their children", () => {
    const nodes: BreakdownNode[] = [];
    addNode(nodes, "spill", 1, [{ name: "serialize", seconds: 0.5, children: [] }]);
    addNode(nodes, "spill", 2, [
      { name: "serialize", seconds: 0.25, children: [] },
      { name: "disk-write", seconds: 1, children: [] },
    ]);
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

describe("process stalls in a breakdown: a split of `other`, no metric's node changed", () => {
  it("nests a stall under `other`, which keeps its seconds, with the rest as `other` inside it", () => {
    const nodes = [node("deserialize", 0.01), node("thread-cpu", 0.05), node("other", 0.04)];
    addStallNodes(nodes, 0.1, overlapOf({ major: 0.018, "event-loop": 0.002 }));
    expect(shape(nodes)).toEqual([
      ["deserialize", 0.01],
      ["thread-cpu", 0.05],
      [
        "other",
        0.04,
        [
          ["gc", 0.018, [["major", 0.018]]],
          ["event-loop", 0.002],
          ["other", 0.02],
        ],
      ],
    ]);
  });

  it("gives a visit with no activity one `other` of its whole time to hold them, GC types largest first", () => {
    const nodes: BreakdownNode[] = [];
    addStallNodes(nodes, 0.03, overlapOf({ minor: 0.001, major: 0.018 }));
    expect(shape(nodes)).toEqual([
      [
        "other",
        0.03,
        [
          [
            "gc",
            0.019,
            [
              ["major", 0.018],
              ["minor", 0.001],
            ],
          ],
          ["other", 0.011],
        ],
      ],
    ]);
  });

  it("shows at most what no activity claimed, GC first and its types scaled alike; nothing when activities claim it all", () => {
    const claimed = [node("thread-cpu", 0.1)];
    addStallNodes(claimed, 0.1, overlapOf({ major: 0.018 }));
    expect(claimed).toEqual([node("thread-cpu", 0.1)]);
    // 20 ms of GC and 5 ms of event loop, 10 ms unclaimed: each GC type scaled by a half, no event loop.
    const partly = [node("thread-cpu", 0.09), node("other", 0.01)];
    addStallNodes(partly, 0.1, overlapOf({ major: 0.018, minor: 0.002, "event-loop": 0.005 }));
    expect(shape(partly)).toEqual([
      ["thread-cpu", 0.09],
      [
        "other",
        0.01,
        [
          [
            "gc",
            0.01,
            [
              ["major", 0.009],
              ["minor", 0.001],
            ],
          ],
        ],
      ],
    ]);
  });

  it("adds nothing for no stall", () => {
    const nodes = [node("thread-cpu", 0.05), node("other", 0.05)];
    addStallNodes(nodes, 0.1, new Float64Array(STALL_KINDS.length));
    expect(nodes).toEqual([node("thread-cpu", 0.05), node("other", 0.05)]);
  });

  it("leaves a compute journey's apportioned waiting alone, and every other visit open to stalls", () => {
    expect(showsStalls("compute", true)).toBe(false);
    expect(showsStalls("compute", false)).toBe(true);
    expect(showsStalls("fetch", false)).toBe(true);
    expect(showsStalls("scheduler", true)).toBe(true);
  });
});
