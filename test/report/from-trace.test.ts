/**
 * explain() from a trace file: journeys run with a fake clock through real TaskJourneys and the
 * real SDK, their finished spans serialized to OTLP/JSON exactly as the OTLP/HTTP JSON exporter
 * does (otlp-transformer's JsonTraceSerializer), written as JSON lines like the Collector's file
 * exporter, read back, and rebuilt: the Breakdown must be the one explain() gives.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace";
import {
  TaskJourneys,
  type ActivityLedger,
  type Breakdown,
  type BreakdownNode,
  type TaskJourneysOptions,
} from "../../src/index.js";
import { breakdownFromSpans, breakdownsFromSpans, keysInSpans, SpanIndex } from "../../src/report/from-trace.js";
import { decodeId, decodeOtlpJson, readOtlpJsonFile, type DecodedSpan } from "../../src/report/otlp-json.js";
import { formatBreakdown } from "../../src/report/format.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { renderHtmlReport } from "../../src/report/html.js";
import { FakeClock } from "../helpers/clock.js";

const ORIGIN = 1_700_000_000;
const WORKER = "tcp://10.0.0.7:40001";
const PEER_1 = "tcp://10.0.0.8:40001";
const PEER_2 = "tcp://10.0.0.9:40001";
const SCHEDULER = "tcp://10.0.0.1:8786";

const directory = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-from-trace-"));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

interface Process {
  journeys: TaskJourneys;
  exporter: InMemorySpanExporter;
  clock: FakeClock;
}

function process_(clock: FakeClock, options: TaskJourneysOptions): Process {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.name": "taskjourney-test",
      "service.instance.id": options.instance ?? "",
    }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: exporter })],
  });
  const journeys = new TaskJourneys({ clock: clock.now, timeOrigin: ORIGIN, tracerProvider: provider, ...options });
  return { journeys, exporter, clock };
}

/** One OTLP/JSON request per line, as the Collector's file exporter writes them. */
function jsonLines(batches: ReadableSpan[][]): string {
  const decoder = new TextDecoder();
  return batches.map((spans) => decoder.decode(JsonTraceSerializer.serializeRequest(spans))).join("\n") + "\n";
}

function writeFile(name: string, text: string): string {
  const file = path.join(directory, name);
  fs.writeFileSync(file, text);
  return file;
}

/** Same names in the same order, seconds within 1e-6, all the way down. */
function expectSameNodes(actual: BreakdownNode[], expected: BreakdownNode[], where: string): void {
  expect(
    actual.map((node) => node.name),
    where,
  ).toEqual(expected.map((node) => node.name));
  expected.forEach((node, index) => {
    expect(
      Math.abs(actual[index].seconds - node.seconds),
      `${where}/${node.name}: ${actual[index].seconds} vs ${node.seconds}`,
    ).toBeLessThan(1e-6);
    expect(actual[index].quantities, `${where}/${node.name} quantities`).toEqual(node.quantities);
    expectSameNodes(actual[index].children, node.children, `${where}/${node.name}`);
  });
}

function expectSameBreakdown(actual: Breakdown | undefined, expected: Breakdown | undefined): void {
  expect(expected).toBeDefined();
  expect(actual).toBeDefined();
  const { children: actualChildren, seconds: actualSeconds, ...actualHead } = actual!;
  const { children: expectedChildren, seconds: expectedSeconds, ...expectedHead } = expected!;
  expect(actualHead).toEqual(expectedHead);
  expect(Math.abs(actualSeconds - expectedSeconds)).toBeLessThan(1e-6);
  expectSameNodes(actualChildren, expectedChildren, expected!.key);
  // And so the same text (once float noise below a microsecond cannot flip a rounding).
  expect(formatBreakdown(rounded(actual!))).toBe(formatBreakdown(rounded(expected!)));
}

function rounded<T extends Breakdown | BreakdownNode>(node: T): T {
  return { ...node, seconds: Math.round(node.seconds * 1e6) / 1e6, children: node.children.map(rounded) };
}

/**
 * A worker: sum-1 waits for a-1, a-2 (one transfer from peer 1, nested activities, spilled) and
 * a-3 (a busy transfer from peer 2, then a good one); then ready, then executing with
 * deserialize twice, unspill(disk-read), a metered `compute` holding thread digests, top-level
 * thread digests, serialize. inc-1 runs with no dependencies; bad-1 fails while executing.
 */
function workerScenario(options: TaskJourneysOptions = {}): Process {
  const clock = new FakeClock(100);
  const worker = process_(clock, {
    role: "worker",
    instance: WORKER,
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
    ...options,
  });
  const { journeys } = worker;

  journeys.transition("sum-1", "released", "waiting");
  journeys.dependencies("sum-1", ["a-1", "a-2", "a-3"]);
  for (const key of ["a-1", "a-2", "a-3"]) journeys.transition(key, "released", "fetch");
  clock.set(100.5);
  const first = journeys.gather(PEER_1, ["a-1", "a-2"], 3000);
  const busy = journeys.gather(PEER_2, ["a-3"], 1000);
  first.meter("connect", () => clock.advance(0.25));
  busy.meter("connect", () => clock.advance(0.125));
  busy.end("busy");
  first.meter("network", () => {
    clock.advance(0.5);
    first.meter("decompress", () => clock.advance(0.25));
  });
  first.meter("deserialize", () => clock.advance(0.375));
  first.meter("spill", () => {
    first.meter("serialize", () => clock.advance(0.125));
    first.meter("disk-write", () => clock.advance(0.25));
  });
  clock.advance(0.0625);
  first.end("ok");
  clock.advance(0.5);
  journeys.transition("a-3", "fetch", "flight");
  const second = journeys.gather(PEER_2, ["a-3"], 1000);
  second.meter("connect", () => clock.advance(0.0625));
  second.meter("network", () => clock.advance(1.5));
  second.end("ok");
  clock.advance(0.25);
  journeys.transition("sum-1", "waiting", "ready");
  clock.advance(0.75);
  journeys.transition("sum-1", "ready", "executing");
  const ledger = journeys.execute("sum-1");
  ledger.meter("deserialize", () => clock.advance(0.125));
  ledger.meter("unspill", () => {
    clock.advance(0.0625);
    ledger.meter("disk-read", () => clock.advance(0.25));
  });
  ledger.meter("deserialize", () => clock.advance(0.0625));
  ledger.meter("compute", () => {
    clock.advance(1);
    ledger.digest("thread-cpu", 0.75);
    ledger.digest("thread-noncpu", 0.125);
  });
  clock.advance(2);
  ledger.digest("thread-cpu", 1.5);
  ledger.digest("thread-noncpu", 0.25);
  ledger.meter("serialize", () => clock.advance(0.1));
  clock.advance(0.03);
  ledger.end("memory");

  // No dependencies: waiting is all `dependencies`.
  journeys.transition("inc-1", "released", "waiting");
  clock.advance(0.5);
  journeys.transition("inc-1", "waiting", "ready");
  clock.advance(0.25);
  const inc = journeys.execute("inc-1");
  clock.advance(0.4);
  inc.digest("thread-cpu", 0.3);
  inc.digest("thread-noncpu", 0.1);
  inc.end("memory");

  // A failure while executing; a thread-noncpu digest of 0 s.
  journeys.transition("bad-1", "released", "waiting");
  journeys.transition("bad-1", "waiting", "ready");
  clock.advance(0.125);
  const bad = journeys.execute("bad-1");
  bad.meter("deserialize", () => clock.advance(0.25));
  clock.advance(0.5);
  bad.digest("thread-cpu", 0.5);
  bad.digest("thread-noncpu", 0);
  bad.end("error");
  return worker;
}

/** The scheduler's journey of sum-1, in its own process (another resource, another line of the file). */
function schedulerScenario(): Process {
  const clock = new FakeClock(99);
  const scheduler = process_(clock, {
    role: "scheduler",
    instance: SCHEDULER,
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
  });
  const { journeys } = scheduler;
  journeys.transition("sum-1", "released", "waiting");
  clock.advance(0.25);
  journeys.transition("sum-1", "waiting", "queued");
  clock.advance(0.5);
  journeys.transition("sum-1", "queued", "processing");
  clock.set(108);
  journeys.transition("sum-1", "processing", "memory");
  return scheduler;
}

/** One step inside a ledger: a metered activity (with steps nested in it), or a digest. */
type Step =
  | { meter: string; ticks: number; inner: readonly Step[] }
  | { digest: string; ticks: number }
  | { quantity: string; value: number; unit: "bytes" | "count" };

/** Times are whole 1/64 s ticks, so sums are exact in binary. */
const TICK = 1 / 64;

const leafStep: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    meter: fc.constantFrom("deserialize", "disk-read", "serialize", "compute"),
    ticks: fc.integer({ min: 0, max: 8 }),
    inner: fc.constant([]),
  }),
  fc.record({
    digest: fc.constantFrom("thread-cpu", "thread-noncpu", "executor", "seceded"),
    ticks: fc.integer({ min: 0, max: 8 }),
  }),
  fc.record({
    quantity: fc.constantFrom("disk-read", "disk-write", "deserialize"),
    value: fc.integer({ min: 0, max: 1 << 20 }),
    unit: fc.constantFrom("bytes" as const, "count" as const),
  }),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  leafStep,
  fc.record({
    meter: fc.constantFrom("unspill", "spill"),
    ticks: fc.integer({ min: 0, max: 8 }),
    inner: fc.array(leafStep, { maxLength: 3 }),
  }),
);

/** Dependencies fetched while a compute journey waits: one transfer each group, from one peer each. */
interface Transfers {
  groups: number[];
  connectTicks: number;
  networkTicks: number;
  deserializeTicks: number;
  busyFirst: boolean;
  /** How long the busy answer took: 0 puts both transfers of a key at one clock reading. */
  busyTicks: number;
}

interface ComputeJourney {
  long: boolean;
  fetched: Transfers;
  waitTicks: number;
  readyTicks: number;
  steps: readonly Step[];
  tailTicks: number;
  outcome: "memory" | "error";
}
interface FetchJourney {
  reason: string | undefined;
  fetchTicks: number;
  networkTicks: number;
}

const transfers: fc.Arbitrary<Transfers> = fc.record({
  groups: fc.array(fc.integer({ min: 1, max: 2 }), { maxLength: 2 }),
  connectTicks: fc.integer({ min: 0, max: 4 }),
  networkTicks: fc.integer({ min: 0, max: 8 }),
  deserializeTicks: fc.integer({ min: 0, max: 4 }),
  busyFirst: fc.boolean(),
  busyTicks: fc.integer({ min: 0, max: 4 }),
});

const computeJourney: fc.Arbitrary<ComputeJourney> = fc.record({
  long: fc.boolean(),
  fetched: transfers,
  waitTicks: fc.integer({ min: 0, max: 8 }),
  readyTicks: fc.integer({ min: 0, max: 8 }),
  steps: fc.array(step, { maxLength: 4 }),
  tailTicks: fc.integer({ min: 0, max: 8 }),
  outcome: fc.constantFrom("memory" as const, "error" as const),
});
const fetchJourney: fc.Arbitrary<FetchJourney> = fc.record({
  reason: fc.option(fc.constantFrom("local-saturated", "remote-saturated"), { nil: undefined }),
  fetchTicks: fc.integer({ min: 0, max: 8 }),
  networkTicks: fc.integer({ min: 0, max: 8 }),
});

function runSteps(ledger: ActivityLedger, clock: FakeClock, steps: readonly Step[]): void {
  for (const item of steps) {
    if ("meter" in item) {
      ledger.meter(item.meter, () => {
        clock.advance(item.ticks * TICK);
        runSteps(ledger, clock, item.inner);
      });
    } else if ("digest" in item) {
      clock.advance(item.ticks * TICK);
      ledger.digest(item.digest, item.ticks * TICK);
    } else {
      ledger.digest(item.quantity, item.value, item.unit);
    }
  }
}

/**
 * A state's top-level thread digests moved after its other activities (before `other`), cpu first.
 * The trace keeps them as one `run` span placed by time, explain() in the order they were taken;
 * see "the same digests, whatever their order" below. Everything else keeps its order.
 */
function threadDigestsLast(breakdown: Breakdown | undefined): Breakdown | undefined {
  if (breakdown === undefined) return undefined;
  const rank = (node: BreakdownNode) =>
    node.name === "other" ? 3 : node.name === "thread-noncpu" ? 2 : node.name === "thread-cpu" ? 1 : 0;
  return {
    ...breakdown,
    children: breakdown.children.map((state) => ({
      ...state,
      children: [...state.children].sort((a, b) => rank(a) - rank(b)),
    })),
  };
}

describe("breakdownFromSpans: the same as explain() for any journey (property)", () => {
  it("compute journeys with fetched dependencies, nested activities, digests and quantities, long keys, failures; fetches queued for a reason", () => {
    let run = 0;
    fc.assert(
      fc.property(
        fc.array(computeJourney, { minLength: 1, maxLength: 4 }),
        fc.array(fetchJourney, { maxLength: 3 }),
        (computes, fetches) => {
          const clock = new FakeClock(100);
          const worker = process_(clock, {
            role: "worker",
            instance: WORKER,
            sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
            spans: { maxAttributeLength: 64 },
          });
          const { journeys } = worker;
          const keys: string[] = [];
          fetches.forEach((fetch, index) => {
            const key = `dep-${index}`;
            keys.push(key);
            journeys.transition(key, "released", "fetch");
            if (fetch.reason !== undefined) journeys.queued(key, fetch.reason);
            clock.advance(fetch.fetchTicks * TICK);
            const transfer = journeys.gather(PEER_1, [key], 100);
            transfer.meter("network", () => clock.advance(fetch.networkTicks * TICK));
            transfer.end("ok");
          });
          computes.forEach((compute, index) => {
            const key = compute.long ? `task-${index}-${"x".repeat(80)}` : `task-${index}`;
            keys.push(key);
            journeys.transition(key, "released", "waiting");
            const groups = compute.fetched.groups.map((size, group) =>
              Array.from({ length: size }, (_, k) => `in-${index}-${group}-${k}`),
            );
            journeys.dependencies(key, groups.flat());
            for (const dependency of groups.flat()) journeys.transition(dependency, "released", "fetch");
            groups.forEach((group, number) => {
              const peer = number === 0 ? PEER_1 : PEER_2;
              if (compute.fetched.busyFirst && number === 0) {
                const busy = journeys.gather(peer, group, 10);
                busy.meter("connect", () => clock.advance(compute.fetched.busyTicks * TICK));
                busy.end("busy");
              }
              const transfer = journeys.gather(peer, group, 1000);
              transfer.meter("connect", () => clock.advance(compute.fetched.connectTicks * TICK));
              transfer.meter("network", () => clock.advance(compute.fetched.networkTicks * TICK));
              transfer.meter("deserialize", () => clock.advance(compute.fetched.deserializeTicks * TICK));
              transfer.end("ok");
            });
            keys.push(...groups.flat());
            clock.advance(compute.waitTicks * TICK);
            journeys.transition(key, "waiting", "ready");
            clock.advance(compute.readyTicks * TICK);
            journeys.transition(key, "ready", "executing");
            const ledger = journeys.execute(key);
            runSteps(ledger, clock, compute.steps);
            clock.advance(compute.tailTicks * TICK);
            ledger.end(compute.outcome);
          });
          const spans = decodeOtlpJson(jsonLines([worker.exporter.getFinishedSpans()]), `property run ${run++}`);
          for (const key of keys)
            expectSameBreakdown(
              threadDigestsLast(breakdownFromSpans(spans, key)),
              threadDigestsLast(journeys.explain(key)),
            );
        },
      ),
      { numRuns: 200, seed: 20261130 },
    );
    // 200 runs take 13-16 s on a loaded 2-core machine, close to the default 20 s limit.
  }, 60_000);
});

/** The scheduler's transitions by state, for random walks (after distributed's transition table). */
const SCHEDULER_NEXT: Record<string, string[]> = {
  released: ["waiting", "erred", "memory"],
  waiting: ["processing", "queued", "no-worker", "memory", "released", "erred"],
  queued: ["processing", "released", "erred", "waiting"],
  "no-worker": ["processing", "released", "waiting", "erred", "memory"],
  processing: ["memory", "erred", "released", "waiting"],
};

describe("breakdownFromSpans: the same as explain() for any scheduler journey (property)", () => {
  it("random walks through the scheduler's states, journeys ending and beginning again", () => {
    let run = 0;
    const walk = fc.array(fc.record({ pick: fc.nat(), ticks: fc.integer({ min: 0, max: 8 }) }), {
      minLength: 1,
      maxLength: 10,
    });
    fc.assert(
      fc.property(fc.array(walk, { minLength: 1, maxLength: 3 }), (walks) => {
        const clock = new FakeClock(100);
        const scheduler = process_(clock, {
          role: "scheduler",
          instance: SCHEDULER,
          sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
        });
        const { journeys } = scheduler;
        walks.forEach((steps, index) => {
          const key = `job-${index}`;
          let state = "released";
          for (const { pick, ticks } of steps) {
            const options = SCHEDULER_NEXT[state] ?? SCHEDULER_NEXT.released;
            const to = options[pick % options.length];
            journeys.transition(
              key,
              (state === "memory" || state === "erred" ? "released" : state) as never,
              to as never,
            );
            state = to;
            clock.advance(ticks * TICK);
          }
          // Ended, so that its spans are in the trace.
          if (SCHEDULER_NEXT[state] !== undefined && state !== "released")
            journeys.transition(key, state as never, "released");
        });
        const spans = decodeOtlpJson(jsonLines([scheduler.exporter.getFinishedSpans()]), `scheduler run ${run++}`);
        walks.forEach((_, index) => {
          const key = `job-${index}`;
          const expected = journeys.explain(key);
          if (expected === undefined) expect(breakdownFromSpans(spans, key)).toBeUndefined();
          else expectSameBreakdown(breakdownFromSpans(spans, key, { kind: "scheduler" }), expected);
        });
      }),
      { numRuns: 200, seed: 20261130 },
    );
  });
});

describe("breakdownFromSpans: what else explain() shows, from the trace", () => {
  const clock = new FakeClock(100);
  const worker = process_(clock, {
    role: "worker",
    instance: WORKER,
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
    spans: { maxAttributeLength: 64 },
  });
  const { journeys } = worker;
  const longKey = `long-7-${"ab".repeat(60)}`;
  // A fetch that waited for a reason, then came in.
  journeys.transition("a-1", "released", "fetch");
  journeys.queued("a-1", "local-saturated");
  clock.advance(0.25);
  const transfer = journeys.gather(PEER_1, ["a-1"], 100);
  transfer.meter("network", () => clock.advance(0.5));
  transfer.end("ok");
  // A compute journey that read spilled bytes, of a key longer than the attribute limit.
  journeys.transition(longKey, "released", "waiting");
  journeys.transition(longKey, "waiting", "ready");
  clock.advance(0.125);
  journeys.transition(longKey, "ready", "executing");
  const ledger = journeys.execute(longKey);
  ledger.meter("unspill", () => {
    ledger.meter("disk-read", () => clock.advance(0.25));
    ledger.digest("disk-read", 65536, "bytes");
  });
  ledger.digest("disk-write", 2, "count");
  clock.advance(0.5);
  ledger.end("memory");
  const spans = readOtlpJsonFile(writeFile("more.jsonl", jsonLines([worker.exporter.getFinishedSpans()])));

  it("a fetch journey's queued reason, under its fetch visit", () => {
    const expected = journeys.explain("a-1")!;
    expect(expected.children[0]).toMatchObject({
      name: "fetch",
      children: [{ name: "queued (local-saturated)", seconds: 0.25 }],
    });
    expectSameBreakdown(breakdownFromSpans(spans, "a-1"), expected);
  });

  it("digested quantities, on their activities' nodes; and a key longer than the attribute limit", () => {
    const expected = journeys.explain(longKey)!;
    const executing = expected.children.find((node) => node.name === "executing")!;
    expect(executing.children[0].children[0]).toMatchObject({ name: "disk-read", quantities: { bytes: 65536 } });
    expect(executing.children.find((node) => node.name === "disk-write")).toMatchObject({
      seconds: 0,
      quantities: { count: 2 },
    });
    const task = spans.find((span) => span.name === "task long")!;
    expect(task.attributes).toMatchObject({
      "task.key": longKey.slice(0, 64),
      "taskjourney.key_length": longKey.length,
    });
    expect(spans.find((span) => span.name === "executing")!.attributes).toMatchObject({
      "task.quantity.bytes.disk-read": 65536,
      "task.quantity.count.disk-write": 2,
    });
    expectSameBreakdown(breakdownFromSpans(spans, longKey), expected);
    expect(breakdownsFromSpans(spans, longKey)).toHaveLength(1);
    // Another key of the same beginning but not the same length is not this journey; the beginning
    // as the trace shows it (copied from there) is.
    expect(breakdownFromSpans(spans, `${longKey}x`)).toBeUndefined();
    expect(breakdownFromSpans(spans, longKey.slice(0, 64))).toEqual({
      ...breakdownFromSpans(spans, longKey),
      key: longKey.slice(0, 64),
    });
  });
});

describe("breakdownFromSpans: explain() rebuilt from an OTLP/JSON trace file", () => {
  const worker = workerScenario();
  const scheduler = schedulerScenario();
  const file = writeFile(
    "spans.jsonl",
    jsonLines([worker.exporter.getFinishedSpans(), scheduler.exporter.getFinishedSpans()]),
  );
  const spans = readOtlpJsonFile(file);

  it("reads every span of every line", () => {
    expect(spans.length).toBe(worker.exporter.getFinishedSpans().length + scheduler.exporter.getFinishedSpans().length);
    const root = spans.find((span) => span.name === "task sum" && span.attributes["task.role"] === "worker")!;
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(root.resource["service.instance.id"]).toBe(WORKER);
    expect(root.startNanos).toBe(BigInt(ORIGIN + 100) * 1_000_000_000n);
  });

  it("the compute journey with apportioned waiting, nested activities and thread digests", () => {
    const expected = worker.journeys.explain("sum-1");
    expectSameBreakdown(breakdownFromSpans(spans, "sum-1"), expected);
    // The tree has what the scenario put in it (so the comparison compares something).
    const executing = expected!.children.find((node) => node.name === "executing")!;
    expect(executing.children.map((node) => node.name)).toEqual([
      "deserialize",
      "unspill",
      "compute",
      "thread-cpu",
      "thread-noncpu",
      "serialize",
      "other",
    ]);
    expect(executing.children.find((node) => node.name === "compute")!.children.map((node) => node.name)).toEqual([
      "thread-cpu",
      "thread-noncpu",
      "other",
    ]);
  });

  it("a journey without dependencies, and a failed one", () => {
    expectSameBreakdown(breakdownFromSpans(spans, "inc-1"), worker.journeys.explain("inc-1"));
    expectSameBreakdown(breakdownFromSpans(spans, "bad-1"), worker.journeys.explain("bad-1"));
    expect(breakdownFromSpans(spans, "bad-1")!.outcome).toBe("error");
  });

  it("fetch journeys: each key's even share of the transfer that carried it, busy lumps included", () => {
    for (const key of ["a-1", "a-2", "a-3"]) {
      expectSameBreakdown(breakdownFromSpans(spans, key, { kind: "fetch" }), worker.journeys.explain(key));
      expectSameBreakdown(breakdownFromSpans(spans, key), worker.journeys.explain(key));
    }
  });

  it("the scheduler's journey of the same key, on its own resource", () => {
    expectSameBreakdown(breakdownFromSpans(spans, "sum-1", { kind: "scheduler" }), scheduler.journeys.explain("sum-1"));
    expect(breakdownFromSpans(spans, "sum-1", { kind: "scheduler" })!.instance).toBe(SCHEDULER);
    expect(breakdownFromSpans(spans, "sum-1", { instance: SCHEDULER })!.kind).toBe("scheduler");
  });

  it("every journey of a key, in start order; unknown keys give nothing", () => {
    const all = breakdownsFromSpans(spans, "sum-1");
    expect(all.map((breakdown) => `${breakdown.kind}@${breakdown.instance}`)).toEqual([
      `scheduler@${SCHEDULER}`,
      `compute@${WORKER}`,
    ]);
    expect(breakdownFromSpans(spans, "nope-1")).toBeUndefined();
    expect(breakdownsFromSpans(spans, "nope-1")).toEqual([]);
    const { keys, total } = keysInSpans(new SpanIndex(spans), 3);
    expect(keys).toHaveLength(3);
    expect(total).toBe(6);
  });

  it("journeys emitted retroactively (tail-kept at their end) rebuild the same", () => {
    const tail = workerScenario({ sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: true } });
    const tailSpans = decodeOtlpJson(jsonLines([tail.exporter.getFinishedSpans()]));
    // Only the failed journey is kept.
    expect(
      new Set(tailSpans.filter((span) => span.name.startsWith("task ")).map((span) => span.attributes["task.key"])),
    ).toEqual(new Set(["bad-1"]));
    expectSameBreakdown(breakdownFromSpans(tailSpans, "bad-1"), tail.journeys.explain("bad-1"));
  });
});

describe("digests: what spans.ts must emit for explain() order and names", () => {
  // An execution like the cluster example's: thread digests, then an `executor` digest, all at
  // the end; and one with a cpu digest only. explain() lists digests in the order they were
  // taken; a trace can tell that only if digest spans are marked (their interval is inferred, so
  // they were recorded at their end, not their start), and shows `thread-noncpu` only if the
  // `run` span carries `thread.noncpu_time` only when it was digested.
  const clock = new FakeClock(100);
  const worker = process_(clock, {
    role: "worker",
    instance: WORKER,
    sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
  });
  const { journeys } = worker;
  journeys.transition("pool-1", "released", "waiting");
  journeys.transition("pool-1", "waiting", "ready");
  const ledger = journeys.execute("pool-1");
  ledger.meter("deserialize", () => clock.advance(0.125));
  clock.advance(1);
  ledger.digest("thread-cpu", 0.25);
  ledger.digest("thread-noncpu", 0.125);
  ledger.digest("executor", 0.5);
  ledger.end("memory");
  journeys.transition("cpu-1", "released", "waiting");
  journeys.transition("cpu-1", "waiting", "ready");
  const cpuOnly = journeys.execute("cpu-1");
  clock.advance(1);
  cpuOnly.digest("thread-cpu", 0.75);
  cpuOnly.end("memory");
  const spans = decodeOtlpJson(jsonLines([worker.exporter.getFinishedSpans()]));
  const marksDigests = spans.some((span) => span.name === "executor" && span.attributes["taskjourney.digest"] === true);
  const runOfCpuOnly = spans.find(
    (span) => span.name === "run" && span.endNanos === BigInt(ORIGIN + 102) * 1_000_000_000n + 125_000_000n,
  );
  const digestsOnlyWhatWasDigested = runOfCpuOnly !== undefined && !("thread.noncpu_time" in runOfCpuOnly.attributes);

  it("digests in the order they were taken (digest spans carry taskjourney.digest = true)", () => {
    expect(marksDigests).toBe(true);
    expectSameBreakdown(breakdownFromSpans(spans, "pool-1"), journeys.explain("pool-1"));
  });

  it("a cpu digest alone: the run span carries only thread.cpu_time", () => {
    expect(digestsOnlyWhatWasDigested).toBe(true);
    expectSameBreakdown(breakdownFromSpans(spans, "cpu-1"), journeys.explain("cpu-1"));
  });

  it("the same digests, whatever their order", () => {
    const names = (breakdown: Breakdown | undefined) =>
      breakdown!.children.map(
        (state) =>
          `${state.name}: ${state.children
            .map((node) => node.name)
            .sort()
            .join(", ")}`,
      );
    expect(names(breakdownFromSpans(spans, "pool-1"))).toEqual(names(journeys.explain("pool-1")));
  });
});

describe("OTLP/JSON spellings", () => {
  const worker = workerScenario();
  const request = JSON.parse(
    new TextDecoder().decode(JsonTraceSerializer.serializeRequest(worker.exporter.getFinishedSpans())),
  ) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
  };

  /** The protobuf JSON mapping: base64 ids, 64-bit integers as strings, enums by name. */
  function protobufStyle(value: unknown, key = ""): unknown {
    if (Array.isArray(value)) return value.map((item) => protobufStyle(item));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, protobufStyle(item, name)]));
    }
    if (typeof value === "string" && (key === "traceId" || key === "spanId" || key === "parentSpanId"))
      return Buffer.from(value, "hex").toString("base64");
    if (key === "intValue" || key === "startTimeUnixNano" || key === "endTimeUnixNano") return String(value);
    if (key === "kind" && typeof value === "number")
      return ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT"][value];
    return value;
  }

  it("base64 ids and string integers (protobuf JSON mapping) decode to the same spans", () => {
    const hex = decodeOtlpJson(JSON.stringify(request));
    const base64 = decodeOtlpJson(JSON.stringify(protobufStyle(request)));
    expect(base64).toEqual(hex);
    expectSameBreakdown(breakdownFromSpans(base64, "sum-1"), worker.journeys.explain("sum-1"));
  });

  it("one pretty-printed document, or an array of requests", () => {
    const pretty = decodeOtlpJson(JSON.stringify(request, null, 2));
    const array = decodeOtlpJson(JSON.stringify([request, request]));
    expect(pretty.length).toBe(worker.exporter.getFinishedSpans().length);
    expect(array.length).toBe(2 * pretty.length);
  });

  it("ids: hex as is (lowercased), base64 to hex; text that is not JSON is an error naming the line", () => {
    expect(decodeId("0AF7651916CD43DD8448EB211C80319C", 16)).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(decodeId(Buffer.from("b7ad6b7169203331", "hex").toString("base64"), 8)).toBe("b7ad6b7169203331");
    expect(() => decodeOtlpJson('{"resourceSpans": []}\nnot json\n', "file.jsonl")).toThrow(
      /file\.jsonl: line 2 is not JSON/,
    );
    expect(decodeOtlpJson("\n\n")).toEqual([]);
  });

  it("a waiting span without task.wait.* attributes is read as a visit like any other: a state's name says nothing of its role", () => {
    const spans: DecodedSpan[] = decodeOtlpJson(JSON.stringify(request)).map((span) =>
      span.name === "waiting"
        ? {
            ...span,
            attributes: Object.fromEntries(
              Object.entries(span.attributes).filter(([name]) => !name.startsWith("task.wait.")),
            ),
          }
        : span,
    );
    const breakdown = breakdownFromSpans(spans, "sum-1")!;
    const waiting = breakdown.children.find((node) => node.name === "waiting")!;
    expect(waiting.seconds).toBeGreaterThan(0);
    expect(waiting.children).toEqual([]);
  });
});

describe("traces of a state machine of one's own", () => {
  it("rebuild explain(): state spans by the machine's names, its waiting state's apportioned wait", async () => {
    const clock = new FakeClock(10);
    const machine = {
      states: ["new", "waiting-deps", "fetching", "downloading", "ready", "running", "done", "failed"],
      transitions: {
        new: ["waiting-deps", "fetching"],
        "waiting-deps": ["ready"],
        fetching: ["downloading"],
        downloading: ["done", "fetching"],
        ready: ["running"],
        running: ["done", "failed"],
      },
      terminal: { success: "done", failure: "failed" },
      initial: "new",
      waiting: "waiting-deps",
      queued: ["fetching", "ready"],
      executing: "running",
      transfer: { state: "downloading", retry: "fetching" },
    } as const;
    const worker = process_(clock, { instance: WORKER, machine, sampling: { ratio: 1, keepSlowerThan: 0 } });
    // process_() hands out journeys typed by Dask's states; these take the machine's.
    const journeys = worker.journeys as unknown as TaskJourneys<"worker", (typeof machine.states)[number]>;
    journeys.dependencies("job-1", ["data-1"]);
    journeys.transition("job-1", "new", "waiting-deps");
    journeys.transition("data-1", "new", "fetching");
    clock.advance(0.5);
    const transfer = journeys.gather(PEER_1, ["data-1"], 1000);
    clock.advance(1);
    transfer.digest("network", 0.75);
    transfer.end("ok");
    journeys.transition("job-1", "waiting-deps", "ready");
    clock.advance(0.25);
    const run = journeys.execute("job-1");
    run.meter("compute", () => clock.advance(2));
    run.end();
    const expected = { job: journeys.explain("job-1"), data: journeys.explain("data-1") };
    expect(expected.job!.children.map((node) => node.name)).toEqual(["waiting-deps", "ready", "running"]);
    expect(expected.job!.children[0].children.map((node) => node.name)).toContain("network");
    await journeys.shutdown();
    const spans = decodeOtlpJson(jsonLines([worker.exporter.getFinishedSpans()]));
    expectSameBreakdown(breakdownFromSpans(spans, "job-1"), expected.job);
    // A transfer state of one's own is not known from the trace alone: the journey reads back as a
    // compute journey, with its states and seconds.
    const data = breakdownFromSpans(spans, "data-1")!;
    expect(data.children.map((node) => [node.name, node.seconds])).toEqual(
      expected.data!.children.map((node) => [node.name, node.seconds]),
    );
  });
});

describe("a job queue's machine, on either role", () => {
  // No state waits for dependencies here: `waiting` is the queue, whatever its name suggests.
  const jobs = {
    states: ["added", "waiting", "active", "delayed", "completed", "failed"],
    transitions: {
      added: ["waiting"],
      waiting: ["active"],
      active: ["completed", "failed", "delayed"],
      delayed: ["waiting"],
    },
    terminal: { success: "completed", failure: "failed" },
    initial: "added",
    queued: "waiting",
    executing: "active",
  } as const;
  type JobState = (typeof jobs.states)[number];

  for (const role of ["scheduler", "worker"] as const) {
    it(`${role}: the execute ledger's activities and the queue's time rebuild as explain() shows them`, async () => {
      const clock = new FakeClock(10);
      const queue = process_(clock, { role, instance: "queue-1", machine: jobs, sampling: { ratio: 1 } });
      const journeys = queue.journeys as unknown as TaskJourneys<typeof role, JobState>;
      journeys.transition("job-1", "added", "waiting");
      clock.advance(0.5);
      // A first attempt that fails into the backoff, in the same journey.
      const attempt = journeys.execute("job-1");
      attempt.meter("compute", () => clock.advance(1));
      attempt.end("delayed", new Error("flaky"));
      clock.advance(2);
      journeys.transition("job-1", "delayed", "waiting");
      clock.advance(0.5);
      journeys.transition("job-1", "waiting", "active");
      const run = journeys.execute("job-1");
      run.meter("fetch-input", () => {
        clock.advance(0.25);
        run.meter("decompress", () => clock.advance(0.125));
      });
      run.meter("compute", () => clock.advance(2));
      clock.advance(0.0625);
      run.end();
      const expected = journeys.explain("job-1");
      expect(
        expected!.children.map((node) => [node.name, node.children.map((child) => child.name), node.error]),
      ).toEqual([
        ["waiting", [], undefined],
        ["active", ["compute"], "Error: flaky"],
        ["delayed", [], undefined],
        ["waiting", [], undefined],
        ["active", ["fetch-input", "compute", "other"], undefined],
      ]);
      await journeys.shutdown();
      const spans = decodeOtlpJson(jsonLines([queue.exporter.getFinishedSpans()]));
      expectSameBreakdown(breakdownFromSpans(spans, "job-1"), expected);
      // And the report from these spans: the queue's time is no apportioned wait.
      const data = reportDataFromTelemetry({ spans, metrics: [], summaries: [], files: ["traces.jsonl"] });
      expect(data.wait).toEqual({});
      // Wherever the runs were metered: a queue recorded on its scheduler side has them there.
      expect(Object.keys(data.execute).sort()).toEqual(["compute", "failed", "fetch-input", "other"]);
      expect(data.execute.failed).toBeCloseTo(1, 9);
      const page = renderHtmlReport(data, { inlineEcharts: false });
      expect(page).toContain(" · 1 prefix</div>");
      // Only the side that has rows gets a table.
      expect(page.includes("(no prefixes recorded)")).toBe(false);
    });
  }
});
