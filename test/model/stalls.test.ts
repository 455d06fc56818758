import { describe, expect, it } from "vitest";
import { StallRing, STALL_KINDS } from "../../src/model/stalls.js";

const MAJOR = STALL_KINDS.indexOf("major");
const MINOR = STALL_KINDS.indexOf("minor");
const EVENT_LOOP = STALL_KINDS.indexOf("event-loop");

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
