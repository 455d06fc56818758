/**
 * Trace files no exporter writes, as an attacker or a broken pipeline would: reused span ids,
 * cycles, self-parents, absurd nesting, `__proto__` attributes, terminal escapes. Reading them
 * must end promptly with a message naming the problem, or give the right answer.
 */
import { describe, expect, it } from "vitest";
import { breakdownFromSpans, MAX_SPAN_DEPTH, SpanIndex } from "../../src/report/from-trace.js";
import { decodeOtlpJson, OtlpJsonError } from "../../src/report/otlp-json.js";
import { formatBreakdown } from "../../src/report/format.js";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SECOND = 1_000_000_000n;

interface RawSpan {
  id: string;
  parent?: string;
  name: string;
  start?: bigint;
  end?: bigint;
  attributes?: unknown[];
}

function id(n: number): string {
  return n.toString(16).padStart(16, "0");
}

function str(key: string, value: string) {
  return { key, value: { stringValue: value } };
}

/** One OTLP/JSON request line holding `spans`, all of scope taskjourney. */
function request(spans: readonly RawSpan[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [str("service.instance.id", "w1")] },
        scopeSpans: [
          {
            scope: { name: "taskjourney" },
            spans: spans.map((span) => ({
              traceId: TRACE,
              spanId: span.id,
              parentSpanId: span.parent ?? "",
              name: span.name,
              kind: 1,
              startTimeUnixNano: String(span.start ?? 0n),
              endTimeUnixNano: String(span.end ?? SECOND),
              attributes: span.attributes ?? [],
            })),
          },
        ],
      },
    ],
  });
}

const task = (attributes: unknown[] = [str("task.key", "x-1")]): RawSpan => ({
  id: id(1),
  name: "task x",
  end: 3n * SECOND,
  attributes,
});

describe("crafted trace files", () => {
  it("span ids reused at every level (exponential before): refused, naming the id", () => {
    // 40 levels of two spans sharing one id each: each level doubled the work of reading the tree.
    const spans: RawSpan[] = [task(), { id: id(2), parent: id(1), name: "executing", start: SECOND, end: 3n * SECOND }];
    for (let level = 0; level < 40; level++) {
      const parent = level === 0 ? id(2) : id(100 + level - 1);
      spans.push({ id: id(100 + level), parent, name: "deserialize", start: SECOND, end: 2n * SECOND });
      spans.push({ id: id(100 + level), parent, name: "deserialize", start: SECOND, end: 2n * SECOND });
    }
    const decoded = decodeOtlpJson(request(spans));
    expect(() => new SpanIndex(decoded)).toThrow(OtlpJsonError);
    expect(() => new SpanIndex(decoded)).toThrow(
      `span id ${id(100)} appears twice in trace ${TRACE} (spans "deserialize" and "deserialize")`,
    );
  });

  it("a span that is its own parent, and a longer cycle: refused, not a stack overflow", () => {
    const self = decodeOtlpJson(request([task(), { id: id(2), parent: id(2), name: "executing" }]));
    expect(() => new SpanIndex(self)).toThrow(`span ${id(2)} ("executing") of trace ${TRACE} is its own parent`);
    const cycle = decodeOtlpJson(
      request([
        { ...task(), parent: id(3) },
        { id: id(2), parent: id(1), name: "executing" },
        { id: id(3), parent: id(2), name: "deserialize" },
      ]),
    );
    expect(() => new SpanIndex(cycle)).toThrow(
      /spans of trace 0af7651916cd43dd8448eb211c80319c form a cycle: span 0{15}[123] \("[a-z x]+"\) is its own ancestor/,
    );
  });

  it(`nesting deeper than ${MAX_SPAN_DEPTH} levels is refused; ${MAX_SPAN_DEPTH} levels are read`, () => {
    const chain = (levels: number) => {
      const spans: RawSpan[] = [
        task(),
        { id: id(2), parent: id(1), name: "executing", start: SECOND, end: 3n * SECOND },
      ];
      for (let level = 3; level <= levels; level++)
        spans.push({ id: id(level), parent: id(level - 1), name: "nested", start: SECOND, end: 2n * SECOND });
      return decodeOtlpJson(request(spans));
    };
    const deepest = breakdownFromSpans(new SpanIndex(chain(MAX_SPAN_DEPTH)), "x-1")!;
    let node = deepest.children[0];
    let depth = 2;
    while (node.children.length > 0 && node.children[0].name === "nested") {
      node = node.children[0];
      depth++;
    }
    expect(depth).toBe(MAX_SPAN_DEPTH);
    expect(() => new SpanIndex(chain(MAX_SPAN_DEPTH + 1))).toThrow(`is nested more than ${MAX_SPAN_DEPTH} levels deep`);
  });

  it("a __proto__ attribute cannot fake a task.key", () => {
    const proto = { key: "__proto__", value: { kvlistValue: { values: [str("task.key", "evil-1")] } } };
    const spans = decodeOtlpJson(request([task([proto]), { id: id(2), parent: id(1), name: "executing" }]));
    expect(Object.getPrototypeOf(spans[0].attributes)).toBe(null);
    expect(spans[0].attributes["task.key"]).toBeUndefined();
    const index = new SpanIndex(spans);
    expect(index.tasks).toEqual([]);
    expect(breakdownFromSpans(index, "evil-1")).toBeUndefined();
  });

  it("terminal escapes and bidi overrides in names come out as visible escapes", () => {
    const key = "x-\u001b]0;pwned\u0007\u001b[2J\u202e1";
    const spans = decodeOtlpJson(
      request([
        task([str("task.key", key)]),
        { id: id(2), parent: id(1), name: "executing", start: SECOND, end: 3n * SECOND },
        { id: id(3), parent: id(2), name: "read\u009b31m", start: SECOND, end: 2n * SECOND },
      ]),
    );
    const text = formatBreakdown(breakdownFromSpans(spans, key)!);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(text.split("\n")[0]).toBe("x-\\x1b]0;pwned\\x07\\x1b[2J\\u202e1 spent 3.0 s on worker w1 (not ended)");
    expect(text).toContain("read\\x9b31m");
  });

  it("deeply nested attribute values read as null past 32 levels instead of overflowing the stack", () => {
    // Written as text: JSON.stringify itself cannot go this deep.
    const levels = 100_000;
    const value = `${'{"arrayValue":{"values":['.repeat(levels)}{"stringValue":"leaf"}${"]}}".repeat(levels)}`;
    const line = request([task([str("task.key", "x-1"), { key: "deep", value: "DEEP" }])]).replace('"DEEP"', value);
    const spans = decodeOtlpJson(line);
    let read = spans[0].attributes.deep;
    let depth = 0;
    while (Array.isArray(read)) {
      read = read[0];
      depth++;
    }
    expect(depth).toBe(33);
    expect(read).toBeNull();
  });
});
