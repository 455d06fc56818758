/**
 * A queue's own times (epoch milliseconds: a row's created/started/finished timestamps, a stream
 * id) mixed with the clocks' microsecond readings, across a producer that hands jobs off and a
 * consumer that runs their attempts, with the OpenTelemetry SDK: no span starts before its parent
 * or (within a process) ends after it, and the digests' seconds reach the spans as explain() has them.
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
 * Where each process's clock read 0, in epoch microseconds. Binary fractions of a second, so that
 * the exact tests are exact: an epoch second as a double resolves only 0.24 µs (2^-22 s), and the
 * property test runs with origins as performance.timeOrigin has them too.
 */
const PRODUCER_ORIGIN_US = 1_712_345_678_875_000;
const CONSUMER_ORIGIN_US = 1_712_345_679_437_500;
const REAL_ORIGINS_US = [1_712_345_678_901_234, 1_712_345_679_417_861];

/** A process: its journeys on a clock in microseconds since its origin, exporting to memory. */
function side(machine: typeof PRODUCER | typeof CONSUMER, originUs: number, ratio: number) {
  const exporter = new InMemorySpanExporter();
  const ids = new SpanIds();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    idGenerator: ids,
  });
  let nowUs = 0;
  const journeys = new TaskJourneys({
    role: machine === PRODUCER ? "scheduler" : "worker",
    machine: machine as typeof CONSUMER,
    instance: machine === PRODUCER ? "producer-1" : "worker-1",
    runtime: { clock: () => nowUs / 1e6, timeOrigin: originUs / 1e6 },
    tracerProvider: provider,
    sampling: { ratio, keepSlowerThan: 0.5, keepErrors: true },
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

/** Every span's relation to its parent that breaks nesting, as text (none: all nest). */
function outside(spans: Array<{ span: ReadableSpan; side: string }>): string[] {
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
    if (span.name === "task job" && parent.span.name === "task send") continue;
    const late = ns(span.endTime) - ns(parent.span.endTime);
    if (late > 0n) found.push(`${side} ${span.name} ends ${late} ns after its parent ${parent.span.name}`);
  }
  return found;
}

describe("a queue's millisecond times with the clocks' microseconds", () => {
  it("a consumer picking a job up within the millisecond it was created: its spans start at the producer's, counted and told once; explain() keeps the times given", () => {
    const told = captureDiag();
    try {
      const producer = side(PRODUCER, PRODUCER_ORIGIN_US, 1);
      const consumer = side(CONSUMER, CONSUMER_ORIGIN_US, 1);
      // The producer begins its journey on its clock: epoch 1,712,345,700,000,640 µs.
      producer.at(1_712_345_700_000_640);
      producer.journeys.transition("send-1", "created", "sending");
      producer.at(1_712_345_700_000_800);
      const carrier: Record<string, string> = {};
      producer.journeys.propagation.sender.handOff("send-1", carrier, { to: "enqueued" });
      // The queue says the job started at epoch millisecond 1,712,345,700,000: its row's
      // timestamp, truncated, 640 µs before the producer began.
      consumer.at(1_712_345_700_001_500);
      consumer.journeys.propagation.receiver.continueFrom("job-1", carrier, { attempt: 1 });
      consumer.journeys.transition("job-1", "received", "active", { at: consumer.seconds(1_712_345_700_000) });
      consumer.journeys.transition("job-1", "active", "completed", { at: consumer.seconds(1_712_345_700_125) });
      const root = producer.exporter.getFinishedSpans().find((span) => span.name === "task send")!;
      const job = consumer.exporter.getFinishedSpans();
      const task = job.find((span) => span.name === "task job")!;
      const active = job.find((span) => span.name === "active")!;
      expect(task.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
      expect(root.startTime).toEqual([1_712_345_700, 640_000]);
      // Clamped to the producer's start, to the nanosecond; from there on, the times given.
      expect(task.startTime).toEqual([1_712_345_700, 640_000]);
      expect(active.startTime).toEqual([1_712_345_700, 640_000]);
      expect(active.endTime).toEqual([1_712_345_700, 125_000_000]);
      expect(task.endTime).toEqual([1_712_345_700, 125_000_000]);
      expect(consumer.journeys.explain("job-1")!.seconds).toBe(0.125);
      expect(consumer.journeys.dropped()).toEqual({ "before-hand-off": 1 });
      expect(told.filter((line) => line.includes("before-hand-off"))).toHaveLength(1);
      expect(told.join("\n")).toContain("640 µs before the producer's");
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

  it("for any mix of queue milliseconds (truncated or rounded) and clock readings, on producer and consumer, over any attempts: every span within its parent, every digest's seconds on its span", () => {
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
        attempts: fc.array(attempt, { minLength: 1, maxLength: 3 }),
        failsAtLast: fc.boolean(),
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
          const producer = side(PRODUCER, producerOrigin, p.producerRatio);
          const consumer = side(CONSUMER, consumerOrigin, 1);
          // `at` from the queue: its epoch milliseconds of the event; else none, the clock's reading.
          const given = (s: typeof producer, epochUs: number, t: { queue: boolean; rounding: string }) =>
            t.queue ? { at: s.seconds(Math[t.rounding as "floor"](epochUs / 1000)) } : undefined;
          let now = 1_712_345_700_000_000 + p.createdUs;
          producer.at(now);
          producer.journeys.transition("send-1", "created", "sending", given(producer, now, p.created));
          now += p.sendUs;
          producer.at(now);
          const carrier: Record<string, string> = {};
          producer.journeys.propagation.sender.handOff("send-1", carrier, {
            to: "enqueued",
            ...given(producer, now, p.handOff),
          });
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
          });
          const spans = [
            ...producer.exporter.getFinishedSpans().map((span) => ({ span, side: "producer" })),
            ...consumer.exporter.getFinishedSpans().map((span) => ({ span, side: "consumer" })),
          ];
          expect(outside(spans)).toEqual([]);
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
      // Only what the property allowed told: the disagreement at a hand-off, never a failure of the bridge.
      expect(told.filter((line) => line.includes("listener-error"))).toEqual([]);
    } finally {
      diag.disable();
    }
  });
});
