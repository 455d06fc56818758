/**
 * The example scheduler against fake workers on loopback: where it sends tasks, when it queues
 * them, and that its duration estimates are taskjourney's live statistics.
 */
import v8 from "node:v8";
import { afterEach, describe, expect, it } from "vitest";
import { TaskJourneys, keySplit } from "../../src/index.js";
import { Scheduler, instrumentScheduler } from "../../examples/cluster/scheduler.js";
import { connect, listen, type Connection, type Message } from "../../examples/cluster/transport.js";
import { renamedForRound, type Graph, type TaskSpec } from "../../examples/cluster/workloads.js";
import { FakeClock } from "../helpers/clock.js";

interface FakeWorker {
  address: string;
  tasks: Message[];
  connection: Connection;
  finish(key: string, nbytes: number): void;
  fail(key: string): void;
  close(): void;
}

/** What a fake worker answers when asked for its CPU seconds. */
const FAKE_WORKER_CPU_SECONDS = 1000;

async function fakeWorker(scheduler: string, nthreads: number): Promise<FakeWorker> {
  // Serves get_data (the scheduler fetches the final result that way).
  const { server, address } = await listen((peer) => {
    peer.onMessage = (message) => {
      const data: Record<string, Uint8Array> = {};
      for (const key of message.keys as string[]) data[key] = v8.serialize(`value of ${key}`);
      peer.reply(message, { op: "data", status: "OK", data });
    };
  });
  const connection = await connect(scheduler);
  const tasks: Message[] = [];
  connection.onMessage = (message) => {
    if (message.op === "compute-task") tasks.push(message);
    if (message.op === "cpu") connection.reply(message, { op: "cpu", cpuSeconds: FAKE_WORKER_CPU_SECONDS });
  };
  await connection.request({ op: "register", address, nthreads, pid: process.pid, memoryLimit: 1e9 });
  return {
    address,
    tasks,
    connection,
    finish: (key, nbytes) => connection.send({ op: "task-finished", key, nbytes }),
    fail: (key) => connection.send({ op: "task-erred", key, error: `${key} raised` }),
    close: () => {
      connection.close();
      server.close();
    },
  };
}

function graph(root: string, tasks: Array<[string, string[]]>): Graph {
  const specs: TaskSpec[] = tasks.map(([key, deps]) => ({
    key,
    func: "collect",
    args: deps.map((ref) => ({ ref })),
    deps,
  }));
  return { workload: "reduction", description: "test", tasks: specs, root };
}

async function settle(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

/** Records `count` scheduler journeys of `prefix` that were processing for `seconds` each. */
function history(journeys: TaskJourneys, clock: FakeClock, prefix: string, durations: number[]): void {
  durations.forEach((seconds, index) => {
    const key = `${prefix}-${1000 + index}`;
    journeys.transition(key, "released", "waiting");
    journeys.transition(key, "waiting", "processing");
    clock.advance(seconds);
    journeys.transition(key, "processing", "memory");
  });
}

let cleanup: Array<() => void> = [];
afterEach(() => {
  cleanup.forEach((fn) => fn());
  cleanup = [];
});

async function setup(workers: number, nthreads: number, journeys?: TaskJourneys, keepGoing?: boolean) {
  const scheduler = new Scheduler({ saturation: 1.5, keepGoing });
  const address = await scheduler.start();
  if (journeys !== undefined) instrumentScheduler(scheduler, journeys);
  const fakes: FakeWorker[] = [];
  for (let i = 0; i < workers; i++) fakes.push(await fakeWorker(address, nthreads));
  await scheduler.waitForWorkers(workers);
  cleanup.push(() => {
    fakes.forEach((fake) => fake.close());
    scheduler.close();
  });
  return { scheduler, fakes };
}

describe("the example scheduler", () => {
  it("forgets a finished graph (its result freed on the worker) and computes the next, renamed for its round", async () => {
    const { scheduler, fakes } = await setup(1, 2);
    const worker = fakes[0];
    const freed: string[] = [];
    const onMessage = worker.connection.onMessage;
    worker.connection.onMessage = (message, connection) => {
      if (message.op === "free-keys") freed.push(...(message.keys as string[]));
      onMessage(message, connection);
    };
    const first = graph("b-0", [
      ["a-0", []],
      ["b-0", ["a-0"]],
    ]);
    const warm = renamedForRound(first, 1);
    expect(warm.tasks.map((task) => task.key)).toEqual(["a-0-900001", "b-0-900001"]);
    expect(warm.tasks[1]).toMatchObject({ deps: ["a-0-900001"], args: [{ ref: "a-0-900001" }] });
    expect(warm.tasks.map((task) => keySplit(task.key))).toEqual(first.tasks.map((task) => keySplit(task.key)));

    const warmResult = scheduler.compute(warm);
    await settle(() => worker.tasks.length === 1);
    worker.finish("a-0-900001", 8);
    await settle(() => worker.tasks.length === 2);
    worker.finish("b-0-900001", 8);
    await expect(warmResult).resolves.toBe("value of b-0-900001");
    expect(() => scheduler.compute(first)).toThrow("one graph at a time");
    scheduler.forget();
    await settle(() => freed.includes("b-0-900001"));
    expect(freed).toEqual(["a-0-900001", "b-0-900001"]);

    const result = scheduler.compute(first);
    await settle(() => worker.tasks.length === 3);
    worker.finish("a-0", 8);
    await settle(() => worker.tasks.length === 4);
    worker.finish("b-0", 8);
    await expect(result).resolves.toBe("value of b-0");
    expect(worker.tasks.map((task) => task.key)).toEqual(["a-0-900001", "b-0-900001", "a-0", "b-0"]);
    // This process's CPU seconds and the fake worker's.
    const cpu = await scheduler.cpuSeconds();
    const own = process.cpuUsage();
    expect(cpu).toBeGreaterThan(FAKE_WORKER_CPU_SECONDS);
    expect(cpu).toBeLessThanOrEqual(FAKE_WORKER_CPU_SECONDS + (own.user + own.system) / 1e6);
  });

  it("estimates durations from journeys.stats(prefix, 'processing'), and a default before there are 3", () => {
    const clock = new FakeClock(10);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    const scheduler = new Scheduler({ defaultDuration: 0.05 });
    scheduler.useJourneys(journeys);
    history(journeys, clock, "inc", [1, 2, 3, 4, 5]);
    history(journeys, clock, "few", [7, 7]);
    const stats = journeys.stats("inc", "processing");
    expect(scheduler.estimate("inc")).toEqual({ mean: 3, p90: stats.quantile(0.9), count: 5, informed: true });
    expect(scheduler.estimate("inc").p90).toBeCloseTo(5, 1);
    expect(scheduler.estimate("few")).toEqual({ mean: 0.05, p90: 0.1, count: 2, informed: false });
    expect(scheduler.estimate("never")).toEqual({ mean: 0.05, p90: 0.1, count: 0, informed: false });
  });

  it("sends a task to the worker holding most of its dependency bytes, with the estimate it consulted", async () => {
    const clock = new FakeClock(10);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    history(journeys, clock, "b", [0.01, 0.02, 0.03]);
    const { scheduler, fakes } = await setup(2, 2, journeys);
    const result = scheduler.compute(
      graph("b-0", [
        ["a-0", []],
        ["a-1", []],
        ["b-0", ["a-0", "a-1"]],
      ]),
    );
    await settle(() => fakes[0].tasks.length + fakes[1].tasks.length === 2);
    const holderOf = (key: string) => fakes.find((fake) => fake.tasks.some((task) => task.key === key))!;
    // a-0 brings a megabyte, a-1 ten bytes: b-0 goes where a-0 is, whichever worker that is.
    holderOf("a-0").finish("a-0", 1_000_000);
    holderOf("a-1").finish("a-1", 10);
    await settle(() => fakes.some((fake) => fake.tasks.some((task) => task.key === "b-0")));
    const b = holderOf("b-0");
    expect(b).toBe(holderOf("a-0"));
    const message = b.tasks.find((task) => task.key === "b-0")!;
    expect(message.deps).toEqual([
      { key: "a-0", who: [holderOf("a-0").address], nbytes: 1_000_000 },
      { key: "a-1", who: [holderOf("a-1").address], nbytes: 10 },
    ]);
    const decision = scheduler.decisions.samples.find((sample) => sample.key === "b-0")!;
    expect(decision).toMatchObject({
      worker: b.address,
      heldBytes: 1_000_000 + (b === holderOf("a-1") ? 10 : 0),
      dependencyBytes: 1_000_010,
      movedFromHolder: false,
    });
    expect(decision.estimate).toMatchObject({ informed: true, count: 3 });
    expect(decision.estimate.mean).toBeCloseTo(0.02, 9);
    b.finish("b-0", 8);
    await expect(result).resolves.toBe("value of b-0");
    // The scheduler's own transitions were recorded through instrument(): b now has 4 visits.
    expect(journeys.stats("b", "processing").count).toBe(4);
  });

  it("queues ready tasks when every worker is full, and assigns them as slots free up", async () => {
    const { scheduler, fakes } = await setup(2, 1);
    const leaves = ["x-0", "x-1", "x-2", "x-3", "x-4"];
    const result = scheduler.compute(
      graph("y-0", [...leaves.map((key): [string, string[]] => [key, []]), ["y-0", leaves]]),
    );
    // ceil(1 thread × 1.5) = 2 tasks per worker; the fifth waits on the scheduler.
    await settle(() => fakes[0].tasks.length + fakes[1].tasks.length === 4);
    expect(fakes.map((fake) => fake.tasks.length)).toEqual([2, 2]);
    expect(scheduler.decisions.queued).toBe(1);
    expect(scheduler.decisions.informed).toBe(0);
    const first = fakes[0].tasks[0].key as string;
    fakes[0].finish(first, 8);
    await settle(() => fakes[0].tasks.length === 3);
    expect(fakes[0].tasks[2].key).toBe("x-4");
    for (const fake of fakes) for (const task of fake.tasks) if (task.key !== first) fake.finish(task.key as string, 8);
    await settle(() => fakes.some((fake) => fake.tasks.some((task) => task.key === "y-0")));
    const y = fakes.find((fake) => fake.tasks.some((task) => task.key === "y-0"))!;
    y.finish("y-0", 8);
    await expect(result).resolves.toBe("value of y-0");
  });

  it("with keepGoing, errs a failed task and everything depending on it, computes the rest, and resolves with no value", async () => {
    const { scheduler, fakes } = await setup(1, 4, undefined, true);
    const worker = fakes[0];
    const states = new Map<string, string[]>();
    const transition = scheduler.transition.bind(scheduler);
    scheduler.transition = (task, to) => {
      states.set(task.key, [...(states.get(task.key) ?? []), to]);
      transition(task, to);
    };
    // a-0 → b-0 → d-0 (root) ← c-0 ← a-1: a-0 fails, so b-0 and d-0 err; a-1 and c-0 are computed.
    const result = scheduler.compute(
      graph("d-0", [
        ["a-0", []],
        ["a-1", []],
        ["b-0", ["a-0"]],
        ["c-0", ["a-1"]],
        ["d-0", ["b-0", "c-0"]],
      ]),
    );
    await settle(() => worker.tasks.length === 2);
    worker.fail("a-0");
    await settle(() => scheduler.erred === 3);
    expect(states.get("b-0")).toEqual(["waiting", "erred"]);
    expect(states.get("d-0")).toEqual(["waiting", "erred"]);
    worker.finish("a-1", 8);
    await settle(() => worker.tasks.length === 3);
    worker.finish("c-0", 8);
    await expect(result).resolves.toBeUndefined();
    expect(worker.tasks.map((task) => task.key)).toEqual(["a-0", "a-1", "c-0"]);
    expect(states.get("a-0")).toEqual(["waiting", "processing", "erred"]);
    expect(scheduler.failures).toEqual([{ key: "a-0", error: "a-0 raised" }]);
    expect(scheduler.erred).toBe(3);
  });

  it("without keepGoing, rejects the computation at the first failure", async () => {
    const { scheduler, fakes } = await setup(1, 2);
    const result = scheduler.compute(
      graph("b-0", [
        ["a-0", []],
        ["b-0", ["a-0"]],
      ]),
    );
    await settle(() => fakes[0].tasks.length === 1);
    fakes[0].fail("a-0");
    await expect(result).rejects.toThrow(/task a-0 failed on .*: a-0 raised/);
  });
});
