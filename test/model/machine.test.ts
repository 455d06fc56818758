/**
 * A declared state machine, checked and compiled: bad definitions throw in the constructor naming
 * the option and the part at fault, and every state name finds its id through the per-machine
 * perfect hash (or, for names it cannot tell apart, the Map it falls back to).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Machine, STATE_STRIDE, type StateMachine } from "../../src/model/machine.js";
import { ALL_STATES, PRESETS } from "../../src/model/states.js";
import { TaskJourneys } from "../../src/index.js";

const JOBS: StateMachine = {
  states: ["added", "waiting-children", "waiting", "delayed", "active", "completed", "failed"],
  transitions: {
    added: ["waiting-children", "waiting"],
    "waiting-children": ["waiting"],
    waiting: ["active"],
    active: ["completed", "failed", "delayed"],
    delayed: ["waiting"],
  },
  terminal: { success: "completed", failure: "failed" },
  initial: "added",
  waiting: "waiting-children",
  executing: "active",
  queued: "waiting",
};

/** The constructor's error for `machine`, or undefined when it is accepted. */
function rejection(machine: unknown): string | undefined {
  try {
    new TaskJourneys({ machine: machine as StateMachine });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
}

describe("a declared machine", () => {
  it("compiles: ids in declaration order, the table, the role masks and ids", () => {
    const machine = new Machine(JOBS, () => {
      throw new Error("rejected");
    });
    expect(JOBS.states.map((name) => machine.id(name))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(machine.id("processing")).toBe(-1);
    expect(machine.id("")).toBe(-1);
    expect(machine.table[machine.id("active") * STATE_STRIDE + machine.id("delayed")]).toBe(1);
    expect(machine.table[machine.id("delayed") * STATE_STRIDE + machine.id("active")]).toBe(0);
    expect(machine.pairs).toHaveLength(8);
    expect([...machine.terminal.slice(0, 7)]).toEqual([0, 0, 0, 0, 0, 1, 1]);
    expect([...machine.failed.slice(0, 7)]).toEqual([0, 0, 0, 0, 0, 0, 1]);
    expect([machine.initial, machine.waiting, machine.executing, machine.success, machine.failure]).toEqual([
      0, 1, 4, 5, 6,
    ]);
    // No cancelled state: a cancelled execution ends in the failure state; no transfer at all.
    expect([machine.cancelled, machine.transfer, machine.retry, machine.missing]).toEqual([6, -1, -1, -1]);
    expect(machine.terminalNames).toEqual(["completed", "failed"]);
    expect(machine.markdown().split("\n")[3]).toBe("| `waiting-children` | `waiting` |");
  });

  it("the Dask presets keep their shared ids and roles", () => {
    for (const [id, name] of ALL_STATES.entries()) expect(PRESETS.worker.id(name)).toBe(id);
    for (const [id, name] of ALL_STATES.entries()) expect(PRESETS.scheduler.id(name)).toBe(id);
    const worker = PRESETS.worker;
    expect([
      worker.names[worker.waiting],
      worker.names[worker.executing],
      worker.names[worker.transfer],
      worker.names[worker.retry],
      worker.names[worker.missing],
    ]).toEqual(["waiting", "executing", "flight", "fetch", "missing"]);
    expect(worker.member[worker.id("processing")]).toBe(0);
    expect(PRESETS.scheduler.names[PRESETS.scheduler.executing]).toBe("processing");
    expect(PRESETS.scheduler.terminalNames).toEqual(["memory", "erred", "released", "forgotten"]);
  });

  it("finds every name of any machine, and no other name", () => {
    const name = fc.stringMatching(/^[a-z][a-z-]{0,11}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { minLength: 2, maxLength: STATE_STRIDE }),
        fc.array(name, { maxLength: 8 }),
        (states, others) => {
          const machine = new Machine(
            { states, transitions: {}, terminal: { success: states[0], failure: states[1] } },
            () => {
              throw new Error("rejected");
            },
          );
          states.forEach((state, id) => expect(machine.id(state)).toBe(id));
          for (const other of others) expect(machine.id(other)).toBe(states.indexOf(other));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("names alike in length, first, middle and last characters are still told apart", () => {
    const states = ["step-a1", "step-b1", "step-c1", "done", "lost"];
    const machine = new Machine(
      { states, transitions: { "step-a1": ["step-b1"] }, terminal: { success: "done", failure: "lost" } },
      () => {
        throw new Error("rejected");
      },
    );
    states.forEach((state, id) => expect(machine.id(state)).toBe(id));
    expect(machine.id("step-d1")).toBe(-1);
  });
});

describe("a bad machine throws in the constructor, naming the option", () => {
  it.each([
    ["not an object", "jobs", /option "machine" must be a state machine/],
    ["no states", { ...JOBS, states: [] }, /option "machine.states" must be a non-empty array/],
    [
      "duplicated names",
      { ...JOBS, states: [...JOBS.states, "active"] },
      /option "machine.states" must be names without duplicates \("active" is listed twice\)/,
    ],
    [
      "too many states",
      { ...JOBS, states: Array.from({ length: 33 }, (_, i) => `s${i}`) },
      /option "machine.states" must be at most 32 states, got 33/,
    ],
    [
      "an unknown state in a transition",
      { ...JOBS, transitions: { active: ["complete"] } },
      /option "machine.transitions\["active"\]\[0\]" must be one of the machine's states .*got "complete"/,
    ],
    [
      "an unknown state moving",
      { ...JOBS, transitions: { activ: ["completed"] } },
      /option "machine.transitions" must be one of the machine's states .*got "activ"/,
    ],
    [
      "no terminal state",
      { ...JOBS, terminal: undefined },
      /option "machine.terminal" must be \{ success, failure, cancelled\? \}/,
    ],
    [
      "no success state",
      { ...JOBS, terminal: { failure: "failed" } },
      /option "machine.terminal.success" must be a state or a non-empty array of states/,
    ],
    [
      "an unknown failure state",
      { ...JOBS, terminal: { success: "completed", failure: ["error"] } },
      /option "machine.terminal.failure\[0\]" must be one of the machine's states/,
    ],
    [
      "a state both success and failure",
      { ...JOBS, terminal: { success: "completed", failure: ["failed", "completed"] } },
      /"completed" is in two/,
    ],
    [
      "waiting at an unknown state",
      { ...JOBS, waiting: "waiting-for-children" },
      /option "machine.waiting" must be one of the machine's states/,
    ],
    [
      "waiting at a terminal state",
      { ...JOBS, waiting: "failed" },
      /option "machine.waiting" must be a state that is not terminal/,
    ],
    [
      "executing at an unknown state",
      { ...JOBS, executing: ["running"] },
      /option "machine.executing\[0\]" must be one of the machine's states/,
    ],
    [
      "executing the waiting state",
      { ...JOBS, executing: "waiting-children" },
      /option "machine.executing" must be states other than the waiting one/,
    ],
    [
      "a transfer without its retry state",
      { ...JOBS, transfer: { state: "delayed" } },
      /option "machine.transfer.retry" must be one of the machine's states/,
    ],
    [
      "an unknown initial state",
      { ...JOBS, initial: "new" },
      /option "machine.initial" must be one of the machine's states/,
    ],
  ])("%s", (_, machine, message) => {
    expect(rejection(machine)).toMatch(message);
  });

  it("and a good one does not", () => {
    expect(rejection(JOBS)).toBeUndefined();
  });
});
