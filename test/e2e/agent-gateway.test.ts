/**
 * End to end through the shipped agent → gateway layout (collector/agent-gateway/), run for real
 * by `collector/backends.sh start --agent-gateway`: the cluster example, with failing and slow
 * tasks, exports to an agent collector whose load_balancing exporter routes by trace ID to two
 * gateway collectors; each gateway tail-samples (errors, latency ≥ TJ_GATEWAY_TAIL_LATENCY_MS,
 * 0 % of the rest) and exports what it keeps to Jaeger, and metrics to Prometheus by remote write.
 *
 * In-process sampling sends the gateways everything (`--trace-ratio 1`): the gateways decide.
 * Then every failed and every slow task's trace is in Jaeger whole, with the scheduler's journey
 * and the worker's under it, and no trace the gateways kept lost a side (a trace split between
 * the gateways would have been decided twice, and a side kept alone would lack its parent).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGraph, injectedKeys, withInjected, type Graph } from "../../examples/cluster/workloads.js";
import { getJson, http, pollUntil, promQuery, run } from "./helpers.js";

/** service.name of this file's run, apart from the other e2e tests' (and earlier runs') traces and series. */
const SERVICE = `taskjourney-e2e-gateway-${process.pid}`;
const WORKLOAD = { size: 60, seed: 1 };
const INJECTED = { failEvery: 9, slowEvery: 13, slowSeconds: 3 };

interface JaegerTag {
  key: string;
  value: unknown;
}
interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: "CHILD_OF" | "FOLLOWS_FROM"; traceID: string; spanID: string }>;
  startTime: number;
  /** Microseconds. */
  duration: number;
  tags: JaegerTag[];
  processID: string;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerTag[] }>;
}

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const roleOf = (trace: JaegerTrace, span: JaegerSpan): unknown =>
  trace.processes[span.processID]?.tags.find((t) => t.key === "taskjourney.role")?.value;
const parentOf = (span: JaegerSpan): string | undefined =>
  span.references.find((r) => r.refType === "CHILD_OF" && r.traceID === span.traceID)?.spanID;
const isTask = (span: JaegerSpan): boolean => span.operationName.startsWith("task ");

/** Sum of one metric family's samples (with `labels` among its labels) in Prometheus text exposition. */
function sumOf(text: string, name: string, labels = ""): number {
  let total = 0;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match !== null && (match[1] === name || match[1] === `${name}_total`) && (match[2] ?? "").includes(labels))
      total += Number(match[3]);
  }
  return total;
}

/** The injected keys that really ran: those with no failing task among their dependencies, direct or not. */
function ran(graph: Graph, keys: string[], failing: ReadonlySet<string>): string[] {
  const byKey = new Map(graph.tasks.map((spec) => [spec.key, spec]));
  const blamed = (key: string, seen = new Set<string>()): boolean =>
    byKey.get(key)!.deps.some((dep) => !seen.has(dep) && (seen.add(dep), failing.has(dep) || blamed(dep, seen)));
  return keys.filter((key) => !blamed(key));
}

/** Each gateway's tail-sampling counters: traces kept, dropped, received, and still waiting for a decision. */
async function decisions(): Promise<Array<{ kept: number; dropped: number; received: number; pending: number }>> {
  const counts = [];
  for (const url of [env.TJ_GATEWAY_1_METRICS_URL, env.TJ_GATEWAY_2_METRICS_URL]) {
    const text = (await http(url)).text;
    counts.push({
      kept: sumOf(text, "otelcol_processor_tail_sampling_global_count_traces_sampled", 'sampled="true"'),
      dropped: sumOf(text, "otelcol_processor_tail_sampling_global_count_traces_sampled", 'sampled="false"'),
      received: sumOf(text, "otelcol_processor_tail_sampling_new_trace_id_received"),
      pending: sumOf(text, "otelcol_processor_tail_sampling_sampling_traces_on_memory"),
    });
  }
  return counts;
}

const SCRIPT = "collector/backends.sh";
let env: Record<string, string> = {};
const tempDirs: string[] = [];

beforeAll(async () => {
  // Idempotent: the global setup's three already run; this adds the two gateways and the agent.
  const started = await run("bash", [SCRIPT, "start", "--agent-gateway"], { timeoutMs: 180_000 });
  expect(started.code, started.stderr).toBe(0);
  env = JSON.parse((await run("bash", [SCRIPT, "env", "--json"], { timeoutMs: 60_000 })).stdout) as Record<
    string,
    string
  >;
});

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("end to end: cluster example → agent → two tail-sampling gateways → Jaeger, Prometheus", () => {
  it("keeps every failed and slow task's trace whole, both sides, and only whole traces", async () => {
    const graph = withInjected(buildGraph("reduction", WORKLOAD), INJECTED);
    const { failing, slow } = injectedKeys(graph);
    const failingSet = new Set(failing);
    const raised = ran(graph, failing, failingSet);
    const slowRan = ran(graph, slow, failingSet);
    expect(raised.length).toBeGreaterThanOrEqual(3);
    expect(slowRan.length).toBeGreaterThanOrEqual(3);

    const before = await decisions();
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-gateway-"));
    tempDirs.push(outDir);
    const clusterEnv: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("OTEL_")) clusterEnv[name] = value;
    const result = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "examples/cluster/main.ts",
        "--workload",
        "reduction",
        "--size",
        String(WORKLOAD.size),
        "--seed",
        String(WORKLOAD.seed),
        "--workers",
        "2",
        "--fail-every",
        String(INJECTED.failEvery),
        "--slow-every",
        String(INJECTED.slowEvery),
        "--slow-seconds",
        String(INJECTED.slowSeconds),
        // Every journey becomes spans and goes to the agent: the gateways decide what is kept.
        "--trace-ratio",
        "1",
        "--quiet",
        "--json",
        "--out",
        outDir,
      ],
      {
        env: {
          ...clusterEnv,
          OTEL_EXPORTER_OTLP_ENDPOINT: env.TJ_AGENT_OTLP_HTTP_ENDPOINT,
          OTEL_SERVICE_NAME: SERVICE,
          OTEL_METRIC_EXPORT_INTERVAL: "2000",
        },
        timeoutMs: 180_000,
      },
    );
    expect(result.code, `cluster example failed (signal ${result.signal}):\n${result.stderr.slice(-3000)}`).toBe(0);
    const summary = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as {
      result: unknown;
      failed: string[];
      erred: number;
      destination: string;
    };
    expect(summary.destination).toContain(`${env.TJ_AGENT_OTLP_HTTP_ENDPOINT}/v1/traces`);
    // The root depends on every task: it erred, and the tasks that raised are those expected.
    expect(summary.result).toBeNull();
    expect([...summary.failed].sort()).toEqual([...raised].sort());

    // Everything the agent received went on to the two gateways, both of them.
    await pollUntil(
      "the agent's spans all accepted by the gateways",
      async () => {
        const agent = (await http(env.TJ_AGENT_METRICS_URL)).text;
        const gateways = [
          (await http(env.TJ_GATEWAY_1_METRICS_URL)).text,
          (await http(env.TJ_GATEWAY_2_METRICS_URL)).text,
        ];
        const received = sumOf(agent, "otelcol_receiver_accepted_spans");
        const sent = sumOf(agent, "otelcol_exporter_sent_spans", 'exporter="load_balancing/traces"');
        const accepted = gateways.map((text) => sumOf(text, "otelcol_receiver_accepted_spans"));
        return received > 0 &&
          sent === received &&
          accepted[0] + accepted[1] === sent &&
          accepted.every((count) => count > 0)
          ? true
          : undefined;
      },
      60_000,
      1000,
    );

    // Jaeger: every failed and every slow task, both sides in one trace.
    const jaeger = env.JAEGER_QUERY_URL;
    const search = `${jaeger}/api/traces?${new URLSearchParams({ service: SERVICE, limit: "10000", lookback: "1h" })}`;
    const wanted = [...raised, ...slowRan];
    const traces = await pollUntil(
      "every failed and slow task's trace in Jaeger with both sides",
      async () => {
        const found = (await getJson<{ data: JaegerTrace[] | null }>(search)).data ?? [];
        const whole = (key: string) =>
          found.some((trace) => {
            const tasks = trace.spans.filter((span) => isTask(span) && tag(span, "task.key") === key);
            return (
              tasks.some((span) => roleOf(trace, span) === "scheduler") &&
              tasks.some((span) => roleOf(trace, span) === "worker")
            );
          });
        return wanted.every(whole) ? found : undefined;
      },
      90_000,
      2000,
    );

    const traceOf = (key: string): JaegerTrace =>
      traces.find((trace) =>
        trace.spans.some((span) => isTask(span) && tag(span, "task.key") === key && roleOf(trace, span) === "worker"),
      )!;
    for (const key of wanted) {
      const trace = traceOf(key);
      const byId = new Map(trace.spans.map((span) => [span.spanID, span]));
      const scheduler = trace.spans.find(
        (span) => isTask(span) && tag(span, "task.key") === key && roleOf(trace, span) === "scheduler",
      )!;
      const worker = trace.spans.find(
        (span) => isTask(span) && tag(span, "task.key") === key && roleOf(trace, span) === "worker",
      )!;
      // The scheduler's journey is the root; the worker's nests under one of its spans.
      expect(parentOf(scheduler), `${key}: the scheduler's task span is the root`).toBeUndefined();
      const parent = byId.get(parentOf(worker) ?? "");
      expect(parent, `${key}: the worker journey's parent is in the trace`).toBeDefined();
      expect(roleOf(trace, parent!), `${key}: the worker journey nests under the scheduler's`).toBe("scheduler");
      if (raised.includes(key)) {
        expect(tag(worker, "task.outcome"), key).toBe("error");
        expect(tag(scheduler, "task.outcome"), key).toBe("erred");
        expect(tag(worker, "otel.status_code"), key).toBe("ERROR");
        expect(tag(scheduler, "otel.status_code"), key).toBe("ERROR");
      } else {
        expect(tag(worker, "task.outcome"), key).toBe("memory");
        const executing = trace.spans.find(
          (span) => span.operationName === "executing" && parentOf(span) === worker.spanID,
        );
        expect(executing, `${key}: executing under the worker's task span`).toBeDefined();
        expect(
          executing!.duration,
          `${key}: executing held its thread ${INJECTED.slowSeconds} s`,
        ).toBeGreaterThanOrEqual(INJECTED.slowSeconds * 1e6);
      }
    }

    // Only whole traces: no kept span lacks its parent, and every scheduler journey that went
    // to a worker (it has a processing span) has that worker journey in its trace.
    const problems: string[] = [];
    for (const trace of traces) {
      const ids = new Set(trace.spans.map((span) => span.spanID));
      for (const span of trace.spans) {
        const parent = parentOf(span);
        if (parent !== undefined && !ids.has(parent))
          problems.push(
            `${trace.traceID}: ${span.operationName} ${String(tag(span, "task.key") ?? "")} lacks its parent`,
          );
      }
      for (const root of trace.spans.filter((span) => isTask(span) && roleOf(trace, span) === "scheduler")) {
        const processing = trace.spans.some(
          (span) => span.operationName === "processing" && parentOf(span) === root.spanID,
        );
        const key = tag(root, "task.key");
        if (
          processing &&
          !trace.spans.some((span) => isTask(span) && roleOf(trace, span) === "worker" && tag(span, "task.key") === key)
        ) {
          problems.push(`${trace.traceID}: ${String(key)} has its scheduler side only`);
        }
      }
    }
    expect(problems).toEqual([]);

    // The gateways decided each trace once (by trace ID, on one gateway): Jaeger holds exactly the
    // traces they kept (a trace split between them would be kept twice, or lose a side above),
    // and they dropped some (0 % of the ordinary ones are kept).
    const decided = await pollUntil(
      "every trace decided on both gateways",
      async () => {
        const counts = await decisions();
        if (counts.some((count) => count.pending > 0 || count.kept + count.dropped !== count.received))
          return undefined;
        // This run's decisions only (the gateways may have decided others' traces before).
        return counts.map((count, index) => ({
          kept: count.kept - before[index].kept,
          dropped: count.dropped - before[index].dropped,
        }));
      },
      60_000,
      1000,
    );
    for (const gateway of decided)
      expect(gateway.kept + gateway.dropped, "traces decided by each gateway").toBeGreaterThan(0);
    const kept = decided[0].kept + decided[1].kept;
    const final = await pollUntil(
      "Jaeger holding every kept trace",
      async () => {
        const found = (await getJson<{ data: JaegerTrace[] | null }>(search)).data ?? [];
        return found.length >= kept ? found : undefined;
      },
      30_000,
      1000,
    );
    expect(final.length).toBe(kept);
    expect(decided[0].dropped + decided[1].dropped).toBeGreaterThan(0);

    // Metrics went the gateway way too (routed by resource), into Prometheus by remote write.
    const series = await pollUntil(
      "the run's metrics in Prometheus",
      async () => {
        const rows = await promQuery(
          env.PROMETHEUS_URL,
          `sum by (taskjourney_role) (task_state_time_seconds_total{service_name="${SERVICE}"})`,
        );
        return rows.length === 2 ? rows : undefined;
      },
      60_000,
      1000,
    );
    expect(series.map((row) => row.metric.taskjourney_role).sort()).toEqual(["scheduler", "worker"]);
  });
});
