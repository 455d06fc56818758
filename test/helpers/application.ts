/**
 * An application that is not the cluster example: two worker processes and a scheduler, in one
 * process, run journeys on fake clocks through taskjourney/sdk into `fileDirectory` files (one
 * metrics and one traces file per process), as a user's application would export them.
 */
import { startTelemetry, type Telemetry } from "../../src/sdk.js";
import { defineMachine, instrument, type Breakdown } from "../../src/index.js";
import { FakeClock } from "./clock.js";

async function process_(
  directory: string,
  role: "worker" | "scheduler",
  instance: string,
  clock: FakeClock,
  temporality: "cumulative" | "delta",
): Promise<Telemetry> {
  return startTelemetry({
    role,
    instance,
    fileDirectory: directory,
    registerGlobal: false,
    // Both signals as OTLP, which goes to the files while no OTEL_EXPORTER_OTLP_*ENDPOINT is set.
    exporters: { traces: "otlp", metrics: "otlp" },
    journeys: {
      runtime: { clock: clock.now, timeOrigin: 1_700_000_000 },
      temporality,
      sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
    },
  });
}

/** Worker 1: inc-1 waits 1 s, readies 0.5 s, executes 2 s (0.25 s deserialize). Worker 2: inc-2 executes 4 s after fetching x-1 (1 s of network). */
export async function runApplication(
  directory: string,
  temporality: "cumulative" | "delta" = "cumulative",
): Promise<{ explained: Breakdown[] }> {
  const clock1 = new FakeClock(10);
  const clock2 = new FakeClock(10);
  const clockS = new FakeClock(10);
  const w1 = await process_(directory, "worker", "tcp://w1:1", clock1, temporality);
  const w2 = await process_(directory, "worker", "tcp://w2:1", clock2, temporality);
  const scheduler = await process_(directory, "scheduler", "tcp://s:1", clockS, temporality);
  const s = scheduler.journeys;
  s.transition("inc-1", "released", "waiting");
  s.transition("inc-1", "waiting", "processing");
  clockS.advance(3.5);
  s.transition("inc-1", "processing", "memory");

  const a = w1.journeys;
  a.transition("inc-1", "released", "waiting");
  clock1.advance(1);
  a.transition("inc-1", "waiting", "ready");
  clock1.advance(0.5);
  const ledger = a.execute("inc-1");
  ledger.meter("deserialize", () => clock1.advance(0.25));
  clock1.advance(1.75);
  ledger.end("memory");
  // A cumulative export in the middle: the report must not count what it holds twice.
  await w1.forceFlush();

  const b = w2.journeys;
  b.transition("inc-2", "released", "waiting");
  b.dependencies("inc-2", ["x-1"]);
  b.transition("x-1", "released", "fetch");
  const transfer = b.gather("tcp://w1:1", ["x-1"], 100);
  transfer.meter("network", () => clock2.advance(1));
  transfer.end("ok");
  b.transition("inc-2", "waiting", "ready");
  const second = b.execute("inc-2");
  clock2.advance(4);
  second.end("memory");
  const explained = [a.explain("inc-1")!, b.explain("inc-2")!];
  await Promise.all([w1.shutdown(), w2.shutdown(), scheduler.shutdown()]);
  return { explained };
}

/**
 * A run where a task fails: worker 1's `load` method throws a TypeError for load-1 (1.5 s into
 * its execution, through instrument()), the scheduler learns it through the carrier back and errs
 * load-1 and its dependent sum-1 (which never ran). Every journey is sampled.
 */
export async function runFailingApplication(directory: string): Promise<void> {
  const clock1 = new FakeClock(10);
  const clockS = new FakeClock(10);
  const w1 = await process_(directory, "worker", "tcp://w1:1", clock1, "cumulative");
  const scheduler = await process_(directory, "scheduler", "tcp://s:1", clockS, "cumulative");
  const s = scheduler.journeys;
  const a = w1.journeys;
  s.transition("load-1", "released", "waiting");
  s.transition("load-1", "waiting", "processing");
  s.transition("sum-1", "released", "waiting");
  s.dependencies("sum-1", ["load-1"]);
  const carrier: Record<string, string> = {};
  s.propagation.sender.inject("load-1", carrier);

  const worker = {
    load(key: string): void {
      clock1.advance(1.5);
      throw new TypeError(`no such file: ${key}.csv`);
    },
  };
  instrument(worker, a, { execute: { method: "load", key: (key) => key } });
  a.propagation.receiver.continueFrom("load-1", carrier);
  a.transition("load-1", "released", "waiting");
  clock1.advance(0.5);
  a.transition("load-1", "waiting", "ready");
  try {
    worker.load("load-1");
  } catch {
    // The worker reports the failure to the scheduler, as a real one would.
  }
  const back: Record<string, string> = {};
  a.propagation.sender.inject("load-1", back);
  clockS.advance(2.5);
  s.propagation.receiver.resultFrom("load-1", back);
  s.transition("load-1", "processing", "erred");
  s.transition("sum-1", "waiting", "erred");
  await Promise.all([w1.shutdown(), scheduler.shutdown()]);
}

/** A job queue's machine, the same on both sides: a failed attempt is `dead`, and the scheduler retries it after a backoff. */
const QUEUE = defineMachine({
  states: ["new", "queued", "running", "backoff", "done", "dead"],
  transitions: { new: ["queued"], queued: ["running"], running: ["done", "dead", "backoff"], backoff: ["queued"] },
  terminal: { success: "done", failure: "dead" },
  initial: "new",
  executing: "running",
});

/**
 * A job queue (not Dask) whose scheduler retries: job 2 fails its first attempt on the worker and
 * succeeds on the second; job 6 fails both and is dead for good. The worker's journey of each
 * attempt nests under the scheduler's (the carrier out), and its end tells the scheduler (the
 * carrier back). Every journey is sampled.
 */
export async function runRetryingQueue(directory: string): Promise<void> {
  const clockW = new FakeClock(10);
  const clockS = new FakeClock(10);
  const start = (role: "worker" | "scheduler", instance: string, clock: FakeClock) =>
    startTelemetry({
      role,
      instance,
      fileDirectory: directory,
      registerGlobal: false,
      exporters: { traces: "otlp", metrics: "otlp" },
      journeys: {
        runtime: { clock: clock.now },
        machine: QUEUE,
        sampling: { ratio: 1, keepSlowerThan: 0, keepErrors: true },
      },
    });
  const worker = await start("worker", "queue-worker", clockW);
  const scheduler = await start("scheduler", "queue", clockS);
  const s = scheduler.journeys;
  const w = worker.journeys;
  const attempt = (job: string, fails: boolean, number: number): boolean => {
    const out: Record<string, string> = {};
    s.propagation.sender.inject(job, out);
    w.propagation.receiver.continueFrom(job, out);
    w.transition(job, "new", "queued");
    const ledger = w.execute(job);
    clockW.advance(0.5);
    if (fails) ledger.end("error", new Error(`upstream said 503 (attempt ${number})`));
    else ledger.end("memory");
    const back: Record<string, string> = {};
    w.propagation.sender.inject(job, back);
    s.propagation.receiver.resultFrom(job, back);
    return !fails;
  };
  for (const [job, failures] of [
    ["2", 1],
    ["6", 2],
  ] as const) {
    s.describe(job, { prefix: "fetch" });
    w.describe(job, { prefix: "fetch" });
    s.transition(job, "new", "queued");
    s.transition(job, "queued", "running");
    for (let number = 1; ; number++) {
      const ok = attempt(job, number <= failures, number);
      clockS.advance(1);
      if (ok) {
        s.transition(job, "running", "done");
        break;
      }
      if (number === 2) {
        s.transition(job, "running", "dead");
        break;
      }
      s.transition(job, "running", "backoff");
      clockS.advance(0.1);
      s.transition(job, "backoff", "queued");
      s.transition(job, "queued", "running");
    }
  }
  await Promise.all([worker.shutdown(), scheduler.shutdown()]);
}
