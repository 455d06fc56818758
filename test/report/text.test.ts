import { describe, expect, it } from "vitest";
import type { ReportData } from "../../src/report/html.js";
import { formatReportTables } from "../../src/report/text.js";
import type { PrefixRow } from "../../src/report/table.js";

const row = (prefix: string, count: number, stateSeconds: Record<string, number>): PrefixRow => ({
  prefix,
  count,
  p50: 0.5,
  p90: 1,
  p99: 2,
  stateSeconds,
});

const base: ReportData = {
  title: "t",
  generatedAt: "2026-12-04T00:00:00Z",
  prefixes: [],
  execute: {},
  gather: {},
  wait: {},
};

const header = (table: string) => table.split("\n")[1].trim().split(/\s+/);

describe("formatReportTables", () => {
  it("a scheduler-only run prints the scheduler's table, quantiles of its measured state, columns in the machine's order", () => {
    const text = formatReportTables({
      ...base,
      schedulerPrefixes: [row("job", 3, { running: 3, pending: 1.5, "waiting-children": 0.25 })],
      schedulerDurationOf: "running",
      schedulerStates: ["waiting-children", "pending", "running"],
    });
    const lines = text.split("\n");
    // A machine of its own: its scheduler's journeys are its tasks, in task-seconds.
    expect(lines[0]).toBe("Tasks (the scheduling process's journeys, one a task, retries included)");
    expect(lines[1].trim()).toMatch(/^running duration\s+task-seconds by state$/);
    expect(header(text.slice(text.indexOf("\n") + 1))).toEqual([
      "prefix",
      "visits",
      "p50",
      "p90",
      "p99",
      "waiting-children",
      "pending",
      "running",
    ]);
    expect(lines[4].split(/\s{2,}/)).toEqual(["job", "3", "500.0 ms", "1.0 s", "2.0 s", "250.0 ms", "1.5 s", "3.0 s"]);
    expect(text).not.toContain("executing duration");
  });

  it("workers' and scheduler's tables, the breakdowns that hold time, wait summed over prefixes, and the failures", () => {
    const text = formatReportTables({
      ...base,
      prefixes: [row("inc", 2, { executing: 6, waiting: 2 })],
      schedulerPrefixes: [row("inc", 2, { processing: 7 })],
      execute: { "thread-cpu": 4, other: 2 },
      gather: {},
      wait: { inc: { network: 1, deserialize: 0.5 }, sum: { network: 2 } },
      failureCounts: { "worker:error": 1, "scheduler:erred": 0 },
    });
    const sections = text.split("\n\n");
    expect(sections).toHaveLength(6);
    expect(header(sections[0])).toEqual(["prefix", "visits", "p50", "p90", "p99", "waiting", "executing"]);
    expect(sections[0]).toContain(
      "visits and quantiles: the visits to executing (a task retried visits it once per attempt)",
    );
    expect(sections[1].split("\n")[1].trim()).toMatch(/^processing duration/);
    expect(sections[2].split("\n")[0].trim().split(/\s+/)).toEqual(["execute", "seconds", "share"]);
    // No gather table: nothing was gathered.
    expect(sections[3].split("\n").map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ["wait (dependencies)", "seconds", "share"],
      ["network", "3.0 s", "85.7%"],
      ["deserialize", "500.0 ms", "14.3%"],
      ["total", "3.5 s", "100.0%"],
    ]);
    expect(sections[4]).toBe("left out, as nothing applies: gather (no transfer between workers)");
    expect(sections[5]).toBe("failed: 1 ended in error on workers");
  });

  it("no data prints the workers' empty table; something not a ReportData is a TypeError", () => {
    expect(formatReportTables(base).split("\n")[1].trim().split(/\s+/)).toEqual([
      "prefix",
      "visits",
      "p50",
      "p90",
      "p99",
    ]);
    expect(() => formatReportTables(undefined as unknown as ReportData)).toThrow(
      /^formatReportTables\(data\): data must be a ReportData/,
    );
    expect(() => formatReportTables({ prefixes: {} } as unknown as ReportData)).toThrow(TypeError);
  });
});
