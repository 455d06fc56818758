/**
 * Bytes per live journey: N keys (1 million by default) left mid-journey, the heap read after a
 * forced GC before and after. The keys are made and held before the first reading, so the figure
 * is what taskjourney holds per journey (the journey, its visit list, its place in the live Map
 * and list), not the scheduler's own key strings. Shapes: keys left in `waiting` (one visit, the
 * most common case of a large graph submitted at once), and keys left `executing` after
 * waiting → ready (three visits). Unsampled (ratio 0), as nearly all journeys are.
 *
 * Run: node --expose-gc --import tsx bench/live-memory.bench.ts
 *   TASKJOURNEY_BENCH_LIVE=1000000   journeys left live per shape
 */
import { printSuite, report, type SuiteResult } from "./harness.js";
import { library, source } from "./lib.js";

const { TaskJourneys } = library;
const N = Number(process.env.TASKJOURNEY_BENCH_LIVE ?? 1_000_000);

const gc = globalThis.gc;
if (typeof gc !== "function") {
  console.error(
    "bench/live-memory.bench.ts needs --expose-gc: node --expose-gc --import tsx bench/live-memory.bench.ts",
  );
  process.exit(2);
}

function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

type WorkerState = Parameters<InstanceType<typeof TaskJourneys<"worker">>["transition"]>[1];

/** Heap bytes per journey of N keys taken through `moves` and left there. */
function bytesPerJourney(moves: ReadonlyArray<readonly [WorkerState, WorkerState]>): number {
  // Dask-like keys, "<prefix>-<32 hex>", over 100 prefixes; made before the first reading.
  const keys = Array.from(
    { length: N },
    (_, i) => `p${i % 100}-${(0x10000000 + i).toString(16)}0f1e2d3c4b5a69788796a5b4`,
  );
  const journeys = new TaskJourneys({
    role: "worker",
    sampling: { ratio: 0 },
    limits: { maxPrefixes: 100, maxLiveJourneys: N + 1 },
  });
  journeys.transition("p0-f00000000f1e2d3c4b5a69788796a5b4", "released", "waiting");
  const before = heap();
  for (const key of keys) for (const [from, to] of moves) journeys.transition(key, from, to);
  const after = heap();
  if (Object.keys(journeys.dropped()).length > 0)
    throw new Error(`live-memory bench: inputs dropped ${JSON.stringify(journeys.dropped())}`);
  // Keep both alive through the reading.
  if (keys.length !== N || journeys.role !== "worker") throw new Error("unreachable");
  return (after - before) / N;
}

const waiting = bytesPerJourney([["released", "waiting"]]);
const executing = bytesPerJourney([
  ["released", "waiting"],
  ["waiting", "ready"],
  ["ready", "executing"],
]);

const result: SuiteResult = {
  suite: "live-memory",
  runtime: `node ${process.version} ${process.arch}, ${source}`,
  cases: [],
  ratios: [],
  notes: [
    `${N.toLocaleString("en-US")} live journeys per shape, keys held by the caller (not counted)`,
    `left in waiting (1 visit): ${waiting.toFixed(0)} B per live journey (aim ≤ 250 B)`,
    `left executing (3 visits): ${executing.toFixed(0)} B per live journey`,
  ],
  facts: {
    "bytes per live journey (waiting)": Math.round(waiting),
    "bytes per live journey (executing)": Math.round(executing),
  },
};
printSuite(result);
report(result);
