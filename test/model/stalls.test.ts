import { describe, expect, it } from "vitest";
import { addStallNodes, StallRing, STALL_KINDS } from "../../src/model/stalls.js";
import type { BreakdownNode } from "../../src/model/breakdown.js";

const MAJOR = STALL_KINDS.indexOf("major");
const MINOR = STALL_KINDS.indexOf("minor");
const EVENT_LOOP = STALL_KINDS.indexOf("event-loop");

function node(name: string, seconds: number, children: BreakdownNode[] = []): BreakdownNode {
  return { name, seconds, children };
}

describe("StallRing", () => {
  it("sums each kind's overlap with an interval, cut at its ends", () => {
    const ring = new StallRing(8);
    ring.push(MAJOR, 1.0, 1.018);
    ring.push(MINOR, 1.5, 1.502);
    ring.push(MINOR, 2.9, 3.1); // half inside [1, 3]
    ring.push(MAJOR, 5, 6); // outside
    const overlap = ring.overlap(1, 3);
    expect(overlap[MAJOR]).toBeCloseTo(0.018, 12);
    expect(overlap[MINOR]).toBeCloseTo(0.002 + 0.1, 12);
    expect(overlap[EVENT_LOOP]).toBe(0);
  });

  it("does not count a GC pause again as event-loop time", () => {
    const ring = new StallRing(8);
    ring.push(EVENT_LOOP, 10, 10.05); // the loop was blocked 50 ms ...
    ring.push(MAJOR, 10.01, 10.03); // ... of which 20 ms were a major GC
    const overlap = ring.overlap(9, 11);
    expect(overlap[MAJOR]).toBeCloseTo(0.02, 12);
    expect(overlap[EVENT_LOOP]).toBeCloseTo(0.03, 12);
  });

  it("keeps only the newest `capacity` stalls and ignores empty ones", () => {
    const ring = new StallRing(2);
    ring.push(MAJOR, 0, 1);
    ring.push(MAJOR, 2, 2); // empty
    ring.push(MINOR, 2, 3);
    ring.push(MINOR, 4, 5); // overwrites the major
    expect(ring.size).toBe(2);
    const overlap = ring.overlap(0, 10);
    expect(overlap[MAJOR]).toBe(0);
    expect(overlap[MINOR]).toBe(2);
  });
});

describe("addStallNodes", () => {
  it("takes a stall out of `other` first, keeping the visit's sum", () => {
    const nodes = [node("deserialize", 0.01), node("thread-cpu", 0.05), node("other", 0.04)];
    const overlap = new Float64Array(STALL_KINDS.length);
    overlap[MAJOR] = 0.018;
    overlap[EVENT_LOOP] = 0.002;
    addStallNodes(nodes, 0.1, overlap);
    expect(nodes.map((n) => n.name)).toEqual(["deserialize", "thread-cpu", "gc", "event-loop", "other"]);
    expect(nodes[2]).toEqual({ name: "gc", seconds: 0.018, children: [node("major", 0.018)] });
    expect(nodes[3].seconds).toBe(0.002);
    expect(nodes[4].seconds).toBeCloseTo(0.02, 12);
  });

  it("gives a visit with no activities `other` for the rest, and the GC types largest first", () => {
    const nodes: BreakdownNode[] = [];
    const overlap = new Float64Array(STALL_KINDS.length);
    overlap[MINOR] = 0.001;
    overlap[MAJOR] = 0.018;
    addStallNodes(nodes, 0.03, overlap);
    expect(nodes.map((n) => [n.name, n.seconds])).toEqual([
      ["gc", 0.019],
      ["other", 0.030 - 0.019],
    ]);
    expect(nodes[0].children.map((n) => n.name)).toEqual(["major", "minor"]);
  });

  it("keeps the visit's sum: a stall inside the activities is theirs, and at most `other` is shown", () => {
    const claimed = [node("thread-cpu", 0.1)];
    const overlap = new Float64Array(STALL_KINDS.length);
    overlap[MAJOR] = 0.018;
    addStallNodes(claimed, 0.1, overlap);
    expect(claimed).toEqual([node("thread-cpu", 0.1)]);
    const partly = [node("thread-cpu", 0.09), node("other", 0.01)];
    overlap[MINOR] = 0.002; // 20 ms of GC, 10 ms unclaimed: each type scaled by a half
    addStallNodes(partly, 0.1, overlap);
    expect(partly.map((n) => [n.name, Number(n.seconds.toFixed(9))])).toEqual([
      ["thread-cpu", 0.09],
      ["gc", 0.01],
    ]);
    expect(partly[1].children.map((n) => [n.name, Number(n.seconds.toFixed(9))])).toEqual([
      ["major", 0.009],
      ["minor", 0.001],
    ]);
  });

  it("adds nothing for no stall", () => {
    const nodes = [node("thread-cpu", 0.1)];
    addStallNodes(nodes, 0.1, new Float64Array(STALL_KINDS.length));
    expect(nodes).toEqual([node("thread-cpu", 0.1)]);
  });
});
