/**
 * The job queue of docs/instrumenting.md, instrumented by examples/job-queue/instrument.ts (the
 * code the guide quotes) and run for real: two workers, parent/child jobs, retries with backoff.
 */
import { SpanStatusCode } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import {
  TracerProvider as BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace";
import { TaskJourneys } from "../../src/index.js";
import { instrumentQueue, instrumentWorker, JOB_MACHINE, JOB_RUNTIME } from "../../examples/job-queue/instrument.js";
import { startCluster } from "../../examples/job-queue/workload.js";

const seconds = (time: [number, number]) => time[0] + time[1] / 1e9;
const ns = (time: [number, number]) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);

/**
 * `workerClock` "late": the workers read a clock 999 µs into each millisecond Date.now() gives
 * (as a microsecond clock's reading late in a millisecond is), the queue side Date.now()'s
 * truncated milliseconds: a job completed within the millisecond its attempt ended ends on the
 * queue's side up to 999 µs before the worker's span, unless the result's carrier says so.
 */
async function run(ratio: number, workerClock: "same" | "late" = "same") {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const options = {
    runtime: JOB_RUNTIME,
    tracerProvider,
    sampling: { ratio, keepSlowerThan: 0 },
    machine: JOB_MACHINE,
  };
  const queueJourneys = new TaskJourneys({ ...options, role: "scheduler", instance: "queue" });
  const cluster = startCluster();
  instrumentQueue(cluster.queue, queueJourneys);
  const workerRuntime =
    workerClock === "late" ? { ...JOB_RUNTIME, clock: () => (Date.now() + 0.999) / 1000 } : options.runtime;
  const workerJourneys = cluster.workers.map((worker) => {
    const journeys = new TaskJourneys({ ...options, runtime: workerRuntime, role: "worker", instance: worker.name });
    instrumentWorker(worker, journeys);
    return journeys;
  });
  for (const worker of cluster.workers) worker.start();
  cluster.submit();
  await cluster.queue.drained();
  cluster.stop();
  return { queue: cluster.queue, queueJourneys, workerJourneys, spans: exporter.getFinishedSpans() };
}

/** Every span that starts before its parent or ends after it, to the nanosecond, as text (none: all nest). */
function outside(spans: readonly ReadableSpan[]): string[] {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const found: string[] = [];
  for (const span of spans) {
    const parent = byId.get(span.parentSpanContext?.spanId ?? "");
    if (parent === undefined) continue;
    const what = `${span.attributes["task.role"] ?? ""} ${span.name} (${span.attributes["task.key"] ?? ""})`;
    const early = ns(parent.startTime) - ns(span.startTime);
    if (early > 0n) found.push(`${what} starts ${early} ns before its parent ${parent.name}`);
    const late = ns(span.endTime) - ns(parent.endTime);
    if (late > 0n) found.push(`${what} ends ${late} ns after its parent ${parent.name}`);
  }
  return found;
}

/** Task spans by role and key. */
function taskSpans(spans: readonly ReadableSpan[], role: string): Map<string, ReadableSpan[]> {
  const byKey = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    if (!span.name.startsWith("task ") || span.attributes["task.role"] !== role) continue;
    const key = span.attributes["task.key"] as string;
    byKey.set(key, [...(byKey.get(key) ?? []), span]);
  }
  return byKey;
}

describe("a job queue instrumented from the guide", () => {
  for (const ratio of [0, 1]) {
    it(`ratio ${ratio}: prefixes by job name, no false dependency wait, worker spans inside their parent, failed jobs whole`, async () => {
      const { queueJourneys, workerJourneys, spans } = await run(ratio);

      // Prefixes by job name, every attempt counted under the queue's own state names; numeric ids never became prefixes.
      expect(queueJourneys.stats("fetch", "active").count).toBe(3);
      expect(queueJourneys.stats("merge").count).toBe(1);
      expect(queueJourneys.stats("flaky", "active").count).toBe(2);
      expect(queueJourneys.stats("broken", "active").count).toBe(1);
      // The retry's backoff is recorded as the job's `delayed` state, once, for flaky's failed first attempt.
      expect(queueJourneys.stats("flaky", "delayed").count).toBe(1);
      expect(queueJourneys.stats("flaky", "delayed").min).toBeGreaterThan(0);
      expect(queueJourneys.stats("broken", "delayed").count).toBe(0);
      const executed = (name: string) =>
        workerJourneys.reduce((sum, journeys) => sum + journeys.stats(name, "active").count, 0);
      expect([executed("fetch"), executed("merge"), executed("flaky"), executed("broken")]).toEqual([3, 1, 2, 1]);
      for (const journeys of [queueJourneys, ...workerJourneys]) expect(journeys.dropped()).toEqual({});

      // No false dependency wait: jobs without children never wait for them; the parent waits for its children.
      for (const name of ["fetch", "flaky", "broken"])
        expect(queueJourneys.stats(name, "waiting-children").count, name).toBe(0);
      expect(queueJourneys.stats("merge", "waiting-children").count).toBe(1);
      expect(queueJourneys.stats("merge", "waiting-children").max).toBeGreaterThan(0);

      // Worker spans inside their parent: the queue journey's task span, same trace, covering it in time.
      const queueTasks = taskSpans(spans, "scheduler");
      const workerTasks = taskSpans(spans, "worker");
      for (const [key, attempts] of workerTasks) {
        for (const span of attempts) {
          const parent = queueTasks
            .get(key)
            ?.find((task) => task.spanContext().spanId === span.parentSpanContext?.spanId);
          expect(parent, `the queue's journey of job ${key}`).toBeDefined();
          expect(span.spanContext().traceId).toBe(parent!.spanContext().traceId);
          expect(seconds(span.startTime)).toBeGreaterThanOrEqual(seconds(parent!.startTime));
          expect(seconds(span.endTime)).toBeLessThanOrEqual(seconds(parent!.endTime));
        }
      }
      // Failed attempts as one trace with both sides, at any ratio: flaky's first, broken's only. The
      // queue's journey of a job holds all its attempts: broken's ended failed; flaky's went through
      // `delayed` and completed.
      const failedWorker = spans.filter(
        (span) =>
          span.name.startsWith("task ") &&
          span.attributes["task.role"] === "worker" &&
          span.attributes["task.outcome"] === "failed",
      );
      expect(failedWorker.map((span) => span.name).sort()).toEqual(["task broken", "task flaky"]);
      for (const span of failedWorker) {
        const parent = spans.find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId)!;
        expect(parent.attributes["task.outcome"]).toBe(span.name === "task broken" ? "failed" : "completed");
        expect(parent.spanContext().traceId).toBe(span.spanContext().traceId);
        const states = spans
          .filter(
            (other) =>
              other.parentSpanContext?.spanId === parent.spanContext().spanId && !other.name.startsWith("task "),
          )
          .map((state) => state.name);
        expect(states).toEqual(
          span.name === "task broken" ? ["waiting", "active"] : ["waiting", "active", "delayed", "waiting", "active"],
        );
        // The queue's side says why the job failed for good (the reason it was given), the worker's why
        // its attempt did.
        if (span.name === "task broken")
          expect(parent.status).toEqual({ code: SpanStatusCode.ERROR, message: "always" });
        expect(span.status).toEqual({
          code: SpanStatusCode.ERROR,
          message: span.name === "task broken" ? "always" : "transient",
        });
        // On the queue's side every failed attempt is marked with the reason, a retried one too.
        const activeErrors = spans
          .filter((other) => other.name === "active" && other.parentSpanContext?.spanId === parent.spanContext().spanId)
          .map((active) => active.attributes["task.error"]);
        expect(activeErrors).toEqual(span.name === "task broken" ? ["Error: always"] : ["Error: transient", undefined]);
      }
      // Every span within its parent, to the nanosecond, on either side and across them.
      expect(outside(spans)).toEqual([]);
      if (ratio === 1) expect([...workerTasks.values()].flat()).toHaveLength(7);
      if (ratio === 0) expect([...workerTasks.values()].flat()).toHaveLength(2);

      // The parent's execution read its children's results, as an activity of its own.
      // Ids are given in order: the three fetches are "1" to "3", the merge "4".
      const merged = workerJourneys
        .map((journeys) => journeys.explain("4"))
        .find((breakdown) => breakdown !== undefined)!;
      expect(merged.prefix).toBe("merge");
      const active = merged.children.find((node) => node.name === "active")!;
      expect(active.children.map((node) => node.name)).toContain("read-children");
      expect(merged.outcome).toBe("completed");
      // The queue's explain() of the merge: its wait for its children, then its queue and its run.
      expect(queueJourneys.explain("4")!.children.map((node) => node.name)).toEqual([
        "waiting-children",
        "waiting",
        "active",
      ]);
      // The flow (the merge and its three fetches) is one computation; the jobs alone are in none.
      expect(queueJourneys.explain("4")!.computation).toBe("flow-1");
      expect(queueJourneys.explain("5")!.computation).toBeUndefined();
      expect(
        queueJourneys
          .computations()
          .map(({ name, tasks, live, failed, ended }) => ({ name, tasks, live, failed, ended })),
      ).toEqual([{ name: "flow-1", tasks: 4, live: 0, failed: 0, ended: { completed: 4 } }]);
    });
  }

  it("workers on a clock that reads late in the millisecond the queue side truncates: no worker span outlasts the queue's, nothing counted", async () => {
    const { queueJourneys, workerJourneys, spans } = await run(1, "late");
    const workerTasks = [...taskSpans(spans, "worker").values()].flat();
    expect(workerTasks).toHaveLength(7);
    // Each result's carrier said when its worker span ended; the queue's task span ends no earlier.
    expect(outside(spans)).toEqual([]);
    // Up to 999 µs is a millisecond's truncation: clamped silently.
    for (const journeys of [queueJourneys, ...workerJourneys]) expect(journeys.dropped()).toEqual({});
  });
});
