import { describe, expect, it } from "vitest";
import { Failures } from "../../src/recorder/failures.js";
import { InvalidTransition } from "../../src/shared/errors.js";
import { Journey, COMPUTE_JOURNEY } from "../../src/recorder/journey.js";
import { ALL_STATES, stateId } from "../../src/model/states.js";

function failures(strict: boolean, counted = true) {
  const told: string[] = [];
  const counts = counted ? new Map<string, number>() : undefined;
  return {
    told,
    counts,
    failures: new Failures({ tell: (message) => told.push(message), strict, counts, stateNames: ALL_STATES }),
  };
}

describe("Failures, the one failure path", () => {
  it("counts every failure, and tells the first of each reason (input) or kind (fault) only", () => {
    const { told, counts, failures: f } = failures(false);
    f.input("invalid-key", "a null is not a key");
    f.input("invalid-key", "a boolean is not a key");
    f.fault(
      "wrap-extractor-error",
      "site A failed (Error: x); the call proceeds unrecorded.",
      "wrap-extractor-error A",
    );
    f.fault(
      "wrap-extractor-error",
      "site A failed (Error: y); the call proceeds unrecorded.",
      "wrap-extractor-error A",
    );
    f.fault(
      "wrap-extractor-error",
      "site B failed (Error: z); the call proceeds unrecorded.",
      "wrap-extractor-error B",
    );
    expect(Object.fromEntries(counts!)).toEqual({ "invalid-key": 2, "wrap-extractor-error": 3 });
    expect(told).toEqual([
      'taskjourney: dropped input (invalid-key): a null is not a key. Counted in taskjourney.dropped{reason="invalid-key"}; further ones are counted silently.',
      'taskjourney: site A failed (Error: x); the call proceeds unrecorded. Counted in taskjourney.dropped{reason="wrap-extractor-error"}; further ones are counted silently.',
      'taskjourney: site B failed (Error: z); the call proceeds unrecorded. Counted in taskjourney.dropped{reason="wrap-extractor-error"}; further ones are counted silently.',
    ]);
  });

  it("with strict: true throws bad input as InvalidTransition with the journey's story, after counting it; never a fault", () => {
    const { told, counts, failures: f } = failures(true);
    const journey = new Journey("k-1", "k-1", 0, COMPUTE_JOURNEY, 1, false, stateId("waiting"));
    journey.visits.push(stateId("ready"), 2.5);
    let thrown: unknown;
    try {
      f.input("state-mismatch", "waiting → ready but the key is in ready", journey);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidTransition);
    expect((thrown as InvalidTransition).reason).toBe("state-mismatch");
    expect((thrown as InvalidTransition).story).toEqual(["waiting@1.000000", "ready@2.500000"]);
    expect(() => f.fault("listener-error", "dropped input (listener-error): journeyEnded: boom.")).not.toThrow();
    expect(Object.fromEntries(counts!)).toEqual({ "state-mismatch": 1, "listener-error": 1 });
    expect(told).toHaveLength(1);
  });

  it("without counts (outside any journeys) tells once and says further ones are not reported", () => {
    const { told, failures: f } = failures(false, false);
    f.fault("wrap-internal-error", 'wrap() of function "f" failed (Error: x); the call proceeds unrecorded.', "k");
    f.fault("wrap-internal-error", "again", "k");
    expect(told).toEqual([
      'taskjourney: wrap() of function "f" failed (Error: x); the call proceeds unrecorded. Further ones are not reported.',
    ]);
  });
});
