import { describe, expect, it } from "vitest";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { SpanKind } from "@opentelemetry/api";
import { TaskJourneys } from "../../src/index.js";
import { formatBreakdown } from "../../src/report/format.js";
import { FakeClock } from "../helpers/clock.js";
import { harness } from "../otel/spans/helpers.js";

/** The serving side of a gather_dep: journeys.serve(peer, keys) on the worker that holds the data. */
describe("serve()", () => {
  function servedWorker(clock = new FakeClock(10)) {
    const journeys = new TaskJourneys({
      role: "worker",
      instance: "tcp://a",
      clock: clock.now,
      sampling: { ratio: 0, keepSlowerThan: 0 },
    });
    // x-1 and x-2 were computed here and are held in memory (x-2 spilled).
    for (const key of ["x-1", "x-2"]) {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.execute(key).end("memory");
    }
    clock.set(20);
    const ledger = journeys.serve("tcp://b", ["x-1", "x-2"]);
    ledger.meter("serialize", () => clock.advance(0.01)); // x-1 from memory
    ledger.meter("disk-read", () => clock.advance(0.3)); // x-2 read back from its spill file
    ledger.meter("network", () => clock.advance(0.05));
    ledger.digest("network", 4096, "bytes");
    clock.advance(0.04);
    ledger.end("ok"); // 0.4 s in all
    return { journeys, clock };
  }

  it("counts task.serve.time by activity and task.serve.size by outcome", () => {
    const { journeys, clock } = servedWorker();
    journeys.serve("tcp://c", ["x-1"]).end("busy");
    clock.advance(0.002);
    const metrics = journeys.metricProducer.produce([0, 0], [1, 0]);
    const time = metrics.find((metric) => metric.descriptor.name === "task.serve.time")!;
    const byActivity = Object.fromEntries(
      time.dataPoints.map((point) => [point.attributes["task.activity"], Number((point.value as number).toFixed(9))]),
    );
    expect(byActivity).toEqual({ serialize: 0.01, "disk-read": 0.3, network: 0.05, other: 0.04 });
    const size = metrics.find((metric) => metric.descriptor.name === "task.serve.size")!;
    expect(size.dataPoints.map((point) => [point.attributes["transfer.outcome"], point.value])).toEqual([
      ["ok", 4096],
      ["busy", 0],
    ]);
    // Serving is not a state of the keys: their journeys ended in memory and stay so.
    expect(journeys.explain("x-1")!.outcome).toBe("memory");
  });

  it("shows in explain() of a key served: its share of the serve, by activity", () => {
    const { journeys } = servedWorker();
    const served = journeys.explain("x-2")!.served!;
    expect(served).toHaveLength(1);
    expect(served[0].name).toBe("serve tcp://b");
    expect(served[0].seconds).toBeCloseTo(0.2, 9);
    expect(served[0].quantities).toEqual({ bytes: 2048 });
    expect(served[0].children.map((node) => [node.name, Number(node.seconds.toFixed(9))])).toEqual([
      ["serialize", 0.005],
      ["disk-read", 0.15],
      ["network", 0.025],
      ["other", 0.02],
    ]);
    expect(formatBreakdown(journeys.explain("x-2")!)).toMatch(
      /served to peers\n└─ serve tcp:\/\/b\s+200\.0 ms\s+2\.0 KiB\n {3}├─ serialize/,
    );
    expect(journeys.explain("x-3")).toBeUndefined();
  });

  it("makes a get_data span under the requester's gather_dep, which links to it", () => {
    const exporter = new InMemorySpanExporter();
    const fetcher = harness({ instance: "tcp://b" }, exporter);
    const server = harness({ instance: "tcp://a" }, exporter, fetcher.clock);
    const clock = fetcher.clock;
    // On b: y-1 waits for x-1, which is fetched from a.
    fetcher.journeys.dependencies("y-1", ["x-1"]);
    fetcher.journeys.transition("y-1", "released", "waiting");
    fetcher.journeys.transition("x-1", "released", "fetch");
    const gather = fetcher.journeys.gather("tcp://a", ["x-1"]);
    const request: Record<string, string> = {};
    expect(fetcher.journeys.injectTransfer(gather, request)).toBe(true);
    // On a: the request is served.
    const serve = server.journeys.serve("tcp://b", ["x-1"], request);
    serve.meter("disk-read", () => clock.advance(0.3));
    const reply: Record<string, string> = {};
    expect(server.journeys.injectTransfer(serve, reply)).toBe(true);
    serve.end("ok");
    // Back on b.
    expect(fetcher.journeys.linkTransfer(gather, reply)).toBe(true);
    gather.meter("network", () => clock.advance(0.05));
    gather.end("ok");
    fetcher.journeys.transition("y-1", "waiting", "ready");
    fetcher.journeys.execute("y-1").end("memory");

    const spans = exporter.getFinishedSpans();
    const getData = spans.find((span) => span.name === "get_data")!;
    const gatherDep = spans.find((span) => span.name === "gather_dep")!;
    expect(getData.kind).toBe(SpanKind.SERVER);
    expect(getData.spanContext().traceId).toBe(gatherDep.spanContext().traceId);
    expect(getData.parentSpanContext?.spanId).toBe(gatherDep.spanContext().spanId);
    // No link to its own parent as well: Jaeger turns a parent that is also linked into a
    // FOLLOWS_FROM reference, and the get_data would show as a root of the trace.
    expect(getData.links).toEqual([]);
    expect(gatherDep.links.map((link) => link.context.spanId)).toContain(getData.spanContext().spanId);
    expect(getData.attributes["transfer.peer"]).toBe("tcp://b");
    const diskRead = spans.find((span) => span.name === "disk-read")!;
    expect(diskRead.parentSpanContext?.spanId).toBe(getData.spanContext().spanId);

    // Without a sampled requester there is no span, and nothing to inject.
    const untraced = server.journeys.serve("tcp://c", ["x-1"]);
    expect(server.journeys.injectTransfer(untraced, {})).toBe(false);
    untraced.end("ok");
    // Nor with a requester that was not sampled: the carrier's flags decide, as the requester's
    // gather_dep will not be exported.
    const unsampled = server.journeys.serve("tcp://c", ["x-1"], {
      traceparent: `00-${gatherDep.spanContext().traceId}-${gatherDep.spanContext().spanId}-00`,
    });
    expect(server.journeys.injectTransfer(unsampled, {})).toBe(false);
    unsampled.end("ok");
    expect(exporter.getFinishedSpans().filter((span) => span.name === "get_data")).toHaveLength(1);
  });

  it("counts bad input and a second end(), never throws", () => {
    const clock = new FakeClock(1);
    const journeys = new TaskJourneys({ clock: clock.now });
    const ledger = journeys.serve("tcp://b", "x-1" as never);
    ledger.end("ok");
    const good = journeys.serve("tcp://b", ["x-1"]);
    good.end("nonsense" as never);
    good.end("ok");
    expect(journeys.dropped()).toMatchObject({ "invalid-key": 1, "invalid-outcome": 1, "ledger-ended": 1 });
  });
});
