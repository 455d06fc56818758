/**
 * The example's job queue alone (examples/job-queue/queue.ts): jobs are taken first in, first out,
 * however many wait and however takes and adds interleave (its waiting list is an array read
 * from a head index, compacted as it goes, rather than shifted).
 */
import { describe, expect, it } from "vitest";
import { JobQueue } from "../../examples/job-queue/queue.js";

describe("JobQueue.take", () => {
  it("gives waiting jobs in the order they were added, thousands of them, adds and takes interleaved", async () => {
    const queue = new JobQueue();
    const added: string[] = [];
    const taken: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (let job = 0; job < 1500; job++) added.push(queue.add({ name: "fetch" }).id);
      // Take most of them, leaving some waiting while the next round adds more.
      for (let job = 0; job < 1200; job++) taken.push((await queue.take()).id);
    }
    while (taken.length < added.length) taken.push((await queue.take()).id);
    expect(taken).toEqual(added);
    // Empty now: a take waits for the next job added.
    const next = queue.take();
    const job = queue.add({ name: "fetch" });
    expect(await next).toBe(job);
  });
});
