/**
 * docs/metrics.md's tables are the reference of what a dashboard may query: the metric names,
 * kinds, units and attribute names must be what the producer really exports, and the attribute
 * values what the code can give. (The reasons of `taskjourney.dropped{reason}`: bad-input.test.ts.)
 */
import { DataPointType, type MetricData } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import {
  DEPENDENCIES_ACTIVITY,
  EXECUTE_ACTIVITIES,
  EXECUTE_LUMP,
  GATHER_ACTIVITIES,
  OTHER_ACTIVITY,
  QUEUED_ACTIVITY,
  TRANSFER_LUMP,
  TRANSFER_OUTCOMES,
} from "../../src/model/activities.js";
import { SCHEDULER_STATES, WORKER_STATES } from "../../src/model/states.js";
import { SEED_ACTIVITIES } from "../../src/recorder/activity-ids.js";
import {
  DELAY_STATISTICS,
  METRIC_EVENT_LOOP_DELAY_PREFIX,
  METRIC_GC_DURATION,
} from "../../src/otel/runtime-metrics.js";
import { ATTR_ERROR_TYPE, ATTR_SIGNAL, METRIC_EXPORT_ERRORS } from "../../src/otel/semconv.js";
import { FakeClock } from "../helpers/clock.js";
import { byName, pipeline, worker, workerDay } from "../otel/metric-producer.helpers.js";
import { page, quoted, table as tablesOf } from "./pages.js";

const METRICS = page("docs/metrics.md");

/** The body rows of docs/metrics.md's table whose header row is `header`. */
function table(header: string): string[][] {
  return tablesOf(METRICS, "docs/metrics.md", header);
}

/** The attribute names a cell of the metrics table mentions (outside backticks). */
function attributeNames(cell: string): string[] {
  const plain = cell.replace(/`[^`]*`/g, "");
  return [...new Set(plain.match(/\b(?:task|transfer|error)\.[a-z_]+|\breason\b|\bsignal\b/g) ?? [])].sort();
}

/** The page's kind of a metric, from the exported data. */
function kind(metric: MetricData): string {
  if (metric.dataPointType === DataPointType.SUM) return metric.isMonotonic ? "counter" : "up-down counter";
  if (metric.dataPointType === DataPointType.GAUGE) return "gauge";
  if (metric.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM) return "exponential histogram";
  return "histogram";
}

/** The attribute names each metric's points carry, after a worker's day that fills every metric. */
async function exported(
  executeTimeByPrefix: boolean,
): Promise<Map<string, { metric: MetricData; attributes: string[] }>> {
  const clock = new FakeClock(0);
  const journeys = worker(clock, { executeTimeByPrefix });
  const p = pipeline([journeys.metricProducer]);
  try {
    workerDay(journeys, clock);
    // And one get_data served to a peer: the serve metrics (task.serve.*).
    const serve = journeys.serve("tcp://10.0.0.9:40001", ["x-1"]);
    serve.meter("disk-read", () => clock.advance(0.25));
    serve.digest("network", 4096, "bytes");
    clock.advance(0.5);
    serve.end("ok");
    // And one task of a computation: the task.computation.* metrics.
    journeys.transition("c-1", "released", "waiting", { computation: "graph-1" });
    clock.advance(1);
    journeys.transition("c-1", "waiting", "ready");
    journeys.transition("c-1", "ready", "executing");
    clock.advance(1);
    journeys.transition("c-1", "executing", "memory");
    const metrics = byName(await p.collect());
    return new Map(
      [...metrics].map(([name, metric]) => {
        const names = new Set<string>();
        for (const point of metric.dataPoints) for (const key of Object.keys(point.attributes)) names.add(key);
        return [name, { metric, attributes: [...names].sort() }];
      }),
    );
  } finally {
    await p.shutdown();
    await journeys.shutdown();
  }
}

describe("docs/metrics.md's metrics table", () => {
  const rows = table("| name | type | unit | attributes |");

  // taskjourney/sdk's own counter of failed exports is not the producer's (test/sdk/ checks it).
  const sdkOnly = rows.filter(([, , , attributes]) => attributes.includes("taskjourney/sdk only"));
  // The process stall metrics need a real GC and event loop (test/runtime/ and test/otel/ check them).
  const stallRows = rows.filter(([, , , attributes]) => attributes.includes("with `runtime.processStalls`"));
  const producerRows = rows.filter((row) => !sdkOnly.includes(row) && !stallRows.includes(row));

  it("names the process stall metrics of processStalls", () => {
    expect(stallRows.map(([name, , unit]) => [name, unit])).toEqual([
      [METRIC_GC_DURATION, "s"],
      [`${METRIC_EVENT_LOOP_DELAY_PREFIX}${DELAY_STATISTICS.join(" / ")}`, "s"],
    ]);
  });

  it("names taskjourney/sdk's export failures counter with its attributes", () => {
    expect(sdkOnly.map(([name, type, unit, attributes]) => [name, type, unit, attributeNames(attributes)])).toEqual([
      [METRIC_EXPORT_ERRORS, "counter", "{item}", [ATTR_ERROR_TYPE, ATTR_SIGNAL].sort()],
    ]);
  });

  it("names every exported metric once, with its kind, unit and attribute names", async () => {
    const plain = await exported(false);
    const byPrefix = await exported(true);
    expect(producerRows.map(([name]) => name).sort()).toEqual([...plain.keys()].sort());
    for (const [name, type, unit, attributes] of producerRows) {
      const { metric } = plain.get(name)!;
      expect(metric.dataPoints.length, `${name} has points after the worker's day`).toBeGreaterThan(0);
      expect(type.startsWith(kind(metric)), `${name} is a ${kind(metric)}: ${type}`).toBe(true);
      expect(unit, name).toBe(metric.descriptor.unit);
      // What executeTimeByPrefix adds is what the cell says it adds, and only there.
      const union = [...new Set([...plain.get(name)!.attributes, ...byPrefix.get(name)!.attributes])].sort();
      expect(attributeNames(attributes), name).toEqual(union);
      const varies = plain.get(name)!.attributes.join() !== byPrefix.get(name)!.attributes.join();
      expect(attributes.includes("with `metrics.executeTimeByPrefix`"), `${name}: ${attributes}`).toBe(varies);
    }
  }, 30_000);
});

describe("docs/metrics.md's table of attribute values", () => {
  const rows = new Map(table("| attribute | values |").map(([attribute, values]) => [attribute, values]));

  it("covers every attribute name of the metrics table", () => {
    const named = new Set(
      table("| name | type | unit | attributes |").flatMap(([, , , attributes]) => attributeNames(attributes)),
    );
    expect([...rows.keys()].sort()).toEqual([...named].sort());
  });

  it("lists each role's states, in the order of src/model/states.ts", () => {
    const cell = rows.get("task.state")!;
    const list = (role: string) => new RegExp(`${role}: ([a-z-]+(?:, [a-z-]+)*)`).exec(cell)?.[1].split(", ");
    expect(list("worker")).toEqual([...WORKER_STATES]);
    expect(list("scheduler")).toEqual([...SCHEDULER_STATES]);
  });

  it("lists the transfer outcomes", () => {
    expect(quoted(rows.get("transfer.outcome")!)).toEqual([...TRANSFER_OUTCOMES]);
  });

  it("names the activities taskjourney itself gives: other, dependencies, queued (<reason>) and the lumps", () => {
    const cell = rows.get("task.activity")!;
    const words = quoted(cell);
    expect(words).toContain(OTHER_ACTIVITY);
    expect(words).toContain(DEPENDENCIES_ACTIVITY);
    expect(words).toContain(`${QUEUED_ACTIVITY} (<reason>)`);
    const lumps = new Set(
      [...Object.values(EXECUTE_LUMP), ...Object.values(TRANSFER_LUMP)].filter((lump) => lump !== undefined),
    );
    // After "lumps", without the parenthesised notes (which name outcomes, not activities).
    const named = quoted(cell.slice(cell.indexOf("lumps")).replace(/\([^)]*\)/g, ""));
    expect(named.sort()).toEqual([...lumps].sort());
    // The examples before "or your own names" are activities of src/model/activities.ts.
    const known = new Set<string>([...EXECUTE_ACTIVITIES, ...GATHER_ACTIVITIES]);
    for (const example of quoted(cell.slice(0, cell.indexOf("your own names"))))
      expect(known.has(example), example).toBe(true);
  });

  it("names every activity the recorder gives itself, whatever the user meters (failed, queued and missing included)", () => {
    const cell = rows.get("task.activity")!;
    const standard = new Set<string>(
      [...EXECUTE_ACTIVITIES, ...GATHER_ACTIVITIES].filter((name) => name !== OTHER_ACTIVITY),
    );
    for (const name of new Set(SEED_ACTIVITIES.filter((name) => !standard.has(name)))) {
      expect(quoted(cell), `task.activity value ${name}`).toContain(name);
    }
  });

  it("sends the reasons to the drop-reasons page", () => {
    expect(rows.get("reason")).toContain("(bad-input.md)");
  });
});
