import { describe, expect, it } from "vitest";
import { TaskJourneys, instrument } from "../../src/index.js";
import {
  WorkerState,
  type ComputeTaskEvent,
  type WorkerEffects,
  type WorkerTask,
  type WorkerStateOptions,
} from "../../examples/cluster/worker-state.js";
import { FakeClock } from "../helpers/clock.js";

const A = "tcp://127.0.0.1:1001";
const B = "tcp://127.0.0.1:1002";

function machine(options: Partial<WorkerStateOptions> = {}) {
  const log: string[] = [];
  const executed: WorkerTask[] = [];
  const gathers: Array<{ peer: string; keys: string[]; tasks: WorkerTask[] }> = [];
  const queued: string[] = [];
  const effects: WorkerEffects = {
    execute: (task) => executed.push(task),
    gatherDep: (peer, tasks) => gathers.push({ peer, keys: tasks.map((task) => task.key), tasks }),
    taskFinished: (task) => log.push(`finished ${task.key}`),
    taskErred: (task, error) => log.push(`erred ${task.key}: ${error}`),
    release: (key) => log.push(`release ${key}`),
    whoHas: (keys) => log.push(`who-has ${keys.join(",")}`),
  };
  const state = new WorkerState(
    {
      address: "tcp://127.0.0.1:1000",
      nthreads: 1,
      transferIncomingCountLimit: 4,
      transferIncomingBytesLimit: 1000,
      transferMessageBytesLimit: 300,
      busyRetryMs: 1,
      ...options,
    },
    effects,
  );
  const transitions: string[] = [];
  const original = state.transition.bind(state);
  state.transition = (task, to) => {
    transitions.push(`${task.key}: ${task.state} → ${to}`);
    original(task, to);
  };
  state.observer = { queued: (key, reason) => queued.push(`${key} ${reason}`) };
  return { state, log, executed, gathers, queued, transitions };
}

function task(key: string, deps: Array<[string, string[], number]>, priority = 0): ComputeTaskEvent {
  return {
    key,
    func: "add",
    args: deps.map(([ref]) => ({ ref })),
    priority,
    deps: deps.map(([dep, who, nbytes]) => ({ key: dep, who, nbytes })),
  };
}

describe("the worker state machine", () => {
  it("runs a task without dependencies: waiting → ready → executing → memory", () => {
    const { state, executed, log, transitions } = machine();
    state.computeTask(task("x-1", []));
    expect(executed.map((t) => t.key)).toEqual(["x-1"]);
    state.executeDone("x-1", { ok: true, nbytes: 8 });
    expect(transitions).toEqual([
      "x-1: released → waiting",
      "x-1: waiting → ready",
      "x-1: ready → executing",
      "x-1: executing → memory",
    ]);
    expect(log).toEqual(["finished x-1"]);
  });

  it("keeps tasks in ready beyond its thread count, in priority order", () => {
    const { state, executed } = machine({ nthreads: 2 });
    state.computeTask(task("x-3", [], 3));
    state.computeTask(task("x-2", [], 2));
    state.computeTask(task("x-1", [], 1));
    state.computeTask(task("x-0", [], 0));
    expect(executed.map((t) => t.key)).toEqual(["x-3", "x-2"]);
    expect(state.tasks.get("x-0")!.state).toBe("ready");
    state.executeDone("x-3", { ok: true, nbytes: 8 });
    expect(executed.map((t) => t.key)).toEqual(["x-3", "x-2", "x-0"]);
  });

  it("batches the keys one peer holds into one gather_dep, up to the message limit", () => {
    const { state, gathers, executed } = machine();
    state.computeTask(
      task("sum-1", [
        ["a-1", [A], 100],
        ["a-2", [A], 100],
        ["a-3", [A], 100],
        ["b-1", [B], 100],
      ]),
    );
    // 300 bytes per message: a-1..a-3 in one from A, b-1 from B.
    expect(gathers.map(({ peer, keys }) => [peer, keys])).toEqual([
      [A, ["a-1", "a-2", "a-3"]],
      [B, ["b-1"]],
    ]);
    state.gatherDepDone(
      A,
      gathers[0].tasks,
      "ok",
      new Map([
        ["a-1", 100],
        ["a-2", 100],
        ["a-3", 100],
      ]),
    );
    expect(executed).toEqual([]);
    state.gatherDepDone(B, gathers[1].tasks, "ok", new Map([["b-1", 100]]));
    expect(executed.map((t) => t.key)).toEqual(["sum-1"]);
  });

  it("tells why keys wait in fetch: the peer is already busy with us, or our own limits", () => {
    const { state, gathers, queued } = machine({ transferIncomingCountLimit: 1, transferMessageBytesLimit: 100 });
    state.computeTask(
      task("sum-1", [
        ["a-1", [A], 100],
        ["a-2", [A], 100],
        ["b-1", [B], 100],
      ]),
    );
    expect(gathers.map(({ keys }) => keys)).toEqual([["a-1"]]);
    expect(queued.sort()).toEqual(["a-2 local-saturated", "b-1 local-saturated"]);
    queued.length = 0;
    const { state: other, gathers: otherGathers, queued: otherQueued } = machine({ transferMessageBytesLimit: 100 });
    other.computeTask(
      task("sum-2", [
        ["a-1", [A], 100],
        ["a-2", [A], 100],
      ]),
    );
    expect(otherGathers.map(({ keys }) => keys)).toEqual([["a-1"]]);
    expect(otherQueued).toEqual(["a-2 remote-saturated"]);
    other.gatherDepDone(A, otherGathers[0].tasks, "ok", new Map([["a-1", 100]]));
    expect(otherGathers.map(({ keys }) => keys)).toEqual([["a-1"], ["a-2"]]);
  });

  it("retries a busy peer later, and asks the scheduler about keys no peer had", async () => {
    const { state, gathers, log, transitions } = machine();
    state.computeTask(task("sum-1", [["a-1", [A], 100]]));
    state.gatherDepDone(A, gathers[0].tasks, "busy", new Map());
    expect(state.tasks.get("a-1")!.state).toBe("fetch");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gathers).toHaveLength(2);
    state.gatherDepDone(A, gathers[1].tasks, "missing", new Map());
    expect(state.tasks.get("a-1")!.state).toBe("missing");
    expect(log).toEqual(["who-has a-1"]);
    state.whoHasReply({ "a-1": [B] });
    expect(gathers[2].peer).toBe(B);
    expect(transitions.filter((line) => line.startsWith("a-1"))).toEqual([
      "a-1: released → fetch",
      "a-1: fetch → flight",
      "a-1: flight → fetch",
      "a-1: fetch → flight",
      "a-1: flight → missing",
      "a-1: missing → fetch",
      "a-1: fetch → flight",
    ]);
    state.close();
  });

  it("moves a seceded task out of the thread count, and frees keys the scheduler releases", () => {
    const { state, executed, log } = machine();
    state.computeTask(task("poll-1", [], 0));
    state.computeTask(task("x-1", [], 1));
    expect(executed.map((t) => t.key)).toEqual(["poll-1"]);
    state.secede("poll-1");
    expect(state.tasks.get("poll-1")!.state).toBe("long-running");
    expect(executed.map((t) => t.key)).toEqual(["poll-1", "x-1"]);
    state.executeDone("poll-1", { ok: true, nbytes: 16 });
    state.freeKeys(["poll-1"]);
    expect(state.tasks.has("poll-1")).toBe(false);
    expect(log).toEqual(["finished poll-1", "release poll-1"]);
  });

  it("is seen whole by taskjourney through instrument() on transition and computeTask", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ role: "worker", clock: clock.now, sampling: { ratio: 0 }, strict: true });
    const { state, gathers } = machine();
    instrument(state, journeys, {
      transition: { method: "transition", key: (t) => t.key, from: (t) => t.state, to: (_t, to) => to },
      dependencies: {
        method: "computeTask",
        key: (event) => event.key,
        dependencies: (event) => event.deps.map((dep) => dep.key),
      },
    });
    state.computeTask(task("sum-1", [["a-1", [A], 100]]));
    clock.advance(1);
    state.gatherDepDone(A, gathers[0].tasks, "ok", new Map([["a-1", 100]]));
    clock.advance(2);
    state.executeDone("sum-1", { ok: true, nbytes: 8 });
    const breakdown = journeys.explain("sum-1")!;
    expect(breakdown.children.map((node) => [node.name, node.seconds])).toEqual([
      ["waiting", 1],
      ["ready", 0],
      ["executing", 2],
    ]);
    expect(journeys.stats("a", "flight").count).toBe(1);
    expect(journeys.dropped()).toEqual({});
  });
});
