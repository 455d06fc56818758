/**
 * Benchmark switches: `TASKJOURNEY_CLUSTER_OFF=<part>[,<part>…]` turns single parts of the
 * telemetry off while the rest stays on, in every process of the cluster (the workers inherit the
 * environment), so that `bench/cluster.bench.ts --attribute-parts` can measure what each part
 * costs by switching it alone (issue 34, "Where it goes"). Nothing here is for users: with the
 * variable unset every part is on, as the demo runs. `TASKJOURNEY_CLUSTER_GC=1` makes every
 * process count its garbage collections (count and pause time, from `gc` performance entries), so
 * that the bench can report GC per task beside the CPU.
 */
import { PerformanceObserver } from "node:perf_hooks";

/** The parts, each with what switching it off leaves out. */
export const PARTS = {
  // Workers: no instrument() at all on the worker, its state machine and its store, and no serve
  // ledgers: no transitions, no execute / gather / serve ledgers, no activities recorded there.
  "worker-instrument": "the workers' instrument() wrappers and everything they record (transitions, ledgers)",
  // Workers: only the execute spec left out (transitions still recorded): no execute ledger, so
  // no thread times digested either.
  "worker-execute": "the workers' execute ledgers (execute wrapper, the thread times digested into it)",
  // Workers: no gather ledger (gatherDep and its activities unwrapped) and no serve ledger per get_data.
  "worker-transfers": "the workers' gather and serve ledgers (gatherDep and its activities, get_data served)",
  // Workers: the computeTask wrapper left out, so no key's dependencies are told (its transitions
  // and ledgers still recorded).
  "worker-dependencies": "the workers' computeTask wrapper (journeys.dependencies per task)",
  // Workers: the store's instrument() left out (serialize for get_data, the spill activities).
  "worker-store": "the workers' store activities (serialize per key served; spill, unspill, disk)",
  // Every process: `traces: false`, so the span bridge neither listens to transitions nor hands
  // out trace ids for carriers (with no sampling at all, in metrics-only mode, nothing is ever kept).
  "span-bridge": "the span bridge (traces: false): its listener on every transition and the ids inject() hands out",
  // Every process: `retainedJourneys: 0`, no ended journeys kept for explain().
  retained: "ended journeys retained for explain() (retainedJourneys 1000 → 0)",
  // Piscina threads: `measure: false`, so a task reads no thread CPU clock (two WASI clock reads);
  // the execute ledger gets thread-wall instead of thread-cpu and thread-noncpu.
  "thread-clock": "the thread CPU readings in the piscina threads (tasks.mjs) and their digest",
  // Messages: no trace context anywhere: the scheduler's inject() into compute-task and returned()
  // on task-finished; the workers' parent(), resultCarrier's inject(), get_data's inject() per key,
  // injectTransfer / linkTransfer / linkFrom.
  carriers: "trace carriers in messages (inject, parent, returned, injectTransfer, linkTransfer, linkFrom)",
  // The scheduler: no instrument() on its transition method; its duration estimates from its own
  // DurationStatistics as with telemetry off (carriers still go, unless "carriers" is off too).
  "scheduler-instrument": "the scheduler's instrument() of transition and its estimates read from journeys.stats",
  // Every process: `processStalls: false` (no GC observer, no event-loop probe timer).
  stalls: "the stall probe (processStalls: GC observer and event-loop timer)",
  // Every process: exporters "none" for traces and metrics: no PeriodicExportingMetricReader (no
  // collect of the metric producer every 10 s) and no span processor exporting.
  export: "the SDK's metric collect and export, and span export (exporters none)",
} as const;

export type Part = keyof typeof PARTS;

/** The parts a TASKJOURNEY_CLUSTER_OFF value names; an unknown name throws, naming the variable, the value and the parts. */
export function parseParts(text: string | undefined): ReadonlySet<Part> {
  const parts = new Set<Part>();
  if (text === undefined || text.trim() === "") return parts;
  for (const name of text.split(",").map((item) => item.trim())) {
    if (name === "") continue;
    if (!(name in PARTS))
      throw new Error(
        `TASKJOURNEY_CLUSTER_OFF: unknown part "${name}" in "${text}"; the parts are ${Object.keys(PARTS).join(", ")}`,
      );
    parts.add(name as Part);
  }
  return parts;
}

const off = parseParts(process.env.TASKJOURNEY_CLUSTER_OFF);

/** Whether `part` of the telemetry is switched off in this process (TASKJOURNEY_CLUSTER_OFF). */
export function partOff(part: Part): boolean {
  return off.has(part);
}

/** Garbage collections of this process since it started counting (TASKJOURNEY_CLUSTER_GC=1), else undefined. */
export interface GcTotals {
  count: number;
  /** Of `count`, the major (mark-compact) collections. */
  major: number;
  /** Summed pause durations, seconds (wall time: a loaded machine stretches them). */
  seconds: number;
}

let gcTotals: GcTotals | undefined;
if (process.env.TASKJOURNEY_CLUSTER_GC === "1") {
  const totals: GcTotals = { count: 0, major: 0, seconds: 0 };
  gcTotals = totals;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      totals.count++;
      // perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR
      if ((entry as { detail?: { kind?: number } }).detail?.kind === 4) totals.major++;
      totals.seconds += entry.duration / 1000;
    }
  }).observe({ entryTypes: ["gc"] });
}

/** This process's GC totals so far, if counting. */
export function gcSoFar(): GcTotals | undefined {
  return gcTotals === undefined ? undefined : { ...gcTotals };
}
