/**
 * Overhead of the wrapping helpers (src/wrap): a no-op method called through the wrapper that
 * `instrument()` installs, against the same method unwrapped, and against the same recording
 * written by hand (journeys.execute + ledger.run + end), which separates the wrapper's own cost
 * from the recorder's. Target: at most 1 µs added per wrapped async execute.
 *
 * Standalone: `npx tsx bench/wrap.bench.ts`; or import `runWrapBench()`.
 */
import { pathToFileURL } from "node:url";
import { bench, do_not_optimize, measure, run, summary } from "mitata";
import { TaskJourneys, instrument } from "../src/index.js";

const KEYS = Array.from({ length: 4096 }, (_, i) => `inc-${i.toString(16).padStart(4, "0")}x`);

/** A worker's methods reduced to nothing, so that only the wrapping is measured. */
class Worker {
  async execute(key: string): Promise<string> {
    return key;
  }
  executeSync(key: string): string {
    return key;
  }
  transition(key: string, _from: string, to: string): string {
    return key === "" ? key : to;
  }
  serialize(value: unknown): unknown {
    return value;
  }
}

function journeysForBench(): TaskJourneys {
  return new TaskJourneys({ role: "worker", instance: "bench", sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false } });
}

interface Result {
  name: string;
  /** Nanoseconds per call. */
  avg: number;
  p50: number;
  min: number;
}

export async function runWrapBench(options: { print?: (line: string) => void } = {}): Promise<Result[]> {
  const print = options.print ?? ((line: string) => console.log(line));
  let next = 0;
  const key = (): string => KEYS[(next = (next + 1) & 4095)];

  const plain = new Worker();
  const wrapped = new Worker();
  const wrappedJourneys = journeysForBench();
  instrument(wrapped, wrappedJourneys, {
    execute: [
      { method: "execute", key: (k) => k },
      { method: "executeSync", key: (k) => k },
    ],
    transition: { method: "transition", key: (k) => k, from: (_k, from) => from, to: (_k, _from, to) => to },
    activities: { method: "serialize", activity: "serialize" },
  });
  const byHand = new Worker();
  const byHandJourneys = journeysForBench();

  // Before any AsyncLocalStorage.run() in this process: Node 20 enables its promise hooks at the
  // first run(), after which every promise in the process costs a little more.
  const cold = await measure(async () => do_not_optimize(await plain.execute(key())));

  summary(() => {
    bench("async execute: unwrapped", async () => do_not_optimize(await plain.execute(key()))).baseline(true);
    bench("async execute: wrapped by instrument()", async () => do_not_optimize(await wrapped.execute(key())));
    bench("async execute: recorded by hand", async () => {
      const k = key();
      const ledger = byHandJourneys.execute(k);
      const value = await ledger.run(() => byHand.execute(k));
      ledger.end("memory");
      do_not_optimize(value);
    });
  });
  summary(() => {
    bench("sync execute: unwrapped", () => do_not_optimize(plain.executeSync(key()))).baseline(true);
    bench("sync execute: wrapped by instrument()", () => do_not_optimize(wrapped.executeSync(key())));
    bench("sync execute: recorded by hand", () => {
      const k = key();
      const ledger = byHandJourneys.execute(k);
      const value = ledger.run(() => byHand.executeSync(k));
      ledger.end("memory");
      do_not_optimize(value);
    });
  });
  summary(() => {
    const journey = (worker: Worker) => {
      const k = key();
      worker.transition(k, "released", "waiting");
      worker.transition(k, "waiting", "ready");
      worker.transition(k, "ready", "executing");
      do_not_optimize(worker.transition(k, "executing", "memory"));
    };
    bench("4 transitions: unwrapped", () => journey(plain)).baseline(true);
    bench("4 transitions: wrapped by instrument()", () => journey(wrapped));
    bench("4 transitions: recorded by hand", () => {
      const k = key();
      byHandJourneys.transition(k, "released", "waiting");
      byHand.transition(k, "released", "waiting");
      byHandJourneys.transition(k, "waiting", "ready");
      byHand.transition(k, "waiting", "ready");
      byHandJourneys.transition(k, "ready", "executing");
      byHand.transition(k, "ready", "executing");
      byHandJourneys.transition(k, "executing", "memory");
      do_not_optimize(byHand.transition(k, "executing", "memory"));
    });
  });
  summary(() => {
    const value = { x: 1 };
    bench("activity outside any ledger: unwrapped", () => do_not_optimize(plain.serialize(value))).baseline(true);
    bench("activity outside any ledger: wrapped", () => do_not_optimize(wrapped.serialize(value)));
  });

  const { benchmarks } = await run({ print });
  const results: Result[] = [{ name: "async execute: unwrapped, before AsyncLocalStorage is enabled", avg: cold.avg, p50: cold.p50, min: cold.min }];
  for (const trial of benchmarks) {
    const stats = trial.runs[0]?.stats;
    if (stats !== undefined) results.push({ name: trial.alias, avg: stats.avg, p50: stats.p50, min: stats.min });
  }
  // Medians, and minimums: a busy machine's interruptions move averages far more than a wrapper costs.
  const stat = (name: string, key: "p50" | "min") => results.find((result) => result.name === name)?.[key] ?? Number.NaN;
  const ns = (value: number) => `${value.toFixed(0).padStart(6)} ns`;
  const diff = (a: string, b: string, per = 1) => `${ns((stat(a, "p50") - stat(b, "p50")) / per)} ${ns((stat(a, "min") - stat(b, "min")) / per)}`;
  const added = stat("async execute: wrapped by instrument()", "p50") - stat("async execute: unwrapped", "p50");
  print("");
  print("added per call                                   median   minimum");
  print(`  async execute, wrapped vs unwrapped         ${diff("async execute: wrapped by instrument()", "async execute: unwrapped")}   target ≤ 1000 ns (median): ${added <= 1000 ? "met" : "NOT met"}`);
  print(`    the wrapper alone (wrapped vs by hand)    ${diff("async execute: wrapped by instrument()", "async execute: recorded by hand")}`);
  print(`    AsyncLocalStorage on, once per process    ${diff("async execute: unwrapped", "async execute: unwrapped, before AsyncLocalStorage is enabled")}   (every await in the process, wrapped or not)`);
  print(`  sync execute, wrapped vs unwrapped          ${diff("sync execute: wrapped by instrument()", "sync execute: unwrapped")}`);
  print(`    the wrapper alone (wrapped vs by hand)    ${diff("sync execute: wrapped by instrument()", "sync execute: recorded by hand")}`);
  print(`  one transition, wrapped vs unwrapped        ${diff("4 transitions: wrapped by instrument()", "4 transitions: unwrapped", 4)}`);
  print(`    the wrapper alone (wrapped vs by hand)    ${diff("4 transitions: wrapped by instrument()", "4 transitions: recorded by hand", 4)}`);
  print(`  activity method outside any ledger          ${diff("activity outside any ledger: wrapped", "activity outside any ledger: unwrapped")}`);
  return results;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runWrapBench();
}
