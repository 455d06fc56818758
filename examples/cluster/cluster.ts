/**
 * Runs one workload on a fresh local cluster: this process is the scheduler; it forks the
 * workers (Node + tsx), waits for them to register, computes the graph, collects the summaries,
 * shuts everything down and writes `summary.json` and `report.txt` into the output directory.
 * When a worker dies half way, the survivors still flush their telemetry and the summary is still
 * written, saying so. Children are killed only when they do not exit after that, or when this
 * process exits; they also exit by themselves when this process dies.
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { source, taskjourney } from "./taskjourney.js";
import { ProgressBar } from "./progress.js";
import { writeReportPage } from "./report-page.js";
import { aggregate, formatReport, readTotals, slowestLine, type ClusterReport } from "./report.js";
import { Scheduler, instrumentScheduler, type DecisionStats } from "./scheduler.js";
import { FLUSH_DEADLINE_MS, startTelemetry, type Telemetry } from "./telemetry.js";
import { gcSoFar } from "./parts.js";
import type { FlushReport, WorkerConfig } from "./worker.js";
import type { ExportErrorCount } from "../../src/sdk.js";
import { buildGraph, renamedForRound, withInjected, type Workload } from "./workloads.js";

export interface ClusterOptions {
  workload: Workload;
  /** About how many tasks. */
  size: number;
  /** Elements per array, when the workload has arrays. */
  length?: number;
  workers: number;
  threads: number;
  /** Bytes per worker before spilling; Infinity never spills. */
  memoryLimit: number;
  outDir: string;
  telemetry: boolean;
  /** Head-sampling ratio of journeys into traces; "off": no traces at all, metrics only. */
  traceRatio: number | "off";
  seed: number;
  /** Every Nth task raises (workloads.ts withInjected); the run computes the rest. */
  failEvery?: number;
  /** Every Nth task holds its thread `slowSeconds` (default 2) before computing. */
  slowEvery?: number;
  slowSeconds?: number;
  /** Every Nth task has its worker's main thread force a major GC as it starts. */
  gcEvery?: number;
  /** Every Nth task has its worker's main thread block its event loop 60 ms as it starts. */
  blockEvery?: number;
  verbose: boolean;
  progress: boolean;
  /** get_data requests a worker serves at once before answering "busy". Default 2. */
  outgoingLimit?: number;
  /**
   * Rounds of the same workload (under keys of their own) computed and forgotten before the
   * measured one, on the same processes: to measure a warm cluster, as a long-running one is.
   * Default 0. The report and the workers' counters cover every round.
   */
  warmup?: number;
}

/** One computation of the graph: warm-up rounds first, the measured one last. */
export interface RoundSummary {
  /** Seconds from submitting the graph to having the result. */
  runSeconds: number;
  /** CPU seconds of all processes (threads included) over the round. */
  cpuSeconds: number;
  /** Garbage collections of all processes over the round, and the scheduler's, when counted (TASKJOURNEY_CLUSTER_GC=1). */
  gc?: { count: number; major: number; seconds: number; schedulerCount: number; schedulerSeconds: number };
}

export interface RunSummary {
  workload: Workload;
  description: string;
  tasks: number;
  options: Omit<ClusterOptions, "memoryLimit"> & { memoryLimit: number | null };
  /** The root key's value (arrays as plain arrays); null when it erred (--fail-every). */
  result: unknown;
  /** Tasks that raised (their keys), and how many erred in all (those and their dependents). */
  failed: string[];
  /** Why each of `failed` raised, as its worker reported it (the report's "Failed tasks" table shows it). */
  failures: Array<{ key: string; error: string }>;
  erred: number;
  /** Seconds from submitting the graph to having the result. */
  runSeconds: number;
  /** Seconds of the whole run, process start-up and shutdown included. */
  wallSeconds: number;
  /** CPU seconds of all processes (threads included) while computing: from just before the graph is submitted to its result. */
  cpuSeconds: number;
  /** The scheduler's part of cpuSeconds. */
  schedulerCpuSeconds: number;
  /** Every round, warm-up rounds first; the last is the measured one (runSeconds, cpuSeconds). */
  rounds: RoundSummary[];
  /** Where taskjourney was loaded from: the built dist/ or the sources. */
  taskjourney: "dist" | "src";
  pids: { scheduler: number; workers: number[] };
  /** Where the OTLP data went, if telemetry was on. */
  destination: string | undefined;
  /** Failed exports of all processes, by signal, destination and error type (also warned on stderr as they happen). */
  exportErrors: ExportErrorCount[];
  decisions: DecisionStats;
  /**
   * Set when the run did not finish (a worker died, or any other failure after the workers
   * started): why, and the workers that exited before they were told to. The rest of the summary
   * is what the survivors and the scheduler had recorded by then; `result` is null.
   */
  aborted?: { error: string; died: WorkerDeath[] };
  /** The HTML report's title, when it must say more than the workload (an aborted run). */
  title?: string;
  report: ClusterReport;
  /** formatBreakdown of the slowest task, as printed. */
  slowestExplain: string | undefined;
}

/** A worker that exited before it was told to close. */
export interface WorkerDeath {
  pid: number;
  /** Its address, if it had registered. */
  address: string | undefined;
  /** The signal that ended it ("SIGKILL"), or "code N". */
  exit: string;
}

const WORKER_ENTRY = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** Children still running, for the exit handlers of main.ts and tests. */
export const liveChildren = new Set<ChildProcess>();

export function killChildren(signal: NodeJS.Signals = "SIGKILL"): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  }
}

/** Fails the run under way, if any, as a worker's death does; set while it computes. */
let stopCurrentRun: ((error: Error) => void) | undefined;

/**
 * Stops the run under way (main.ts, at SIGINT / SIGTERM / SIGHUP) the way a worker's death does:
 * the workers flush their telemetry and exit, this process flushes its own, and the summary says
 * why the run stopped. False when no run is under way past its start (nothing to keep yet).
 */
export function stopRun(reason: string): boolean {
  if (stopCurrentRun === undefined) return false;
  stopCurrentRun(new Error(reason));
  stopCurrentRun = undefined;
  return true;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** How long a worker may take to exit once it reported its flush, or, silent, after its flush deadline: then it is hung, and killed. */
const EXIT_GRACE_MS = 5_000;

/**
 * Waits for a worker told to close to exit. It flushes its telemetry for at most
 * FLUSH_DEADLINE_MS and reports (FlushReport) before exiting, so it is killed only when it has
 * not exited EXIT_GRACE_MS after its report, or after its deadline when it never reported: never
 * in the middle of a flush. Resolves the report, if any.
 */
function closed(child: ChildProcess): Promise<FlushReport | undefined> {
  return new Promise((resolve) => {
    let report: FlushReport | undefined;
    let timer = setTimeout(() => killChild(child), FLUSH_DEADLINE_MS + EXIT_GRACE_MS);
    const onMessage = (message: unknown) => {
      if ((message as { op?: unknown } | null)?.op !== "flushed") return;
      report = message as FlushReport;
      clearTimeout(timer);
      timer = setTimeout(() => killChild(child), EXIT_GRACE_MS);
    };
    child.on("message", onMessage);
    void exited(child).then(() => {
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(report);
    });
  });
}

/** Export failures of several processes, summed per signal, destination and error type. */
function mergeFailures(failures: readonly ExportErrorCount[]): ExportErrorCount[] {
  const merged = new Map<string, ExportErrorCount>();
  for (const failure of failures) {
    const id = `${failure.signal} ${failure.destination} ${failure.errorType}`;
    const seen = merged.get(id);
    merged.set(
      id,
      seen === undefined
        ? { ...failure }
        : { ...seen, items: seen.items + failure.items, exports: seen.exports + failure.exports },
    );
  }
  return [...merged.values()];
}

function killChild(child: ChildProcess): void {
  process.stderr.write(`cluster: worker pid ${child.pid} did not exit after closing; killed\n`);
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
}

function plain(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return Array.from(value as Float64Array);
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

export async function runCluster(
  options: ClusterOptions,
  print: (text: string) => void = () => {},
): Promise<RunSummary> {
  const wallStart = performance.now();
  const phase = (name: string) => {
    if (options.verbose) process.stderr.write(`[${((performance.now() - wallStart) / 1000).toFixed(2)} s] ${name}\n`);
  };
  const outDir = path.resolve(options.outDir);
  fs.mkdirSync(outDir, { recursive: true });
  for (const stale of ["otlp", "summary.json", "report.txt", "report.html", "pids.json"])
    fs.rmSync(path.join(outDir, stale), { recursive: true, force: true });
  const spillRoot = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-spill-"));
  const children: ChildProcess[] = [];
  /** Workers that exited before they were told to close, as they did. */
  const died: Array<{ child: ChildProcess; exit: string }> = [];
  let closing = false;
  let telemetry: Telemetry | undefined;
  const scheduler = new Scheduler({
    verbose: options.verbose,
    saturation: 1.5,
    keepGoing: options.failEvery !== undefined,
  });
  /** The addresses workers registered under, by pid: the scheduler forgets a dead one's. */
  const addresses = new Map<number, string>();
  /**
   * Closes the cluster with what every process recorded kept: the workers still running are
   * told to close, and each flushes its telemetry (files or exports) for at most FLUSH_DEADLINE_MS
   * and reports before it exits, as this process flushes its own; only one that does not exit
   * after that is killed. A run that failed half way (a worker killed) ends here too.
   */
  const closeCluster = async () => {
    closing = true;
    stopCurrentRun = undefined;
    for (const worker of scheduler.workers.values()) addresses.set(worker.pid, worker.address);
    scheduler.close();
    const flushing = telemetry?.shutdown();
    const reports = await Promise.all(children.map(closed));
    phase("workers exited");
    const flushed = await flushing;
    phase("telemetry flushed");
    const unfinished =
      reports.filter((report) => report !== undefined && !report.completed).length +
      (flushed !== undefined && !flushed.completed ? 1 : 0);
    if (unfinished > 0)
      process.stderr.write(
        `cluster: ${unfinished} process(es) stopped waiting for their telemetry export after ${FLUSH_DEADLINE_MS} ms\n`,
      );
    const exportErrors = mergeFailures([
      ...(telemetry?.exportErrors() ?? []),
      ...reports.flatMap((report) => report?.exportErrors ?? []),
    ]);
    for (const failure of exportErrors) {
      process.stderr.write(
        `cluster: export errors: ${failure.items} ${failure.signal === "traces" ? "spans" : "metric data points"} in ${failure.exports} exports to ${failure.destination} (${failure.errorType})\n`,
      );
    }
    return exportErrors;
  };
  let pids: RunSummary["pids"] | undefined;
  let graph: ReturnType<typeof buildGraph> | undefined;
  const rounds: RoundSummary[] = [];
  let runStart: number | undefined;
  try {
    const address = await scheduler.start();
    if (options.telemetry) {
      telemetry = await startTelemetry({
        role: "scheduler",
        instance: address,
        outDir,
        traceRatio: options.traceRatio,
      });
      instrumentScheduler(scheduler, telemetry.journeys);
    }
    const tsx = import.meta.resolve("tsx");
    for (let index = 0; index < options.workers; index++) {
      const config: WorkerConfig = {
        scheduler: address,
        nthreads: options.threads,
        memoryLimit: options.memoryLimit,
        spillDirectory: spillRoot,
        outDir,
        telemetry: options.telemetry,
        traceRatio: options.traceRatio,
        outgoingLimit: options.outgoingLimit ?? 2,
        verbose: options.verbose,
      };
      const child = fork(WORKER_ENTRY, [], {
        // TASKJOURNEY_WORKER_ARGV adds Node flags to the workers, e.g. "--cpu-prof --cpu-prof-dir=prof".
        execArgv: ["--import", tsx, ...(process.env.TASKJOURNEY_WORKER_ARGV ?? "").split(" ").filter(Boolean)],
        env: { ...process.env, TASKJOURNEY_WORKER: JSON.stringify(config) },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      children.push(child);
      liveChildren.add(child);
      child.once("exit", (code, signal) => {
        liveChildren.delete(child);
        // Told to close, a worker flushes and exits with code 0: any other end is a death.
        if (!closing || signal !== null || code !== 0) died.push({ child, exit: signal ?? `code ${code}` });
      });
    }
    pids = { scheduler: process.pid, workers: children.map((child) => child.pid!) };
    // For tests and for cleaning up after a crash: who runs, and where spill files go.
    fs.writeFileSync(path.join(outDir, "pids.json"), JSON.stringify({ ...pids, spillRoot }));
    const crashed = new Promise<never>((_, reject) => {
      stopCurrentRun = reject;
      for (const child of children) {
        child.once("exit", (code, signal) =>
          reject(new Error(`worker pid ${child.pid} exited early (${signal ?? `code ${code}`})`)),
        );
      }
    });
    crashed.catch(() => {});
    await Promise.race([scheduler.waitForWorkers(options.workers), crashed]);
    for (const worker of scheduler.workers.values()) addresses.set(worker.pid, worker.address);
    phase("workers registered");

    graph = withInjected(
      buildGraph(options.workload, { size: options.size, seed: options.seed, length: options.length }),
      options,
    );
    print(
      `${graph.description}: ${graph.tasks.length} tasks on ${options.workers} workers × ${options.threads} threads`,
    );
    const warmup = options.warmup ?? 0;
    for (let round = warmup; round > 0; round--) {
      const started = performance.now();
      const cpuBefore = await Promise.race([scheduler.cpuSeconds(), crashed]);
      await Promise.race([scheduler.compute(renamedForRound(graph, round)), crashed]);
      const runSeconds = (performance.now() - started) / 1000;
      rounds.push({ runSeconds, cpuSeconds: (await Promise.race([scheduler.cpuSeconds(), crashed])) - cpuBefore });
      scheduler.forget();
      print(`warm-up round ${warmup - round + 1} of ${warmup}: ${runSeconds.toFixed(2)} s`);
      phase(`warm-up round ${warmup - round + 1}`);
    }
    const progress = new ProgressBar(graph.tasks.length, options.workload, options.progress);
    scheduler.onProgress = (done) => progress.update(done);
    const before = await Promise.race([scheduler.usage(), crashed]);
    runStart = performance.now();
    const cpuStart = process.cpuUsage();
    const schedulerGcStart = gcSoFar();
    const value = await Promise.race([scheduler.compute(graph), crashed]);
    const runSeconds = (performance.now() - runStart) / 1000;
    const schedulerCpu = process.cpuUsage(cpuStart);
    const schedulerGcEnd = gcSoFar();
    const after = await Promise.race([scheduler.usage(), crashed]);
    const cpuSeconds = after.cpuSeconds - before.cpuSeconds;
    rounds.push({
      runSeconds,
      cpuSeconds,
      ...(before.gc !== undefined &&
      after.gc !== undefined &&
      schedulerGcStart !== undefined &&
      schedulerGcEnd !== undefined
        ? {
            gc: {
              count: after.gc.count - before.gc.count,
              major: after.gc.major - before.gc.major,
              seconds: after.gc.seconds - before.gc.seconds,
              schedulerCount: schedulerGcEnd.count - schedulerGcStart.count,
              schedulerSeconds: schedulerGcEnd.seconds - schedulerGcStart.seconds,
            },
          }
        : {}),
    });
    progress.finish();

    phase("computed");
    const summaries = await Promise.race([scheduler.summaries(), crashed]);
    phase("summaries");
    const schedulerTotals = telemetry === undefined ? undefined : await readTotals(telemetry.journeys);
    const report = { ...aggregate(summaries, schedulerTotals), traceRatio: options.traceRatio };
    const exportErrors = await closeCluster();
    return writeSummary(outDir, print, {
      workload: options.workload,
      description: graph.description,
      tasks: graph.tasks.length,
      options: { ...options, memoryLimit: Number.isFinite(options.memoryLimit) ? options.memoryLimit : null },
      result: plain(value) ?? null,
      failed: scheduler.failures.map((failure) => failure.key),
      failures: scheduler.failures.map(({ key, error }) => ({ key, error })),
      erred: scheduler.erred,
      runSeconds,
      wallSeconds: (performance.now() - wallStart) / 1000,
      cpuSeconds,
      schedulerCpuSeconds: (schedulerCpu.user + schedulerCpu.system) / 1e6,
      rounds,
      taskjourney: source,
      pids,
      destination: telemetry?.destination,
      exportErrors,
      decisions: scheduler.decisions,
      report,
      slowestExplain: explainSlowest(report),
    });
  } catch (error) {
    // A worker died (or the run failed otherwise once the workers started): the survivors and
    // this process still hold what they recorded. Their summaries (each worker answering within
    // the flush deadline), their telemetry flushed as at a normal end, and a summary saying what
    // happened, before the error goes on to the caller.
    if (pids === undefined || closing) throw error;
    try {
      const summaries = await scheduler.summaries(FLUSH_DEADLINE_MS);
      const schedulerTotals = telemetry === undefined ? undefined : await readTotals(telemetry.journeys);
      const report = { ...aggregate(summaries, schedulerTotals), traceRatio: options.traceRatio };
      const exportErrors = await closeCluster();
      const deaths: WorkerDeath[] = died.map(({ child, exit }) => ({
        pid: child.pid!,
        address: addresses.get(child.pid!),
        exit,
      }));
      const why = error instanceof Error ? error.message : String(error);
      for (const death of deaths)
        process.stderr.write(
          `cluster: worker pid ${death.pid}${death.address === undefined ? "" : ` (${death.address})`} died (${death.exit}) during the run; the summary and report cover the other processes\n`,
        );
      writeSummary(outDir, print, {
        workload: options.workload,
        description: graph?.description ?? options.workload,
        tasks: graph?.tasks.length ?? 0,
        options: { ...options, memoryLimit: Number.isFinite(options.memoryLimit) ? options.memoryLimit : null },
        result: null,
        failed: scheduler.failures.map((failure) => failure.key),
        failures: scheduler.failures.map(({ key, error: message }) => ({ key, error: message })),
        erred: scheduler.erred,
        runSeconds: runStart === undefined ? 0 : (performance.now() - runStart) / 1000,
        wallSeconds: (performance.now() - wallStart) / 1000,
        cpuSeconds: Number.NaN,
        schedulerCpuSeconds: Number.NaN,
        rounds,
        taskjourney: source,
        pids,
        destination: telemetry?.destination,
        exportErrors,
        decisions: scheduler.decisions,
        aborted: { error: why, died: deaths },
        title: `taskjourney: ${options.workload}, not finished: ${deaths.length > 0 ? deaths.map((death) => `worker pid ${death.pid} died (${death.exit})`).join(", ") : why}`,
        report,
        slowestExplain: explainSlowest(report),
      });
    } catch (salvageError) {
      process.stderr.write(
        `cluster: could not write the summary of the failed run: ${salvageError instanceof Error ? salvageError.message : String(salvageError)}\n`,
      );
    }
    throw error;
  } finally {
    stopCurrentRun = undefined;
    scheduler.close();
    killChildren();
    await Promise.all(children.map(exited));
    await telemetry?.shutdown();
    fs.rmSync(spillRoot, { recursive: true, force: true });
  }
}

/** The tree printed under the slowest task's line: the slowest traced task's when the slowest was not traced. */
function explainSlowest(report: ClusterReport): string | undefined {
  const slowest = report.slowest[0]?.breakdown;
  if (slowest === undefined) return undefined;
  return taskjourney.formatBreakdown(slowestLine(report).breakdown ?? slowest);
}

/** Writes summary.json, report.txt and report.html into `outDir`; prints the report. An aborted run's report says so first. */
function writeSummary(outDir: string, print: (text: string) => void, summary: RunSummary): RunSummary {
  const aborted =
    summary.aborted === undefined
      ? ""
      : `Not finished: ${summary.aborted.error}.\n${summary.aborted.died
          .map(
            (death) =>
              `Worker pid ${death.pid}${death.address === undefined ? "" : ` (${death.address})`} died (${death.exit}): what it recorded since its last export is lost; the rest is from the other processes.\n`,
          )
          .join("")}\n`;
  const text = `${aborted}${formatReport(summary.report)}`;
  fs.writeFileSync(
    path.join(outDir, "summary.json"),
    JSON.stringify(summary, (_key, item) => (typeof item === "number" && !Number.isFinite(item) ? null : item), 2),
  );
  fs.writeFileSync(path.join(outDir, "report.txt"), `${text}\n`);
  // The same summary as a self-contained HTML page, with the timelines of the kept traces from the
  // trace files every process has flushed by now (what `taskjourney report summary.json otlp` renders).
  writeReportPage(outDir);
  print(text);
  return summary;
}
