/**
 * What the report reads of an application's state machine from its telemetry alone: the measured
 * (executing) state of each role, and the state columns' order as the journeys lived them.
 */
import { describe, expect, it } from "vitest";
import {
  measuredState,
  stateOfExecuteTime,
  stateOrder,
  type JourneyShapes,
} from "../../src/report/machine-from-data.js";

function shapes(lastStates: { worker?: Record<string, number>; scheduler?: Record<string, number> }): JourneyShapes {
  return {
    sequences: { worker: [], scheduler: [] },
    lastStates: {
      worker: new Map(Object.entries(lastStates.worker ?? {})),
      scheduler: new Map(Object.entries(lastStates.scheduler ?? {})),
    },
  };
}

describe("measuredState", () => {
  const queue = new Set(["waiting-children", "waiting", "active", "delayed"]);

  it("Dask's executing / processing whenever the data has them, before any inference", () => {
    const dask = shapes({ worker: { "long-running": 9, executing: 1 }, scheduler: { waiting: 5 } });
    expect(measuredState(new Set(["waiting", "ready", "executing", "long-running"]), "worker", { shapes: dask })).toBe(
      "executing",
    );
    expect(measuredState(new Set(["waiting", "processing"]), "scheduler", { shapes: dask })).toBe("processing");
  });

  it("else the state most finished journeys ended from, among the role's states", () => {
    // `delayed` is never left for a terminal state; `gone` is not among the role's states.
    const lived = shapes({ scheduler: { active: 5, waiting: 2, gone: 9 } });
    expect(measuredState(queue, "scheduler", { shapes: lived })).toBe("active");
    // Ties go to the state met first.
    expect(measuredState(queue, "scheduler", { shapes: shapes({ scheduler: { waiting: 2, active: 2 } }) })).toBe(
      "waiting",
    );
  });

  it("else the other role's measured state, else none; an explicit state of the role's wins over all", () => {
    expect(measuredState(queue, "scheduler", { shapes: shapes({}), otherRole: "active" })).toBe("active");
    expect(measuredState(queue, "scheduler", { otherRole: "running" })).toBeUndefined();
    expect(measuredState(queue, "worker", {})).toBeUndefined();
    expect(measuredState(new Set(["waiting", "executing"]), "worker", { explicit: "waiting" })).toBe("waiting");
    // An explicit state the role lacks is no answer for this role.
    expect(measuredState(new Set(["waiting", "executing"]), "worker", { explicit: "active" })).toBe("executing");
  });
});

describe("stateOfExecuteTime (metrics only)", () => {
  it("the worker state whose seconds are the execute ledgers' time, within 1%; none when no state is", () => {
    const stateSeconds = new Map([
      ["queued", 12],
      ["running", 7.95],
      ["paused", 8.2],
    ]);
    expect(stateOfExecuteTime({ executeSeconds: 8, stateSeconds })).toBe("running");
    // 8.2 is 2.5% off: not an execution's state.
    expect(
      stateOfExecuteTime({ executeSeconds: 8.2 * 1.025, stateSeconds: new Map([["paused", 8.2]]) }),
    ).toBeUndefined();
    expect(stateOfExecuteTime({ executeSeconds: 0, stateSeconds: new Map([["idle", 0]]) })).toBeUndefined();
    // Spans first: the state journeys end from wins over a time match.
    expect(
      measuredState(new Set(stateSeconds.keys()), "worker", {
        executeTime: { executeSeconds: 8, stateSeconds },
        shapes: shapes({ worker: { paused: 1 } }),
      }),
    ).toBe("paused");
    expect(
      measuredState(new Set(stateSeconds.keys()), "worker", { executeTime: { executeSeconds: 8, stateSeconds } }),
    ).toBe("running");
    // The scheduler has no execute ledgers.
    expect(
      measuredState(new Set(stateSeconds.keys()), "scheduler", { executeTime: { executeSeconds: 8, stateSeconds } }),
    ).toBeUndefined();
  });
});

describe("stateOrder", () => {
  it("none for Dask's states: the tables keep their lifecycle order", () => {
    expect(stateOrder(["executing", "waiting", "ready"], [["waiting", "ready", "executing"]])).toBeUndefined();
  });

  it("the order the journeys lived, retries going back not reversing it, unseen states last by name", () => {
    const sequences = [
      ["waiting", "active"],
      ["waiting", "active", "delayed", "waiting", "active"],
      ["waiting-children", "waiting", "active"],
    ];
    expect(stateOrder(["active", "delayed", "waiting", "waiting-children", "stalled", "paused"], sequences)).toEqual([
      "waiting-children",
      "waiting",
      "active",
      "delayed",
      "paused",
      "stalled",
    ]);
    // Without the journey that waited for its children, that state follows by name, after the lived ones.
    expect(stateOrder(["waiting-children", "delayed", "active", "waiting"], sequences.slice(0, 2))).toEqual([
      "waiting",
      "active",
      "delayed",
      "waiting-children",
    ]);
    // No spans at all: by name (Dask's states first, in their lifecycle order).
    expect(stateOrder(["waiting", "delayed", "active"], [])).toEqual(["waiting", "active", "delayed"]);
  });

  it("branches kept in the order first seen, a state listed once however often it recurs", () => {
    const sequences = [
      ["queued", "running", "paused", "running"],
      ["queued", "prioritized", "running"],
    ];
    expect(stateOrder(["running", "paused", "prioritized", "queued"], sequences)).toEqual([
      "queued",
      "prioritized",
      "running",
      "paused",
    ]);
  });
});
