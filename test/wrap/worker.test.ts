import { afterAll, describe, expect, it } from "vitest";
import { Piscina } from "piscina";
import { TaskJourneys, instrument, wrap, type Breakdown, type BreakdownNode } from "../../src/index.js";
import { FakeNetwork, MiniWorker, type PoolTask } from "./fixtures/mini-worker.js";

const pool = new Piscina({
  filename: new URL("./fixtures/pool-task.mjs", import.meta.url).href,
  minThreads: 2,
  maxThreads: 2,
});
afterAll(() => pool.destroy());

const EPSILON = 1e-9;
const names = (nodes: BreakdownNode[]) => nodes.map((node) => node.name);
const child = (node: Breakdown | BreakdownNode, name: string) => node.children.find((c) => c.name === name)!;
const total = (nodes: BreakdownNode[]) => nodes.reduce((sum, node) => sum + node.seconds, 0);

/** Activities of every state add up to the state's wall time, at every level. */
function expectConsistent(node: Breakdown | BreakdownNode): void {
  for (const state of node.children) {
    if (state.children.length > 0) expect(total(state.children)).toBeCloseTo(state.seconds, 9);
    expectConsistent(state);
  }
}

describe("a worker written like a real one, instrumented from outside", () => {
  it("reports per-key breakdowns of waiting, gathering, spilling and executing", async () => {
    const network = new FakeNetwork({ "tcp://peer-a": { "x-1": 10, "x-2": 20 }, "tcp://peer-b": { "z-1": 5 } });
    network.busy("tcp://peer-b", 1);

    // ---- the instrumentation, as the README shows it -------------------------------------
    const journeys = new TaskJourneys({ role: "worker", instance: "tcp://127.0.0.1:40001" });
    const runOnThread = wrap((task: PoolTask) => pool.run(task), "run");
    const worker = new MiniWorker("tcp://127.0.0.1:40001", network, runOnThread, 2, 2);
    const unwrap = instrument(worker, journeys, {
      transition: {
        method: "transition",
        key: (key) => key,
        from: (_key, start) => start,
        to: (_key, _start, finish) => finish,
      },
      dependencies: { method: "handleComputeTask", key: (task) => task.key, dependencies: (task) => task.deps },
      execute: {
        method: "execute",
        key: (key) => key,
        outcome: (result) => (result?.status === "error" ? "error" : undefined),
      },
      gather: {
        method: "gatherDep",
        peer: (peer) => peer,
        keys: (_peer, keys) => keys,
        nbytes: (_peer, _keys, nbytes) => nbytes,
        outcome: (result) => result?.status,
      },
      activities: { method: "deserialize", activity: "deserialize" },
    });
    const unwrapStore = instrument(worker.store, journeys, {
      activities: [
        { method: "spill", activity: "disk-write" },
        { method: "unspill", activity: "disk-read" },
      ],
    });
    const unwrapNetwork = instrument(network, journeys, { activities: { method: "getData", activity: "network" } });
    // ---------------------------------------------------------------------------------------

    const whoHas = { "x-1": "tcp://peer-a", "x-2": "tcp://peer-a", "z-1": "tcp://peer-b" };
    const nbytes = { "x-1": 1000, "x-2": 2000, "z-1": 500 };
    const states = await Promise.all([
      worker.handleComputeTask({ key: "inc-1", fn: "inc", ms: 5, deps: ["x-1"], whoHas, nbytes }),
      worker.handleComputeTask({ key: "add-1", fn: "add", ms: 5, deps: ["x-1", "x-2"], whoHas, nbytes }),
      worker.handleComputeTask({ key: "inc-2", fn: "inc", ms: 5, deps: ["z-1"], whoHas, nbytes }),
      worker.handleComputeTask({ key: "fail-1", fn: "fail", deps: [], whoHas, nbytes }),
    ]);
    expect(states).toEqual(["memory", "memory", "memory", "error"]);
    // Computed locally from local results: their dependencies waited on local tasks, not on fetches.
    const final = await worker.handleComputeTask({
      key: "add-2",
      fn: "add",
      ms: 5,
      deps: ["inc-1", "add-1", "inc-2"],
      whoHas: {},
      nbytes: {},
    });
    expect(final).toBe("memory");
    expect(worker.states.get("add-2")).toBe("memory");

    // Every event the wrappers reported fit the worker's state machine.
    expect(journeys.dropped()).toEqual({});

    // A compute journey: waiting on its fetched dependencies, ready, executing on a thread.
    const add1 = journeys.explain("add-1")!;
    expect(add1.outcome).toBe("memory");
    expect(add1.kind).toBe("compute");
    expect(names(add1.children)).toEqual(["waiting", "ready", "executing"]);
    expectConsistent(add1);
    expect(names(child(add1, "waiting").children)).toEqual(expect.arrayContaining(["network", "deserialize"]));
    expect(names(child(add1, "executing").children)).toContain("run");

    // A fetch journey with a busy reply: flight (busy) → fetch (queued) → flight → memory.
    const z1 = journeys.explain("z-1")!;
    expect(z1.kind).toBe("fetch");
    expect(names(z1.children)).toEqual(["fetch", "flight", "fetch", "flight"]);
    // Its time under the busy lump (and a sliver of "other" between the transition and the call).
    expect(z1.children[1].children[0].name).toBe("busy");
    expect(names(z1.children[3].children)).toEqual(expect.arrayContaining(["network", "deserialize"]));
    expectConsistent(z1);

    // Memory pressure (two values in memory): add-2's arguments came back from disk inside its
    // execution, and storing its result spilled another value.
    const add2 = journeys.explain("add-2")!;
    const executing = child(add2, "executing");
    expect(names(executing.children)).toEqual(expect.arrayContaining(["disk-read", "run", "disk-write"]));
    expectConsistent(add2);
    expect(names(child(add2, "waiting").children)).toEqual(["dependencies"]);

    // A failed task: the thread's error became the error outcome, not a rejection.
    expect(journeys.explain("fail-1")!.outcome).toBe("error");

    // The per-prefix statistics the scheduler reads.
    expect(journeys.stats("inc").count).toBe(2);
    expect(journeys.stats("add", "ready").count).toBe(2);

    unwrap();
    unwrapStore();
    unwrapNetwork();
    expect(Object.getOwnPropertyNames(worker)).not.toContain("execute");
    expect(worker.execute).toBe(MiniWorker.prototype.execute);
    // Still a working worker, no longer recorded.
    expect(await worker.handleComputeTask({ key: "inc-9", fn: "inc", deps: ["add-2"], whoHas: {}, nbytes: {} })).toBe(
      "memory",
    );
    expect(journeys.explain("inc-9")).toBeUndefined();
    await journeys.shutdown();
  });

  it("keeps the activities of tasks running side by side on the pool's threads on their own keys", async () => {
    const journeys = new TaskJourneys({ role: "worker", instance: "tcp://127.0.0.1:40002" });
    const worker = new MiniWorker(
      "tcp://127.0.0.1:40002",
      new FakeNetwork({}),
      wrap((task: PoolTask) => pool.run(task), "run"),
      2,
      100,
    );
    instrument(worker, journeys, {
      transition: {
        method: "transition",
        key: (key) => key,
        from: (_key, start) => start,
        to: (_key, _start, finish) => finish,
      },
      execute: { method: "execute", key: (key) => key },
    });
    await Promise.all([
      worker.handleComputeTask({ key: "spin-slow", fn: "spin", ms: 80, deps: [], whoHas: {} }),
      worker.handleComputeTask({ key: "spin-fast", fn: "spin", ms: 10, deps: [], whoHas: {} }),
    ]);
    const run = (key: string) => child(child(journeys.explain(key)!, "executing"), "run").seconds;
    // Both ran at once on the two threads, and each run landed on its own key: the fast one does
    // not carry the slow one's time.
    expect(run("spin-slow")).toBeGreaterThanOrEqual(0.08 - EPSILON);
    expect(run("spin-fast")).toBeGreaterThanOrEqual(0.01 - EPSILON);
    expect(run("spin-fast")).toBeLessThan(run("spin-slow"));
    const slow = journeys.explain("spin-slow")!;
    const fast = journeys.explain("spin-fast")!;
    expect(fast.children.map((node) => node.name)).toEqual(["waiting", "ready", "executing"]);
    expect(slow.children.map((node) => node.name)).toEqual(["waiting", "ready", "executing"]);
    await journeys.shutdown();
  });
});
