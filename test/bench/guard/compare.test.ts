import { describe, expect, it } from "vitest";
import { BYTES_SLACK, CEILINGS, compareCosts, type Baseline } from "../../../bench/guard/compare.js";

const baseline: Baseline = {
  node: "v20.20.2",
  why: "the first count",
  cases: { journey: { instructions: 10_000, bytes: 400 }, wrapped: { bytes: 2_000 } },
};

describe("the cost guard's rule", () => {
  it("passes growth up to 3% (and one 16-byte box more in bytes), fails past it", () => {
    const at = (instructions: number, bytes: number, wrapped = 2_000) =>
      compareCosts(baseline, {
        node: "v20.11.0",
        cases: { journey: { instructions, bytes }, wrapped: { bytes: wrapped } },
      });
    expect(at(10_300, 412 + BYTES_SLACK).ok).toBe(true);
    expect(at(10_301, 400).ok).toBe(false);
    expect(at(10_000, 413 + BYTES_SLACK).ok).toBe(false);
    expect(at(10_000, 1_000, 2_061 + BYTES_SLACK).ok).toBe(false);
    const failed = at(10_400, 400);
    expect(failed.table).toMatch(/journey\s+instructions\s+10000\s+10400\s+\+4\.0%\s+FAIL: over 10300/);
    expect(failed.notes.join("\n")).toContain('"the first count"');
    expect(failed.notes.join("\n")).toContain("--update --why");
  });

  it("holds the journey under its ceiling of 512 B whatever the baseline says", () => {
    expect(CEILINGS.journey.bytes).toBe(512);
    expect(CEILINGS.traced.bytes).toBe(512);
    const near: Baseline = { ...baseline, cases: { journey: { bytes: 500 } } };
    const at = (bytes: number) => compareCosts(near, { node: "v20.20.2", cases: { journey: { bytes } } });
    // 3% and 16 B over 500 would be 531: the ceiling is lower.
    expect(at(512).ok).toBe(true);
    const over = at(513);
    expect(over.ok).toBe(false);
    expect(over.table).toMatch(/journey\s+bytes\s+500\s+513\s+\+2\.6%\s+FAIL: over the ceiling of 512/);
    // A baseline moved above the ceiling does not move it.
    const moved: Baseline = { ...baseline, cases: { journey: { bytes: 600 } } };
    expect(compareCosts(moved, { node: "v20.20.2", cases: { journey: { bytes: 600 } } }).ok).toBe(false);
  });

  it("says when a journey got cheaper, without failing", () => {
    const verdict = compareCosts(baseline, {
      node: "v20.20.2",
      cases: { journey: { instructions: 9_000, bytes: 360 } },
    });
    expect(verdict.ok).toBe(true);
    expect(verdict.table).toMatch(/instructions\s+10000\s+9000\s+-10\.0%\s+cheaper: move the baseline/);
  });

  it("shows, and does not judge, figures counted on another major version of Node.js", () => {
    const verdict = compareCosts(baseline, {
      node: "v24.22.3",
      cases: { journey: { instructions: 20_000, bytes: 5_000 } },
    });
    expect(verdict.ok).toBe(true);
    expect(verdict.table).toContain("not judged");
    expect(verdict.notes[0]).toContain("v20.20.2");
  });

  it("lists a case the baseline lacks as new", () => {
    const verdict = compareCosts(baseline, { node: "v20.20.2", cases: { other: { bytes: 5 } } });
    expect(verdict.ok).toBe(true);
    expect(verdict.table).toContain("new: not in the baseline");
  });
});
