/**
 * The PostgreSQL queue example (examples/pg-queue/) against a real PostgreSQL of its own
 * (test/helpers/postgres.ts): a producer process and two worker processes through pg-boss, each
 * with its own NodeSDK writing OTLP/JSON files, at sampling ratios 1 and 0.01. From the files:
 * one whole trace per job (the producer's span, or a consumer's stand-in for it, as its root; each
 * attempt under it, whichever worker ran it), every failed job kept whole at 0.01, nothing left
 * open on the producer, every process named as configured, and no child span in a process
 * outlasting its parent. Without PostgreSQL the test is skipped, except in CI (CI=true), where
 * that is a failure (.ci/run installs it).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTelemetryFiles, type TelemetryFiles } from "../../src/report/inputs.js";
import { computationsFromMetrics } from "../../src/report/computations.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { jobTraces, timeDisagreements, type JobRow } from "../fixtures/pg-queue-traces.js";
import { runScript } from "../helpers/run.js";
import { findPostgres, startPostgres, type Postgres } from "../helpers/postgres.js";

const MAIN = fileURLToPath(new URL("../../examples/pg-queue/main.ts", import.meta.url));
const postgres = findPostgres();
const inCi = process.env.CI === "true";
if (postgres === undefined && !inCi)
  console.warn(
    "pg-queue: skipped, PostgreSQL is not installed (apt-get install -y postgresql); in CI (CI=true) this fails instead",
  );

/** Each job's attempts as the workload decides them (examples/pg-queue/workload.ts). */
const OUTCOMES: Record<string, string[]> = {
  resize: ["completed"],
  report: ["completed"],
  upload: ["retrying", "completed"],
  transcode: ["retrying", "retrying", "failed"],
};
const JOBS = { resize: 10, upload: 4, transcode: 3, report: 3 };
const INSTANCES = { "producer-1": "scheduler", "worker-1": "worker", "worker-2": "worker" };

interface Run {
  out: string;
  rows: JobRow[];
  stderr: string;
  files: TelemetryFiles;
}

/** The gauges' points in the last export request of an OTLP/JSON metrics file: by name, each point's attribute values and value. */
function lastGauges(file: string): Record<string, Array<{ cell: string; value: number }>> {
  const lines = fs.readFileSync(file, "utf8").trim().split("\n");
  type Point = { attributes: Array<{ value: { stringValue?: string } }>; asInt?: string | number; asDouble?: number };
  type Metric = { name: string; gauge?: { dataPoints: Point[] } };
  const request = JSON.parse(lines[lines.length - 1]) as {
    resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Metric[] }> }>;
  };
  const gauges: Record<string, Array<{ cell: string; value: number }>> = {};
  for (const { scopeMetrics } of request.resourceMetrics)
    for (const { metrics } of scopeMetrics)
      for (const metric of metrics)
        if (metric.gauge !== undefined)
          gauges[metric.name] = metric.gauge.dataPoints.map((point) => ({
            cell: point.attributes.map((attribute) => attribute.value.stringValue).join(" "),
            value: Number(point.asInt ?? point.asDouble),
          }));
  return gauges;
}

/** Runs the example once, in a pg-boss schema of its own, with OTLP files in `out`. */
async function runExample(db: Postgres, out: string, ratio: number): Promise<Run> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")),
  );
  const schema = `pgboss_${String(ratio).replace(".", "_")}`;
  const result = await runScript(
    MAIN,
    ["--database", db.url, "--out", out, "--ratio", String(ratio), "--schema", schema, "--timeout", "60"],
    { env, timeoutMs: 90_000 },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return {
    out,
    rows: JSON.parse(result.stdout) as JobRow[],
    stderr: result.stderr,
    files: readTelemetryFiles([path.join(out, "otlp")]),
  };
}

describe.skipIf(postgres === undefined && !inCi)(
  "the PostgreSQL queue example (pg-boss), traced across its processes",
  () => {
    let db: Postgres | undefined;
    let dir: string;
    const runs: Record<string, Run> = {};

    beforeAll(async () => {
      expect(postgres, "PostgreSQL is required in CI: apt-get install -y postgresql").toBeDefined();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-pg-queue-"));
      db = await startPostgres({ bin: postgres });
      for (const ratio of [1, 0.01]) runs[ratio] = await runExample(db, path.join(dir, `ratio-${ratio}`), ratio);
    }, 240_000);
    afterAll(async () => {
      await db?.stop();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    });

    for (const ratio of [1, 0.01]) {
      it(`ratio ${ratio}: the queue ran the workload: retries, permanent failures with their reasons`, () => {
        const { rows } = runs[ratio];
        expect(rows).toHaveLength(20);
        for (const [queue, count] of Object.entries(JOBS)) {
          const jobs = rows.filter((row) => row.name === queue);
          expect(jobs, queue).toHaveLength(count);
          for (const job of jobs) {
            expect(job.retryCount, job.key).toBe(OUTCOMES[queue].length - 1);
            expect(job.state, job.key).toBe(queue === "transcode" ? "failed" : "completed");
          }
        }
        for (const job of rows.filter((row) => row.state === "failed"))
          expect(job.output?.message).toBe(`unsupported codec "vp7" in media/${job.key}.bin`);
      });

      it(`ratio ${ratio}: every process is named as configured, on every span and metric point`, () => {
        const { files } = runs[ratio];
        // Every process's metrics; traces from each that exported a span (at 0.01 the producer may have none).
        const producerTraces = files.spans.some((span) => span.resource["service.instance.id"] === "producer-1");
        expect(files.files.map((file) => path.basename(file)).sort()).toEqual([
          "metrics-scheduler-producer-1.jsonl",
          "metrics-worker-worker-1.jsonl",
          "metrics-worker-worker-2.jsonl",
          ...(producerTraces ? ["traces-scheduler-producer-1.jsonl"] : []),
          "traces-worker-worker-1.jsonl",
          "traces-worker-worker-2.jsonl",
        ]);
        if (ratio === 1) expect(producerTraces).toBe(true);
        for (const item of [...files.spans, ...files.metrics]) {
          const instance = item.resource["service.instance.id"] as keyof typeof INSTANCES;
          expect(Object.keys(INSTANCES)).toContain(instance);
          expect(item.resource["taskjourney.role"]).toBe(INSTANCES[instance]);
          expect(item.resource["service.name"]).toBe("pg-queue");
        }
        expect(new Set(files.metrics.map((point) => point.resource["service.instance.id"]))).toEqual(
          new Set(Object.keys(INSTANCES)),
        );
      });

      it(`ratio ${ratio}: nothing left open on the producer: no shutdown line, its live-journeys gauges end at 0`, () => {
        const { files, stderr, out } = runs[ratio];
        expect(stderr).not.toContain("still open at shutdown");
        // The gauges as the producer's last export wrote them (the report does not read them).
        const gauges = lastGauges(path.join(out, "otlp", "metrics-scheduler-producer-1.jsonl"));
        // The producer's 20 journeys went through `sending`, one cell per prefix: none is live there.
        expect(gauges["task.active"].sort((a, b) => a.cell.localeCompare(b.cell))).toEqual(
          ["report", "resize", "transcode", "upload"].map((prefix) => ({ cell: `${prefix} sending`, value: 0 })),
        );
        expect(gauges["task.active.oldest"]).toEqual([{ cell: "", value: 0 }]);
        expect(files.spans.filter((span) => span.attributes["taskjourney.unfinished"] !== undefined)).toEqual([]);
      });
    }

    for (const ratio of [1, 0.01]) {
      it(`ratio ${ratio}: the producer's batch is one computation, its jobs' totals on the producer and its attempts' on the workers`, () => {
        const { files } = runs[ratio];
        const failure = new Set(["refused", "retrying", "failed"]);
        // The producer's (role scheduler): what the report shows, since it saw every job.
        const computations = computationsFromMetrics(files.metrics, failure)!;
        expect(computations).toHaveLength(1);
        const [batch] = computations;
        expect(batch.name).toMatch(/^batch-[0-9a-f]{8}$/);
        expect(batch).toMatchObject({ tasks: 20, live: 0, failed: 0, ended: { enqueued: 20 }, from: "scheduler" });
        expect(Object.keys(batch.seconds)).toEqual(["sending"]);
        expect(reportDataFromTelemetry(files, { generatedAt: "2026-01-01T00:00:00Z" }).computations).toEqual([batch]);
        // The workers', summed: the 30 attempts by outcome, under the name the payload carried.
        const workers = computationsFromMetrics(
          files.metrics.filter((point) => point.resource["taskjourney.role"] === "worker"),
          failure,
        );
        expect(workers).toEqual([
          expect.objectContaining({
            name: batch.name,
            tasks: 30,
            live: 0,
            failed: 13,
            ended: { completed: 17, retrying: 10, failed: 3 },
            from: "workers",
          }),
        ]);
        // Every task span carries it: at ratio 1 the producer's 20 and the 30 attempts. (A worker's
        // stand-in for an unsampled producer's span does not: the carrier has no computation.)
        const tasks = files.spans.filter(
          (span) => span.name.startsWith("task ") && span.attributes["taskjourney.stand_in"] === undefined,
        );
        if (ratio === 1) expect(tasks).toHaveLength(50);
        else expect(tasks.length).toBeGreaterThanOrEqual(7);
        for (const task of tasks) expect(task.attributes["task.computation"], task.name).toBe(batch.name);
      });
    }

    it("ratio 1: one whole trace per job: the producer's span its root, every attempt under it, across the processes", () => {
      const { rows, files } = runs[1];
      const traces = jobTraces(files.spans, rows);
      const seen = new Set<string>();
      const ranOn = new Set<unknown>();
      for (const row of rows) {
        const trace = traces.get(row.id);
        expect(trace, row.key).toBeDefined();
        const { roots, attempts, orphans, elsewhere, traceId } = trace!;
        expect(seen.has(traceId), `${row.key}: a trace of its own`).toBe(false);
        seen.add(traceId);
        expect(roots, row.key).toHaveLength(1);
        expect(roots[0].attributes["task.key"]).toBe(row.key);
        expect(roots[0].resource["service.instance.id"]).toBe("producer-1");
        expect(roots[0].attributes["task.outcome"]).toBe("enqueued");
        expect(trace!.standIn).toBe(false);
        expect(
          attempts.map((attempt) => attempt.outcome),
          row.key,
        ).toEqual(OUTCOMES[row.name]);
        expect(
          attempts.every((attempt) => attempt.parentIsRoot),
          row.key,
        ).toBe(true);
        for (const attempt of attempts) ranOn.add(attempt.instance);
        expect([orphans, elsewhere], row.key).toEqual([0, 0]);
        // Each failed attempt says why.
        for (const attempt of attempts.filter((attempt) => attempt.outcome !== "completed"))
          expect(attempt.error, row.key).toBe(
            row.name === "upload"
              ? `ECONNRESET: storage closed the connection while uploading media/${row.key}.bin`
              : `unsupported codec "vp7" in media/${row.key}.bin`,
          );
      }
      expect(seen.size).toBe(20);
      for (const instance of ranOn) expect(["worker-1", "worker-2"]).toContain(instance);
      // 20 producer spans, 30 attempts; each attempt's states and activities beside them.
      const tasks = files.spans.filter((span) => span.name.startsWith("task "));
      expect(tasks).toHaveLength(50);
    });

    it("ratio 0.01: every failed job kept whole, its root the producer's span or one stand-in for it; every kept trace whole", () => {
      const { rows, files } = runs[0.01];
      const traces = jobTraces(files.spans, rows);
      const failedOnce = rows.filter((row) => row.name === "upload" || row.name === "transcode");
      expect(failedOnce).toHaveLength(7);
      for (const row of failedOnce) expect(traces.get(row.id), `${row.key} kept`).toBeDefined();
      const kept = [...traces.values()].filter((trace) => trace !== undefined);
      const producerRoots = files.spans.filter(
        (span) => span.name.startsWith("task ") && span.resource["service.instance.id"] === "producer-1",
      );
      for (const trace of kept) {
        const { row, roots, attempts, orphans, elsewhere } = trace;
        expect(roots, row.key).toHaveLength(1);
        expect(
          attempts.map((attempt) => attempt.outcome),
          row.key,
        ).toEqual(OUTCOMES[row.name]);
        expect(
          attempts.every((attempt) => attempt.parentIsRoot),
          row.key,
        ).toBe(true);
        expect([orphans, elsewhere], row.key).toEqual([0, 0]);
        // The producer exported its span only when it sampled the job; else the first attempt stood in for it.
        const own = producerRoots.some((span) => span.spanId === roots[0].spanId);
        expect(own || trace.standIn, row.key).toBe(true);
        if (trace.standIn) expect(roots[0].attributes["task.prefix"]).toBe(row.name);
      }
      // At most one stand-in per job, never beside the producer's own span.
      const standIns = files.spans.filter((span) => span.attributes["taskjourney.stand_in"] === "hand-off");
      expect(standIns.length + producerRoots.length).toBe(kept.length);
      expect(kept.length).toBeLessThan(20);
    });

    it("no child span outlasts its parent, nor starts before it, within a process", () => {
      for (const ratio of [1, 0.01]) {
        const seen = timeDisagreements(runs[ratio].files.spans);
        console.info(`pg-queue ratio ${ratio}: parents and children`, seen);
        // At ratio 1 every span: the producer's 20 `sending` visits, 30 attempts' `queued` and `active`,
        // 3 `delayed`, 50 activities (resize 3 each, the others 1).
        if (ratio === 1) expect(seen.pairs).toBe(133);
        else expect(seen.pairs).toBeGreaterThanOrEqual(51);
        expect([seen.outlasting, seen.earlier], `ratio ${ratio}`).toEqual([0, 0]);
        // Across the hand-off, no attempt began before the producer's journey (which begins at its
        // clock cut to the millisecond, as the rows' times are): nothing clamped, nothing told.
        expect(seen.handOffEarlier, `ratio ${ratio}`).toBe(0);
      }
    });
  },
);
