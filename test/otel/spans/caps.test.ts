import { describe, expect, it } from "vitest";
import { ExportResultCode } from "@opentelemetry/core";
import {
  TracerProvider as BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../../src/index.js";
import { FakeClock } from "../../helpers/clock.js";
import { find, harness, ORIGIN, render, taskSpan, type Harness } from "./helpers.js";

/** A reducer waiting on `dependencies`, each fetched alone from its own peer, one after the other. */
function reducer({ journeys, clock }: Harness, key: string, dependencies: string[]) {
  journeys.transition(key, "released", "waiting");
  journeys.dependencies(key, dependencies);
  for (const dependency of dependencies) journeys.transition(dependency, "released", "fetch");
  dependencies.forEach((dependency, index) => {
    const transfer = journeys.gather(`tcp://peer:${index}`, [dependency], 10);
    transfer.meter("connect", () => clock.advance(0.25));
    transfer.meter("network", () => clock.advance(0.25));
    transfer.meter("deserialize", () => clock.advance(0.25));
    transfer.end("ok");
  });
  journeys.transition(key, "waiting", "ready");
  journeys.transition(key, "ready", "executing");
  const ledger = journeys.execute(key);
  for (const activity of ["deserialize", "disk-read", "serialize", "disk-write"])
    ledger.meter(activity, () => clock.advance(0.25));
  ledger.end("memory");
}

describe("caps", () => {
  it("maxChildrenPerSpan: children beyond it are left out and counted on their parent", () => {
    const h = harness({ maxChildrenPerSpan: 2, sampling: { ratio: 1 } });
    reducer(h, "sum-1", ["a-1", "a-2", "a-3"]);
    const spans = h.exporter
      .getFinishedSpans()
      .filter(
        (span) =>
          span.spanContext().traceId === find(h.exporter.getFinishedSpans(), taskSpan("sum-1")).spanContext().traceId,
      );
    const [task, ...rest] = render(spans);
    // Its links to its dependencies' fetch journeys, in their own traces (left out here).
    expect(task).toMatch(
      /^task sum \[sum-1@worker\] 100-103\.25 → external [0-9a-f]{16}, external [0-9a-f]{16}, external [0-9a-f]{16}$/,
    );
    expect(rest).toEqual([
      "  waiting 100-102.25 → gather_dep [tcp://peer:0 ok], gather_dep [tcp://peer:1 ok]",
      "    gather_dep [tcp://peer:0 ok] CLIENT 100-100.75",
      "      connect 100-100.25",
      "      network 100.25-100.5",
      "    gather_dep [tcp://peer:1 ok] CLIENT 100.75-101.5",
      "      connect 100.75-101",
      "      network 101-101.25",
      "  ready 102.25-102.25",
    ]);
    expect(find(spans, taskSpan("sum-1")).attributes["taskjourney.children_dropped"]).toBe(1);
    const waiting = find(spans, (span) => span.name === "waiting");
    expect(waiting.attributes["taskjourney.children_dropped"]).toBe(1);
    for (const gather of spans.filter((span) => span.name === "gather_dep")) {
      expect(gather.attributes["taskjourney.children_dropped"]).toBe(1);
    }
  });

  it("maxLinksPerSpan: links beyond it are counted in taskjourney.links_dropped", () => {
    const h = harness({ maxLinksPerSpan: 2 });
    reducer(h, "sum-1", ["a-1", "a-2", "a-3"]);
    const waiting = find(
      h.exporter.getFinishedSpans(),
      (span) => span.name === "waiting" && span.attributes["taskjourney.links_dropped"] !== undefined,
    );
    expect(waiting.links).toHaveLength(2);
    expect(waiting.attributes["taskjourney.links_dropped"]).toBe(1);

    // A gather_dep serving five head-sampled dependents links to the four it is not under.
    const shared = harness({ maxLinksPerSpan: 3 });
    const dependents = ["x-1", "x-2", "x-3", "x-4", "x-5"];
    for (const key of dependents) {
      shared.journeys.transition(key, "released", "waiting");
      shared.journeys.dependencies(key, ["a-1"]);
    }
    shared.journeys.transition("a-1", "released", "fetch");
    shared.journeys.gather("tcp://peer:1", ["a-1"], 1).end("ok");
    for (const key of dependents) shared.journeys.transition(key, "waiting", "memory");
    const gather = find(shared.exporter.getFinishedSpans(), (span) => span.name === "gather_dep");
    expect(gather.links).toHaveLength(3);
    expect(gather.attributes["taskjourney.links_dropped"]).toBe(1);
  });

  it("keys in attributes are cut to maxAttributeLength; transfer.keys lists maxKeysPerTransfer of transfer.key_count", () => {
    const h = harness({ maxAttributeLength: 8, maxKeysPerTransfer: 2 });
    const { journeys } = h;
    const keys = ["abcdefghij-1", "b-2", ["c-3", 7]] as const;
    for (const key of keys) journeys.transition(key, "released", "fetch");
    journeys.gather("tcp://a-very-long-peer-address:1", [...keys], 30).end("ok");
    const spans = h.exporter.getFinishedSpans();
    expect(find(spans, (span) => span.name === "gather_dep").attributes).toEqual({
      "transfer.peer": "tcp://a-",
      "transfer.keys": ["abcdefgh", "b-2"],
      "transfer.key_count": 3,
      "transfer.bytes": 30,
      "transfer.outcome": "ok",
    });
    expect(find(spans, (span) => span.attributes["task.key"] === "abcdefgh").attributes["task.prefix"]).toBe(
      "abcdefgh",
    );
    expect(find(spans, (span) => span.attributes["task.key"] === "('c-3', ").attributes["task.group"]).toBe("c-3");

    const none = harness({ maxKeysPerTransfer: 0 });
    none.journeys.transition("a-1", "released", "fetch");
    none.journeys.gather("tcp://peer:1", ["a-1"], 1).end("ok");
    const gather = find(none.exporter.getFinishedSpans(), (span) => span.name === "gather_dep");
    expect(gather.attributes["transfer.keys"]).toBeUndefined();
    expect(gather.attributes["transfer.key_count"]).toBe(1);
  });

  it("rejects a bad maxChildrenPerSpan at construction, naming the option", () => {
    expect(() => new TaskJourneys({ maxChildrenPerSpan: -1 })).toThrow(/spans\.maxChildren/);
  });
});

describe("timestamps", () => {
  it("stamps spans from timeOrigin + recorder seconds, exactly, also with a fractional origin", () => {
    const h = harness({ timeOrigin: ORIGIN + 0.75 });
    h.clock.set(100.5);
    h.journeys.transition("inc-1", "released", "waiting");
    h.clock.set(100.625);
    h.journeys.transition("inc-1", "waiting", "memory");
    const task = find(h.exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.startTime).toEqual([ORIGIN + 101, 250_000_000]);
    expect(task.endTime).toEqual([ORIGIN + 101, 375_000_000]);
  });

  it("defaults timeOrigin so that spans land at the wall-clock time", () => {
    const h = harness({ timeOrigin: undefined, clock: () => performance.now() / 1000 });
    const before = Date.now();
    h.journeys.transition("inc-1", "released", "waiting");
    h.journeys.transition("inc-1", "waiting", "memory");
    const [secondsPart, nanos] = find(h.exporter.getFinishedSpans(), taskSpan("inc-1")).startTime;
    expect(Math.abs(secondsPart * 1000 + nanos / 1e6 - before)).toBeLessThan(1000);
  });
});

describe("shutdown and batching", () => {
  it("shutdown ends what is open (marked unfinished), stops emitting, and leaves the user's provider running", async () => {
    const h = harness();
    const { journeys, clock, exporter, provider } = h;
    journeys.transition("inc-1", "released", "waiting");
    journeys.transition("inc-1", "waiting", "ready");
    clock.set(101);
    journeys.transition("inc-1", "ready", "executing");
    journeys.transition("a-1", "released", "fetch");
    journeys.gather("tcp://peer:1", ["a-1"], 1);
    clock.set(102);
    await journeys.shutdown();
    expect(render(exporter.getFinishedSpans())).toEqual([
      "task inc [inc-1@worker] 100-102",
      "  waiting 100-100",
      "  ready 100-101",
      "  executing 101-102",
      "task a [a-1@worker] 101-102",
      "  fetch 101-101",
      "  flight 101-102 → gather_dep [tcp://peer:1 undefined]",
      "    gather_dep [tcp://peer:1 undefined] CLIENT 101-102",
    ]);
    const task = find(exporter.getFinishedSpans(), taskSpan("inc-1"));
    expect(task.attributes["taskjourney.unfinished"]).toBe(true);
    expect(task.attributes["task.outcome"]).toBeUndefined();
    expect(
      find(exporter.getFinishedSpans(), (span) => span.name === "gather_dep").attributes["taskjourney.unfinished"],
    ).toBe(true);

    exporter.reset();
    journeys.transition("inc-2", "released", "waiting");
    journeys.transition("inc-2", "waiting", "memory");
    expect(exporter.getFinishedSpans()).toEqual([]);
    provider.getTracer("user").startSpan("still exporting").end();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(["still exporting"]);
  });

  it("emits through a BatchSpanProcessor; TaskJourneys.shutdown() flushes it", async () => {
    const exported: ReadableSpan[] = [];
    const noopExporter: SpanExporter = {
      export: (spans, done) => {
        exported.push(...spans);
        done({ code: ExportResultCode.SUCCESS });
      },
      shutdown: async () => {},
    };
    const provider = new BasicTracerProvider({
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: noopExporter,
          scheduledDelayMillis: 60_000,
          maxExportBatchSize: 64,
          maxQueueSize: 4096,
        }),
      ],
    });
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      clock: clock.now,
      tracerProvider: provider,
      sampling: { ratio: 1, keepSlowerThan: 0 },
    });
    for (let index = 0; index < 200; index++) {
      journeys.transition(`inc-${index}`, "released", "waiting");
      journeys.transition(`inc-${index}`, "waiting", "ready");
      journeys.transition(`inc-${index}`, "ready", "executing");
      clock.advance(0.001);
      journeys.execute(`inc-${index}`).end("memory");
    }
    await journeys.shutdown();
    expect(exported).toHaveLength(200 * 4);
    expect(exported.filter((span) => span.name === "task inc")).toHaveLength(200);
    await provider.shutdown();
  });
});
