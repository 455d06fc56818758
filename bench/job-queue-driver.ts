/**
 * The job-queue process (bench/job-queue-process.ts) made to count deterministically, for
 * bench/job-queue-instructions.ts: bundled with taskjourney's sources into one file and run under
 * callgrind or natively.
 *
 *   node --predictable .job-queue-driver.mjs <off|metrics|on> <rounds> <jobs per round>
 *        [--bytes | --allocations] [--trace-ratio 0.01] [--switch no-carriers,…]
 *
 * Deterministic: the epoch clock (Date.now, which the queue stamps its jobs with and the
 * journeys' clock reads) is fixed to advance 1 µs a call from a fixed instant, so that how long a
 * journey took, and so what the tail sampler keeps, is the same in every run and under valgrind;
 * metrics are exported once, at shutdown, and spans in full batches (no export on a timer, which
 * would follow the wall clock);
 * `--random-seed` fixes the ids and the head sampler's draws.
 *
 * --bytes: after the first round (warm-up), the heap's used size before and after the other
 * rounds, in a young generation large enough that no collection runs between (checked); prints
 * `{ bytes, jobs, collections }`. --allocations: V8's sampling heap profiler over the rounds after
 * the first, by allocating function.
 */
import { parseArgs } from "node:util";
import { heapGrowth } from "./heap-growth.js";
import {
  JOB_QUEUE_MODES,
  JOB_QUEUE_SWITCHES,
  startJobQueue,
  type JobQueueMode,
  type JobQueueSwitch,
} from "./job-queue-process.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    bytes: { type: "boolean", default: false },
    allocations: { type: "boolean", default: false },
    "trace-ratio": { type: "string", default: "0.01" },
    switch: { type: "string", default: "" },
  },
});
const [mode, roundsText, jobsText] = positionals;
const rounds = Number(roundsText);
const jobs = Number(jobsText);
if (!JOB_QUEUE_MODES.includes(mode as JobQueueMode) || !(rounds >= 2) || !(jobs > 0) || jobs % 4 !== 0) {
  console.error("usage: job-queue-driver <off|metrics|on> <rounds ≥ 2> <jobs per round, a multiple of 4>");
  process.exit(2);
}

const switches = new Set(values.switch.split(",").filter((name) => name !== "") as JobQueueSwitch[]);
for (const name of switches)
  if (!JOB_QUEUE_SWITCHES.includes(name)) {
    console.error(`job-queue-driver: --switch takes ${JOB_QUEUE_SWITCHES.join(", ")}; got ${name}`);
    process.exit(2);
  }

let now = 1_800_000_000_000;
Date.now = () => (now += 0.001);

// The batch span processor exports when 512 spans wait, or every 5 s of the wall clock, which
// under valgrind is a hundred times more often a job than natively: full batches only (and the
// shutdown's), as natively in a run of a few seconds.
process.env.OTEL_BSP_SCHEDULE_DELAY = "3600000";
// An hour: never within a run; the shutdown's export is the one.
const jobQueue = await startJobQueue(mode as JobQueueMode, {
  traceRatio: Number(values["trace-ratio"]),
  metricExportIntervalMillis: 3_600_000,
  switches,
});
await jobQueue.round(jobs);
if (values.bytes) {
  const { bytes, collections } = await heapGrowth(async () => {
    for (let round = 1; round < rounds; round++) await jobQueue.round(jobs);
  });
  console.log(JSON.stringify({ bytes, jobs: (rounds - 1) * jobs, collections }));
} else if (values.allocations) {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let round = 1; round < rounds; round++) await jobQueue.round(jobs);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  const bytes: Record<string, number> = {};
  type Node = (typeof profile)["head"];
  const walk = (node: Node): void => {
    const frame = node.callFrame;
    const name = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop()}:${frame.lineNumber + 1}`;
    bytes[name] = (bytes[name] ?? 0) + node.selfSize;
    node.children.forEach(walk);
  };
  walk(profile.head);
  console.log(JSON.stringify({ jobs: (rounds - 1) * jobs, bytes }));
} else {
  for (let round = 1; round < rounds; round++) await jobQueue.round(jobs);
}
await jobQueue.stop();
// The workers' loops wait on take() forever: nothing else to do.
process.exit(0);
