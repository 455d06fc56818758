/**
 * The cluster example end to end: a real scheduler process, real worker processes on loopback,
 * piscina threads, TCP transfers and spill files. Each run is `node --import tsx main.ts` in a
 * child process; everything it started is checked by PID at the end, and killed in afterAll
 * should a test fail half way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildGraph, evaluateLocally, injectedKeys, withInjected } from "../../examples/cluster/workloads.js";
import type { RunSummary } from "../../examples/cluster/cluster.js";
import type { Breakdown, BreakdownNode } from "../../src/index.js";
import { breakdownFromSpans, reportDataFromTelemetry, SpanIndex } from "../../src/report.js";
import { formatBreakdown } from "../../src/report/format.js";
import { readTelemetryFiles } from "../../src/report/inputs.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = path.join(ROOT, "examples/cluster/main.ts");

interface Run {
  child: ChildProcess;
  outDir: string;
}
const runs: Run[] = [];

/** Whether `pid` is a running process (a zombie waiting to be reaped is not). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function pidsOf(outDir: string): { scheduler: number; workers: number[]; spillRoot: string } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, "pids.json"), "utf8"));
  } catch {
    return undefined;
  }
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs the demo with `args` (and --quiet unless `quiet` is false: then its report is on stdout, as a user sees it). */
function start(args: string[], extraEnv: Record<string, string> = {}, quiet = true): Run {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-cluster-test-"));
  const env = { ...process.env, ...extraEnv };
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_")) delete env[name];
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, ...args, "--out", outDir, ...(quiet ? ["--quiet"] : [])],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const run = { child, outDir };
  runs.push(run);
  return run;
}

function finished(run: Run, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  let output = "";
  run.child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  run.child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      run.child.kill("SIGKILL");
      reject(new Error(`the cluster did not finish within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    run.child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ spanId: string }>;
  role: string;
}

function readSpans(outDir: string): OtlpSpan[] {
  const directory = path.join(outDir, "otlp");
  const spans: OtlpSpan[] = [];
  for (const file of fs.readdirSync(directory).filter((name) => name.startsWith("traces-"))) {
    for (const line of fs.readFileSync(path.join(directory, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      for (const resourceSpans of JSON.parse(line).resourceSpans) {
        const role = resourceSpans.resource.attributes.find((a: { key: string }) => a.key === "taskjourney.role")?.value
          .stringValue;
        for (const scope of resourceSpans.scopeSpans) for (const span of scope.spans) spans.push({ ...span, role });
      }
    }
  }
  return spans;
}

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  const [first] = Object.values(value);
  return typeof first === "string" && /^\d+$/.test(first) && "intValue" in value ? Number(first) : first;
}

/** The report's line over the slowest task's tree, and the key it names first. */
function slowestNamed(outDir: string): { line: string; key: string } {
  const line = fs
    .readFileSync(path.join(outDir, "report.txt"), "utf8")
    .split("\n")
    .find((text) => text.startsWith("Slowest task"))!;
  return { line, key: /^Slowest task:? (\S+)/.exec(line)![1] };
}

/**
 * The timelines on the demo's own report.html: the key each was drawn for, its reasons, its
 * trace id, and whether that trace (in the OTLP files) holds a task span of that key.
 */
function pageTimelines(outDir: string): Array<{ key: string; reasons: string; traceId: string; holdsKey: boolean }> {
  const html = fs.readFileSync(path.join(outDir, "report.html"), "utf8");
  const spans = readSpans(outDir);
  return [...html.matchAll(/<h3>(\S+) — ([^;<]+); its trace [^<]*<\/h3><p class="note">trace ([0-9a-f]{32}): /g)].map(
    ([, key, reasons, traceId]) => ({
      key,
      reasons,
      traceId,
      holdsKey: spans.some(
        (span) => span.traceId === traceId && span.name.startsWith("task ") && attribute(span, "task.key") === key,
      ),
    }),
  );
}

/** The key of the slowest traced task a report's "Slowest task" line names: the slowest, or the slowest traced after it. */
function slowestTracedNamed(line: string): string | undefined {
  if (/^Slowest task: \S+ \([^)]+\), among the exported traces/.test(line))
    return /^Slowest task: (\S+)/.exec(line)![1];
  return /slowest traced task: (\S+) \(/.exec(line)?.[1];
}

/** The keys of the workers' exported task spans. */
function tracedKeys(spans: readonly OtlpSpan[]): Set<unknown> {
  return new Set(
    spans
      .filter((span) => span.role === "worker" && span.name.startsWith("task "))
      .map((span) => attribute(span, "task.key")),
  );
}

afterAll(async () => {
  for (const run of runs) {
    const pids = pidsOf(run.outDir);
    for (const pid of [...(pids?.workers ?? []), run.child.pid ?? -1]) {
      if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
    }
    if (pids?.spillRoot !== undefined) fs.rmSync(pids.spillRoot, { recursive: true, force: true });
    fs.rmSync(run.outDir, { recursive: true, force: true });
  }
});

describe("the cluster example", () => {
  it("computes a small reduction right, with real transfers in its spans, spilling, and no process left behind", async () => {
    const options = { size: 120, seed: 7, length: 4096 };
    const run = start([
      "--workload",
      "reduction",
      "--size",
      String(options.size),
      "--length",
      String(options.length),
      "--seed",
      String(options.seed),
      "--workers",
      "3",
      "--threads",
      "2",
      "--memory-limit",
      "64k",
      "--trace-ratio",
      "1",
      // One warm-up round first: the measured round runs on a cluster that has already computed.
      "--warmup",
      "1",
    ]);
    const { code, output } = await finished(run, 60_000);
    expect(code, output).toBe(0);
    const summary = JSON.parse(fs.readFileSync(path.join(run.outDir, "summary.json"), "utf8")) as RunSummary;

    // The answer is the graph's, evaluated here in-process with the same functions.
    expect(summary.result).toBe(evaluateLocally(buildGraph("reduction", options)));
    expect(summary.tasks).toBe(buildGraph("reduction", options).tasks.length);

    // Spans: gather_dep transfers with their bytes, and the worker journeys nested under the
    // scheduler's (trace context went scheduler → worker in compute-task).
    const spans = readSpans(run.outDir);
    const gathers = spans.filter((span) => span.name === "gather_dep");
    expect(gathers.length).toBeGreaterThan(0);
    const transferred = gathers.filter(
      (span) => (attribute(span, "transfer.bytes") as number) > 0 && attribute(span, "transfer.outcome") === "ok",
    );
    expect(transferred.length).toBeGreaterThan(0);
    expect(gathers.every((span) => span.kind === 3 && span.role === "worker")).toBe(true);
    expect(attribute(transferred[0], "transfer.peer")).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    // The serving side: get_data spans on the workers that sent the data, SERVER children of the
    // gather_dep that asked, and its activities and bytes in task.serve.*.
    const gatherIds = new Set(gathers.map((span) => span.spanId));
    const getData = spans.filter((span) => span.name === "get_data");
    expect(getData.length).toBeGreaterThan(0);
    expect(
      getData.every((span) => span.kind === 2 && span.role === "worker" && gatherIds.has(span.parentSpanId ?? "")),
    ).toBe(true);
    const schedulerSpans = new Map(
      spans.filter((span) => span.role === "scheduler").map((span) => [span.spanId, span]),
    );
    const nested = spans.filter(
      (span) =>
        span.role === "worker" &&
        span.name.startsWith("task ") &&
        schedulerSpans.get(span.parentSpanId ?? "")?.traceId === span.traceId,
    );
    expect(nested.length).toBeGreaterThan(0);
    // Under the scheduler's task span of the key, linked to the processing span it was sent in.
    expect(schedulerSpans.get(nested[0].parentSpanId!)!.name).toBe(nested[0].name);
    expect(nested[0].links?.map((link) => schedulerSpans.get(link.spanId)?.name)).toEqual(["processing"]);

    // A 64 KiB limit against 32 KiB arrays: values spill to disk and come back when used.
    const counters = summary.report.workers.map((worker) => worker.counters);
    expect(counters.reduce((sum, c) => sum + c.spilled, 0)).toBeGreaterThan(0);
    expect(counters.reduce((sum, c) => sum + c.unspilled, 0)).toBeGreaterThan(0);
    expect(summary.report.execute["disk-read"]).toBeGreaterThan(0);
    // The spill files' sizes, digested as bytes: every unspill reads a whole file of a 32 KiB array and more.
    expect(summary.report.executeBytes["disk-read"]).toBeGreaterThan(32 * 1024);
    expect((summary.report.execute["disk-write"] ?? 0) + (summary.report.gather["disk-write"] ?? 0)).toBeGreaterThan(0);
    expect(summary.report.gatherBytes.ok).toBeGreaterThan(0);
    // What was fetched was served: every byte a gather_dep received left a sender (a reply whose
    // gather_dep was cancelled meanwhile is sent and not received), some read back from spill files.
    expect(summary.report.serveBytes.ok).toBeGreaterThanOrEqual(summary.report.gatherBytes.ok);
    expect(summary.report.serveBytes.ok).toBeLessThan(summary.report.gatherBytes.ok * 1.01);
    expect(summary.report.serve["disk-read"]).toBeGreaterThan(0);
    // 32 KiB values are above the 16 KiB threshold: deflated by the sender, inflated on receipt.
    expect(counters.reduce((sum, c) => sum + (c.compressIn ?? 0), 0)).toBeGreaterThan(0);
    expect(counters.reduce((sum, c) => sum + (c.decompressOut ?? 0), 0)).toBeGreaterThan(0);
    expect(summary.report.serve.compress).toBeGreaterThan(0);
    expect(summary.report.gather.decompress).toBeGreaterThan(0);

    // Two rounds, the measured one last; the scheduler decided every task of both, with live
    // statistics once a prefix had some.
    expect(summary.rounds).toHaveLength(2);
    expect(summary.rounds[1].runSeconds).toBe(summary.runSeconds);
    expect(summary.rounds.every((round) => round.cpuSeconds > 0)).toBe(true);
    expect(summary.decisions.total).toBe(2 * summary.tasks);
    expect(summary.decisions.informed).toBeGreaterThan(0);
    // One computation per graph submission, the scheduler's totals: every task of each ended in memory.
    expect(
      summary.report.computations.map(({ name, tasks, live, failed, ended }) => ({ name, tasks, live, failed, ended })),
    ).toEqual(
      ["graph-1", "graph-2"].map((name) => ({
        name,
        tasks: summary.tasks,
        live: 0,
        failed: 0,
        ended: { memory: summary.tasks },
      })),
    );
    // The slowest task's explain names its computation (the warm-up's graph-1 when it was slowest
    // there), as the computation ended on that worker, not as it stood when the task ended: none
    // live, a wall time rather than one "so far".
    const computationLine = summary.slowestExplain!.split("\n")[1];
    expect(computationLine).toMatch(/^computation graph-[12]: \d+ tasks(?: \(\d+ failed\))?, \S+ \S+ wall; /);

    // The report: per-prefix rows (the warm-up round's renamed keys under the same prefixes), an
    // explain of the slowest task, OTLP metric files.
    expect(summary.report.rows.map((row) => row.prefix).sort()).toEqual(["arange", "final-sum", "square", "sum"]);
    expect(summary.slowestExplain).toMatch(/spent .* on worker tcp:\/\//);
    expect(
      fs.readdirSync(path.join(run.outDir, "otlp")).filter((name) => name.startsWith("metrics-worker-")),
    ).toHaveLength(3);
    // Every journey traced: the slowest task named is among the exported traces.
    const named = slowestNamed(run.outDir);
    expect(named.line).toMatch(/^Slowest task: \S+ \([^)]+\), among the exported traces \(explain\):$/);
    expect(tracedKeys(spans)).toContain(named.key);
    // The demo's own page draws its trace: built once every process had flushed its spans.
    const timelines = pageTimelines(run.outDir);
    expect(timelines.find((timeline) => timeline.key === named.key)).toMatchObject({
      reasons: expect.stringMatching(/^slowest #\d/),
      holdsKey: true,
    });

    // Every process is gone.
    const pids = pidsOf(run.outDir)!;
    expect(pids.workers).toHaveLength(3);
    for (const pid of [...pids.workers, pids.scheduler]) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(fs.existsSync(pids.spillRoot), "spill files removed").toBe(false);
  });

  it("a transfer slowed by the sender's unspill, a task slowed by a major GC and one by a blocked event loop explain themselves", async () => {
    const options = { size: 120, seed: 11, length: 4096 };
    const injected = { gcEvery: 17, blockEvery: 19 };
    const run = start([
      "--workload",
      "reduction",
      "--size",
      String(options.size),
      "--length",
      String(options.length),
      "--seed",
      String(options.seed),
      "--workers",
      "3",
      "--threads",
      "2",
      "--memory-limit",
      "64k",
      "--trace-ratio",
      "1",
      "--gc-every",
      String(injected.gcEvery),
      "--block-every",
      String(injected.blockEvery),
    ]);
    const { code, output } = await finished(run, 60_000);
    expect(code, output).toBe(0);
    const graph = withInjected(buildGraph("reduction", options), injected);
    const summary = JSON.parse(fs.readFileSync(path.join(run.outDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.result).toBe(evaluateLocally(graph));
    const { gc: gcKeys, blocked: blockedKeys } = injectedKeys(graph);
    expect(gcKeys.length).toBeGreaterThan(0);
    expect(blockedKeys.length).toBeGreaterThan(0);

    // What `taskjourney explain --from` and the report read: the spans the processes exported,
    // rebuilt by the rules explain() follows (test/otel/spans/stalls.test.ts: the same tree).
    const telemetry = readTelemetryFiles([path.join(run.outDir, "otlp")]);
    const index = new SpanIndex(telemetry.spans);
    const stallOf = (breakdown: Breakdown | undefined, name: string): BreakdownNode | undefined =>
      breakdown?.children
        .find((visit) => visit.name === "executing")
        ?.children.find((node) => node.name === "other")
        ?.children.find((node) => node.name === name);
    const workerJourney = (key: string) => breakdownFromSpans(index, key, { kind: "compute" });

    // A major GC forced on the worker's main thread as the task started: under executing, in the
    // time no activity claimed, as `gc` with a `major` child.
    const gcExplained = gcKeys
      .map(workerJourney)
      .filter(
        (breakdown) => (stallOf(breakdown, "gc")?.children.find((node) => node.name === "major")?.seconds ?? 0) > 0,
      );
    expect(
      gcExplained.length,
      `a --gc-every task with gc > major under executing: ${gcKeys.join(", ")}`,
    ).toBeGreaterThan(0);
    expect(formatBreakdown(gcExplained[0]!)).toMatch(/major/);
    // A 60 ms spin of the main thread: most of it seen as event-loop (the probe sees a stall from
    // when its tick was due, up to 20 ms after it began).
    const blockExplained = blockedKeys
      .map(workerJourney)
      .filter((breakdown) => (stallOf(breakdown, "event-loop")?.seconds ?? 0) >= 0.03);
    expect(
      blockExplained.length,
      `a --block-every task with >= 30 ms of event-loop under executing: ${blockedKeys.join(", ")}`,
    ).toBeGreaterThan(0);
    expect(formatBreakdown(blockExplained[0]!)).toMatch(/event-loop/);

    // A transfer whose sender read the value back from its spill file: the get_data span on the
    // sender, a child of the gather_dep that asked (which links to it), with its disk-read.
    const spans = telemetry.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const unspilled = spans.filter(
      (span) =>
        span.name === "get_data" &&
        spans.some(
          (child) =>
            child.parentSpanId === span.spanId && child.name === "disk-read" && child.endNanos > child.startNanos,
        ),
    );
    expect(unspilled.length, "a get_data span with a disk-read child").toBeGreaterThan(0);
    for (const getData of unspilled) {
      const gatherDep = byId.get(getData.parentSpanId ?? "");
      expect(gatherDep?.name).toBe("gather_dep");
      expect(gatherDep!.traceId).toBe(getData.traceId);
    }
    // Linked back, unless the gather_dep was cancelled and ended before the reply came.
    expect(
      unspilled.some((getData) =>
        byId.get(getData.parentSpanId!)!.links.some((link) => link.spanId === getData.spanId),
      ),
    ).toBe(true);

    // The report: its slowest journeys are these breakdowns, stalls included.
    const report = reportDataFromTelemetry(telemetry, { slowest: 10_000 });
    const inReport = (key: string) => report.slowest?.find((breakdown) => breakdown.key === key);
    expect(stallOf(inReport(gcExplained[0]!.key), "gc")).toBeDefined();
    expect(stallOf(inReport(blockExplained[0]!.key), "event-loop")).toBeDefined();
    expect(summary.report.serve["disk-read"]).toBeGreaterThan(0);
  });

  it("as `npm run demo` runs (default sampling): its report.html draws the trace of the slowest traced task it names on stdout", async () => {
    const run = start(["--workload", "reduction", "--size", "600", "--seed", "5", "--workers", "2"], {}, false);
    const { code, output } = await finished(run, 90_000);
    expect(code, output).toBe(0);
    const line = output.split("\n").find((text) => text.startsWith("Slowest task"))!;
    // The slowest task, among the exported traces; or why not, and the slowest that is.
    const key = slowestTracedNamed(line);
    expect(key, line).toBeDefined();
    const timelines = pageTimelines(run.outDir);
    expect(timelines.length).toBeGreaterThanOrEqual(1);
    expect(
      timelines.find((timeline) => timeline.key === key),
      `${line}\n${JSON.stringify(timelines)}`,
    ).toMatchObject({ holdsKey: true });
    // Every timeline is of a trace that holds its task; the page needs no second command.
    expect(timelines.every((timeline) => timeline.holdsKey)).toBe(true);
    expect(output).not.toContain("npx taskjourney report");
    expect(output).toContain(`Telemetry: OTLP JSON in `);
    expect(output).not.toContain("has no timelines");
  });

  it("no head sampling (--trace-ratio 0): the slowest task named is not among the traces, and the line says why", async () => {
    const run = start([
      "--workload",
      "reduction",
      "--size",
      "120",
      "--seed",
      "3",
      "--workers",
      "2",
      "--trace-ratio",
      "0",
    ]);
    const { code, output } = await finished(run, 60_000);
    expect(code, output).toBe(0);
    const traced = tracedKeys(readSpans(run.outDir));
    const { line, key } = slowestNamed(run.outDir);
    // Fewer than 32 journeys of a prefix on a worker: none judged slow, none kept, none traced.
    expect(traced.size).toBe(0);
    expect(line).toBe(
      `${line.slice(0, line.indexOf(")") + 1)}, not traced: not head-sampled (--trace-ratio 0) nor kept as slow by its worker (slower than its prefix's p99 there, judged after 32 journeys, at most 1% of them); no task's trace was exported (explain):`,
    );
    expect(line.startsWith(`Slowest task: ${key} (`)).toBe(true);
  });

  it("metrics only (--trace-ratio off): no trace context in any message, so no carrier costs a task anything", async () => {
    // The workers write every message they receive (compute-task, free-keys, get_data) there.
    const stimulus = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-cluster-stimulus-"));
    try {
      const run = start(["--workload", "reduction", "--size", "60", "--workers", "2", "--trace-ratio", "off"], {
        TASKJOURNEY_STIMULUS: stimulus,
      });
      const { code, output } = await finished(run, 60_000);
      expect(code, output).toBe(0);
      const messages = fs
        .readdirSync(stimulus)
        .flatMap((file) => fs.readFileSync(path.join(stimulus, file), "utf8").trim().split("\n"))
        .map((line) => (JSON.parse(line) as { message: Record<string, unknown> }).message);
      const computeTasks = messages.filter((message) => message.op === "compute-task");
      expect(computeTasks.length).toBeGreaterThan(0);
      expect(messages.filter((message) => message.op === "get_data").length).toBeGreaterThan(0);
      expect(messages.filter((message) => message.carrier !== undefined)).toEqual([]);
    } finally {
      fs.rmSync(stimulus, { recursive: true, force: true });
    }
  });

  it("leaves no worker behind when the scheduler process is killed", async () => {
    const run = start(["--workload", "reduction", "--size", "5000", "--workers", "2", "--no-telemetry"]);
    const exited = finished(run, 60_000);
    await until(() => pidsOf(run.outDir) !== undefined, 30_000, "the workers to be started");
    const { workers } = pidsOf(run.outDir)!;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    run.child.kill("SIGKILL");
    await exited;
    await until(() => workers.every((pid) => !alive(pid)), 15_000, `workers ${workers.join(", ")} to exit`);
    // The workers removed the spill directory their dead parent made.
    await until(() => !fs.existsSync(pidsOf(run.outDir)!.spillRoot), 5_000, "the spill directory to be removed");
  });
});
