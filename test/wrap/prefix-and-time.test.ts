import { describe, expect, it } from "vitest";
import { TaskJourneys, instrument } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";

interface Job {
  id: string;
  name: string;
  createdAt: number;
  readyAt: number;
}

/** A job queue's shape: numeric ids, a job name, and the times the queue itself recorded. */
class Queue {
  readonly runs: string[] = [];
  constructor(readonly clock: FakeClock) {}
  added(job: Job): void {
    void job;
  }
  ready(job: Job): void {
    void job;
  }
  process(job: Job, seconds: number): string {
    this.clock.advance(seconds);
    this.runs.push(job.id);
    return job.id;
  }
}

describe("instrument() prefix and at extractors", () => {
  it("names each journey's prefix from the arguments and takes the queue's own times", () => {
    const clock = new FakeClock(100);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    const queue = new Queue(clock);
    instrument(queue, journeys, {
      transition: [
        {
          method: "added",
          key: (job) => job.id,
          from: "released",
          to: "waiting",
          prefix: (job) => job.name,
          at: (job) => job.createdAt,
        },
        { method: "ready", key: (job) => job.id, from: "waiting", to: "processing", at: (job) => job.readyAt },
      ],
    });
    const jobs: Job[] = [
      { id: "1", name: "fetch", createdAt: 90, readyAt: 93 },
      { id: "2", name: "fetch", createdAt: 91, readyAt: 92 },
      { id: "3", name: "render", createdAt: 95, readyAt: 99 },
    ];
    for (const job of jobs) {
      queue.added(job);
      queue.ready(job);
    }
    expect(journeys.stats("fetch", "waiting").count).toBe(2);
    expect(journeys.stats("fetch", "waiting").mean).toBe(2);
    expect(journeys.stats("render", "waiting").mean).toBe(4);
    // The hint applied to the journeys begun by those calls only: nothing is kept per key.
    expect(journeys.dropped()).toEqual({});
  });

  it("execute: prefix and start time from the arguments", () => {
    const clock = new FakeClock(10);
    const journeys = new TaskJourneys({ role: "worker", clock: clock.now, sampling: { ratio: 0 } });
    const queue = new Queue(clock);
    instrument(queue, journeys, {
      execute: { method: "process", key: (job) => job.id, prefix: (job) => job.name, at: (job: Job) => job.readyAt },
    });
    queue.process({ id: "7", name: "resize", createdAt: 0, readyAt: 8 }, 3);
    expect(journeys.stats("resize", "executing").mean).toBe(5);
    expect(queue.runs).toEqual(["7"]);
  });

  it("an extractor returning the wrong kind is counted; the method still runs", () => {
    const clock = new FakeClock(10);
    const journeys = new TaskJourneys({ role: "worker", clock: clock.now, sampling: { ratio: 0 } });
    const queue = new Queue(clock);
    instrument(queue, journeys, {
      execute: {
        method: "process",
        key: (job) => job.id,
        prefix: () => 5 as unknown as string,
        at: () => "soon" as unknown as number,
      },
    });
    expect(queue.process({ id: "7", name: "resize", createdAt: 0, readyAt: 8 }, 3)).toBe("7");
    expect(journeys.dropped()).toEqual({ "wrap-extractor-error": 2 });
    expect(journeys.stats("7", "executing").count).toBe(0);
  });
  it("an error extractor says why a job failed (Dask's scheduler: processing → erred); a throwing one is counted and skips the call", () => {
    const clock = new FakeClock(100);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    const queue = {
      start(id: string): void {
        void id;
      },
      failed(id: string, reason: string): void {
        void [id, reason];
      },
    };
    instrument(queue, journeys, {
      transition: [
        { method: "start", key: (id) => id, from: "released", to: "processing" },
        {
          method: "failed",
          key: (id) => id,
          from: "processing",
          to: "erred",
          error: (id, reason) => {
            if (id === "x-9") throw new Error("extractor bug");
            return reason;
          },
        },
      ],
    });
    queue.start("x-1");
    clock.advance(2);
    queue.failed("x-1", "worker died");
    const processing = journeys.explain("x-1")!.children.find((node) => node.name === "processing")!;
    expect([processing.seconds, processing.outcome, processing.error]).toEqual([2, "error", "Error: worker died"]);
    expect(journeys.explain("x-1")!.outcome).toBe("erred");
    queue.start("x-9");
    queue.failed("x-9", "whatever");
    expect(journeys.dropped()).toEqual({ "wrap-extractor-error": 1 });
    expect(journeys.explain("x-9")!.outcome).toBeUndefined();
  });
});
