import { describe, expect, it } from "vitest";
import { SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { TAIL_MIN_JOURNEYS } from "../../../src/otel/tail-sampling.js";
import { find, harness, keyWith, render, taskSpan, type Harness } from "./helpers.js";
import { internalsOf } from "../../../src/internal.js";
import { defineMachine, type TaskJourneys } from "../../../src/index.js";

/** A compute journey of `seconds` from `start`: waiting, ready, executing (half of it), memory or error. */
function compute(
  { journeys, clock }: Harness,
  key: string,
  start: number,
  seconds: number,
  outcome: "memory" | "error" = "memory",
) {
  clock.set(start);
  journeys.transition(key, "released", "waiting");
  clock.set(start + seconds / 4);
  journeys.transition(key, "waiting", "ready");
  clock.set(start + seconds / 2);
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  clock.set(start + seconds);
  ledger.end(outcome);
}

function sampledKeys(h: Harness): Set<string> {
  return new Set(
    h.exporter
      .getFinishedSpans()
      .filter((span) => span.name.startsWith("task "))
      .map((span) => String(span.attributes["task.key"])),
  );
}

describe("head sampling", () => {
  it("ratio 0.1 over 10,000 keys keeps 1,000 ± 100, the same set on a scheduler and a worker", () => {
    const scheduler = harness({ role: "scheduler", sampling: { ratio: 0.1, keepSlowerThan: 0, keepErrors: false } });
    const worker = harness({ sampling: { ratio: 0.1, keepSlowerThan: 0, keepErrors: false } });
    for (let index = 0; index < 10_000; index++) {
      const key = index % 2 === 0 ? `x-${index}` : ["y-7f3a", index];
      scheduler.journeys.transition(key, "released", "waiting");
      scheduler.journeys.transition(key, "waiting", "memory");
      worker.journeys.transition(key, "released", "waiting");
      worker.journeys.transition(key, "waiting", "memory");
    }
    const onScheduler = sampledKeys(scheduler);
    const onWorker = sampledKeys(worker);
    expect(onScheduler.size).toBeGreaterThanOrEqual(900);
    expect(onScheduler.size).toBeLessThanOrEqual(1100);
    expect([...onWorker].sort()).toEqual([...onScheduler].sort());
    // Two spans per sampled journey (task, waiting) and not one more: unsampled ones made none.
    expect(worker.counting.starts).toBe(2 * onWorker.size);
    expect(worker.exporter.getFinishedSpans()).toHaveLength(2 * onWorker.size);
  });

  it("unsampled journeys make no spans at all: a counting tracer provider sees none", () => {
    const h = harness({ sampling: { ratio: 0, keepSlowerThan: 0.99, keepErrors: true } });
    const { journeys, clock } = h;
    expect(h.counting.tracers).toBe(1);
    for (let index = 0; index < 500; index++) {
      const key = `sum-${index}`;
      const dependency = `a-${index}`;
      clock.set(index * 10);
      journeys.transition(key, "released", "waiting");
      journeys.dependencies(key, [dependency]);
      journeys.transition(dependency, "released", "fetch");
      const transfer = journeys.gather("tcp://peer:1", [dependency], 100);
      transfer.meter("network", () => clock.advance(1));
      transfer.end("ok");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      const ledger = journeys.execute(key);
      ledger.meter("deserialize", () => clock.advance(0.5));
      ledger.digest("thread-cpu", 0.25);
      ledger.end("memory");
    }
    expect(h.counting.starts).toBe(0);
    expect(h.exporter.getFinishedSpans()).toEqual([]);
    expect(internalsOf(journeys)!.spans["open"].size).toBe(0);
  });
});

describe("tail sampling: slow and failed journeys are kept at their end", () => {
  it("keeps a journey slower than its prefix's keepSlowerThan quantile, emitted whole from its recorded times", () => {
    const h = harness({ sampling: { ratio: 0, keepSlowerThan: 0.9, keepErrors: true } });
    for (let index = 0; index < 100; index++) compute(h, `slow-${index}`, index * 10, 1);
    expect(h.counting.starts).toBe(0);
    const { journeys, clock } = h;
    clock.set(2000);
    journeys.transition("slow-100", "released", "waiting");
    clock.set(2004);
    journeys.transition("slow-100", "waiting", "ready");
    clock.set(2005);
    journeys.transition("slow-100", "ready", "executing");
    const ledger = journeys.execute("slow-100");
    ledger.meter("deserialize", () => clock.advance(1));
    clock.set(2010);
    // Nothing exists of it until it ends.
    expect(h.counting.starts).toBe(0);
    ledger.end("memory");
    expect(render(h.exporter.getFinishedSpans())).toEqual([
      "task slow [slow-100@worker] 2000-2010",
      "  waiting 2000-2004",
      "  ready 2004-2005",
      "  executing 2005-2010",
      "    deserialize 2005-2006",
    ]);
    // The same prefix's journeys of ordinary length stay unkept; so do other prefixes' ones.
    compute(h, "slow-101", 2100, 1);
    compute(h, "fast-1", 2200, 10);
    expect(sampledKeys(h)).toEqual(new Set(["slow-100"]));
  });

  it("keeps about the slowest (1 - q) of a prefix's journeys, and only slow ones", () => {
    const h = harness({ sampling: { ratio: 0, keepSlowerThan: 0.9, keepErrors: true } });
    const durations = new Map<string, number>();
    for (let index = 0; index < 2000; index++) {
      const seconds = 1 + ((index * 37) % 100) / 100;
      durations.set(`x-${index}`, seconds);
      compute(h, `x-${index}`, index * 10, seconds);
    }
    const kept = [...sampledKeys(h)];
    expect(kept.length).toBeGreaterThan(100);
    expect(kept.length).toBeLessThan(300);
    expect(Math.min(...kept.map((key) => durations.get(key)!))).toBeGreaterThan(1.8);
  });

  it(`judges no journey slow before its prefix has seen ${TAIL_MIN_JOURNEYS}`, () => {
    const h = harness({ sampling: { ratio: 0, keepSlowerThan: 0.5, keepErrors: true } });
    for (let index = 0; index < TAIL_MIN_JOURNEYS - 1; index++) compute(h, `x-${index}`, index * 100, index + 1);
    expect(h.counting.starts).toBe(0);
    compute(h, "x-9999", 10_000, 1000);
    expect(sampledKeys(h)).toEqual(new Set(["x-9999"]));
  });

  it("keeps failed journeys (status ERROR) unless keepErrors is false; keepSlowerThan 0 keeps no slow one", () => {
    const keeping = harness({ sampling: { ratio: 0, keepSlowerThan: 0.9, keepErrors: true } });
    compute(keeping, "inc-1", 0, 1, "error");
    const task = find(keeping.exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.status.code).toBe(SpanStatusCode.ERROR);
    expect(task.attributes["task.outcome"]).toBe("error");

    const notKeeping = harness({ sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false } });
    compute(notKeeping, "inc-1", 0, 1, "error");
    for (let index = 0; index < 100; index++) compute(notKeeping, `inc-${index + 2}`, index * 10 + 10, 1);
    compute(notKeeping, "inc-999", 5000, 100);
    expect(notKeeping.counting.starts).toBe(0);
  });

  it("keepErrors keeps a journey whose attempt failed before a retry succeeded, its failed attempt ERROR", () => {
    const jobs = defineMachine({
      states: ["added", "waiting", "active", "delayed", "completed", "failed"],
      transitions: {
        added: ["waiting"],
        waiting: ["active"],
        active: ["completed", "failed", "delayed"],
        delayed: ["waiting"],
      },
      terminal: { success: "completed", failure: "failed" },
      initial: "added",
      queued: "waiting",
      executing: "active",
    });
    const retried = (keepErrors: boolean) => {
      const h = harness({ role: "scheduler", machine: jobs, sampling: { ratio: 0, keepSlowerThan: 0, keepErrors } });
      const { clock } = h;
      const journeys = h.journeys as unknown as TaskJourneys<"scheduler", (typeof jobs.states)[number]>;
      journeys.transition("job-1", "added", "waiting");
      clock.set(101);
      journeys.transition("job-1", "waiting", "active");
      clock.set(102);
      journeys.execute("job-1").end("delayed", new Error("connection reset"));
      clock.set(103);
      journeys.transition("job-1", "delayed", "waiting");
      journeys.transition("job-1", "waiting", "active");
      clock.set(104);
      journeys.execute("job-1").end("completed");
      return h.exporter.getFinishedSpans();
    };
    const spans = retried(true);
    expect(render(spans)).toEqual([
      "task job [job-1@scheduler] 100-104",
      "  waiting 100-101",
      "  active 101-102 ERROR",
      "  delayed 102-103",
      "  waiting 103-103",
      "  active 103-104",
    ]);
    expect(retried(false)).toEqual([]);
  });

  it("a tail-kept dependent emits the gather_dep no one emitted, under its waiting span", () => {
    const h = harness({ sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: true } });
    const { journeys, clock } = h;
    journeys.transition("sum-1", "released", "waiting");
    journeys.dependencies("sum-1", ["a-1", "a-2"]);
    journeys.transition("a-1", "released", "fetch");
    journeys.transition("a-2", "released", "fetch");
    clock.set(101);
    const transfer = journeys.gather("tcp://peer:1", ["a-1", "a-2"], 2048);
    transfer.meter("network", () => clock.advance(1));
    transfer.meter("deserialize", () => clock.advance(0.5));
    transfer.end("ok");
    journeys.transition("sum-1", "waiting", "ready");
    journeys.transition("sum-1", "ready", "executing");
    clock.set(103);
    expect(h.counting.starts).toBe(0);
    journeys.execute("sum-1").end("error");
    const spans = h.exporter.getFinishedSpans();
    expect(render(spans)).toEqual([
      "task sum [sum-1@worker] 100-103 ERROR",
      "  waiting 100-102.5 → gather_dep [tcp://peer:1 ok]",
      "    gather_dep [tcp://peer:1 ok] CLIENT 101-102.5",
      "      network 101-102",
      "      deserialize 102-102.5",
      "  ready 102.5-102.5",
      "  executing 102.5-103 ERROR",
    ]);
    expect(find(spans, (span) => span.name === "gather_dep").attributes).toMatchObject({
      "transfer.keys": ["a-1", "a-2"],
      "transfer.key_count": 2,
      "transfer.bytes": 2048,
    });
  });

  it("link direction: a dependent kept only at its end links to the live gather_dep, which cannot link back", () => {
    const exporter = new InMemorySpanExporter();
    const ratio = 0.5;
    const sampled = keyWith("x", ratio, true);
    const unsampled = keyWith("y", ratio, false);
    const dependency = keyWith("a", ratio, false);
    const h = harness({ sampling: { ratio, keepSlowerThan: 0, keepErrors: true } }, exporter);
    const { journeys, clock } = h;
    for (const key of [sampled, unsampled]) {
      journeys.transition(key, "released", "waiting");
      journeys.dependencies(key, [dependency]);
    }
    journeys.transition(dependency, "released", "fetch");
    clock.set(101);
    const transfer = journeys.gather("tcp://peer:1", [dependency], 10);
    clock.set(102);
    transfer.end("ok");
    for (const key of [sampled, unsampled]) {
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
    }
    clock.set(103);
    journeys.execute(sampled).end("memory");
    journeys.execute(unsampled).end("error");
    expect(render(exporter.getFinishedSpans())).toEqual([
      `task x [${sampled}@worker] 100-103`,
      "  waiting 100-102 → gather_dep [tcp://peer:1 ok]",
      "    gather_dep [tcp://peer:1 ok] CLIENT 101-102",
      "  ready 102-102",
      "  executing 102-103",
      `task y [${unsampled}@worker] 100-103 ERROR`,
      "  waiting 100-102 → gather_dep [tcp://peer:1 ok]",
      "  ready 102-102",
      "  executing 102-103 ERROR",
    ]);
  });

  it("a head-sampled fetch journey parents the gather_dep when no dependent is sampled", () => {
    const ratio = 0.5;
    const dependency = keyWith("a", ratio, true);
    const dependent = keyWith("sum", ratio, false);
    const h = harness({ sampling: { ratio, keepSlowerThan: 0, keepErrors: true } });
    const { journeys, clock } = h;
    journeys.transition(dependent, "released", "waiting");
    journeys.dependencies(dependent, [dependency]);
    journeys.transition(dependency, "released", "fetch");
    clock.set(101);
    const transfer = journeys.gather("tcp://peer:1", [dependency], 10);
    transfer.meter("network", () => clock.advance(1));
    transfer.end("ok");
    expect(render(h.exporter.getFinishedSpans())).toEqual([
      `task a [${dependency}@worker] 100-102`,
      "  fetch 100-101",
      "  flight 101-102 → gather_dep [tcp://peer:1 ok]",
      "    gather_dep [tcp://peer:1 ok] CLIENT 101-102",
      "      network 101-102",
    ]);
  });
});
