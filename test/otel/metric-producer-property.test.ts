/**
 * The metrics and explain() tell one story: for any set of worker journeys, task.state.time,
 * task.transitions, task.execute.time and task.execute.size are the sums of what explain() shows
 * journey by journey (fast-check, exact sums: times are whole 1/64 s ticks).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { BreakdownNode } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { values, worker } from "./metric-producer.helpers.js";

const TICK = 1 / 64;

interface Execution {
  prefix: "inc" | "sum";
  waitTicks: number;
  readyTicks: number;
  activities: Array<{ name: "deserialize" | "disk-read" | "compute"; ticks: number; bytes: number }>;
  tailTicks: number;
  outcome: "memory" | "error";
}

const execution: fc.Arbitrary<Execution> = fc.record({
  prefix: fc.constantFrom("inc" as const, "sum" as const),
  waitTicks: fc.integer({ min: 0, max: 16 }),
  readyTicks: fc.integer({ min: 0, max: 16 }),
  activities: fc.array(
    fc.record({
      name: fc.constantFrom("deserialize" as const, "disk-read" as const, "compute" as const),
      ticks: fc.integer({ min: 0, max: 16 }),
      bytes: fc.integer({ min: 0, max: 4096 }),
    }),
    { maxLength: 4 },
  ),
  tailTicks: fc.integer({ min: 0, max: 16 }),
  outcome: fc.constantFrom("memory" as const, "error" as const),
});

function add(into: Record<string, number>, key: string, value: number): void {
  into[key] = (into[key] ?? 0) + value;
}

function series(attributes: Record<string, string>): string {
  return Object.keys(attributes)
    .sort()
    .map((key) => `${key}=${attributes[key]}`)
    .join(",");
}

describe("metrics and explain() agree (property)", () => {
  it("state times, transitions, execute times and sizes are the sums of the journeys' breakdowns", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(execution, { minLength: 1, maxLength: 6 }), async (executions) => {
        const clock = new FakeClock(0);
        const journeys = worker(clock);
        executions.forEach((run, index) => {
          const key = `${run.prefix}-${index}`;
          journeys.transition(key, "released", "waiting");
          clock.advance(run.waitTicks * TICK);
          journeys.transition(key, "waiting", "ready");
          clock.advance(run.readyTicks * TICK);
          journeys.transition(key, "ready", "executing");
          const ledger = journeys.execute(key);
          for (const activity of run.activities) {
            ledger.meter(activity.name, () => clock.advance(activity.ticks * TICK));
            ledger.digest(activity.name, activity.bytes, "bytes");
          }
          clock.advance(run.tailTicks * TICK);
          ledger.end(run.outcome);
        });

        const stateTime: Record<string, number> = {};
        const transitions: Record<string, number> = {};
        const executeTime: Record<string, number> = {};
        const executeSize: Record<string, number> = {};
        executions.forEach((run, index) => {
          const breakdown = journeys.explain(`${run.prefix}-${index}`)!;
          for (const state of breakdown.children) {
            add(stateTime, series({ "task.prefix": run.prefix, "task.state": state.name }), state.seconds);
            add(transitions, series({ "task.prefix": run.prefix, "task.state": state.name }), 1);
          }
          add(transitions, series({ "task.prefix": run.prefix, "task.state": breakdown.outcome! }), 1);
          const executing = breakdown.children.find((state) => state.name === "executing")!;
          // A failed execution's time is lumped into "failed"; its bytes still count.
          if (run.outcome === "error") add(executeTime, series({ "task.activity": "failed" }), executing.seconds);
          const walk = (nodes: BreakdownNode[]) => {
            for (const node of nodes) {
              if (run.outcome === "memory")
                add(
                  executeTime,
                  series({ "task.activity": node.name }),
                  node.seconds - node.children.reduce((sum, child) => sum + child.seconds, 0),
                );
              if (node.quantities?.bytes !== undefined)
                add(executeSize, series({ "task.activity": node.name }), node.quantities.bytes);
              walk(node.children);
            }
          };
          walk(executing.children);
          // explain() shows no `other` under a state with no activity at all; the metric has it.
          if (run.outcome === "memory" && executing.children.length === 0)
            add(executeTime, series({ "task.activity": "other" }), executing.seconds);
        });
        const drop = (record: Record<string, number>) =>
          Object.fromEntries(Object.entries(record).filter(([, value]) => value !== 0));

        const { resourceMetrics } = await journeys.metricProducer.collect();
        // A metric with nothing to say is left out of the export: no points.
        const exported = (name: string) => {
          const metric = resourceMetrics.scopeMetrics[0].metrics.find((item) => item.descriptor.name === name);
          return metric === undefined ? {} : drop(values(metric));
        };
        // State time counts finished visits of non-terminal states; every visit here is finished.
        expect(exported("task.state.time")).toEqual(drop(stateTime));
        expect(exported("task.transitions")).toEqual(transitions);
        expect(exported("task.execute.time")).toEqual(drop(executeTime));
        expect(exported("task.execute.size")).toEqual(drop(executeSize));
      }),
      { numRuns: 200, seed: 20261130 },
    );
  });
});
