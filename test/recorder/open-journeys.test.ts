/**
 * Journeys never ended are visible: task.active counts the journeys live now (an abandoned one
 * leaves it), task.active.oldest says how long the oldest has been open, and shutdown tells, in one
 * line, how many were left open, where and for how long. Exact numbers from a fake clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { defineMachine, TaskJourneys } from "../../src/index.js";
import { FakeClock } from "../helpers/clock.js";
import { captureDiag } from "../helpers/diag.js";
import { byName, pipeline, values } from "../otel/metric-producer.helpers.js";

afterEach(() => diag.disable());

const JOBS = defineMachine({
  states: ["added", "waiting", "active", "delayed", "completed", "failed"],
  transitions: {
    added: ["waiting"],
    waiting: ["active"],
    active: ["completed", "failed", "delayed"],
    delayed: ["waiting"],
  },
  terminal: { success: "completed", failure: "failed" },
  initial: "added",
  queued: ["waiting"],
  executing: "active",
});

const S = (prefix: string, state: string) => `task.prefix=${prefix},task.state=${state}`;

function producerOf(clock: FakeClock, maxLiveJourneys?: number) {
  return new TaskJourneys({
    role: "scheduler",
    machine: JOBS,
    clock: clock.now,
    sampling: { ratio: 0 },
    ...(maxLiveJourneys === undefined ? {} : { maxLiveJourneys }),
  });
}

describe("journeys never ended", () => {
  it("task.active counts the journeys live now: one abandoned past maxLiveJourneys leaves it", async () => {
    const clock = new FakeClock(100);
    const journeys = producerOf(clock, 2);
    const p = pipeline([journeys.metricProducer]);
    try {
      journeys.transition("email-1", "added", "waiting");
      clock.advance(1);
      journeys.transition("email-2", "added", "waiting");
      clock.advance(1);
      // email-1 is abandoned to make room for resize-1.
      journeys.transition("resize-1", "added", "waiting");
      journeys.transition("resize-1", "waiting", "active");
      const metrics = byName(await p.collect());
      expect(values(metrics.get("task.active"))).toEqual({
        [S("email", "waiting")]: 1,
        [S("resize", "waiting")]: 0,
        [S("resize", "active")]: 1,
      });
      // The oldest still live is email-2, open since t=101.
      expect(values(metrics.get("task.active.oldest"))).toEqual({ "": 1 });
    } finally {
      await p.shutdown();
      await journeys.shutdown();
    }
  });

  it("task.active.oldest: seconds since the oldest live journey began, 0 once none is live", async () => {
    const clock = new FakeClock(100);
    const journeys = producerOf(clock);
    const p = pipeline([journeys.metricProducer]);
    try {
      journeys.transition("email-1", "added", "waiting");
      clock.advance(0.5);
      journeys.transition("email-2", "added", "waiting");
      clock.advance(4.25);
      expect(values(byName(await p.collect()).get("task.active.oldest"))).toEqual({ "": 4.75 });
      journeys.transition("email-1", "waiting", "active");
      journeys.transition("email-1", "active", "completed");
      clock.advance(1);
      expect(values(byName(await p.collect()).get("task.active.oldest"))).toEqual({ "": 5.25 });
      journeys.transition("email-2", "waiting", "active");
      journeys.transition("email-2", "active", "failed");
      expect(values(byName(await p.collect()).get("task.active.oldest"))).toEqual({ "": 0 });
    } finally {
      await p.shutdown();
      await journeys.shutdown();
    }
  });

  it("shutdown tells one line: how many left open, the fullest (prefix, state) pairs, the oldest and its age", async () => {
    const told = captureDiag();
    const clock = new FakeClock(100);
    const journeys = producerOf(clock);
    journeys.transition("email-1", "added", "waiting");
    clock.advance(2);
    for (let i = 2; i <= 4; i++) journeys.transition(`email-${i}`, "added", "waiting");
    journeys.transition("email-4", "waiting", "active");
    journeys.transition("resize-1", "added", "waiting");
    journeys.transition("resize-1", "waiting", "active");
    journeys.transition("thumb-1", "added", "waiting");
    journeys.transition("thumb-1", "waiting", "active");
    journeys.transition("thumb-1", "active", "delayed");
    journeys.transition("done-1", "added", "waiting");
    journeys.transition("done-1", "waiting", "active");
    journeys.transition("done-1", "active", "completed");
    clock.advance(3.5);
    await journeys.shutdown();
    await journeys.shutdown();
    expect(told).toEqual([
      'taskjourney: 6 journeys still open at shutdown (never reached a terminal state): 3 email in waiting, 1 email in active, 1 resize in active, 1 more in 1 other (prefix, state) pair; the oldest, "email-1" (now in waiting), began 5.5 s before. ' +
        "A journey ends when its key reaches a terminal state (completed, failed); a key whose outcome this process never learns (a producer's job) should be moved to one when it is handed off.",
    ]);
  });

  it("shutdown with every journey ended tells nothing", async () => {
    const told = captureDiag();
    const clock = new FakeClock(100);
    const journeys = producerOf(clock);
    journeys.transition("email-1", "added", "waiting");
    journeys.transition("email-1", "waiting", "active");
    journeys.transition("email-1", "active", "completed");
    await journeys.shutdown();
    expect(told).toEqual([]);
  });
});
