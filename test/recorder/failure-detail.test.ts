import { describe, expect, it } from "vitest";
import { failureDetail } from "../../src/recorder/failure-detail.js";

describe("failureDetail of a reason that is no Error", () => {
  it("summarizes a plain object by its first own properties, primitive values shown", () => {
    expect(failureDetail({ code: 42, reason: "timeout", retry: false, payload: { big: 1 }, list: [1, 2] })).toEqual({
      type: "Object",
      message: '{ code: 42, reason: "timeout", retry: false, payload: {…}, list: […] }',
      stack: "",
    });
  });

  it("shows at most eight properties and 64 characters of each key and string value", () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, index]));
    expect(failureDetail(wide).message).toBe("{ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, … }");
    const long = failureDetail({ ["x".repeat(100)]: "y".repeat(100) }).message;
    expect(long).toBe(`{ ${"x".repeat(63)}…: "${"y".repeat(63)}…" }`);
  });

  it("calls no getter, skips inherited properties, and survives a Proxy that throws", () => {
    let called = 0;
    const withGetter = Object.create(
      { inherited: 1 },
      {
        status: { enumerable: true, value: 503 },
        detail: { enumerable: true, get: () => ++called },
      },
    );
    expect(failureDetail(withGetter)).toMatchObject({ message: "{ status: 503, detail: [getter] }" });
    expect(called).toBe(0);
    const trap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("trapped");
        },
      },
    );
    expect(failureDetail(trap)).toEqual({ type: "Object", message: "", stack: "" });
  });

  it("keeps an Error's own message, even an empty one, and a class's name as the type", () => {
    expect(failureDetail(new RangeError("")).message).toBe("");
    class JobFailed {
      constructor(readonly attempts: number) {}
    }
    expect(failureDetail(new JobFailed(3))).toEqual({ type: "JobFailed", message: "{ attempts: 3 }", stack: "" });
    expect(failureDetail({})).toEqual({ type: "Object", message: "", stack: "" });
  });
});
