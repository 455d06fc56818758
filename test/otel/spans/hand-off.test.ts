/**
 * A producer that hands jobs off and never hears back, and consumers in other processes running
 * each job's attempts: every journey on the producer ends at the hand-off, and every kept job is
 * one whole trace with its root, under head sampling (the producer's decision, followed by the
 * consumers) and tail keeping (a failed job kept whole even when the producer did not sample it).
 */
import { describe, expect, it } from "vitest";
import { diag, ProxyTracerProvider } from "@opentelemetry/api";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { defineMachine, TaskJourneys } from "../../../src/index.js";
import { internalsOf } from "../../../src/internal.js";
import { SpanIds } from "../../../src/otel/span-ids.js";
import { captureDiag } from "../../helpers/diag.js";
import { ORIGIN, records, type SpanRecord } from "../../fixtures/whole-traces.js";

const PRODUCER = defineMachine({
  states: ["created", "sending", "enqueued", "rejected"],
  transitions: { created: ["sending"], sending: ["enqueued", "rejected"] },
  terminal: { success: "enqueued", failure: "rejected" },
  initial: "created",
});

const CONSUMER = defineMachine({
  states: ["received", "active", "completed", "retrying", "failed"],
  transitions: { received: ["active"], active: ["completed", "retrying", "failed"] },
  // An attempt that will be retried ends here as a failure: the next attempt may run elsewhere.
  terminal: { success: "completed", failure: ["failed", "retrying"] },
  initial: "received",
  executing: "active",
});

interface Job {
  producerKey: string;
  /** The queue's id of the job: known to consumers only. */
  id: string;
  start: number;
  /** Each attempt's outcome, in order. */
  attempts: Array<"completed" | "retrying" | "failed">;
  seconds: number;
  /** How long the producer's send takes: the queue confirms it then. */
  send: number;
}

/** 300 jobs 4 s apart: every 13th fails three times for good, every 7th fails once then succeeds, every 17th is slow. */
function jobs(): Job[] {
  return Array.from({ length: 300 }, (_, i) => ({
    producerKey: `send-${i}`,
    id: `7f3a${i.toString(16).padStart(4, "0")}`,
    start: i * 4,
    attempts:
      i % 13 === 12 ? ["retrying", "retrying", "failed"] : i % 7 === 3 ? ["retrying", "completed"] : ["completed"],
    seconds: i % 17 === 16 ? 2 : 0.25,
    // Some sends are slow (the producer's tail sampler would keep them), failing jobs among them.
    send: i % 26 === 12 ? 0.5 : 0.002,
  }));
}

/**
 * Ids: `true`, a SpanIds the provider takes, as taskjourney/sdk sets it up; `false`, the
 * provider's own; "idGenerator", a user's provider made after the journeys (NodeSDK's order, behind
 * a proxy as the global one is) given `journeys.idGenerator`; "read only", the same read but not given.
 */
type Ids = boolean | "idGenerator" | "read only";

function side(name: string, machine: typeof PRODUCER | typeof CONSUMER, ratio: number, chooseIds: Ids) {
  const exporter = new InMemorySpanExporter();
  const ids = chooseIds === true ? new SpanIds() : undefined;
  const spanProcessors = [new SimpleSpanProcessor({ exporter })];
  const proxy = typeof chooseIds === "string" ? new ProxyTracerProvider() : undefined;
  const provider =
    proxy ?? new BasicTracerProvider({ spanProcessors, ...(ids === undefined ? {} : { idGenerator: ids }) });
  const clock = { now: 0 };
  const journeys = new TaskJourneys({
    role: machine === PRODUCER ? "scheduler" : "worker",
    machine: machine as typeof CONSUMER,
    instance: name,
    clock: () => clock.now,
    timeOrigin: ORIGIN,
    tracerProvider: provider,
    sampling: { ratio, keepSlowerThan: 0.9, keepErrors: true },
  });
  if (ids !== undefined) internalsOf(journeys)!.spans.useIds(ids);
  if (proxy !== undefined) {
    const idGenerator = journeys.idGenerator;
    proxy.setDelegate(
      new BasicTracerProvider({ spanProcessors, ...(chooseIds === "idGenerator" ? { idGenerator } : {}) }),
    );
  }
  return { journeys, exporter, clock };
}

/** The producer, two consumers taking attempts in turn; the carrier goes with the job through JSON. */
function run(producerRatio: number, consumerRatio: number, chooseIds: Ids) {
  const producer = side("producer-1", PRODUCER, producerRatio, chooseIds);
  const consumers = [
    side("worker-1", CONSUMER, consumerRatio, chooseIds),
    side("worker-2", CONSUMER, consumerRatio, chooseIds),
  ];
  const plan = jobs();
  for (const job of plan) {
    const p = producer.journeys as unknown as TaskJourneys<"scheduler", (typeof PRODUCER.states)[number]>;
    producer.clock.now = job.start + job.send;
    p.describe(job.producerKey, { prefix: "resize" });
    p.transition(job.producerKey, "created", "sending", { at: job.start });
    const carrier: Record<string, string> = {};
    expect(p.propagation.sender.handOff(job.producerKey, carrier, { at: job.start + job.send / 2 })).toBe(true);
    // The queue confirmed the job: the producer's journey ends there, and it never hears of it again.
    p.transition(job.producerKey, "sending", "enqueued", { at: job.start + job.send });
    const payload = JSON.parse(JSON.stringify({ carrier }));
    job.attempts.forEach((outcome, index) => {
      const consumer = consumers[index % 2];
      const w = consumer.journeys as unknown as TaskJourneys<"worker", (typeof CONSUMER.states)[number]>;
      const t = job.start + job.send + 0.01 + index;
      consumer.clock.now = t + job.seconds;
      w.describe(job.id, { prefix: "resize" });
      w.propagation.receiver.continueFrom(job.id, payload.carrier, { attempt: index + 1 });
      w.transition(job.id, "received", "active", { at: t });
      w.transition(job.id, "active", outcome, {
        at: t + job.seconds,
        error: outcome === "completed" ? undefined : "disk full",
      });
    });
  }
  const spans = [producer, ...consumers].flatMap((s) => records(s.exporter.getFinishedSpans()));
  return { plan, producer, consumers, spans };
}

/** Checks every trace is whole; returns the jobs kept (by consumer key) with their root. */
function checkWhole(plan: Job[], spans: SpanRecord[]) {
  const byId = new Map<string, SpanRecord>();
  for (const span of spans) {
    expect(byId.has(span.spanId), `span id ${span.spanId} once`).toBe(false);
    byId.set(span.spanId, span);
  }
  // No span's parent is missing: every trace has its root.
  for (const span of spans)
    if (span.parentSpanId !== undefined) expect(byId.get(span.parentSpanId), span.name).toBeDefined();
  const kept = new Map<string, { root: SpanRecord; attempts: SpanRecord[] }>();
  for (const job of plan) {
    const attempts = spans.filter((span) => span.name === "task resize" && span.key === job.id);
    if (attempts.length === 0) continue;
    const roots = new Set(attempts.map((attempt) => attempt.parentSpanId));
    // Every attempt of the job, whichever consumer ran it, under the one producer span.
    expect(roots.size, job.id).toBe(1);
    const root = byId.get([...roots][0]!)!;
    expect(root.parentSpanId, `${job.id}: the producer's span is the root`).toBeUndefined();
    expect(root.name).toBe("task resize");
    for (const attempt of attempts) expect(attempt.traceId).toBe(root.traceId);
    // The producer's span ended at the hand-off's confirmation (or, as a stand-in, at the hand-off).
    expect(root.start).toBeCloseTo(job.start, 6);
    expect(root.end).toBeLessThanOrEqual(job.start + job.send + 1e-9);
    kept.set(job.id, { root, attempts });
  }
  return kept;
}

describe("hand-off: a producer that never hears back", () => {
  it("ratio 1: every job one trace, the producer's real span its root, every attempt under it; nothing left open on the producer", () => {
    const { plan, producer, spans } = run(1, 1, true);
    expect(internalsOf(producer.journeys)!.recorder.live.size).toBe(0);
    const kept = checkWhole(plan, spans);
    expect(kept.size).toBe(300);
    for (const job of plan) {
      const { root, attempts } = kept.get(job.id)!;
      expect(attempts).toHaveLength(job.attempts.length);
      // Exported by the producer itself: its role, its key, no stand-in.
      expect(root.role).toBe("scheduler");
      expect(root.key).toBe(job.producerKey);
      expect(root.end).toBeCloseTo(job.start + job.send, 6);
    }
    // The producer's span has its state visits and ended: nothing marked unfinished.
    const producerSpans = records(producer.exporter.getFinishedSpans());
    expect(producerSpans.filter((span) => span.name === "sending")).toHaveLength(300);
  });

  for (const ratio of [0.01, 0]) {
    it(`ratio ${ratio}: every failed job kept whole with its root (a stand-in when the producer did not sample it), attempts on both consumers`, () => {
      const { plan, producer, spans } = run(ratio, ratio, true);
      expect(internalsOf(producer.journeys)!.recorder.live.size).toBe(0);
      const kept = checkWhole(plan, spans);
      const failed = plan.filter((job) => job.attempts.length > 1);
      expect(failed.length).toBe(63);
      for (const job of failed) {
        const entry = kept.get(job.id);
        expect(entry, `${job.id} kept`).toBeDefined();
        expect(entry!.attempts).toHaveLength(job.attempts.length);
      }
      const producerRoots = records(producer.exporter.getFinishedSpans()).filter((s) => s.name === "task resize");
      const standIns = [...kept.values()].filter(({ root }) => root.role === undefined);
      // Each kept job's root is either the producer's own (head-sampled there) or one stand-in.
      expect(producerRoots.length + standIns.length).toBe(kept.size);
      if (ratio === 0) expect(producerRoots).toHaveLength(0);
      // The stand-in is the producer's span as far as the hand-off, with its ids.
      for (const job of plan) {
        const root = kept.get(job.id)?.root;
        if (root === undefined || root.role !== undefined) continue;
        expect(root.end, "as far as the hand-off").toBeCloseTo(job.start + job.send / 2, 6);
      }
      expect(kept.size).toBeLessThan(300);
    });
  }

  it("consumers follow the producer's decision: sampled everywhere at ratio 0 on the consumers, nothing kept but failures and slow ones at ratio 0 on the producer", () => {
    const followed = run(1, 0, true);
    expect(checkWhole(followed.plan, followed.spans).size).toBe(300);
    const notSampled = run(0, 1, true);
    const kept = checkWhole(notSampled.plan, notSampled.spans);
    // The consumers' own ratio (1) would have sampled every job under a span nobody exported.
    expect(kept.size).toBeLessThan(100);
  });

  it("without ids of taskjourney's choosing (a provider of the user's), tells once that kept traces have no root", () => {
    const messages = captureDiag();
    try {
      run(0, 0, false);
    } finally {
      diag.disable();
    }
    const told = messages.filter((text) => text.includes("hand-off"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("docs/propagation.md#producers-and-consumers");
  });

  it("a provider of the user's given journeys.idGenerator (NodeSDK's idGenerator): every failed job kept whole with its stand-in root at ratio 0", () => {
    const messages = captureDiag();
    let result;
    try {
      result = run(0, 0, "idGenerator");
    } finally {
      diag.disable();
    }
    const kept = checkWhole(result.plan, result.spans);
    const failed = result.plan.filter((job) => job.attempts.length > 1);
    for (const job of failed)
      expect(kept.get(job.id)?.attempts, `${job.id} kept whole`).toHaveLength(job.attempts.length);
    expect([...kept.values()].every(({ root }) => root.role === undefined)).toBe(true);
    expect(messages).toEqual([]);
  });

  it("journeys.idGenerator read but not given to the provider: told once, naming it, and no more ids handed out", () => {
    const messages = captureDiag();
    let result;
    try {
      result = run(0, 0, "read only");
    } finally {
      diag.disable();
    }
    const told = messages.filter((text) => text.includes("journeys.idGenerator"));
    expect(told).toHaveLength(2);
    expect(told[0]).toContain("does not take its ids from journeys.idGenerator");
    expect(told[1]).toContain("has no root span");
    // Past the first kept journeys, carriers name real spans again: most failed jobs are whole.
    const byId = new Set(result.spans.map((span) => span.spanId));
    const orphans = result.spans.filter((span) => span.parentSpanId !== undefined && !byId.has(span.parentSpanId));
    expect(orphans.length).toBeGreaterThan(0);
  });

  it("handOff() with no live journey is counted, writes nothing; with `to` it ends the journey there", () => {
    const { journeys } = side("producer-1", PRODUCER, 1, true);
    const p = journeys as unknown as TaskJourneys<"scheduler", (typeof PRODUCER.states)[number]>;
    const carrier: Record<string, string> = {};
    expect(p.propagation.sender.handOff("nope", carrier)).toBe(false);
    expect(carrier).toEqual({});
    expect(p.dropped()["hand-off-without-journey"]).toBe(1);
    p.transition("a", "created", "sending", { at: 1 });
    expect(p.propagation.sender.handOff("a", carrier, { at: 2, to: "enqueued" })).toBe(true);
    expect(carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(carrier.tracestate).toBe(`taskjourney-handoff=${ORIGIN + 1}:0:${ORIGIN + 2}:0:a`);
    expect(p.explain("a")!.outcome).toBe("enqueued");
    expect(internalsOf(journeys)!.recorder.live.size).toBe(0);
  });
});
