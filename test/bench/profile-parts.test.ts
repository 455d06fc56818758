import { describe, expect, it } from "vitest";
import { splitProfile, type CpuProfile, type ProfileNode } from "../../bench/profile-parts.js";

const frame = (
  id: number,
  functionName: string,
  url: string,
  children: number[] = [],
  lineNumber = 0,
): ProfileNode => ({
  id,
  callFrame: { functionName, url, lineNumber },
  children,
});

// (root) → runTask (the replay's bundle) → transition (dist) → now (native)
//                                        → deflate (node:zlib) → (native) zlibWrite
//        → processTimers (node:internal/timers, nobody's) → tick (dist)
//        → (garbage collector); wasm-function[1] → wasm-to-js
const NODES: ProfileNode[] = [
  frame(1, "(root)", "", [2, 7, 9, 10]),
  frame(2, "runTask", "file:///work/main/bench/.cluster-replay.mjs", [3, 5, 11]),
  frame(3, "transition", "file:///work/main/dist/recorder/recorder.js", [4], 270),
  frame(4, "now", ""),
  frame(5, "deflate", "node:zlib", [6]),
  frame(6, "zlibWrite", ""),
  frame(7, "processTimers", "node:internal/timers", [8]),
  frame(8, "tick", "file:///work/main/dist/runtime/process-stalls.js", [], 110),
  frame(9, "(garbage collector)", ""),
  frame(10, "(idle)", ""),
  frame(11, "wasm-function[1]", "wasm://wasm/bbca9b42", [12]),
  frame(12, "wasm-to-js", ""),
  frame(13, "export", "file:///work/main/node_modules/@opentelemetry/sdk-metrics/build/src/export.js"),
  frame(14, "run", "file:///work/main/node_modules/piscina/dist/worker.js"),
  frame(15, "listOnTimeout", "node:internal/timers"),
];
NODES[0].children!.push(13, 14, 15);

/** A profile whose samples are `ids`, each sample lasting `spans[i]` µs (the delta to the next). */
function profile(ids: number[], spans: number[]): CpuProfile {
  // timeDeltas[i] is the time from sample i - 1 to sample i; sample i lasts timeDeltas[i + 1].
  const timeDeltas = [5, ...spans];
  return {
    nodes: NODES,
    startTime: 1_000,
    endTime: 1_000 + spans.reduce((a, b) => a + b, 5),
    samples: [...ids, 1],
    timeDeltas,
  };
}

describe("splitting a CPU profile by part", () => {
  it("gives each sample's time to its frame's part, natives and node: internals to their caller's", () => {
    const split = splitProfile(
      profile([3, 4, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15], [10, 20, 40, 80, 160, 30, 7, 3, 1, 2, 6, 9, 11]),
      10,
    );
    const rounded = Object.fromEntries(
      Object.entries(split.perTask).map(([part, value]) => [part, Math.round(value * 1e9) / 1e9]),
    );
    expect(rounded).toEqual({
      taskjourney: (10 + 20 + 30) / 10,
      "OpenTelemetry SDK": 6 / 10,
      "thread CPU clock (WASI)": (1 + 2) / 10,
      "host (example, replay)": (40 + 80 + 160) / 10,
      "other packages": 9 / 10,
      "Node.js, uncalled": 11 / 10,
      "garbage collector": 7 / 10,
      "program and idle": 3 / 10,
    });
    expect(split.functions).toEqual({
      "transition dist/recorder/recorder.js:271": 3,
      "tick dist/runtime/process-stalls.js:111": 3,
    });
  });

  it("counts only the samples from the given time on", () => {
    // Samples at 1,005 (transition, 10 µs), 1,015 (now, 20 µs), 1,035 (runTask, 40 µs).
    const split = splitProfile(profile([3, 4, 2], [10, 20, 40]), 1, 1_015);
    expect(split.perTask.taskjourney).toBe(20);
    expect(split.perTask["host (example, replay)"]).toBe(40);
    expect(split.functions).toEqual({ "transition dist/recorder/recorder.js:271": 20 });
  });
});
