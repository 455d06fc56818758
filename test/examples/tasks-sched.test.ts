import { describe, expect, it } from "vitest";
import { schedField } from "../../examples/cluster/tasks.mjs";

// The head of /proc/thread-self/sched as Linux 6.x prints it.
const SCHED = `node (24739, #threads: 11)
-------------------------------------------------------------------
se.exec_start                                :       5369380.656422
se.vruntime                                  :         62238.827214
se.sum_exec_runtime                          :          4123.870936
se.nr_migrations                             :                  125
nr_switches                                  :                 1021
`;

describe("schedField", () => {
  const bytes = Buffer.from(SCHED, "latin1");

  it("reads the fields a thread CPU reading needs, in place", () => {
    expect(schedField(bytes, bytes.length, "se.exec_start")).toBeCloseTo(5369380.656422, 6);
    expect(schedField(bytes, bytes.length, "se.sum_exec_runtime")).toBeCloseTo(4123.870936, 6);
    expect(schedField(bytes, bytes.length, "se.nr_migrations")).toBe(125);
  });

  it("is NaN for a field that is missing or past the bytes read", () => {
    expect(schedField(bytes, bytes.length, "se.no_such_field")).toBeNaN();
    const cut = SCHED.indexOf("se.nr_migrations") + 5;
    expect(schedField(bytes, cut, "se.nr_migrations")).toBeNaN();
  });

  it("is NaN when no number follows the colon", () => {
    const odd = Buffer.from("se.exec_start : n/a\n", "latin1");
    expect(schedField(odd, odd.length, "se.exec_start")).toBeNaN();
  });
});
