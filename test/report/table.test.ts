import { describe, expect, it } from "vitest";
import { formatActivityTable, formatPrefixTable, type PrefixRow } from "../../src/report/table.js";
import { InvalidArgumentError } from "../../src/shared/errors.js";

const rows: PrefixRow[] = [
  {
    prefix: "square",
    count: 858,
    p50: 0.0041,
    p90: 0.006,
    p99: 0.0099,
    stateSeconds: { executing: 3.6, waiting: 1.2, ready: 0.8 },
  },
  {
    prefix: "sum",
    count: 286,
    p50: 0.0087,
    p90: 0.0514,
    p99: 0.1455,
    stateSeconds: { waiting: 7.3, fetch: 1, flight: 3.3, ready: 0.69, executing: 5.8 },
  },
];

/** The column start offsets of each cell in a laid-out line (cells are separated by 2+ spaces). */
function cellEnds(line: string): number[] {
  const ends: number[] = [];
  for (const match of line.matchAll(/\S+(?: \S+)*/g)) ends.push(match.index! + match[0].length);
  return ends;
}

describe("formatPrefixTable", () => {
  it("prints one row per prefix, quantiles and state times in lifecycle order, and a total row", () => {
    const text = formatPrefixTable(rows);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^\s+executing duration\s+time by state$/);
    expect(lines[1].split(/\s+/)).toEqual([
      "prefix",
      "visits",
      "p50",
      "p90",
      "p99",
      "waiting",
      "fetch",
      "flight",
      "ready",
      "executing",
    ]);
    expect(lines[2]).toMatch(/^─+( {2}─+)+$/);
    expect(lines[3].split(/\s{2,}/)).toEqual([
      "square",
      "858",
      "4.1 ms",
      "6.0 ms",
      "9.9 ms",
      "1.2 s",
      "0 s",
      "0 s",
      "800.0 ms",
      "3.6 s",
    ]);
    expect(lines[4].split(/\s{2,}/)).toEqual([
      "sum",
      "286",
      "8.7 ms",
      "51.4 ms",
      "145.5 ms",
      "7.3 s",
      "1.0 s",
      "3.3 s",
      "690.0 ms",
      "5.8 s",
    ]);
    expect(lines[5]).toMatch(/^─+( {2}─+)+$/);
    expect(lines[6].split(/\s{2,}/)).toEqual(["total", "1144", "8.5 s", "1.0 s", "3.3 s", "1.5 s", "9.4 s"]);
    expect(lines).toHaveLength(7);
  });

  it("right-aligns every numeric column and left-aligns the prefix", () => {
    const lines = formatPrefixTable(rows).split("\n");
    const header = cellEnds(lines[1]);
    for (const index of [3, 4]) {
      const ends = cellEnds(lines[index]);
      // Numeric cells end where their header ends; the prefix starts at column 0.
      expect(ends.slice(1)).toEqual(header.slice(1));
      expect(lines[index].startsWith(rows[index - 3].prefix)).toBe(true);
    }
  });

  it("puts the group titles over the quantile and state columns", () => {
    const lines = formatPrefixTable(rows).split("\n");
    expect(lines[0].indexOf("executing duration")).toBe(lines[1].indexOf("visits") + "visits".length + 2);
    expect(lines[0].indexOf("time by state")).toBeGreaterThanOrEqual(lines[1].indexOf("p99") + 3);
    expect(lines[0].indexOf("time by state")).toBeLessThanOrEqual(lines[1].indexOf("waiting"));
  });

  it("takes the state columns and the measured state from options, and can leave out the total", () => {
    const text = formatPrefixTable(rows, { states: ["executing", "queued"], durationOf: "processing", total: false });
    const lines = text.split("\n");
    expect(lines[0]).toContain("processing duration");
    expect(lines[1].split(/\s+/)).toEqual(["prefix", "visits", "p50", "p90", "p99", "executing", "queued"]);
    expect(lines[3].split(/\s{2,}/)).toEqual(["square", "858", "4.1 ms", "6.0 ms", "9.9 ms", "3.6 s", "0 s"]);
    expect(lines).toHaveLength(5);
  });

  it("shows unknown quantiles as '-', orders unknown states after known ones, and skips states with no time", () => {
    const text = formatPrefixTable([
      { prefix: "x", count: 0, p50: NaN, p90: NaN, p99: NaN, stateSeconds: { "my-state": 1, memory: 0, waiting: 2 } },
    ]);
    const lines = text.split("\n");
    expect(lines[1].split(/\s+/)).toEqual(["prefix", "visits", "p50", "p90", "p99", "waiting", "my-state"]);
    expect(lines[3].split(/\s{2,}/)).toEqual(["x", "0", "-", "-", "-", "2.0 s", "1.0 s"]);
  });

  it("prints just the header for no rows", () => {
    const lines = formatPrefixTable([]).split("\n");
    expect(lines[1].split(/\s+/)).toEqual(["prefix", "visits", "p50", "p90", "p99"]);
    expect(lines).toHaveLength(3);
  });
});

describe("formatActivityTable", () => {
  it("lists activities largest first with their share, other last, then the total", () => {
    const text = formatActivityTable("execute", {
      other: 0.5,
      "thread-cpu": 4,
      "disk-read": 0.25,
      "thread-noncpu": 1.25,
      nothing: 0,
    });
    expect(text.split("\n").map((line) => line.split(/\s{2,}/))).toEqual([
      ["execute", "seconds", "share"],
      ["", "thread-cpu", "4.0 s", "66.7%"],
      ["", "thread-noncpu", "1.3 s", "20.8%"],
      ["", "disk-read", "250.0 ms", "4.2%"],
      ["", "other", "500.0 ms", "8.3%"],
      ["", "total", "6.0 s", "100.0%"],
    ]);
  });

  it("aligns the numbers and indents the activities", () => {
    const lines = formatActivityTable("gather", { network: 2, connect: 0.001 }, { indent: 4 }).split("\n");
    expect(lines[1].startsWith("    network")).toBe(true);
    expect(cellEnds(lines[1]).slice(1)).toEqual(cellEnds(lines[0]).slice(1));
    expect(cellEnds(lines[2]).slice(1)).toEqual(cellEnds(lines[0]).slice(1));
  });

  it("says so when nothing was recorded, and can leave out the total", () => {
    expect(formatActivityTable("wait", {}).split("\n")).toEqual([
      `${"wait".padEnd("  (nothing recorded)".length)}  seconds  share`,
      "  (nothing recorded)",
    ]);
    expect(formatActivityTable("wait", { network: 1 }, { total: false }).split("\n")).toHaveLength(2);
  });
});

describe("the tables given the wrong thing", () => {
  it("throw an InvalidArgumentError (a TypeError) that says what they take (a user passed a whole ReportData)", () => {
    const data = { prefixes: [], execute: {} };
    expect(() => formatPrefixTable(data as never)).toThrow(
      new InvalidArgumentError(
        "formatPrefixTable(rows): rows must be an array of prefix rows, such as a ReportData's `prefixes`, not an object",
      ),
    );
    expect(() => formatPrefixTable(data as never)).toThrow(TypeError);
    expect(() => formatActivityTable(data.execute as never, {})).toThrow(
      "formatActivityTable(title, seconds): title must be a string, not an object",
    );
    expect(() => formatActivityTable("execute", [] as never)).toThrow(
      "formatActivityTable(title, seconds): seconds must be an object of seconds by activity, such as a ReportData's `execute`, not an array",
    );
  });
});
