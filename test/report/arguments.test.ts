import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as report from "../../src/report.js";
import { formatBreakdown, formatBytes, formatSeconds } from "../../src/index.js";

/**
 * The report toolkit's public helpers given hostile arguments, the data and the options alike:
 * each throws what it means (an OtlpJsonError naming a file, a TypeError naming the call or
 * field, a RangeError naming a limit) and never an internal error, a Proxy's own error or a
 * stack overflow.
 */

function throwing(): never {
  throw new Error("hostile");
}

const trap = new Proxy([], {
  get: throwing,
  has: throwing,
  ownKeys: throwing,
  getPrototypeOf: throwing,
  getOwnPropertyDescriptor: throwing,
});
const revoked = (() => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
})();
let deepArray: unknown[] = [];
for (let depth = 0; depth < 100_000; depth++) deepArray = [deepArray];
let deepTree: Record<string, unknown> = { name: "a", seconds: 1, children: [] };
for (let depth = 0; depth < 100_000; depth++) deepTree = { name: "a", seconds: 1, children: [deepTree] };

const HOSTILE: Record<string, unknown> = {
  undefined: undefined,
  null: null,
  bigint: 10n,
  symbol: Symbol("s"),
  trap,
  revoked,
  deepArray,
  deepTree,
  nullPrototype: Object.create(null),
  throwingConversions: { toString: throwing, valueOf: throwing },
  NaN: Number.NaN,
  string: "x",
  function: () => 1,
  arrayOfTrap: [trap],
  throwingGetter: Object.defineProperty({}, "children", { get: throwing, enumerable: true }),
};

const node = (child: unknown) =>
  ({ key: "k", prefix: "k", instance: "", seconds: 1, kind: "compute", children: [child] }) as never;

/** A task span of key "k" (its beginning, as a long key's is cut: the comparison reads the key asked for), as decodeOtlpJson() gives it. */
const [SPAN] = report.decodeOtlpJson(
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: "0".repeat(31) + "1",
                spanId: "0".repeat(15) + "1",
                name: "task k",
                startTimeUnixNano: "0",
                endTimeUnixNano: "1000000000",
                attributes: [
                  { key: "task.key", value: { stringValue: "k" } },
                  { key: "taskjourney.key_length", value: { intValue: "3" } },
                ],
              },
            ],
          },
        ],
      },
    ],
  }),
);
const DATA = report.reportDataFrom({
  prefixes: [{ prefix: "k", count: 1, p50: 1, p90: 1, p99: 1, stateSeconds: { executing: 1 } }],
});

/** A small JSON file that is there: the options are read before or while reading it. */
const A_FILE = fileURLToPath(new URL("../../package.json", import.meta.url));

const CALLS: Record<string, (value: never) => unknown> = {
  decodeOtlpJson: (value) => report.decodeOtlpJson(value),
  "new SpanIndex": (value) => new report.SpanIndex(value),
  "new SpanIndex([value])": (value) => new report.SpanIndex([value]),
  breakdownFromSpans: (value) => report.breakdownFromSpans(value, "k"),
  breakdownsFromSpans: (value) => report.breakdownsFromSpans(value, "k"),
  reportDataFrom: (value) => report.reportDataFrom(value),
  "reportDataFrom prefixes": (value) => report.reportDataFrom({ prefixes: value }),
  "reportDataFrom slowest": (value) => report.reportDataFrom({ prefixes: [], slowest: [node(value)] }),
  renderHtmlReport: (value) => report.renderHtmlReport(value),
  reportDataFromTelemetry: (value) => report.reportDataFromTelemetry(value),
  readTelemetryFiles: (value) => report.readTelemetryFiles(value),
  readOtlpJsonFile: (value) => report.readOtlpJsonFile(value),
  formatPrefixTable: (value) => report.formatPrefixTable(value),
  "formatPrefixTable rows": (value) => report.formatPrefixTable([value]),
  formatActivityTable: (value) => report.formatActivityTable("t", value),
  formatReportTables: (value) => report.formatReportTables(value),
  formatBreakdown: (value) => formatBreakdown(value),
  "formatBreakdown children": (value) => formatBreakdown(node(value)),
  formatSeconds: (value) => formatSeconds(value),
  formatBytes: (value) => formatBytes(value),
  // The second and third arguments: options, a key, a name for messages, a title.
  "breakdownFromSpans key": (value) => report.breakdownFromSpans([SPAN] as never, value),
  "breakdownsFromSpans key": (value) => report.breakdownsFromSpans([SPAN] as never, value),
  "breakdownFromSpans options": (value) => report.breakdownFromSpans([SPAN] as never, "k", value),
  "decodeOtlpJson source": (value) => report.decodeOtlpJson("{", value),
  "readOtlpJsonFile options": (value) => report.readOtlpJsonFile(A_FILE, value),
  "readTelemetryFiles options": (value) => report.readTelemetryFiles([A_FILE], value),
  "reportDataFromTelemetry options": (value) =>
    report.reportDataFromTelemetry({ spans: [SPAN], metrics: [], summaries: [], files: ["f"] } as never, value),
  "renderHtmlReport options": (value) => report.renderHtmlReport(DATA, value),
  "formatPrefixTable options": (value) => report.formatPrefixTable(DATA.prefixes, value),
  "formatActivityTable title": (value) => report.formatActivityTable(value, { a: 1 }),
  "formatActivityTable options": (value) => report.formatActivityTable("t", { a: 1 }, value),
  "formatBreakdown options": (value) => formatBreakdown(node({ name: "a", seconds: 1, children: [] }), value),
};

/** The errors the toolkit means (see src/report/arguments.ts). */
const MEANT = [
  report.OtlpJsonError,
  report.InvalidDataError,
  report.InvalidArgumentError,
  report.UnknownStateError,
  report.OutOfRangeError,
];

/** What an error the toolkit did not mean looks like. */
const INTERNAL =
  /Cannot read properties|is not a function|is not iterable|call stack|Cannot convert|on a proxy|^hostile$/;

describe("report helpers given hostile arguments", () => {
  for (const [call, run] of Object.entries(CALLS)) {
    it(`${call}: only the errors it means`, () => {
      for (const [name, value] of Object.entries(HOSTILE)) {
        let thrown: unknown;
        try {
          run(value as never);
          continue;
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${call}(${name})`).toBeInstanceOf(Error);
        const error = thrown as Error;
        // One of the toolkit's errors, with its stable code (docs/api.md's table), never a bare built-in.
        expect(
          MEANT.some((type) => error instanceof type),
          `${call}(${name}): ${error.name}: ${error.message}`,
        ).toBe(true);
        expect((error as { code?: unknown }).code, `${call}(${name})`).toMatch(/^TJ_[A-Z_]+$/);
        expect(error.message, `${call}(${name})`).not.toMatch(INTERNAL);
      }
    });
  }
});

describe("what the errors say", () => {
  const message = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("did not throw");
  };

  it("names the call, the argument, what it must be and what it got", () => {
    expect(message(() => formatBreakdown(node(deepTree)))).toBe(
      "formatBreakdown(breakdown, options): breakdown must be a Breakdown, as explain() gives, got an object nested too deep to read",
    );
    expect(message(() => report.decodeOtlpJson(undefined as never))).toBe(
      "decodeOtlpJson(text, source): text must be a string of OTLP/JSON, got undefined",
    );
    expect(message(() => report.reportDataFromTelemetry(revoked as never))).toBe(
      "reportDataFromTelemetry(telemetry, options): telemetry must be { spans, metrics, summaries, files }, as readTelemetryFiles() gives, got an object that could not be read",
    );
  });

  it("names the options too when they were given something that could be at fault", () => {
    const breakdown = node({ name: "a", seconds: 1, children: [] });
    expect(message(() => formatBreakdown(breakdown, null as never))).toBe(
      "formatBreakdown(breakdown, options): breakdown must be a Breakdown, as explain() gives, got an object that could not be read, or options must be { roles?: boolean }, got null",
    );
    expect(message(() => report.formatActivityTable("t", { a: 1 }, { indent: -1 }))).toBe(
      "formatActivityTable(title, seconds, options): seconds must be an object of seconds by activity, such as a ReportData's `execute`, got an object that could not be read, or options must be { indent?: number, total?: boolean }, got an object that could not be read",
    );
  });

  it("keeps the original as the cause, and passes the errors it means through as they are", () => {
    let thrown: unknown;
    try {
      report.formatPrefixTable([undefined as never]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).cause).toBeInstanceOf(TypeError);
    expect(((thrown as Error).cause as Error).message).toMatch(/Cannot read properties of undefined/);
    expect(message(() => report.formatPrefixTable("x" as never))).toBe(
      "formatPrefixTable(rows): rows must be an array of prefix rows, such as a ReportData's `prefixes`, not string",
    );
    expect(message(() => report.reportDataFrom({ prefixes: [{}] }))).toBe("prefixes[0] must have a string prefix");
    expect(() => report.readTelemetryFiles([])).toThrow(expect.objectContaining({ name: "OtlpJsonError" }));
  });
});
