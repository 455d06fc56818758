import { describe, expect, it } from "vitest";
import { ownerOfFrame, PERF_FREQUENCY, splitPerfScript } from "../../bench/cluster-perf.js";

describe("splitting the cluster's perf samples by part", () => {
  it("gives a frame to its owner: collectors, compilers, JavaScript by file; builtins and node: to the caller", () => {
    expect(ownerOfFrame("v8::internal::Scavenger::ScavengePage(v8::internal::MemoryChunk*)")).toEqual({
      part: "garbage collector",
    });
    expect(
      ownerOfFrame("v8::internal::compiler::PipelineImpl::OptimizeGraph(v8::internal::compiler::Linkage*)"),
    ).toEqual({
      part: "V8 compiler and parser",
    });
    expect(ownerOfFrame("JS:^transition file:///work/main/dist/recorder/live-journeys.js:36:15")).toEqual({
      part: "taskjourney",
      fn: "transition dist/recorder/live-journeys.js:36",
    });
    expect(ownerOfFrame("JS:*task file:///work/main/examples/cluster/workloads.ts:1:225")).toEqual({
      part: "host (example)",
      fn: "task examples/cluster/workloads.ts:1",
    });
    expect(
      ownerOfFrame(
        "JS:^encodeAsString /work/main/node_modules/@opentelemetry/otlp-transformer/build/src/common/utils.js:26:24",
      ),
    ).toEqual({
      part: "OpenTelemetry SDK",
      fn: "encodeAsString node_modules/@opentelemetry/otlp-transformer/build/src/common/utils.js:26",
    });
    expect(ownerOfFrame("JS:~run /work/main/node_modules/piscina/dist/worker.js:10:3")).toEqual({
      part: "other packages",
      fn: "run node_modules/piscina/dist/worker.js:10",
    });
    expect(ownerOfFrame("JS:^processTicksAndRejections node:internal/process/task_queues:67:35")).toBeUndefined();
    expect(ownerOfFrame("Builtins_RecordWriteSaveFP")).toBeUndefined();
    expect(
      ownerOfFrame("v8::internal::Runtime_AllocateInYoungGeneration(int, unsigned long*, v8::internal::Isolate*)"),
    ).toBeUndefined();
  });

  it("charges each sample of the round to its process and thread and to its leaf-most owner, over the tasks", async () => {
    const lines = [
      // The scheduler's main thread: a builtin called by taskjourney's code.
      "100/100 5.000100: ",
      "\t    55aa Builtins_RecordWriteSaveFP",
      "\t    7f01 JS:*move file:///w/dist/recorder/live-journeys.js:327:5",
      "\t    7f02 JS:^handle file:///w/examples/cluster/scheduler.ts:1:10",
      "",
      // A worker's main thread: a scavenge set off by the example's allocation.
      "200/200 5.000600: ",
      "\t    55ab v8::internal::Scavenger::ScavengePage(v8::internal::MemoryChunk*)",
      "\t    55ac v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)",
      "\t    7f03 JS:*task file:///w/examples/cluster/workloads.ts:1:225",
      "",
      // A worker's other thread: V8 compiling.
      "200/203 5.000700: ",
      "\t    55ad v8::internal::compiler::GraphReducer::ReduceNode(v8::internal::compiler::Node*)",
      "",
      // A worker's main thread: taskjourney's code under Node.js's event loop.
      "200/200 5.001100: ",
      "\t    7f04 JS:^transition file:///w/dist/recorder/live-journeys.js:36:15",
      "\t    7f05 JS:^processTicksAndRejections node:internal/process/task_queues:67:35",
      "",
      // The event loop with no owner, then a process that is not the cluster's (tsx's esbuild).
      "201/201 5.001200: ",
      "\t    55ae uv__io_poll",
      "\t    55af uv_run",
      "",
      "999/999 5.001300: ",
      "\t    55b0 JS:*x file:///w/dist/a.js:1:1",
    ];
    const split = await splitPerfScript(lines, 10, { scheduler: 100, workers: [200, 201] });
    const sample = 1e6 / PERF_FREQUENCY / 10;
    expect(split.samples).toBe(5);
    expect(split.parts.scheduler.taskjourney).toBeCloseTo(sample, 9);
    expect(split.parts.workers["garbage collector"]).toBeCloseTo(sample, 9);
    expect(split.parts["workers' threads"]["V8 compiler and parser"]).toBeCloseTo(sample, 9);
    expect(split.parts.workers.taskjourney).toBeCloseTo(sample, 9);
    expect(split.parts.workers["runtime, uncalled"]).toBeCloseTo(sample, 9);
    expect(split.parts.workers["host (example)"]).toBe(0);
    expect(split.functions).toEqual({
      "scheduler taskjourney: move dist/recorder/live-journeys.js:327": sample,
      "workers taskjourney: transition dist/recorder/live-journeys.js:36": sample,
      "workers runtime, uncalled: uv__io_poll": sample,
    });
  });
});
