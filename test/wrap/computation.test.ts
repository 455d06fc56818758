import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys, instrument } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { captureDiag } from "../helpers/diag.js";

afterEach(() => diag.disable());

interface Job {
  id: string;
  flow: unknown;
}

describe("instrument()'s computation extractor", () => {
  it("names the computation of the journey a transition begins, from the method's arguments", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "scheduler",
      runtime: { clock: clock.now },
      sampling: { ratio: 0, keepSlowerThan: 0, keepErrors: false },
    });
    const queue = {
      added(job: Job): void {
        void job;
      },
      done(job: Job): void {
        void job;
      },
    };
    instrument(queue, journeys, {
      transition: [
        {
          method: "added",
          key: (job) => job.id,
          from: "released",
          to: "waiting",
          computation: (job) => job.flow as string,
        },
        { method: "done", key: (job) => job.id, from: "waiting", to: "memory" },
      ],
    });
    const told = captureDiag();
    queue.added({ id: "job-1", flow: "flow-a" });
    queue.added({ id: "job-2", flow: "flow-a" });
    queue.added({ id: "job-3", flow: undefined });
    clock.advance(2);
    for (const id of ["job-1", "job-2", "job-3"]) queue.done({ id, flow: undefined });
    expect(journeys.computations()).toMatchObject([
      { name: "flow-a", tasks: 2, ended: { memory: 2 }, seconds: { waiting: 4 } },
    ]);
    // The wrong kind is the extractor's fault: counted, told naming it, and the call goes unrecorded.
    queue.added({ id: "job-4", flow: 7 });
    expect(journeys.dropped()).toEqual({ "wrap-extractor-error": 1 });
    expect(
      told.some((line) => line.includes("the computation extractor") && line.includes("a non-empty computation name")),
    ).toBe(true);
  });
});
