import { describe, expect, it } from "vitest";
import { plan, records, schedulerReceives, schedulerSends, side, workerRuns } from "../fixtures/whole-traces.js";
import { checkWholeTraces } from "../fixtures/whole-traces-check.js";

describe("whole traces under any sampling: a scheduler and a worker TaskJourneys in one process", () => {
  for (const [ratio, chooseIds] of [0, 0.1, 1].flatMap((ratio) => [[ratio, false] as const, [ratio, true] as const])) {
    const ids = chooseIds
      ? "ids chosen by taskjourney (taskjourney/sdk's provider)"
      : "ids from a provider of the user's";
    it(`ratio ${ratio}, ${ids}: every kept task is one trace with both sides, no parent missing`, () => {
      const tasks = plan(200);
      const scheduler = side("scheduler", ratio, chooseIds);
      const worker = side("worker", ratio, chooseIds);
      for (const task of tasks) {
        scheduler.clock.now = task.start + 1;
        const assignment = schedulerSends(scheduler.journeys, task);
        // Through JSON, as a message would go.
        const reply = workerRuns(worker.journeys, worker.clock, JSON.parse(JSON.stringify(assignment)));
        scheduler.clock.now = task.start + 1.5 + task.seconds;
        schedulerReceives(scheduler.journeys, task, JSON.parse(JSON.stringify(reply)));
      }
      const spans = [...records(scheduler.exporter.getFinishedSpans()), ...records(worker.exporter.getFinishedSpans())];
      const kept = checkWholeTraces(spans, tasks, ratio);
      const failedOrSlow = tasks.filter((task) => task.fail || task.seconds > 1).length;
      if (ratio === 0) expect(kept.size).toBeGreaterThanOrEqual(failedOrSlow - 2);
      if (ratio === 0.1) expect(kept.size).toBeGreaterThan(failedOrSlow);
      if (ratio === 1) expect(kept.size).toBe(200);
      // Every span started was exported: none was started only to hand its ids out.
      if (chooseIds) expect(scheduler.spansStarted() + worker.spansStarted()).toBe(spans.length);
    });
  }
});
