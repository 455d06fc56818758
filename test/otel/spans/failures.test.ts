import { describe, expect, it } from "vitest";
import { SpanStatusCode } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { formatBreakdown, instrument } from "../../../src/index.js";
import { breakdownFromSpans } from "../../../src/report/from-trace.js";
import { decodeOtlpJson } from "../../../src/report/otlp-json.js";
import { MAX_FAILURE_MESSAGE } from "../../../src/recorder/failure-detail.js";
import { childOf, find, harness } from "./helpers.js";

/** The spans as `taskjourney explain --from` reads them: through OTLP/JSON. */
function decoded(spans: ReadableSpan[]) {
  return decodeOtlpJson(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
}

class Worker {
  constructor(private readonly clock: { advance(seconds: number): number }) {}
  execute(key: string): void {
    this.clock.advance(1);
    if (key.startsWith("bad")) throw new TypeError(`no such file: ${key}.parquet`);
  }
  async gatherDep(_peer: string, keys: string[]): Promise<void> {
    this.clock.advance(0.5);
    await Promise.resolve();
    if (keys[0].startsWith("lost")) throw new Error("connection reset by peer");
  }
}

describe("failures with their reason", () => {
  it("a throwing execute method: ERROR status and exception event on its spans, the reason in explain(), the text tree and the trace rebuild", () => {
    const { clock, exporter, journeys } = harness();
    const worker = new Worker(clock);
    instrument(worker, journeys, {
      execute: { method: "execute", key: (key) => key },
    });
    journeys.transition("bad-1", "released", "waiting");
    journeys.transition("bad-1", "waiting", "ready");
    expect(() => worker.execute("bad-1")).toThrow("no such file: bad-1.parquet");

    const spans = exporter.getFinishedSpans();
    const task = find(spans, (span) => span.name === "task bad");
    expect(task.status).toEqual({ code: SpanStatusCode.ERROR, message: "no such file: bad-1.parquet" });
    const executing = childOf(spans, task, "executing");
    expect(executing.status).toEqual({ code: SpanStatusCode.ERROR, message: "no such file: bad-1.parquet" });
    expect(executing.attributes["task.outcome"]).toBe("error");
    expect(executing.attributes["task.error"]).toBe("TypeError: no such file: bad-1.parquet");
    const [event] = executing.events;
    expect(event.name).toBe("exception");
    expect(event.attributes?.["exception.type"]).toBe("TypeError");
    expect(event.attributes?.["exception.message"]).toBe("no such file: bad-1.parquet");
    expect(String(event.attributes?.["exception.stacktrace"])).toContain("Worker.execute");

    const explained = journeys.explain("bad-1")!;
    expect(explained.outcome).toBe("error");
    const node = explained.children.find((child) => child.name === "executing")!;
    expect([node.outcome, node.error]).toEqual(["error", "TypeError: no such file: bad-1.parquet"]);
    const text = formatBreakdown(explained);
    expect(text.split("\n")[0]).toContain("(ended in error)");
    expect(text).toMatch(/└─ executing +1\.0 s {2}error: TypeError: no such file: bad-1\.parquet$/m);

    const rebuilt = breakdownFromSpans(decoded(spans), "bad-1")!;
    expect(rebuilt.children.find((child) => child.name === "executing")).toMatchObject({
      outcome: "error",
      error: "TypeError: no such file: bad-1.parquet",
    });
    expect(formatBreakdown(rebuilt)).toBe(text);
  });

  it("a rejecting gather method: the gather_dep and the flight visit say why the transfer failed", async () => {
    const { clock, exporter, journeys } = harness();
    const worker = new Worker(clock);
    instrument(worker, journeys, {
      gather: { method: "gatherDep", peer: (peer) => peer, keys: (_peer, keys) => keys },
    });
    journeys.transition("lost-1", "released", "fetch");
    await expect(worker.gatherDep("tcp://10.0.0.8:40001", ["lost-1"])).rejects.toThrow("connection reset by peer");
    journeys.transition("lost-1", "fetch", "released");

    const spans = exporter.getFinishedSpans();
    const gather = find(spans, (span) => span.name === "gather_dep");
    expect(gather.status).toEqual({ code: SpanStatusCode.ERROR, message: "connection reset by peer" });
    expect(
      gather.events.map((event) => [
        event.name,
        event.attributes?.["exception.type"],
        event.attributes?.["exception.message"],
      ]),
    ).toEqual([["exception", "Error", "connection reset by peer"]]);
    const flight = find(spans, (span) => span.name === "flight");
    expect(flight.attributes["task.outcome"]).toBe("failed");
    expect(flight.attributes["task.error"]).toBe("Error: connection reset by peer");

    const node = journeys.explain("lost-1")!.children.find((child) => child.name === "flight")!;
    expect([node.outcome, node.error]).toEqual(["failed", "Error: connection reset by peer"]);
    const rebuilt = breakdownFromSpans(decoded(spans), "lost-1")!;
    expect(rebuilt.children.find((child) => child.name === "flight")).toMatchObject({
      outcome: "failed",
      error: "Error: connection reset by peer",
    });
  });

  it("ledger end(outcome, error): a busy transfer is marked without a reason; a huge or hostile error is capped, never thrown", () => {
    const { clock, journeys } = harness();
    journeys.transition("d-1", "released", "fetch");
    const busy = journeys.gather("tcp://peer", ["d-1"]);
    clock.advance(1);
    busy.end("busy");
    const flight = journeys.explain("d-1")!.children.find((child) => child.name === "flight")!;
    expect([flight.outcome, flight.error]).toEqual(["busy", undefined]);

    const ledger = journeys.execute("e-1");
    const hostile = new Proxy(new Error("x"), {
      get: () => {
        throw new Error("trap");
      },
    });
    expect(() => ledger.end("error", hostile)).not.toThrow();
    const long = journeys.execute("e-2");
    long.end("error", new RangeError("m".repeat(100_000)));
    const error = journeys.explain("e-2")!.children.find((child) => child.name === "executing")!.error!;
    expect(error.length).toBe("RangeError: ".length + MAX_FAILURE_MESSAGE);
    expect(error.endsWith("…")).toBe(true);
  });

  it("a job rejected with a plain object: its span says what the object held, not just 'Object'", () => {
    const { clock, exporter, journeys } = harness();
    journeys.transition("job-1", "released", "waiting");
    journeys.transition("job-1", "waiting", "ready");
    const ledger = journeys.execute("job-1");
    clock.advance(1);
    ledger.end("error", { code: 42, reason: "timeout" });
    const spans = exporter.getFinishedSpans();
    const executing = childOf(
      spans,
      find(spans, (span) => span.name === "task job"),
      "executing",
    );
    expect(executing.attributes["task.error"]).toBe('Object: { code: 42, reason: "timeout" }');
    expect(executing.status.message).toBe('{ code: 42, reason: "timeout" }');
    expect(executing.events[0].attributes?.["exception.type"]).toBe("Object");
  });
});
