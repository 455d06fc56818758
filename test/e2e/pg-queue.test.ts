/**
 * The PostgreSQL queue example (examples/pg-queue/) exporting over OTLP to the real Collector, and
 * from it to Jaeger and Prometheus: a producer and two worker processes through pg-boss on a
 * private PostgreSQL (test/helpers/postgres.ts), each with its own NodeSDK. Read back from
 * Jaeger's query API: one whole trace per job at ratio 1 (the producer's span its root, every
 * attempt under it, from both processes' exports), and at ratio 0.01 every failed job's trace
 * whole with the stand-in root a worker emitted; from Prometheus, each process's series under the
 * instance it was named. Without PostgreSQL the test is skipped, except in CI (CI=true).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBackends } from "../../src/report/from-backends.js";
import type { DecodedSpan } from "../../src/report/otlp-json.js";
import { jobTraces, type JobRow, type JobTrace } from "../fixtures/pg-queue-traces.js";
import { findPostgres, startPostgres, type Postgres } from "../helpers/postgres.js";
import { runScript } from "../helpers/run.js";
import { backendsEnv, pollUntil, promQuery } from "./helpers.js";

const MAIN = fileURLToPath(new URL("../../examples/pg-queue/main.ts", import.meta.url));
const postgres = findPostgres();
const inCi = process.env.CI === "true";
/** Each run its own service.name, so that nothing else in the backends (other tests, earlier runs) is read. */
const service = (ratio: number) => `taskjourney-e2e-pg-queue-${ratio}-${process.pid}-${Date.now()}`;
const OUTCOMES: Record<string, string[]> = {
  resize: ["completed"],
  report: ["completed"],
  upload: ["retrying", "completed"],
  transcode: ["retrying", "retrying", "failed"],
};

interface Run {
  service: string;
  rows: JobRow[];
  spans: DecodedSpan[];
  traces: Map<string, JobTrace | undefined>;
}

/** A job's trace read back whole: one root, every attempt under it, nothing missing. */
function whole(trace: JobTrace | undefined): boolean {
  return (
    trace !== undefined &&
    trace.roots.length === 1 &&
    trace.orphans === 0 &&
    trace.attempts.length === trace.row.retryCount + 1 &&
    trace.attempts.every((attempt) => attempt.parentIsRoot)
  );
}

describe.skipIf(postgres === undefined && !inCi)(
  "the PostgreSQL queue example through the Collector into Jaeger",
  () => {
    let db: Postgres | undefined;
    let dir: string;
    let jaeger: string;
    let prometheus: string;
    const runs: Record<string, Run> = {};

    async function runExample(ratio: number, expectedWhole: (rows: JobRow[]) => JobRow[]): Promise<Run> {
      const backends = backendsEnv();
      const name = service(ratio);
      const env: NodeJS.ProcessEnv = Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !key.startsWith("OTEL_")),
      );
      Object.assign(env, {
        OTEL_EXPORTER_OTLP_ENDPOINT: backends.OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_SERVICE_NAME: name,
        // Remote write keeps cumulative series only (the SDK's default), said aloud.
        OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "cumulative",
      });
      const schema = `pgboss_${String(ratio).replace(".", "_")}`;
      const out = path.join(dir, `ratio-${ratio}`);
      const result = await runScript(
        MAIN,
        ["--database", db!.url, "--out", out, "--ratio", String(ratio), "--schema", schema, "--timeout", "60"],
        { env, timeoutMs: 90_000 },
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      // Over OTLP, nothing written to files.
      expect(fs.existsSync(path.join(out, "otlp"))).toBe(false);
      const rows = JSON.parse(result.stdout) as JobRow[];
      expect(rows).toHaveLength(20);
      const wanted = expectedWhole(rows);
      // Every wanted job's trace whole in Jaeger (after the Collector's tail-sampling wait).
      return pollUntil(
        `the traces of ${wanted.length} jobs whole in Jaeger (service ${name})`,
        async () => {
          const read = await readBackends({
            jaeger,
            service: name,
            sinceMs: 3_600_000,
            limit: 1000,
            timeoutMs: 10_000,
            maxBytes: 1 << 26,
          });
          const traces = jobTraces(read.spans, rows);
          return wanted.every((row) => whole(traces.get(row.id)))
            ? { service: name, rows, spans: read.spans, traces }
            : undefined;
        },
        60_000,
        1_000,
      );
    }

    beforeAll(async () => {
      expect(postgres, "PostgreSQL is required in CI: apt-get install -y postgresql").toBeDefined();
      const env = backendsEnv();
      jaeger = env.JAEGER_QUERY_URL;
      prometheus = env.PROMETHEUS_URL;
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-pg-queue-"));
      db = await startPostgres({ bin: postgres });
      runs[1] = await runExample(1, (rows) => rows);
      runs[0.01] = await runExample(0.01, (rows) => rows.filter((row) => row.retryCount > 0));
    }, 240_000);
    afterAll(async () => {
      await db?.stop();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    });

    it("ratio 1: one trace per job in Jaeger, the producer's span its root and each attempt under it, as the workload ran them", () => {
      const { rows, traces, spans } = runs[1];
      expect(new Set(rows.map((row) => traces.get(row.id)!.traceId)).size).toBe(20);
      for (const row of rows) {
        const trace = traces.get(row.id)!;
        expect(whole(trace), row.key).toBe(true);
        expect(trace.elsewhere, row.key).toBe(0);
        expect(trace.standIn, row.key).toBe(false);
        expect(trace.roots[0].attributes["task.key"]).toBe(row.key);
        expect(trace.roots[0].resource["service.instance.id"]).toBe("producer-1");
        expect(
          trace.attempts.map((attempt) => attempt.outcome),
          row.key,
        ).toEqual(OUTCOMES[row.name]);
      }
      // Every span under the instance it was named, none of NodeSDK's random ids.
      expect(new Set(spans.map((span) => span.resource["service.instance.id"]))).toEqual(
        new Set(["producer-1", "worker-1", "worker-2"]),
      );
      expect(spans.filter((span) => span.name.startsWith("task "))).toHaveLength(50);
    });

    it("ratio 0.01: every job that failed an attempt kept whole in Jaeger, its root a worker's stand-in for the producer's span (or the producer's own)", () => {
      const { rows, traces, spans } = runs[0.01];
      const failed = rows.filter((row) => row.retryCount > 0);
      expect(failed).toHaveLength(7);
      for (const row of failed) {
        const trace = traces.get(row.id)!;
        expect(trace.elsewhere, row.key).toBe(0);
        expect(
          trace.attempts.map((attempt) => attempt.outcome),
          row.key,
        ).toEqual(OUTCOMES[row.name]);
        const root = trace.roots[0];
        expect(trace.standIn || root.resource["service.instance.id"] === "producer-1", row.key).toBe(true);
      }
      // Every kept trace whole; fewer than all.
      const kept = [...traces.values()].filter((trace) => trace !== undefined);
      for (const trace of kept) expect(whole(trace), trace.row.key).toBe(true);
      expect(kept.length).toBeLessThan(20);
      expect(spans.filter((span) => span.parentSpanId === undefined)).toHaveLength(kept.length);
    });

    it("Prometheus: each process's series under the instance it was named", async () => {
      const instances = await pollUntil(
        "the three processes' task_transitions_total series in Prometheus",
        async () => {
          const samples = await promQuery(
            prometheus,
            `last_over_time(task_transitions_total{service_name="${runs[1].service}"}[1h])`,
          );
          const seen = new Set(samples.map((sample) => sample.metric.service_instance_id ?? sample.metric.instance));
          return seen.size === 3 ? seen : undefined;
        },
        60_000,
      );
      expect(instances).toEqual(new Set(["producer-1", "worker-1", "worker-2"]));
    });
  },
);
