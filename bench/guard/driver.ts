/**
 * The journeys the cost guard (bench/guard/check.ts) counts: bundled with taskjourney's sources
 * into one file, so that its start-up is small and its counts do not depend on a build.
 *
 *   node --predictable .guard-driver.mjs <case> <journeys> --fixed-clock   run them (under callgrind)
 *   node --predictable --expose-gc .guard-driver.mjs <case> <journeys> --bytes
 *                                                                      bytes allocated per journey
 *   node .guard-driver.mjs <case> <journeys> --allocations                  … by allocating function
 *
 * --fixed-clock: the journeys' clock advances a fixed step a reading instead of reading the time
 * (fixedClock below: why); without it, the real clock.
 *
 * Cases:
 *   journey   the worker journey of bench/core.bench.ts (released → waiting → ready → executing,
 *             an execute ledger metering three activities, memory), sampling off, 1,000 other
 *             journeys in flight, 100 prefixes: the microbenchmark's journey.
 *   wrapped   the same journey as an instrumented worker makes it: transitions through an
 *             instrument()ed `transition` method, the execution through an instrument()ed
 *             `execute` method (its ledger ambient through AsyncLocalStorage), two activities
 *             through instrument()ed methods inside it and a thread-CPU time digested, as the
 *             example cluster's worker does for every task.
 *   timed     the `journey` case with every call given its trailing options: each transition
 *             `{ at }`, `execute(key, { at })`, `end("memory", { at })`. One options object is
 *             reused (its `at` a whole number of seconds, a small integer: no number box), so
 *             whatever it costs over `journey` is the facade's reading of options, not the
 *             caller's literal: it must be 0.
 *   computation  the `timed` case with its first transition given `{ at, computation }`: the
 *             journey begun under a computation, whose totals each move adds to. What it costs
 *             over `timed` is the computation's: it must be 0 (no allocation per transition).
 *   traced    the `journey` case with traces on: a tracer provider of the SDK (so the span bridge
 *             listens, as with taskjourney/sdk), 1% of keys head-sampled, none kept for being slow
 *             or failed, and the journeys counted those of keys the ratio did not sample: what 99%
 *             of journeys cost in a process that samples 1%.
 *
 * --bytes runs WARMUP journeys, then `journeys` more with the heap's used size read before and
 * after, in a young generation large enough that no collection runs between the readings (checked:
 * a collection there is an error, not a figure). What is left per journey is what it allocated.
 */
import type { TracerProvider } from "@opentelemetry/api";
import { TracerProvider as SdkTracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace";
import { TaskJourneys, instrument } from "taskjourney";
import { keyPool, noWork, prefixNames, workerJourney } from "../workload.js";
import { heapGrowth } from "../heap-growth.js";
import { GUARD_CASES, type GuardCase } from "./compare.js";

const PREFIXES = 100;
const KEY_POOL = 1 << 16;
const IN_FLIGHT = 1000;
/** Journeys before the heap is read: V8 has compiled the journey's paths by then. */
const WARMUP = 150_000;

const names = prefixNames(PREFIXES);
const keys = keyPool(KEY_POOL, names, 1);
const inFlightKeys = keyPool(IN_FLIGHT, names, 3);
const OFF = { ratio: 0, keepSlowerThan: 0, keepErrors: false };
/** `traced`: the default ratio, no journey kept for being slow or failed (not tail-kept). */
const ONE_PERCENT = { ratio: 0.01, keepSlowerThan: 0, keepErrors: false };

/**
 * The fixed clock of the instruction counts (`--fixed-clock`): every reading a STEP later than the
 * one before. With the real clock the count moved with the machine's load (the same code read
 * 14,154-14,156 instructions a journey on CI's machine, 14,410-14,612 on a busier one within an
 * hour, idle or loaded): the readings are the durations the histograms record, so how fast the
 * machine ran decided which values they met and when. A value that takes a branch of the
 * recording not taken before deoptimises it (--trace-deopt under valgrind: the statistics'
 * `record`, "insufficient type feedback for call"), and whether its recompilation (~150
 * instructions a journey over the 100,000 counted, by callgrind's functions) fell before the FEW
 * journeys or between FEW and MANY moved the difference. Readings that are the same every run
 * make the count repeat. What the real clock costs instead is the clock floor (bench/README.md:
 * the journey's 11 readings, ~1,140 instructions and ~450 ns), not in the count. STEP: a native
 * journey's ~1.9 µs over its 11 readings, so the durations are of a real journey's size. Its state
 * is a Float64Array element, not a captured `let`, so that a reading allocates nothing.
 *
 * The byte counts keep the real clock, the one users run: they do not move with load, and a
 * reading of the fixed clock is boxed where the real one is not (a wrapped journey +16 B).
 */
const STEP = 0.2e-6;
const fixedClockState = Float64Array.of(1000);
const fixedClock = (): number => (fixedClockState[0] += STEP);

interface RecorderChoice {
  /** The fixed clock instead of the real one. */
  fixedClock: boolean;
  /** A tracer provider: the span bridge listens, and journeys are head-sampled at 1%. */
  tracerProvider?: TracerProvider;
}

function recorder(choice: RecorderChoice): TaskJourneys {
  const journeys = new TaskJourneys({
    role: "worker",
    limits: { maxPrefixes: PREFIXES },
    // No tracer provider: the global one, with no SDK behind it (as before the guard had `traced`).
    ...(choice.tracerProvider === undefined
      ? { sampling: OFF }
      : { tracerProvider: choice.tracerProvider, sampling: ONE_PERCENT }),
    // A custom clock turns processStalls off; off with the real clock too (timers the count would see).
    runtime: choice.fixedClock ? { clock: fixedClock, processStalls: false } : { processStalls: false },
  });
  for (const key of inFlightKeys) journeys.transition(key, "released", "waiting");
  return journeys;
}

/** A worker of the shape instrument() is made for: each method a no-op. */
class Worker {
  constructor(private readonly journeys: TaskJourneys) {}
  transition(_key: string, _from: string, to: string): string {
    return to;
  }
  execute(key: string, store: Store): string {
    store.read(key);
    store.write(key);
    // The thread's CPU time, read where the task ran (the example's worker digests it so).
    this.journeys.currentLedger()?.digest("thread-cpu", 0);
    return key;
  }
}
class Store {
  read(_key: string): number {
    return 0;
  }
  write(_key: string): number {
    return 0;
  }
}

/** A case: one journey of a key, and the keys it is run over. */
interface Case {
  journey: (key: string) => void;
  keys: readonly string[];
}

/**
 * `traced`: the span bridge listening (a tracer provider of the SDK, as taskjourney/sdk sets up)
 * and 1% of keys head-sampled; the journeys counted are of keys the ratio does not sample, what
 * 99% of a process's journeys cost. Which keys those are is found through the public API: each
 * candidate key's journey is run once and kept if no span started. The sampled 1% run then too,
 * so the process has made span trees before it is counted, as a real one has.
 */
function tracedCase(fixed: boolean): Case {
  const spans = { started: 0 };
  const counting: SpanProcessor = {
    onStart: () => void spans.started++,
    onEnd: () => undefined,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const journeys = recorder({
    fixedClock: fixed,
    tracerProvider: new SdkTracerProvider({ spanProcessors: [counting] }),
  });
  const unsampled: string[] = [];
  for (const key of keyPool(2 * KEY_POOL, names, 1)) {
    const before = spans.started;
    workerJourney(journeys, key);
    if (spans.started === before) unsampled.push(key);
    if (unsampled.length === KEY_POOL) break;
  }
  if (unsampled.length !== KEY_POOL) throw new Error(`traced: ${unsampled.length} unsampled keys of ${2 * KEY_POOL}`);
  return { journey: (key) => workerJourney(journeys, key), keys: unsampled };
}

function makeCase(name: GuardCase, fixed: boolean): Case {
  if (name === "traced") return tracedCase(fixed);
  const journeys = recorder({ fixedClock: fixed });
  if (name === "journey") return { journey: (key) => workerJourney(journeys, key), keys };
  if (name === "timed" || name === "computation") {
    const options = { at: 0 };
    // `computation`: the journey begun under a computation (one reused options object, as `timed`).
    const first = name === "computation" ? { at: 0, computation: "graph-1" } : options;
    // Whole seconds of the journeys' clock: within maxClockSkew, and a small integer.
    const seconds = fixed ? () => Math.floor(fixedClockState[0]) : () => Math.floor(performance.now() / 1000);
    const journey = (key: string): void => {
      options.at = seconds();
      first.at = options.at;
      journeys.transition(key, "released", "waiting", first);
      journeys.transition(key, "waiting", "ready", options);
      journeys.transition(key, "ready", "executing", options);
      const ledger = journeys.execute(key, options);
      ledger.meter("deserialize", noWork);
      ledger.meter("thread-cpu", noWork);
      ledger.meter("serialize", noWork);
      ledger.end("memory", options);
      journeys.transition(key, "executing", "memory", options);
    };
    return { journey, keys };
  }
  const worker = new Worker(journeys);
  const store = new Store();
  instrument(worker, journeys, {
    transition: { method: "transition", key: (key) => key, from: (_key, from) => from, to: (_key, _from, to) => to },
    execute: { method: "execute", key: (key) => key },
  });
  instrument(store, journeys, {
    activities: [
      { method: "read", activity: "disk-read" },
      { method: "write", activity: "serialize" },
    ],
  });
  const journey = (key: string): void => {
    worker.transition(key, "released", "waiting");
    worker.transition(key, "waiting", "ready");
    worker.transition(key, "ready", "executing");
    worker.execute(key, store);
    worker.transition(key, "executing", "memory");
  };
  return { journey, keys };
}

function run({ journey, keys }: Case, from: number, count: number): void {
  for (let done = from; done < from + count; done++) journey(keys[done & (KEY_POOL - 1)]);
}

/**
 * --allocations: where the bytes go, by allocating function (V8's sampling heap profiler every 64
 * bytes on average, collected objects included), over `count` journeys after WARMUP. Sampled, so
 * a guide to what to cut; the guard's figure is --bytes.
 */
async function allocations(journey: Case, count: number): Promise<void> {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  run(journey, 0, WARMUP);
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  run(journey, WARMUP, count);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  const bytes = new Map<string, number>();
  type Node = (typeof profile)["head"];
  const walk = (node: Node): void => {
    const frame = node.callFrame;
    const name = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop()}:${frame.lineNumber + 1}`;
    bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
    node.children.forEach(walk);
  };
  walk(profile.head);
  const total = [...bytes.values()].reduce((sum, value) => sum + value, 0);
  console.log(`${(total / count).toFixed(0)} bytes per journey (sampled), by allocating function:`);
  for (const [name, value] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 20))
    if (value / count >= 1) console.log(`${(value / count).toFixed(0).padStart(6)}  ${name}`);
}

async function main(): Promise<void> {
  const [name, count, ...flags] = process.argv.slice(2);
  const known = ["--fixed-clock", "--bytes", "--allocations"];
  if (
    !(GUARD_CASES as readonly string[]).includes(name) ||
    !(Number(count) > 0) ||
    flags.some((flag) => !known.includes(flag))
  ) {
    console.error(`usage: driver <${GUARD_CASES.join("|")}> <journeys> [--fixed-clock] [--bytes | --allocations]`);
    process.exit(2);
  }
  const journey = makeCase(name as GuardCase, flags.includes("--fixed-clock"));
  if (flags.includes("--allocations")) return allocations(journey, Number(count));
  if (!flags.includes("--bytes")) {
    run(journey, 0, Number(count));
    return;
  }
  run(journey, 0, WARMUP);
  const { bytes, collections } = await heapGrowth(() => run(journey, WARMUP, Number(count)));
  console.log(JSON.stringify({ case: name, journeys: Number(count), bytes, collections }));
}

await main();
