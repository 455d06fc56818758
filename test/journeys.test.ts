import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../src/index.js";

describe("TaskJourneys, the facade", () => {
  it("is sealed: its own enumerable fields are the documented ones, its internals are not reachable by name", () => {
    const journeys = new TaskJourneys({ role: "worker", instance: "w-1" });
    expect(Object.keys(journeys).sort()).toEqual(["instance", "metricProducer", "propagation", "role"]);
    for (const name of ["recorder", "options", "spans", "listeners", "closed"]) expect(name in journeys).toBe(false);
  });
});
