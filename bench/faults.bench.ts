/**
 * Recording under exporter faults: a worker records 50,000 transitions/s (12,500 journeys of 4
 * transitions, 1% of them as span trees) for 30 s through taskjourney/sdk, exporting OTLP http/json
 * every second to a loopback endpoint that goes through each fault in turn: up, refused (nothing
 * listening), never answering, 500, 429 with Retry-After, connection reset, slow, and up again.
 * Per phase: the transitions recorded against the rate asked for, the event loop's delay
 * (perf_hooks, 10 ms resolution), and the export failures counted. At the end, with the endpoint
 * back: whether the last metrics received hold every transition recorded, and the failures.
 *
 * Run: node --expose-gc --import tsx bench/faults.bench.ts
 *   TASKJOURNEY_BENCH_SECONDS=30   the whole run (phases share it evenly)
 *   TASKJOURNEY_BENCH_RATE=50000   transitions per second asked for
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { printSuite, report, table, type SuiteResult } from "./harness.js";
import { source } from "./lib.js";
import { startFaultServer, sumPoint, type FaultMode } from "../test/integration/fault-server.js";

type Sdk = typeof import("../src/sdk.js");
const { startTelemetry } = (await import("taskjourney/sdk")) as Sdk;

const SECONDS = Number(process.env.TASKJOURNEY_BENCH_SECONDS ?? 30);
const RATE = Number(process.env.TASKJOURNEY_BENCH_RATE ?? 50_000);
const TICK_MS = 10;
const JOURNEYS_PER_TICK = Math.round((RATE * TICK_MS) / 1000 / 4);
const EXPORT_TIMEOUT_MS = 500;

type Phase = FaultMode | "refused";
const PHASES: Phase[] = ["ok", "refused", "black-hole", "500", "429", "reset", "slow", "ok"];
const PHASE_MS = (SECONDS * 1000) / PHASES.length;

const server = await startFaultServer("ok");
const telemetry = await startTelemetry({
  role: "worker",
  instance: "tcp://127.0.0.1:40001",
  registerGlobal: false,
  journeys: { sampling: { ratio: 0.01 } },
  exporters: {
    endpoint: server.url,
    protocol: "http/json",
    timeoutMillis: EXPORT_TIMEOUT_MS,
    metricExportIntervalMillis: 1_000,
  },
});
const { journeys } = telemetry;

let journeysDone = 0;
let tickNs = 0;
let ticks = 0;
let thrown = 0;

/** One tick of load: JOURNEYS_PER_TICK worker journeys, released → waiting → ready → executing → memory. */
function tick(): void {
  const started = process.hrtime.bigint();
  try {
    for (let i = 0; i < JOURNEYS_PER_TICK; i++) {
      const key = `inc-${journeysDone++}`;
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      journeys.transition(key, "executing", "memory");
    }
  } catch {
    thrown++;
  }
  tickNs += Number(process.hrtime.bigint() - started);
  ticks++;
}

interface PhaseResult {
  phase: Phase;
  seconds: number;
  transitions: number;
  delayP99Ms: number;
  delayMaxMs: number;
}

const results: PhaseResult[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const phase of PHASES) {
  if (phase === "refused") {
    await server.refuse();
  } else {
    await server.accept();
    server.mode = phase;
  }
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const before = journeysDone;
  const started = performance.now();
  // Ticks on a schedule: a tick that falls behind is made up at once, so a blocked loop shows as
  // a shortfall in transitions as well as in the delay.
  let due = started;
  while (performance.now() - started < PHASE_MS) {
    due += TICK_MS;
    tick();
    const wait = due - performance.now();
    await sleep(Math.max(0, wait));
  }
  delay.disable();
  results.push({
    phase,
    seconds: (performance.now() - started) / 1000,
    transitions: (journeysDone - before) * 4,
    delayP99Ms: delay.percentile(99) / 1e6,
    delayMaxMs: delay.max / 1e6,
  });
}

// Up again: one more export of everything, then the totals the endpoint holds.
server.mode = "ok";
await telemetry.forceFlush({ timeoutMillis: 10_000 });
const metrics = server.accepted.filter((request) => request.path === "/v1/metrics");
const last = metrics[metrics.length - 1]?.body;
const inMemory = sumPoint(last, "task.transitions", { "task.prefix": "inc", "task.state": "memory" });
const failures = telemetry.exportErrors();
const failureMetric = failures.map((failure) => ({
  ...failure,
  exported: sumPoint(last, "taskjourney.export.errors", { signal: failure.signal, "error.type": failure.errorType }),
}));
await telemetry.shutdown({ timeoutMillis: 5_000 });
await server.close();

console.log(
  table(
    ["phase", "seconds", "transitions/s", "event-loop p99", "event-loop max"],
    results.map((result) => [
      result.phase,
      result.seconds.toFixed(1),
      Math.round(result.transitions / result.seconds).toLocaleString("en-US"),
      `${result.delayP99Ms.toFixed(1)} ms`,
      `${result.delayMaxMs.toFixed(1)} ms`,
    ]),
  ),
);
console.log("");
console.log(
  table(
    ["signal", "error.type", "exports", "items", "in the metrics once back"],
    failureMetric.map((failure) => [
      failure.signal,
      failure.errorType,
      String(failure.exports),
      String(failure.items),
      String(failure.exported ?? "missing"),
    ]),
  ),
);

const totalSeconds = results.reduce((sum, result) => sum + result.seconds, 0);
const nsPerTransition = tickNs / (journeysDone * 4);
const totalsRight = inMemory === journeysDone;
// The metrics' own failures can grow after the last collection (its export is the one counted last).
const failuresVisible = failureMetric.every(
  (failure) => failure.exported !== undefined && failure.exported <= failure.items && failure.exported > 0,
);
const result: SuiteResult = {
  suite: "faults",
  runtime: `node ${process.version} ${process.arch}, ${source}`,
  cases: [
    {
      name: `a transition while exporting through faults (mean over ${ticks} ticks of ${JOURNEYS_PER_TICK * 4})`,
      p25: nsPerTransition,
      median: nsPerTransition,
      p75: nsPerTransition,
      p99: nsPerTransition,
      mean: nsPerTransition,
      samples: ticks,
    },
  ],
  ratios: [],
  notes: [
    `${(journeysDone * 4).toLocaleString("en-US")} transitions in ${totalSeconds.toFixed(1)} s (${Math.round((journeysDone * 4) / totalSeconds).toLocaleString("en-US")}/s, ${RATE.toLocaleString("en-US")}/s asked), ${thrown} calls threw`,
    `after the endpoint came back: task.transitions{memory} ${inMemory} of ${journeysDone} journeys (${totalsRight ? "right" : "WRONG"}); export failures ${failuresVisible ? "all in the metrics" : "NOT all in the metrics"}`,
  ],
  facts: {
    "transitions/s": Math.round((journeysDone * 4) / totalSeconds),
    "event-loop max (any phase)": `${Math.max(...results.map((r) => r.delayMaxMs)).toFixed(1)} ms`,
    "event-loop p99 (worst phase)": `${Math.max(...results.map((r) => r.delayP99Ms)).toFixed(1)} ms`,
    "totals right after recovery": String(totalsRight),
    "failed exports": failures.reduce((sum, failure) => sum + failure.exports, 0),
  },
};
printSuite(result);
report(result);
if (thrown > 0 || !totalsRight || !failuresVisible) {
  console.error("faults bench: a call threw, or a total or a failure count is missing after recovery");
  process.exitCode = 1;
}
