/**
 * Overhead of the wrapping helpers (src/wrap): a no-op method called through the wrapper that
 * `instrument()` installs, against the same method unwrapped, and against the same recording
 * written by hand (journeys.execute + ledger.run + end), which separates the wrapper's own cost
 * from the recorder's. Target: at most 1 µs added per wrapped async execute.
 *
 * Two measurements of the same variants: mitata's (the usual report), then an interleaved A/B run
 * (every round calls each variant in turn, `batch` calls each) whose per-variant minimum over the
 * rounds is what the "added per call" lines use: on a shared machine, interference lands on one
 * variant at a time in mitata's sequential runs, while interleaving exposes all variants to it alike.
 *
 * Standalone: `npx tsx bench/wrap.bench.ts`; or import `runWrapBench()`.
 */
import { pathToFileURL } from "node:url";
import { bench, do_not_optimize, run, summary } from "mitata";
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
  return new TaskJourneys({
    role: "worker",
    instance: "bench",
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
  });
}

export interface WrapBenchResult {
  name: string;
  /** Nanoseconds per call: the minimum and the median of the interleaved rounds. */
  min: number;
  p50: number;
}

/** `prepare(count)`, when given, runs untimed before each batch of `count` calls. */
type Variant = ({ name: string; sync: () => unknown } | { name: string; async: () => Promise<unknown> }) & {
  prepare?: (count: number) => void;
};

async function interleaved(variants: Variant[], rounds: number, batch: number): Promise<WrapBenchResult[]> {
  const samples = variants.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (let index = 0; index < variants.length; index++) {
      const variant = variants[index];
      variant.prepare?.(batch);
      const start = performance.now();
      if ("sync" in variant) {
        const fn = variant.sync;
        for (let i = 0; i < batch; i++) do_not_optimize(fn());
      } else {
        const fn = variant.async;
        for (let i = 0; i < batch; i++) do_not_optimize(await fn());
      }
      samples[index].push(((performance.now() - start) * 1e6) / batch);
    }
  }
  return variants.map((variant, index) => {
    const sorted = samples[index].sort((a, b) => a - b);
    return { name: variant.name, min: sorted[0], p50: sorted[Math.floor(sorted.length / 2)] };
  });
}

export async function runWrapBench(
  options: { print?: (line: string) => void; rounds?: number; batch?: number } = {},
): Promise<WrapBenchResult[]> {
  const print = options.print ?? ((line: string) => console.log(line));
  const rounds = options.rounds ?? 200;
  const batch = options.batch ?? 2000;
  let next = 0;
  const key = (): string => KEYS[(next = (next + 1) & 4095)];

  const plain = new Worker();
  const wrapped = new Worker();
  instrument(wrapped, journeysForBench(), {
    execute: [
      { method: "execute", key: (k) => k },
      { method: "executeSync", key: (k) => k },
    ],
    transition: { method: "transition", key: (k) => k, from: (_k, from) => from, to: (_k, _from, to) => to },
    activities: { method: "serialize", activity: "serialize" },
  });
  const wrappedJourneys = journeysForBench();
  const wrappedLive = new Worker();
  instrument(wrappedLive, wrappedJourneys, { execute: { method: "execute", key: (k) => k } });
  const byHand = new Worker();
  const byHandJourneys = journeysForBench();
  // Keys whose journeys reached "executing" through transitions, untimed, as in a real worker.
  let prepared: string[] = [];
  let taken = 0;
  const prepare = (journeys: TaskJourneys) => (count: number) => {
    prepared = [];
    taken = 0;
    for (let i = 0; i < count; i++) {
      const k = key();
      journeys.transition(k, "released", "waiting");
      journeys.transition(k, "waiting", "ready");
      journeys.transition(k, "ready", "executing");
      prepared.push(k);
    }
  };
  const preparedKey = (): string => prepared[taken++];
  const value = { x: 1 };
  const journey = (worker: Worker) => {
    const k = key();
    worker.transition(k, "released", "waiting");
    worker.transition(k, "waiting", "ready");
    worker.transition(k, "ready", "executing");
    return worker.transition(k, "executing", "memory");
  };

  const groups: Variant[][] = [
    [
      { name: "async execute: unwrapped", async: () => plain.execute(key()) },
      { name: "async execute: wrapped by instrument()", async: () => wrapped.execute(key()) },
      {
        name: "async execute: recorded by hand",
        async: async () => {
          const k = key();
          const ledger = byHandJourneys.execute(k);
          const result = await ledger.run(() => byHand.execute(k));
          ledger.end("memory");
          return result;
        },
      },
    ],
    [
      { name: "sync execute: unwrapped", sync: () => plain.executeSync(key()) },
      { name: "sync execute: wrapped by instrument()", sync: () => wrapped.executeSync(key()) },
      {
        name: "sync execute: recorded by hand",
        sync: () => {
          const k = key();
          const ledger = byHandJourneys.execute(k);
          const result = ledger.run(() => byHand.executeSync(k));
          ledger.end("memory");
          return result;
        },
      },
    ],
    [
      { name: "4 transitions: unwrapped", sync: () => journey(plain) },
      { name: "4 transitions: wrapped by instrument()", sync: () => journey(wrapped) },
      {
        name: "4 transitions: recorded by hand",
        sync: () => {
          const k = key();
          byHandJourneys.transition(k, "released", "waiting");
          byHand.transition(k, "released", "waiting");
          byHandJourneys.transition(k, "waiting", "ready");
          byHand.transition(k, "waiting", "ready");
          byHandJourneys.transition(k, "ready", "executing");
          byHand.transition(k, "ready", "executing");
          byHandJourneys.transition(k, "executing", "memory");
          return byHand.transition(k, "executing", "memory");
        },
      },
    ],
    [
      { name: "activity outside any ledger: unwrapped", sync: () => plain.serialize(value) },
      { name: "activity outside any ledger: wrapped", sync: () => wrapped.serialize(value) },
    ],
  ];
  /** Measured by the interleaved run only: mitata has no untimed setup per batch. */
  const live: Variant[] = [
    { name: "async execute, journey live: unwrapped", async: () => plain.execute(key()) },
    {
      name: "async execute, journey live: wrapped",
      prepare: prepare(wrappedJourneys),
      async: () => wrappedLive.execute(preparedKey()),
    },
    {
      name: "async execute, journey live: by hand",
      prepare: prepare(byHandJourneys),
      async: async () => {
        const k = preparedKey();
        const ledger = byHandJourneys.execute(k);
        const result = await ledger.run(() => byHand.execute(k));
        ledger.end("memory");
        return result;
      },
    },
  ];

  // Before any AsyncLocalStorage.run() in this process: Node 20 turns its promise hooks on at the
  // first run(), after which every promise in the process costs a little more.
  const [cold] = await interleaved(
    [{ name: "async execute: unwrapped, AsyncLocalStorage not yet on", async: () => plain.execute(key()) }],
    Math.max(10, rounds / 4),
    batch,
  );

  for (const group of groups) {
    summary(() => {
      group.forEach((variant, index) => {
        const b = "sync" in variant ? bench(variant.name, variant.sync) : bench(variant.name, variant.async);
        if (index === 0) b.baseline(true);
      });
    });
  }
  await run({ print });

  print("");
  print(`interleaved A/B: ${rounds} rounds × ${batch} calls per variant`);
  const results = [cold, ...(await interleaved([...groups.flat(), ...live], rounds, batch))];
  for (const result of results)
    print(
      `  ${result.name.padEnd(56)} min ${result.min.toFixed(0).padStart(6)} ns   median ${result.p50.toFixed(0).padStart(6)} ns`,
    );

  const min = (name: string) => results.find((result) => result.name === name)?.min ?? Number.NaN;
  const ns = (value: number) => `${value.toFixed(0).padStart(6)} ns`;
  const diff = (a: string, b: string, per = 1) => ns((min(a) - min(b)) / per);
  const added = min("async execute: wrapped by instrument()") - min("async execute: unwrapped");
  print("");
  print("added per call (interleaved minimums)");
  print(
    `  async execute, wrapped vs unwrapped         ${ns(added)}   target ≤ 1000 ns: ${added <= 1000 ? "met" : "NOT met"}`,
  );
  print(
    `    the wrapper alone (wrapped vs by hand)    ${diff("async execute: wrapped by instrument()", "async execute: recorded by hand")}`,
  );
  print(
    `    the recorder (by hand vs unwrapped)       ${diff("async execute: recorded by hand", "async execute: unwrapped")}`,
  );
  print(
    `    AsyncLocalStorage on, once per process    ${diff("async execute: unwrapped", cold.name)}   (every await in the process, wrapped or not)`,
  );
  print(
    `  async execute of a key already executing  ${diff("async execute, journey live: wrapped", "async execute, journey live: unwrapped")}   (its journey begun by transitions, untimed)`,
  );
  print(
    `    the wrapper alone (wrapped vs by hand)    ${diff("async execute, journey live: wrapped", "async execute, journey live: by hand")}`,
  );
  print(
    `  sync execute, wrapped vs unwrapped          ${diff("sync execute: wrapped by instrument()", "sync execute: unwrapped")}`,
  );
  print(
    `    the wrapper alone (wrapped vs by hand)    ${diff("sync execute: wrapped by instrument()", "sync execute: recorded by hand")}`,
  );
  print(
    `  one transition, wrapped vs unwrapped        ${diff("4 transitions: wrapped by instrument()", "4 transitions: unwrapped", 4)}`,
  );
  print(
    `    the wrapper alone (wrapped vs by hand)    ${diff("4 transitions: wrapped by instrument()", "4 transitions: recorded by hand", 4)}`,
  );
  print(
    `  activity method outside any ledger          ${diff("activity outside any ledger: wrapped", "activity outside any ledger: unwrapped")}`,
  );
  return results;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runWrapBench();
}
