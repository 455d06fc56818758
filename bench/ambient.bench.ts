/**
 * What AsyncLocalStorage costs, per runtime: the reason the cluster example chooses
 * `asyncContext` by Node.js version. Node 20 builds AsyncLocalStorage on promise hooks, which
 * once on (at the first run()) tax every promise in the process; Node 24 and later build it on
 * AsyncContextFrame, which costs a promise nothing extra.
 *
 *  - an await chain (10 awaits, no taskjourney at all), before any AsyncLocalStorage.run() in the
 *    process and after: the process-wide tax, per await;
 *  - an async execution metering one activity after an await, found by the ambient
 *    `journeys.meter()` (asyncContext: true), against the same with the ledger taken before the
 *    await and re-entered with `ledger.run()` (asyncContext: false, as worker.ts does).
 *
 * Timed in interleaved rounds (each round runs every variant in turn), the median per operation.
 * Standalone: `npx tsx bench/ambient.bench.ts`.
 */
import { TaskJourneys } from "../src/index.js";
import { printSuite, report, type CaseResult, type SuiteResult } from "./harness.js";

const AWAITS = 10;
const BATCH = 2_000;
const ROUNDS = 60;
const KEYS = Array.from({ length: 4096 }, (_, i) => `inc-${i.toString(16).padStart(4, "0")}x`);
let next = 0;
const key = () => KEYS[next++ & 4095];
const tick = () => Promise.resolve();

async function awaitChain(): Promise<void> {
  for (let i = 0; i < AWAITS; i++) await tick();
}

function journeysWith(asyncContext: boolean): TaskJourneys {
  return new TaskJourneys({
    role: "worker",
    instance: "bench",
    asyncContext,
    sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
  });
}
const ambient = journeysWith(true);
const explicit = journeysWith(false);
const noWork = () => undefined;

/** asyncContext: true: the surrounding ledger found after an await. */
async function ambientExecution(): Promise<void> {
  const k = key();
  const ledger = ambient.execute(k);
  await ledger.run(async () => {
    await tick();
    ambient.meter("deserialize", noWork);
  });
  ledger.end("memory");
}

/** asyncContext: false: the ledger taken before the await, re-entered after it. */
async function explicitExecution(): Promise<void> {
  const k = key();
  const ledger = explicit.execute(k);
  await ledger.run(async () => {
    await tick();
    ledger.meter("deserialize", noWork);
  });
  ledger.end("memory");
}

type Variant = { name: string; fn: () => Promise<void>; ops: number };

async function interleaved(variants: Variant[], rounds: number): Promise<CaseResult[]> {
  const samples = variants.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [index, variant] of variants.entries()) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < BATCH; i++) await variant.fn();
      samples[index].push(Number(process.hrtime.bigint() - start) / (BATCH * variant.ops));
    }
  }
  return variants.map((variant, index) => {
    const sorted = samples[index].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return {
      name: variant.name,
      p25: at(0.25),
      median: at(0.5),
      p75: at(0.75),
      p99: at(0.99),
      mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      samples: sorted.length,
    };
  });
}

const BEFORE = "await, AsyncLocalStorage not yet on";
const AFTER = "await, AsyncLocalStorage on";
const AMBIENT = "execution + meter() after an await: ambient (asyncContext: true)";
const EXPLICIT = "execution + meter() after an await: ledger re-entered (asyncContext: false)";

// Warm-up of the await chain alone, then its timing, all before the first run() of the process.
await interleaved([{ name: BEFORE, fn: awaitChain, ops: AWAITS }], 5);
const [before] = await interleaved([{ name: BEFORE, fn: awaitChain, ops: AWAITS }], ROUNDS / 2);
await ambientExecution();
const rest = await interleaved(
  [
    { name: AFTER, fn: awaitChain, ops: AWAITS },
    { name: AMBIENT, fn: ambientExecution, ops: 1 },
    { name: EXPLICIT, fn: explicitExecution, ops: 1 },
  ],
  ROUNDS,
);
const cases = [before, ...rest];
const median = (name: string) => cases.find((c) => c.name === name)!.median;
const result: SuiteResult = {
  suite: "ambient",
  runtime: `node ${process.version}`,
  cases,
  ratios: [
    { name: "await with AsyncLocalStorage on / off", value: median(AFTER) / median(BEFORE) },
    { name: "ambient meter() execution / ledger re-entered", value: median(AMBIENT) / median(EXPLICIT) },
  ],
  notes: [
    `${ROUNDS} interleaved rounds of ${BATCH} calls per variant; an await chain is ${AWAITS} awaits of resolved promises`,
  ],
  facts: { "AsyncLocalStorage tax per await (ns)": (median(AFTER) - median(BEFORE)).toFixed(1) },
};
printSuite(result);
report(result);
const dropped = [ambient, explicit].flatMap((journeys) => Object.entries(journeys.dropped()));
if (dropped.length > 0) {
  console.error(`warning: the benchmark's journeys dropped input: ${JSON.stringify(dropped)}`);
  process.exitCode = 1;
}
