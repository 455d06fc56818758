/**
 * A queue's own times (epoch milliseconds: a row's created/started/finished timestamps, a stream
 * id) mixed with the clocks' microsecond readings, across a producer that hands jobs off and a
 * consumer that runs their attempts, or a queue side whose journey is the parent of the worker's
 * and hears its result back, with the OpenTelemetry SDK: no span starts before its parent or ends
 * after it (but a hand-off's consumer, which follows its producer), and the digests' seconds reach
 * the spans as explain() has them.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { diag } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace";
import { defineMachine, TaskJourneys } from "../../../src/index.js";
import { internalsOf } from "../../../src/internal.js";
import { SpanIds } from "../../../src/otel/span-ids.js";
import { SpanWriter } from "../../../src/otel/spans/writer.js";
import { captureDiag } from "../../helpers/diag.js";

const PRODUCER = defineMachine({
  states: ["created", "sending", "enqueued", "rejected"],
  transitions: { created: ["sending"], sending: ["enqueued", "rejected"] },
  terminal: { success: "enqueued", failure: "rejected" },
  initial: "created",
});

const CONSUMER = defineMachine({
  states: ["received", "active", "completed", "retrying", "failed"],
  transitions: { received: ["active"], active: ["completed", "retrying", "failed"] },
  terminal: { success: "completed", failure: ["failed", "retrying"] },
  initial: "received",
  executing: "active",
});

/**
 * A queue's side whose journey of a job is the parent of the workers' (`sender.inject()` /
 * `receiver.continueFrom()`, as examples/job-queue does) and hears each attempt's result back
 * (`receiver.resultFrom()`).
 */
const QUEUE = defineMachine({
  states: ["added", "active", "completed", "failed"],
  transitions: { added: ["active"], active: ["completed", "failed"] },
  terminal: { success: "completed", failure: "failed" },
  initial: "added",
});

/**
 * Where each process's clock read 0, in epoch microseconds. Binary fractions of a second, so that
 * the exact tests are exact: an epoch second as a double resolves only 0.24 µs (2^-22 s), and the
 * property test runs with origins as performance.timeOrigin has them too.
 */
const PRODUCER_ORIGIN_US = 1_712_345_678_875_000;
const CONSUMER_ORIGIN_US = 1_712_345_679_437_500;
const REAL_ORIGINS_US = [1_712_345_678_901_234, 1_712_345_679_417_861];

/** A process: its journeys on a clock in microseconds since its origin, exporting to memory. */
function side(
  machine: typeof PRODUCER | typeof QUEUE | typeof CONSUMER,
  originUs: number,
  ratio: number,
  strict = false,
) {
  const exporter = new InMemorySpanExporter();
  const ids = new SpanIds();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    idGenerator: ids,
  });
  let nowUs = 0;
  const journeys = new TaskJourneys({
    role: machine === CONSUMER ? "worker" : "scheduler",
    machine: machine as typeof CONSUMER,
    instance: machine === CONSUMER ? "worker-1" : "producer-1",
    runtime: { clock: () => nowUs / 1e6, timeOrigin: originUs / 1e6 },
    tracerProvider: provider,
    sampling: { ratio, keepSlowerThan: 0.5, keepErrors: true },
    strict,
  }) as unknown as TaskJourneys<"worker", string>;
  internalsOf(journeys)!.spans.useIds(ids);
  return {
    journeys,
    exporter,
    /** Sets the clock to an epoch time in microseconds. */
    at(epochUs: number) {
      nowUs = epochUs - originUs;
    },
    /** A queue's epoch milliseconds as this process's clock seconds: the conversion docs/instrumenting.md gives. */
    seconds(epochMs: number) {
      return epochMs / 1000 - originUs / 1e6;
    },
  };
}

const ns = (time: readonly [number, number]) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);

/**
 * Every span's relation to its parent that breaks nesting, as text (none: all nest). `handOff`:
 * the consumer's task spans are under a producer's hand-off, which they follow, not within.
 */
function outside(spans: Array<{ span: ReadableSpan; side: string }>, handOff = true): string[] {
  const byId = new Map(spans.map((entry) => [entry.span.spanContext().spanId, entry]));
  const found: string[] = [];
  for (const { span, side } of spans) {
    const parentId = span.parentSpanContext?.spanId;
    const parent = parentId === undefined ? undefined : byId.get(parentId);
    if (parent === undefined) continue;
    const early = ns(parent.span.startTime) - ns(span.startTime);
    if (early > 0n) found.push(`${side} ${span.name} starts ${early} ns before its parent ${parent.span.name}`);
    // A consumer's task span under the producer's (its own, or the stand-in the consumer emitted)
    // follows it: a hand-off, not a call (docs/propagation.md).
    if (handOff && span.name === "task job" && parent.span.name === "task send") continue;
    const late = ns(span.endTime) - ns(parent.span.endTime);
    if (late > 0n) found.push(`${side} ${span.name} ends ${late} ns after its parent ${parent.span.name}`);
  }
  return found;
}

describe("a queue's millisecond times with the clocks' microseconds", () => {
  /** A producer that begins a job at its clock's reading (epoch µs) and hands it off; a consumer that starts it at a queue's millisecond. */
  function handedOff(producerUs: number, consumerMs: number) {
    const producer = side(PRODUCER, PRODUCER_ORIGIN_US, 1);
    const consumer = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
    producer.at(producerUs);
    producer.journeys.transition("send-1", "created", "sending");
    producer.at(producerUs + 160);
    const carrier: Record<string, string> = {};
    producer.journeys.propagation.sender.handOff("send-1", carrier, { to: "enqueued" });
    consumer.at(1_712_345_700_003_500);
    consumer.journeys.propagation.receiver.continueFrom("job-1", carrier, { attempt: 1 });
    consumer.journeys.transition("job-1", "received", "active", { at: consumer.seconds(consumerMs) });
    consumer.journeys.transition("job-1", "active", "completed", { at: consumer.seconds(1_712_345_700_125) });
    const root = producer.exporter.getFinishedSpans().find((span) => span.name === "task send")!;
    const job = consumer.exporter.getFinishedSpans();
    const task = job.find((span) => span.name === "task job")!;
    expect(task.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    return { consumer, root, task, active: job.find((span) => span.name === "active")! };
  }

  it("a consumer picking a job up within the millisecond it was created: its spans start at the producer's, to the nanosecond, silently (the millisecond's truncation)", () => {
    // The producer begins at 640 µs into the millisecond the queue's started_on (truncated) gives.
    const { consumer, root, task, active } = handedOff(1_712_345_700_000_640, 1_712_345_700_000);
    expect(root.startTime).toEqual([1_712_345_700, 640_000]);
    expect(task.startTime).toEqual([1_712_345_700, 640_000]);
    expect(active.startTime).toEqual([1_712_345_700, 640_000]);
    expect(consumer.journeys.dropped()).toEqual({});
  });

  it("a consumer that began more than a millisecond before the producer: its spans start at the producer's, counted and told once; explain() keeps the times given", () => {
    const told = captureDiag();
    try {
      // The producer begins its journey on its clock: epoch 1,712,345,700,001,640 µs; the queue
      // says the job started at epoch millisecond 1,712,345,700,000, 1640 µs before.
      const { consumer, root, task, active } = handedOff(1_712_345_700_001_640, 1_712_345_700_000);
      expect(root.startTime).toEqual([1_712_345_700, 1_640_000]);
      // Clamped to the producer's start, to the nanosecond; from there on, the times given.
      expect(task.startTime).toEqual([1_712_345_700, 1_640_000]);
      expect(active.startTime).toEqual([1_712_345_700, 1_640_000]);
      expect(active.endTime).toEqual([1_712_345_700, 125_000_000]);
      expect(task.endTime).toEqual([1_712_345_700, 125_000_000]);
      expect(consumer.journeys.explain("job-1")!.seconds).toBe(0.125);
      expect(consumer.journeys.dropped()).toEqual({ "before-hand-off": 1 });
      expect(told.filter((line) => line.includes("before-hand-off"))).toHaveLength(1);
      expect(told.join("\n")).toContain("1640 µs before the producer's");
    } finally {
      diag.disable();
    }
  });

  it("times that agree are kept exactly: nothing clamped, nothing counted", () => {
    const producer = side(PRODUCER, PRODUCER_ORIGIN_US, 1);
    const consumer = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
    producer.at(1_712_345_700_000_640);
    producer.journeys.transition("send-1", "created", "sending", { at: producer.seconds(1_712_345_700_000) });
    const carrier: Record<string, string> = {};
    producer.journeys.propagation.sender.handOff("send-1", carrier, { to: "enqueued" });
    consumer.at(1_712_345_700_001_500);
    consumer.journeys.propagation.receiver.continueFrom("job-1", carrier, { attempt: 1 });
    consumer.journeys.transition("job-1", "received", "active", { at: consumer.seconds(1_712_345_700_000) });
    consumer.journeys.transition("job-1", "active", "completed", { at: consumer.seconds(1_712_345_700_125) });
    const task = consumer.exporter.getFinishedSpans().find((span) => span.name === "task job")!;
    expect(producer.exporter.getFinishedSpans().find((span) => span.name === "task send")!.startTime).toEqual([
      1_712_345_700, 0,
    ]);
    expect(task.startTime).toEqual([1_712_345_700, 0]);
    expect(task.endTime).toEqual([1_712_345_700, 125_000_000]);
    expect(consumer.journeys.dropped()).toEqual({});
  });

  it("a queue side that ends its journey at a truncated completed_on after a worker's result came back: its task span ends at the worker's end, to the nanosecond, silently; explain() keeps the times given", () => {
    const queue = side(QUEUE, PRODUCER_ORIGIN_US, 1);
    const worker = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
    queue.at(1_712_345_700_000_250);
    queue.journeys.transition("queue-1", "added", "active", { at: queue.seconds(1_712_345_700_000) });
    const carrier: Record<string, string> = {};
    queue.journeys.propagation.sender.inject("queue-1", carrier);
    worker.at(1_712_345_700_002_000);
    worker.journeys.propagation.receiver.continueFrom("job-1", carrier);
    worker.journeys.transition("job-1", "received", "active");
    // The worker's attempt ends at its clock's reading, 125.640 ms into the job's millisecond.
    worker.at(1_712_345_700_125_640);
    worker.journeys.transition("job-1", "active", "completed");
    const back: Record<string, string> = {};
    worker.journeys.propagation.sender.inject("job-1", back);
    // When the worker's span ended, in the result's carrier: epoch seconds and nanoseconds.
    expect(back.tracestate).toBe("taskjourney-end=1712345700:125640000");
    // The queue ends the job at its row's completed_on: epoch millisecond 1,712,345,700,125, truncated.
    queue.at(1_712_345_700_126_300);
    queue.journeys.propagation.receiver.resultFrom("queue-1", back);
    queue.journeys.transition("queue-1", "active", "completed", { at: queue.seconds(1_712_345_700_125) });
    const child = worker.exporter.getFinishedSpans().find((span) => span.name === "task job")!;
    const parent = queue.exporter.getFinishedSpans().find((span) => span.name === "task queue")!;
    const active = queue.exporter.getFinishedSpans().find((span) => span.name === "active")!;
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(child.endTime).toEqual([1_712_345_700, 125_640_000]);
    // Not 125,000,000: the parent's task span ends where its child did; its state span keeps the time given.
    expect(parent.endTime).toEqual([1_712_345_700, 125_640_000]);
    expect(active.endTime).toEqual([1_712_345_700, 125_000_000]);
    expect(queue.journeys.explain("queue-1")!.seconds).toBe(0.125);
    // 640 µs: the millisecond's truncation, no mistake; nothing counted.
    expect(queue.journeys.dropped()).toEqual({});
    expect(
      outside(
        [
          ...queue.exporter.getFinishedSpans().map((span) => ({ span, side: "queue" })),
          ...worker.exporter.getFinishedSpans().map((span) => ({ span, side: "worker" })),
        ],
        false,
      ),
    ).toEqual([]);
  });

  it("on an epoch clock (timeOrigin 0) the parent's end is the child's HrTime exactly, not a double's rounding before it", () => {
    const queue = side(QUEUE, PRODUCER_ORIGIN_US, 0);
    const worker = side(CONSUMER, 0, 1);
    queue.at(1_712_345_700_000_250);
    queue.journeys.transition("queue-1", "added", "active", { at: queue.seconds(1_712_345_700_000) });
    const carrier: Record<string, string> = {};
    queue.journeys.propagation.sender.inject("queue-1", carrier);
    worker.at(1_712_345_700_002_000);
    worker.journeys.propagation.receiver.continueFrom("job-1", carrier);
    worker.journeys.transition("job-1", "received", "active");
    worker.at(1_712_345_700_125_641);
    worker.journeys.transition("job-1", "active", "completed");
    const back: Record<string, string> = {};
    worker.journeys.propagation.sender.inject("job-1", back);
    queue.at(1_712_345_700_126_300);
    // The queue did not sample the job: the worker's kept journey keeps it, under the ids it handed out.
    expect(queue.journeys.propagation.receiver.resultFrom("queue-1", back)).toBe(true);
    queue.journeys.transition("queue-1", "active", "completed", { at: queue.seconds(1_712_345_700_125) });
    const child = worker.exporter.getFinishedSpans().find((span) => span.name === "task job")!;
    const parent = queue.exporter.getFinishedSpans().find((span) => span.name === "task queue")!;
    // 1,712,345,700.125641 as a double is 1,712,345,700.12564110756…: its HrTime, to the nearest
    // nanosecond, is what the result carries and where the parent ends.
    expect(child.endTime).toEqual([1_712_345_700, 125_641_108]);
    expect(back.tracestate).toBe("taskjourney-end=1712345700:125641108");
    expect(parent.endTime).toEqual(child.endTime);
    expect(queue.journeys.dropped()).toEqual({});
  });

  it("a parent ended more than a millisecond before its child's result says the child ended: clamped, counted and told once", () => {
    const told = captureDiag();
    try {
      const queue = side(QUEUE, PRODUCER_ORIGIN_US, 1);
      const worker = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
      for (const job of [1, 2]) {
        queue.at(1_712_345_700_000_250);
        queue.journeys.transition(`queue-${job}`, "added", "active");
        const carrier: Record<string, string> = {};
        queue.journeys.propagation.sender.inject(`queue-${job}`, carrier);
        worker.at(1_712_345_700_002_000);
        worker.journeys.propagation.receiver.continueFrom(`job-${job}`, carrier);
        worker.journeys.transition(`job-${job}`, "received", "active");
        worker.at(1_712_345_700_125_640);
        worker.journeys.transition(`job-${job}`, "active", "completed");
        const back: Record<string, string> = {};
        worker.journeys.propagation.sender.inject(`job-${job}`, back);
        queue.at(1_712_345_700_126_300);
        queue.journeys.propagation.receiver.resultFrom(`queue-${job}`, back);
        // 5.640 ms before the worker's end: no millisecond's rounding.
        queue.journeys.transition(`queue-${job}`, "active", "completed", { at: queue.seconds(1_712_345_700_120) });
      }
      const parents = queue.exporter.getFinishedSpans().filter((span) => span.name === "task queue");
      expect(parents.map((span) => span.endTime)).toEqual([
        [1_712_345_700, 125_640_000],
        [1_712_345_700, 125_640_000],
      ]);
      // explain() keeps the times given: 119.75 ms (to a double's precision on this clock).
      expect(queue.journeys.explain("queue-1")!.seconds).toBeCloseTo(0.11975, 6);
      expect(queue.journeys.dropped()).toEqual({ "ended-before-result": 2 });
      const lines = told.filter((line) => line.includes("before the journey whose result came back"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('the journey of "queue-1" ended at');
      expect(lines[0]).toContain("5640 µs before");
    } finally {
      diag.disable();
    }
  });

  it("a result carrier whose end member is garbled, not ours or beyond maxClockSkew: counted and ignored, never thrown (strict too); the journey still kept", () => {
    const told = captureDiag();
    try {
      const queue = side(QUEUE, PRODUCER_ORIGIN_US, 0, true);
      const values = [
        "abc",
        "1712345700:1000000000",
        "1712345700:-5",
        "99999999999999999:0",
        "1812345700:0",
        "1712345700:1:2",
        "1712345700",
      ];
      values.forEach((value, index) => {
        queue.at(1_712_345_700_000_250);
        queue.journeys.transition(`queue-${index}`, "added", "active");
        const back = {
          traceparent: `00-${"a".repeat(31)}${index}-${"b".repeat(16)}-01`,
          tracestate: `taskjourney-end=${value},other=1`,
        };
        queue.at(1_712_345_700_126_300);
        expect(queue.journeys.propagation.receiver.resultFrom(`queue-${index}`, back)).toBe(true);
        queue.journeys.transition(`queue-${index}`, "active", "completed");
      });
      const parents = queue.exporter.getFinishedSpans().filter((span) => span.name === "task queue");
      expect(parents).toHaveLength(values.length);
      for (const span of parents) expect(span.endTime).toEqual([1_712_345_700, 126_300_000]);
      expect(queue.journeys.dropped()).toEqual({ "invalid-result-end": values.length });
      const lines = told.filter((line) => line.includes("taskjourney-end member"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"abc"');
    } finally {
      diag.disable();
    }
  });

  /** A queue side that begins a job's journey at its clock's reading (epoch µs), a worker at a queue's millisecond. */
  function injected(queueUs: number, workerMs: number, queueRatio = 1, job = "1") {
    const queue = side(QUEUE, PRODUCER_ORIGIN_US, queueRatio);
    const worker = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
    queue.at(queueUs);
    queue.journeys.transition(`queue-${job}`, "added", "active");
    const carrier: Record<string, string> = {};
    queue.journeys.propagation.sender.inject(`queue-${job}`, carrier);
    worker.at(1_712_345_700_002_000);
    worker.journeys.propagation.receiver.continueFrom(`job-${job}`, carrier);
    worker.journeys.transition(`job-${job}`, "received", "active", { at: worker.seconds(workerMs) });
    worker.at(1_712_345_700_125_640);
    worker.journeys.transition(`job-${job}`, "active", "completed");
    const back: Record<string, string> = {};
    worker.journeys.propagation.sender.inject(`job-${job}`, back);
    queue.at(1_712_345_700_126_300);
    queue.journeys.propagation.receiver.resultFrom(`queue-${job}`, back);
    queue.journeys.transition(`queue-${job}`, "active", "completed");
    const spans = [
      ...queue.exporter.getFinishedSpans().map((span) => ({ span, side: "queue" })),
      ...worker.exporter.getFinishedSpans().map((span) => ({ span, side: "worker" })),
    ];
    return {
      queue,
      worker,
      carrier,
      spans,
      task: (name: string) => spans.find((entry) => entry.span.name === name)!.span,
    };
  }

  it("a worker starting at a started_on truncated to the millisecond its queue-side parent began in: its spans start at the parent's (the sampled inject() carrier says when), to the nanosecond, silently; explain() keeps the times given", () => {
    // The queue side begins the job at its clock's reading, 640 µs into epoch millisecond
    // 1,712,345,700,000; the worker at the job's started_on, that millisecond truncated.
    const { queue, worker, carrier, spans, task } = injected(1_712_345_700_000_640, 1_712_345_700_000);
    const parent = task("task queue");
    expect(carrier.tracestate).toBe(
      `taskjourney=${
        queue.exporter
          .getFinishedSpans()
          .find((span) => span.name === "active")!
          .spanContext().spanId
      },taskjourney-start=1712345700:640000`,
    );
    expect(parent.startTime).toEqual([1_712_345_700, 640_000]);
    expect(task("task job").parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(task("task job").startTime).toEqual([1_712_345_700, 640_000]);
    expect(spans.find((entry) => entry.side === "worker" && entry.span.name === "active")!.span.startTime).toEqual([
      1_712_345_700, 640_000,
    ]);
    expect(worker.journeys.explain("job-1")!.seconds).toBeCloseTo(0.12564, 9);
    expect(outside(spans, false)).toEqual([]);
    // 640 µs: the millisecond's truncation, no mistake; nothing counted.
    expect(worker.journeys.dropped()).toEqual({});
  });

  it("a worker that began more than a millisecond before its parent's start: clamped, counted and told once", () => {
    const told = captureDiag();
    try {
      const runs = [1, 2].map((job) => injected(1_712_345_700_003_640, 1_712_345_700_001, 1, String(job)));
      for (const { task } of runs) expect(task("task job").startTime).toEqual([1_712_345_700, 3_640_000]);
      expect(runs.map(({ worker }) => worker.journeys.dropped())).toEqual([
        { "started-before-parent": 1 },
        { "started-before-parent": 1 },
      ]);
      const lines = told.filter((line) => line.includes("before the journey it continues"));
      // Told once per process: each run is its own.
      expect(lines).toHaveLength(2);
      expect(lines[0]).toContain('the journey of "job-1" began at');
      expect(lines[0]).toContain("2640 µs before");
    } finally {
      diag.disable();
    }
  });

  it("a carrier whose start member is garbled, not ours or beyond maxClockSkew: counted and ignored, never thrown (strict too); the spans start at the times given", () => {
    const told = captureDiag();
    try {
      const worker = side(CONSUMER, CONSUMER_ORIGIN_US, 0, true);
      const values = ["abc", "1712345700:1000000000", "1712345700:-5", "99999999999999999:0", "1812345700:0", "1:2:3"];
      values.forEach((value, index) => {
        worker.at(1_712_345_700_002_000);
        const carrier = {
          traceparent: `00-${"a".repeat(31)}${index}-${"b".repeat(16)}-01`,
          tracestate: `taskjourney-start=${value},other=1`,
        };
        expect(worker.journeys.propagation.receiver.continueFrom(`job-${index}`, carrier)).toBe(true);
        worker.journeys.transition(`job-${index}`, "received", "active");
        worker.journeys.transition(`job-${index}`, "active", "completed");
      });
      const tasks = worker.exporter.getFinishedSpans().filter((span) => span.name === "task job");
      expect(tasks).toHaveLength(values.length);
      for (const span of tasks) expect(span.startTime).toEqual([1_712_345_700, 2_000_000]);
      expect(worker.journeys.dropped()).toEqual({ "invalid-parent-start": values.length });
      const lines = told.filter((line) => line.includes("taskjourney-start member"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"abc"');
    } finally {
      diag.disable();
    }
  });

  it("a producer's start from the carrier, on a clock of any origin, becomes seconds whose HrTime is never before it (an epoch clock's double rounds either way)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 1_712_345_678.901234, 1_712_345_678.875),
        fc.integer({ min: 1_712_345_678, max: 1_712_445_678 }),
        fc.integer({ min: 0, max: 999_999_999 }),
        (timeOrigin, whole, nanos) => {
          const writer = new SpanWriter(undefined as never, { timeOrigin, maxChildrenPerSpan: 1, maxLinksPerSpan: 1 });
          const given: [number, number] = [whole, nanos];
          const made = writer.hr(writer.secondsNotBefore(given));
          const after = (made[0] - whole) * 1e9 + (made[1] - nanos);
          // Never before; at most a couple of a double's steps after (2^-22 s on an epoch clock).
          expect(after).toBeGreaterThanOrEqual(0);
          expect(after).toBeLessThanOrEqual(timeOrigin === 0 ? 477 : 1);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("for any mix of queue milliseconds (truncated or rounded) and clock readings, on producer (or queue side) and consumer, over any attempts: every span within its parent (a child whose result came back ending within it too), every digest's seconds on its span", () => {
    const told = captureDiag();
    try {
      const time = fc.record({ queue: fc.boolean(), rounding: fc.constantFrom("floor", "round", "ceil") });
      const attempt = fc.record({
        waitUs: fc.integer({ min: 0, max: 2500 }),
        start: time,
        executeAt: fc.boolean(),
        meterUs: fc.integer({ min: 0, max: 2500 }),
        cpuUs: fc.integer({ min: 0, max: 4000 }),
        nested: fc.boolean(),
        runUs: fc.integer({ min: 0, max: 2500 }),
        end: time,
        endByLedger: fc.boolean(),
      });
      const plan = fc.record({
        createdUs: fc.integer({ min: 0, max: 5_000_000 }),
        created: time,
        sendUs: fc.integer({ min: 0, max: 2500 }),
        handOff: time,
        producerRatio: fc.constantFrom(1, 0),
        consumerRatio: fc.constantFrom(1, 0),
        attempts: fc.array(attempt, { minLength: 1, maxLength: 3 }),
        failsAtLast: fc.boolean(),
        // A hand-off (the producer's journey ends there), or a queue side whose journey is the
        // consumers' parent and hears each attempt's result back (`resultFrom()`), then ends.
        results: fc.boolean(),
        completeUs: fc.integer({ min: 0, max: 2500 }),
        completed: time,
        // Binary fractions of a second; as performance.timeOrigin has them; the consumer on an
        // epoch clock (timeOrigin 0: a double of epoch seconds resolves 0.24 µs).
        origins: fc.constantFrom("exact", "real", "epoch"),
      });
      fc.assert(
        fc.property(plan, (p) => {
          const [producerOrigin, consumerOrigin] =
            p.origins === "real"
              ? REAL_ORIGINS_US
              : p.origins === "epoch"
                ? [REAL_ORIGINS_US[0], 0]
                : [PRODUCER_ORIGIN_US, CONSUMER_ORIGIN_US];
          const producer = side(p.results ? QUEUE : PRODUCER, producerOrigin, p.producerRatio);
          // Under a hand-off the consumer follows the producer's sampling; under a queue side, its own.
          const consumer = side(CONSUMER, consumerOrigin, p.results ? p.consumerRatio : 1);
          // `at` from the queue: its epoch milliseconds of the event; else none, the clock's reading.
          const given = (s: typeof producer, epochUs: number, t: { queue: boolean; rounding: string }) =>
            t.queue ? { at: s.seconds(Math[t.rounding as "floor"](epochUs / 1000)) } : undefined;
          let now = 1_712_345_700_000_000 + p.createdUs;
          producer.at(now);
          const carrier: Record<string, string> = {};
          if (p.results) {
            // The queue side begins the job's journey at its created_on or its clock's reading,
            // and a worker may start at a started_on truncated to that same millisecond: the
            // sampled inject() carrier says when the queue side's span started. An unsampled one
            // says nothing (nearly every carrier: the receiver takes it unparsed), and a queue
            // side kept only for its worker's result (resultFrom()) starts where it began: there
            // it begins at its created_on, truncated, as examples/job-queue does (left open).
            producer.journeys.transition(
              "send-1",
              "added",
              "active",
              p.producerRatio === 0
                ? { at: producer.seconds(Math.floor(now / 1000)) }
                : given(producer, now, p.created),
            );
            now += p.sendUs;
            producer.at(now);
            producer.journeys.propagation.sender.inject("send-1", carrier);
          } else {
            producer.journeys.transition("send-1", "created", "sending", given(producer, now, p.created));
            now += p.sendUs;
            producer.at(now);
            producer.journeys.propagation.sender.handOff("send-1", carrier, {
              to: "enqueued",
              ...given(producer, now, p.handOff),
            });
          }
          const digested: number[] = [];
          p.attempts.forEach((a, index) => {
            const last = index === p.attempts.length - 1;
            const outcome = !last ? "retrying" : p.failsAtLast ? "failed" : "completed";
            now += a.waitUs;
            consumer.at(now);
            const w = consumer.journeys;
            w.propagation.receiver.continueFrom("job-1", carrier, { attempt: index + 1 });
            let ledger;
            if (a.executeAt) ledger = w.execute("job-1", given(consumer, now, a.start));
            else {
              w.transition("job-1", "received", "active", given(consumer, now, a.start));
              ledger = w.execute("job-1");
            }
            now += a.meterUs;
            consumer.at(now);
            ledger.meter("load", () => {
              now += a.runUs;
              consumer.at(now);
              if (a.nested) ledger.digest("thread-cpu", a.cpuUs / 1e6);
            });
            if (!a.nested) ledger.digest("thread-cpu", a.cpuUs / 1e6);
            digested.push(a.cpuUs / 1e6);
            if (a.endByLedger) ledger.end(outcome, { at: given(consumer, now, a.end)?.at });
            else w.transition("job-1", "active", outcome, given(consumer, now, a.end));
            if (p.results) {
              // The result back, on the queue side before its journey ends.
              const back: Record<string, string> = {};
              w.propagation.sender.inject("job-1", back);
              producer.journeys.propagation.receiver.resultFrom("send-1", back);
            }
          });
          if (p.results) {
            // The queue side ends the job at its completed_on (or its clock's reading), after the last result.
            now += p.completeUs;
            producer.at(now);
            producer.journeys.transition(
              "send-1",
              "active",
              p.failsAtLast ? "failed" : "completed",
              given(producer, now, p.completed),
            );
          }
          const spans = [
            ...producer.exporter.getFinishedSpans().map((span) => ({ span, side: "producer" })),
            ...consumer.exporter.getFinishedSpans().map((span) => ({ span, side: "consumer" })),
          ];
          expect(outside(spans, !p.results)).toEqual([]);
          // Each kept attempt's digest as explain() had it: on `run` or on `load`.
          const cpu = consumer.exporter
            .getFinishedSpans()
            .map((span) => span.attributes["thread.cpu_time"])
            .filter((value) => value !== undefined);
          // A digest is kept as an interval ending at the clock's reading: on an epoch clock its
          // seconds resolve as its doubles do (2^-22 s), explain()'s as the span's.
          const resolution = p.origins === "epoch" ? 2 ** -22 : 1e-12;
          for (const value of cpu)
            expect(digested.some((seconds) => Math.abs(seconds - (value as number)) <= resolution)).toBe(true);
        }),
        { numRuns: 400 },
      );
      // Only what the property allowed told: the disagreement at a hand-off, or a queue side's end
      // given more than a millisecond before its child's (a `ceil` against a `floor`), never a
      // failure of the bridge nor a result's end it could not read.
      expect(told.filter((line) => line.includes("listener-error") || line.includes("invalid-result-end"))).toEqual([]);
    } finally {
      diag.disable();
    }
  });
});
