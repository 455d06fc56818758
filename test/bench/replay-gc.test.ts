import { describe, expect, it } from "vitest";
import { median } from "../../bench/harness.js";
import { replayGc } from "../../bench/replay-gc.js";

// Lines as node --trace-gc prints them (Node 24, then Node 20, which has no "pooled" part),
// interleaved with the replay's repetition lines.
const OUTPUT = [
  "[7691:0x134d2000]      288 ms: Mark-Compact 18.1 (30.4) -> 13.5 (31.6) MB, pooled: 0 MB, 4.61 / 0.00 ms  (+ 0.1 ms in 12 steps since start of marking, biggest step 0.0 ms, walltime since start of marking 19 ms) (average mu = 0.983, current mu = 0.983) finalize incremental marking via task; GC in old space requested",
  "repetition 1: 762.4 µs per task",
  "[8481:0x4328fdd0]       39 ms: Scavenge 4.6 (4.9) -> 4.2 (5.9) MB, 0.77 / 0.00 ms  (average mu = 1.000, current mu = 1.000) task; ",
  "[7691:0x134d2000]      600 ms: Mark-Compact 18.9 (32.8) -> 15.0 (32.6) MB, pooled: 0 MB, 2.65 / 0.19 ms  (+ 0.6 ms in 26 steps since start of marking) finalize incremental marking via task; GC in old space requested",
  "repetition 2: 710.9 µs per task",
  "[7691:0x134d2000]      660 ms: Mark-Compact 17.8 (33.3) -> 15.4 (33.1) MB, pooled: 0 MB, 2.39 / 0.09 ms  (+ 2.2 ms in 66 steps) finalize incremental marking via task; GC in old space requested",
  "[7691:0x134d2000]      700 ms: Mark-Compact 17.0 (33.3) -> 14.2 (33.1) MB, 1.5 / 0.09 ms  (average mu = 0.976) allocation failure",
  "repetition 3: 690.5 µs per task",
  "[7691:0x134d2000]      900 ms: Mark-Compact 17.0 (33.3) -> 14.0 (33.1) MB, 9.0 / 0.09 ms  (after the last repetition: not counted)",
].join("\n");

describe("replay GC", () => {
  it("gives each repetition the collections before its line, from the one after `from`", () => {
    expect(replayGc(OUTPUT, 1)).toEqual({
      repetitions: 2,
      cpuMicrosPerTask: [710.9, 690.5],
      fullCollections: 3,
      youngCollections: 1,
      pauseMillis: 0.77 + 2.65 + 2.39 + 1.5,
      heapAfterFull: [15.0, 15.4, 14.2],
    });
    expect(replayGc(OUTPUT, 3).repetitions).toBe(0);
  });

  it("takes the median", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
