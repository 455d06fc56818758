import { describe, expect, it } from "vitest";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { internalsOf } from "../../../src/internal.js";
import { StallRing, STALL_KINDS } from "../../../src/model/stalls.js";
import { breakdownFromSpans } from "../../../src/report/from-trace.js";
import { decodeOtlpJson } from "../../../src/report/otlp-json.js";
import { formatBreakdown } from "../../../src/report/format.js";
import { find, harness } from "./helpers.js";

const MAJOR = STALL_KINDS.indexOf("major");
const MINOR = STALL_KINDS.indexOf("minor");
const EVENT_LOOP = STALL_KINDS.indexOf("event-loop");

/**
 * Process stalls placed in a task's states at read time: explain(), the state span's
 * task.stall.* attributes and the breakdown rebuilt from the exported trace agree, to the
 * microsecond, on a fake clock with stall records injected where the watcher would put them.
 */
describe("process stalls in a task's breakdown", () => {
  function run() {
    const h = harness();
    const { journeys, clock } = h;
    const ring = new StallRing(16);
    internalsOf(journeys)!.recorder.stalls = ring;
    // Where the watcher would have put them, observed before the journey ends: an 18 ms major GC
    // and a 1 ms scavenge while executing, a 5 ms blocked loop while ready, a 2 ms scavenge while
    // waiting, and a GC before the journey, which it does not touch.
    ring.push(MAJOR, 100.615, 100.633);
    ring.push(MINOR, 100.634, 100.635);
    ring.push(EVENT_LOOP, 100.52, 100.525);
    ring.push(MAJOR, 99, 99.5);
    ring.push(MINOR, 100.2, 100.202);
    journeys.transition("inc-1", "released", "waiting"); // 100
    clock.set(100.5);
    journeys.transition("inc-1", "waiting", "ready");
    clock.set(100.6);
    journeys.transition("inc-1", "ready", "executing");
    const ledger = journeys.execute("inc-1");
    ledger.meter("deserialize", () => clock.advance(0.01)); // 100.6 - 100.61
    ledger.digest("thread-cpu", 0.002); // claimed, not covering the whole visit
    clock.set(100.64);
    ledger.end("memory");
    return h;
  }

  it("shows the GC pause under the state it overlapped, as a split of `other` that keeps its seconds", () => {
    const { journeys } = run();
    const breakdown = journeys.explain("inc-1")!;
    const executing = breakdown.children.find((node) => node.name === "executing")!;
    expect(executing.seconds).toBeCloseTo(0.04, 9);
    const rounded = (nodes: typeof breakdown.children) =>
      nodes.map((node) => [node.name, Number(node.seconds.toFixed(9))]);
    // 40 ms = deserialize 10 + thread-cpu 2 + other 28, as task.execute.time adds it; the 28 ms
    // no activity claimed hold the 19 ms of GC.
    expect(rounded(executing.children)).toEqual([
      ["deserialize", 0.01],
      ["thread-cpu", 0.002],
      ["other", 0.028],
    ]);
    const other = executing.children[2];
    expect(rounded(other.children)).toEqual([
      ["gc", 0.019],
      ["other", 0.009],
    ]);
    expect(rounded(other.children[0].children)).toEqual([
      ["major", 0.018],
      ["minor", 0.001],
    ]);
    const ready = breakdown.children.find((node) => node.name === "ready")!;
    expect(rounded(ready.children)).toEqual([["other", 0.1]]);
    expect(rounded(ready.children[0].children)).toEqual([
      ["event-loop", 0.005],
      ["other", 0.095],
    ]);
    // The waiting of a compute journey is its dependencies' (task.wait.time): the 2 ms GC in it is
    // not placed there.
    expect(rounded(breakdown.children.find((node) => node.name === "waiting")!.children)).toEqual([
      ["dependencies", 0.5],
    ]);
    expect(formatBreakdown(breakdown)).toMatch(/major\s+18(\.0)? ?ms/);
  });

  it("puts the overlap on the state span, from which the trace rebuilds the same breakdown", () => {
    const { journeys, exporter } = run();
    const spans = exporter.getFinishedSpans();
    const executing = find(spans, (span) => span.name === "executing");
    expect(executing.attributes["task.stall.gc.major"]).toBeCloseTo(0.018, 9);
    expect(executing.attributes["task.stall.gc.minor"]).toBeCloseTo(0.001, 9);
    expect(executing.attributes["task.stall.event-loop"]).toBeUndefined();
    expect(find(spans, (span) => span.name === "ready").attributes["task.stall.event-loop"]).toBeCloseTo(0.005, 9);
    // The waiting span holds its overlap too, though the breakdown does not place it.
    expect(find(spans, (span) => span.name === "waiting").attributes["task.stall.gc.minor"]).toBeCloseTo(0.002, 9);
    const decoded = decodeOtlpJson(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)), "stalls");
    const rebuilt = breakdownFromSpans(decoded, "inc-1")!;
    const explained = journeys.explain("inc-1")!;
    expect(formatBreakdown(rebuilt)).toBe(formatBreakdown(explained));
    const names = (nodes: typeof explained.children): unknown[] =>
      nodes.map((node) => [node.name, names(node.children)]);
    expect(names(rebuilt.children)).toEqual(names(explained.children));
  });
});
