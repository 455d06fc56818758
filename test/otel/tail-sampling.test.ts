import { describe, expect, it } from "vitest";
import { TAIL_KEEP_BURST, TAIL_MIN_JOURNEYS, TailSampler } from "../../src/otel/tail-sampling.js";

describe("TailSampler", () => {
  it("keeps failed journeys always and judges nothing slow before it has seen enough", () => {
    const sampler = new TailSampler(0.99, true, 1);
    for (let i = 0; i < TAIL_MIN_JOURNEYS - 1; i++) expect(sampler.observe(0, 1 + i, false)).toBe(false);
    expect(sampler.observe(0, 0.001, true)).toBe(true);
  });

  it("keeps about 1% of a steady distribution at keepSlowerThan 0.99", () => {
    const sampler = new TailSampler(0.99, true, 1);
    let kept = 0;
    // A repeating ramp of 1..100 ms: 1% of journeys are slower than the 99th percentile.
    for (let i = 0; i < 100_000; i++) if (sampler.observe(0, ((i % 100) + 1) / 1000, false)) kept++;
    expect(kept).toBeGreaterThan(500);
    expect(kept).toBeLessThanOrEqual(0.01 * 100_000 + TAIL_KEEP_BURST);
  });

  it("stays within its budget when durations drift upwards, as a scheduler's do under a big graph", () => {
    const sampler = new TailSampler(0.99, true, 1);
    let kept = 0;
    for (let i = 1; i <= 2000; i++) if (sampler.observe(0, i / 1000, false)) kept++;
    // Every journey is slower than all before it; without a budget ~1970 would be kept.
    expect(kept).toBeLessThanOrEqual(Math.floor(0.01 * 2000) + TAIL_KEEP_BURST);
    expect(kept).toBeGreaterThan(0);
  });

  it("keeps nothing for slowness at quantile 0", () => {
    const sampler = new TailSampler(0, false, 1);
    for (let i = 1; i <= 100; i++) expect(sampler.observe(0, i, false)).toBe(false);
  });
});
