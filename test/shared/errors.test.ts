/**
 * The errors of src/shared/errors.ts as a user meets them: each thrown by the call that throws it,
 * with its stable `code`, still an instance of the built-in class it replaced (so an older
 * `catch (e) { if (e instanceof TypeError) … }` keeps working), and named for what it is.
 */
import { describe, expect, it } from "vitest";
import {
  AlreadyWrappedError,
  instrument,
  InvalidArgumentError,
  InvalidOptionError,
  InvalidTransition,
  OutOfRangeError,
  TaskJourneys,
  wrap,
} from "../../src/index.js";
import {
  BackendError,
  formatPrefixTable,
  InvalidDataError,
  OtlpJsonError,
  readTelemetryFiles,
  reportDataFrom,
  reportDataFromTelemetry,
  UnknownStateError,
} from "../../src/report.js";
import { ListenError, MissingDependencyError, IncompatibleDependencyError } from "../../src/sdk.js";
import { checkBaseUrl } from "../../src/report/http-json.js";
import { ExponentialHistogram } from "../../src/model/statistics/exponential-histogram.js";

/** What `fn` threw. */
function thrownBy(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("it did not throw");
}

describe("errors with stable codes", () => {
  it("a bad option: InvalidOptionError, a TypeError, code TJ_INVALID_OPTION, naming the option", () => {
    const error = thrownBy(() => new TaskJourneys({ role: "worker", limits: { maxPrefixes: -1 } }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe("TJ_INVALID_OPTION");
    expect(error.name).toBe("InvalidOptionError");
    expect(error.message).toContain("limits.maxPrefixes");
    // The stack's first line says which error it is (the name is on the prototype, read in the constructor).
    expect(error.stack!.split("\n")[0]).toBe(`InvalidOptionError: ${error.message}`);
  });

  it("instrument() and wrap(): TJ_INVALID_ARGUMENT (a TypeError) and TJ_ALREADY_WRAPPED (an Error)", () => {
    const journeys = new TaskJourneys({ role: "worker" });
    const badTarget = thrownBy(() => instrument(null as unknown as object, journeys, {} as never));
    expect(badTarget).toBeInstanceOf(InvalidArgumentError);
    expect(badTarget).toBeInstanceOf(TypeError);
    expect(badTarget.code).toBe("TJ_INVALID_ARGUMENT");
    const wrapped = wrap(() => 1, "compute");
    const twice = thrownBy(() => wrap(wrapped, "compute"));
    expect(twice).toBeInstanceOf(AlreadyWrappedError);
    expect(twice.code).toBe("TJ_ALREADY_WRAPPED");
    const worker = { run: () => 1 };
    const named = thrownBy(() =>
      instrument(worker, journeys, {
        activities: [
          { method: "run", activity: "a" },
          { method: "run", activity: "b" },
        ],
      }),
    );
    expect(named.code).toBe("TJ_ALREADY_WRAPPED");
  });

  it("strict mode: InvalidTransition, code TJ_INVALID_TRANSITION, with its reason", () => {
    const journeys = new TaskJourneys({ role: "worker", strict: true, clock: () => 1 });
    const error = thrownBy(() => journeys.transition("x-1", "waiting", "no-such-state" as never));
    expect(error).toBeInstanceOf(InvalidTransition);
    expect(error.code).toBe("TJ_INVALID_TRANSITION");
    expect((error as InvalidTransition).reason).toBe("unknown-state");
  });

  it("a number out of range: OutOfRangeError, a RangeError, code TJ_OUT_OF_RANGE", () => {
    const error = thrownBy(() => new ExponentialHistogram().quantile(2));
    expect(error).toBeInstanceOf(OutOfRangeError);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.code).toBe("TJ_OUT_OF_RANGE");
  });

  it("the report toolkit: TJ_INVALID_ARGUMENT, TJ_INVALID_DATA (TypeErrors) and TJ_INVALID_INPUT", () => {
    const table = thrownBy(() => formatPrefixTable("rows" as never));
    expect(table).toBeInstanceOf(InvalidArgumentError);
    const summary = thrownBy(() => reportDataFrom({ not: "a report" }));
    expect(summary).toBeInstanceOf(InvalidDataError);
    expect(summary).toBeInstanceOf(TypeError);
    expect(summary.code).toBe("TJ_INVALID_DATA");
    const empty = thrownBy(() =>
      reportDataFromTelemetry({
        files: ["a.json"],
        spans: [],
        metrics: [],
        summaries: [],
        unused: [],
        skipped: [],
      } as never),
    );
    expect(empty.code).toBe("TJ_INVALID_DATA");
    const missing = thrownBy(() => readTelemetryFiles(["/nonexistent/taskjourney-trace.json"]));
    expect(missing).toBeInstanceOf(OtlpJsonError);
    expect(missing.code).toBe("TJ_INVALID_INPUT");
    const state = thrownBy(() =>
      reportDataFromTelemetry(
        {
          files: ["a.json"],
          spans: [],
          metrics: [{ metric: "task.state.time", resource: {}, attributes: {}, value: 1 }],
          summaries: [],
        } as never,
        { state: "no-such-state" },
      ),
    );
    expect(state).toBeInstanceOf(UnknownStateError);
    expect(state.code).toBe("TJ_UNKNOWN_STATE");
    // A backend's URL given on the command line: an option, checked before any request.
    const url = thrownBy(() => checkBaseUrl("--jaeger", "ftp://localhost"));
    expect(url).toBeInstanceOf(InvalidOptionError);
    expect(url).toBeInstanceOf(TypeError);
    expect(url.code).toBe("TJ_INVALID_OPTION");
  });

  it("every class carries its code, and is an instance of the built-in class it is listed with", () => {
    const expected: Array<
      [Error & { code: string }, ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor, string]
    > = [
      [new UnknownStateError("x"), TypeError, "TJ_UNKNOWN_STATE"],
      [new MissingDependencyError("x"), Error, "TJ_MISSING_DEPENDENCY"],
      [new IncompatibleDependencyError("x"), Error, "TJ_INCOMPATIBLE_DEPENDENCY"],
      [new ListenError("x"), Error, "TJ_LISTEN_FAILED"],
      [new BackendError("x"), Error, "TJ_BACKEND_FAILED"],
    ];
    for (const [error, builtin, code] of expected) {
      expect(error).toBeInstanceOf(builtin);
      expect(error.code).toBe(code);
      expect(error.name).toBe(error.constructor.name);
    }
  });
});
