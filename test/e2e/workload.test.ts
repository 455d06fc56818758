/**
 * End to end against the real backends (collector/backends.sh, started by global-setup.ts):
 * the cluster example — a scheduler and worker processes on loopback — exports over OTLP to the
 * Collector built by ocb; then Jaeger's query API must hold each task's trace as docs/spans.md draws
 * it, Prometheus must answer PromQL over our metrics (once each, by remote write), every panel of
 * the Grafana dashboard must return data, and `taskjourney explain` must rebuild a task's
 * breakdown from the Collector's file exporter output.
 *
 * The tests of this file run in order and share the one workload run of the first test.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTelemetry } from "../../src/sdk.js";
import { defaultValues, loadDashboard, queryPanels, substitute, totalsQuery, type Panel } from "./dashboard.js";
import { backendsEnv, getJson, http, pollUntil, promQuery, run, sleep, type PromSample } from "./helpers.js";
import { traceTotals } from "./trace-totals.js";
import { buildGraph, injectedKeys, withInjected } from "../../examples/cluster/workloads.js";

/** A trace from Jaeger's query API by its ID, asked again (for at most 30 s) while Jaeger does not have it yet. */
function traceById(jaeger: string, traceId: string): Promise<JaegerTrace> {
  return pollUntil(`trace ${traceId} by its ID in Jaeger`, async () => {
    return (await getJson<JaegerAnswer<JaegerTrace[]>>(`${jaeger}/api/traces/${traceId}`)).data?.[0];
  });
}

/** Tasks whose worker forces a major GC or blocks its event loop 60 ms as they start (examples/cluster). */
const INJECTED = { gcEvery: 97, blockEvery: 89 };
const STALLS = ["--gc-every", String(INJECTED.gcEvery), "--block-every", String(INJECTED.blockEvery)];

/** service.name of everything this file exports, so that its series and traces are told apart. */
const SERVICE = "taskjourney-e2e";

interface JaegerRef {
  refType: "CHILD_OF" | "FOLLOWS_FROM";
  traceID: string;
  spanID: string;
}
interface JaegerTag {
  key: string;
  type: string;
  value: unknown;
}
interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: JaegerRef[];
  startTime: number;
  duration: number;
  tags: JaegerTag[];
  processID: string;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerTag[] }>;
}
interface JaegerAnswer<T> {
  data: T;
  errors: unknown;
}

const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const processTag = (trace: JaegerTrace, span: JaegerSpan, key: string): unknown =>
  trace.processes[span.processID]?.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan): string | undefined =>
  span.references.find((r) => r.refType === "CHILD_OF" && r.traceID === span.traceID)?.spanID;
const childrenOf = (trace: JaegerTrace, span: JaegerSpan): JaegerSpan[] =>
  trace.spans.filter((s) => parentOf(s) === span.spanID).sort((a, b) => a.startTime - b.startTime);

/** The totals of summary.json's `report` (examples/cluster/report.ts, ClusterReport) the tests compare. */
interface ClusterTotals {
  rows: Array<{ prefix: string; stateSeconds: Record<string, number> }>;
  schedulerRows: Array<{ prefix: string; stateSeconds: Record<string, number> }>;
  execute: Record<string, number>;
  gather: Record<string, number>;
  waitByPrefix: Record<string, Record<string, number>>;
  gatherBytes: Record<string, number>;
  dropped: Record<string, number>;
}

/** What the workload run left for the later tests. */
interface RunResult {
  size: number;
  tasks: number;
  wallSeconds: number;
  /** What each run (one, or two when the first was too short) recorded, read back from its processes. */
  reports: ClusterTotals[];
}
let workload: RunResult | undefined;
/** The worker task span the trace test took apart, for `explain`. */
let explainedKey: string | undefined;
const tempDirs: string[] = [];

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function needWorkload(): RunResult {
  if (workload === undefined) throw new Error("the workload run (first test of this file) did not succeed");
  return workload;
}

/** The cluster example's environment: our OTLP endpoint, no other OTEL_* setting of the caller. */
function clusterEnv(endpoint: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("OTEL_")) env[name] = value;
  return {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_SERVICE_NAME: SERVICE,
    // Remote write drops delta sums and histograms: cumulative (the SDK default), said aloud.
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "cumulative",
    // The example exports metrics every 10 s whatever this says (see the size choice below).
    OTEL_METRIC_EXPORT_INTERVAL: "2000",
  };
}

/** Sum of the samples of one metric family in Prometheus text exposition (e.g. the collector's own /metrics). */
function sumOf(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match !== null && (match[1] === name || match[1] === `${name}_total`)) total += Number(match[3]);
  }
  return total;
}

describe("end to end: cluster example → Collector (ocb) → Jaeger, Prometheus, file", () => {
  it("runs a workload that exports to the built Collector", async () => {
    const env = backendsEnv();
    const before = (await http(env.TJ_COLLECTOR_METRICS_URL)).text;
    // Rate panels need two samples of a series, and the example exports metrics every 10 s
    // (plus once at shutdown), whatever OTEL_METRIC_EXPORT_INTERVAL says: the run must outlast
    // one interval. 4000 tasks take ~12 s here; should a faster machine finish before the
    // first export, the run is repeated three times as large (new processes, new series).
    let twice = false;
    const reports: ClusterTotals[] = [];
    for (const size of [4000, 12000]) {
      const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-"));
      tempDirs.push(outDir);
      const result = await run(
        process.execPath,
        [
          "--import",
          "tsx",
          "examples/cluster/main.ts",
          "--workload",
          "reduction",
          "--size",
          String(size),
          "--trace-ratio",
          "1",
          ...STALLS,
          "--quiet",
          "--json",
          "--out",
          outDir,
        ],
        { env: clusterEnv(env.OTEL_EXPORTER_OTLP_ENDPOINT), timeoutMs: 150_000 },
      );
      expect(result.code, `cluster example failed (signal ${result.signal}):\n${result.stderr.slice(-3000)}`).toBe(0);
      const summary = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as {
        tasks: number;
        wallSeconds: number;
        destination: string;
        result: unknown;
        report: ClusterTotals;
      };
      expect(summary.destination).toContain(`${env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`);
      expect(summary.destination).toContain(`${env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/metrics`);
      expect(typeof summary.result).toBe("number");
      // Every run's series stay in Prometheus: the dashboard's totals are those of all runs.
      reports.push(summary.report);
      workload = { size, tasks: summary.tasks, wallSeconds: summary.wallSeconds, reports };

      // The last export (at shutdown) reaches Prometheus a moment after the run: wait for it.
      twice = await pollUntil(
        "a counter of the run with two samples in Prometheus",
        async () => {
          const rows = await promQuery(
            env.PROMETHEUS_URL,
            `count_over_time(task_state_time_seconds_total{service_name="${SERVICE}"}[15m]) >= 2`,
          );
          return rows.length > 0 ? true : undefined;
        },
        20_000,
      ).catch(() => false);
      process.stderr.write(
        `[e2e] cluster run: ${summary.tasks} tasks, ${summary.wallSeconds.toFixed(1)} s; counters with two samples: ${twice ? "yes" : "no"}\n`,
      );
      if (twice) break;
    }
    const runResult = needWorkload();
    expect(runResult.tasks).toBeGreaterThan(1000);
    expect(
      twice,
      `no counter got two samples (rate() needs them) in a ${runResult.wallSeconds.toFixed(1)} s run of ${runResult.size} tasks`,
    ).toBe(true);

    // The collector took every span and point (nothing refused), beyond what it had before.
    const after = await pollUntil("the collector's own counters", async () => {
      const text = (await http(env.TJ_COLLECTOR_METRICS_URL)).text;
      return sumOf(text, "otelcol_receiver_accepted_spans") > sumOf(before, "otelcol_receiver_accepted_spans")
        ? text
        : undefined;
    });
    expect(sumOf(after, "otelcol_receiver_accepted_spans")).toBeGreaterThan(runResult.tasks);
    expect(sumOf(after, "otelcol_receiver_accepted_metric_points")).toBeGreaterThan(0);
    expect(sumOf(after, "otelcol_receiver_refused_spans")).toBe(0);
    expect(sumOf(after, "otelcol_receiver_refused_metric_points")).toBe(0);
  });

  it("counts bad input in taskjourney.dropped, which reaches Prometheus by reason", async () => {
    needWorkload();
    const env = backendsEnv();
    // An in-process worker journal fed bad data (the cluster example never drops anything):
    // exported every 500 ms so that the counter has the two samples rate() needs.
    const telemetry = await startTelemetry({
      role: "worker",
      instance: "e2e-bad-input",
      serviceName: SERVICE,
      registerGlobal: false,
      exporters: {
        endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
        traces: "none",
        metrics: "otlp",
        metricExportIntervalMillis: 500,
      },
    });
    try {
      const journeys = telemetry.journeys;
      journeys.transition("bad-1", "no-such-state" as never, "ready");
      journeys.transition("bad-2", "waiting", "ready");
      await sleep(1500);
      journeys.transition("bad-3", "no-such-state" as never, "ready");
      const rows = await pollUntil(
        "taskjourney_dropped_total with two samples",
        async () => {
          const found = await promQuery(
            env.PROMETHEUS_URL,
            `count_over_time(taskjourney_dropped_total{service_name="${SERVICE}", reason="unknown-state"}[15m]) >= 2`,
          );
          return found.length > 0 ? found : undefined;
        },
        30_000,
      );
      expect(rows[0].metric.taskjourney_role).toBe("worker");
      expect(rows[0].metric.service_instance_id).toBe("e2e-bad-input");
      const latest = await promQuery(
        env.PROMETHEUS_URL,
        `sum by (reason) (taskjourney_dropped_total{service_name="${SERVICE}"})`,
      );
      const byReason = Object.fromEntries(latest.map((row) => [row.metric.reason, Number(row.value![1])]));
      expect(byReason["unknown-state"]).toBeGreaterThanOrEqual(1);
      expect(byReason["unknown-key"]).toBeGreaterThanOrEqual(1);
    } finally {
      await telemetry.shutdown();
    }
  });

  it("Jaeger's query API returns a task's trace with the span tree of docs/spans.md, gather_dep spans and links", async () => {
    needWorkload();
    const jaeger = backendsEnv().JAEGER_QUERY_URL;
    const services = await pollUntil("the service in Jaeger", async () => {
      const answer = await getJson<JaegerAnswer<string[]>>(`${jaeger}/api/services`);
      return answer.data?.includes(SERVICE) ? answer.data : undefined;
    });
    expect(services).toContain(SERVICE);
    const operations = (await getJson<JaegerAnswer<string[]>>(`${jaeger}/api/services/${SERVICE}/operations`)).data;
    for (const name of [
      "task arange",
      "task square",
      "task sum",
      "waiting",
      "ready",
      "executing",
      "processing",
      "gather_dep",
      "network",
    ]) {
      expect(operations, `operation "${name}"`).toContain(name);
    }

    // A trace of a `sum` task whose worker journey waited on a transfer: the search by
    // operation returns whole traces, so pick one whose worker task span has
    // waiting → gather_dep (and executing → run).
    const search = `${jaeger}/api/traces?${new URLSearchParams({ service: SERVICE, operation: "gather_dep", limit: "50", lookback: "1h" })}`;
    const found = await pollUntil(
      "a trace with a gather_dep span in Jaeger",
      async () => {
        const traces = (await getJson<JaegerAnswer<JaegerTrace[]>>(search)).data ?? [];
        for (const candidate of traces) {
          const task = candidate.spans.find(
            (s) =>
              s.operationName === "task sum" &&
              processTag(candidate, s, "taskjourney.role") === "worker" &&
              parentOf(s) !== undefined,
          );
          if (task === undefined) continue;
          const states = childrenOf(candidate, task);
          const waiting = states.find((s) => s.operationName === "waiting");
          const executing = states.find((s) => s.operationName === "executing");
          if (
            waiting !== undefined &&
            childrenOf(candidate, waiting).some((s) => s.operationName === "gather_dep") &&
            // A few executions digest no thread time (no `run` span): take one that does.
            executing !== undefined &&
            childrenOf(candidate, executing).some((s) => s.operationName === "run")
          ) {
            return candidate.traceID;
          }
        }
        return undefined;
      },
      60_000,
      1000,
    );

    // The whole trace, by ID. Jaeger's lookup by ID has answered 404 for a trace its search had
    // just returned (once in CI, on Node 26): asked again until it answers, within a bound.
    const trace = await traceById(jaeger, found);
    expect(trace.traceID).toBe(found);
    const byId = new Map(trace.spans.map((s) => [s.spanID, s]));

    // One trace across processes: the scheduler's journey and the worker's, on two instances.
    const roles = new Set(
      Object.values(trace.processes).map((p) => p.tags.find((t) => t.key === "taskjourney.role")?.value),
    );
    expect(roles).toEqual(new Set(["scheduler", "worker"]));
    expect(new Set(Object.values(trace.processes).map((p) => p.serviceName))).toEqual(new Set([SERVICE]));

    // The scheduler journey: the root, `task sum`, with its state children.
    const roots = trace.spans.filter((s) => parentOf(s) === undefined);
    expect(roots.map((s) => s.operationName)).toEqual(["task sum"]);
    const root = roots[0];
    expect(processTag(trace, root, "taskjourney.role")).toBe("scheduler");
    const key = tag(root, "task.key") as string;
    expect(key).toMatch(/^sum-\d+-\d+$/);
    // The reduction tree: sum-1-i sums square-j, sum-L-i sums sum-(L-1)-j.
    const level = Number(/^sum-(\d+)-/.exec(key)![1]);
    const dependencyKey = level === 1 ? /^square-\d+$/ : new RegExp(`^sum-${level - 1}-\\d+$`);
    expect(tag(root, "task.prefix")).toBe("sum");
    const processing = childrenOf(trace, root).find((s) => s.operationName === "processing");
    expect(processing, "the scheduler's processing span").toBeDefined();
    expect(childrenOf(trace, root).map((s) => s.operationName)).toContain("waiting");

    // The worker journey nests under the scheduler's task span (which covers it, whenever the
    // carrier was made) and links to the state span that sent it, processing (docs/spans.md).
    const task = childrenOf(trace, root).find((s) => s.operationName === "task sum")!;
    expect(task, "the worker's task span under the scheduler's task span").toBeDefined();
    expect(task.startTime).toBeGreaterThanOrEqual(root.startTime);
    expect(task.startTime + task.duration).toBeLessThanOrEqual(root.startTime + root.duration + 1);
    expect(
      task.references.some((r) => r.refType === "FOLLOWS_FROM" && r.spanID === processing!.spanID),
      "the worker's task span links to the scheduler's processing span",
    ).toBe(true);
    expect(processTag(trace, task, "taskjourney.role")).toBe("worker");
    expect(tag(task, "task.key")).toBe(key);
    expect(tag(task, "task.prefix")).toBe("sum");
    expect(tag(task, "task.group")).toBe("sum");
    expect(tag(task, "task.worker")).toBe(processTag(trace, task, "service.instance.id"));
    expect(tag(task, "task.outcome")).toBe("memory");
    expect(tag(task, "span.kind")).toBe("internal");

    // State children in order: waiting → ready → executing, inside the task span.
    const states = childrenOf(trace, task);
    expect(states.map((s) => s.operationName)).toEqual(["waiting", "ready", "executing"]);
    for (const state of states) {
      expect(state.startTime).toBeGreaterThanOrEqual(task.startTime);
      expect(state.startTime + state.duration).toBeLessThanOrEqual(task.startTime + task.duration + 1);
    }
    const [waiting, , executing] = states;

    // Activity spans under executing (the thread pool's executor time, the run with thread times).
    const activities = childrenOf(trace, executing).map((s) => s.operationName);
    expect(activities.length).toBeGreaterThan(0);
    expect(activities).toContain("run");
    const runSpan = childrenOf(trace, executing).find((s) => s.operationName === "run")!;
    expect(typeof tag(runSpan, "thread.cpu_time")).toBe("number");

    // gather_dep under waiting: kind CLIENT, transfer attributes, its own activity children.
    const gathers = childrenOf(trace, waiting).filter((s) => s.operationName === "gather_dep");
    expect(gathers.length).toBeGreaterThan(0);
    const gather = gathers[0];
    expect(tag(gather, "span.kind")).toBe("client");
    expect(Number(tag(gather, "transfer.bytes"))).toBeGreaterThan(0);
    expect(tag(gather, "transfer.outcome")).toBe("ok");
    expect(String(tag(gather, "transfer.peer"))).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    // An array attribute: Jaeger shows it as a JSON string. Keys past a cap are only counted.
    const transferred = JSON.parse(String(tag(gather, "transfer.keys"))) as string[];
    expect(transferred.length).toBeGreaterThan(0);
    expect(transferred.length).toBeLessThanOrEqual(Number(tag(gather, "transfer.key_count")));
    // One gather_dep fetches what the worker lacks from that peer, for any of its waiting tasks
    // (as Dask bundles them): this task's dependency among them, others' too when they queued up
    // together (a blocked event loop of the run's --block-every makes that common).
    expect(
      transferred.some((fetched) => dependencyKey.test(fetched)),
      `${transferred.join(", ")} holds a ${dependencyKey}`,
    ).toBe(true);
    for (const fetched of transferred) expect(fetched).toMatch(/^(square-\d+|sum-\d+-\d+)$/);
    expect(childrenOf(trace, gather).map((s) => s.operationName)).toContain("network");
    // The waiting span carries its apportioned breakdown.
    expect(waiting.tags.some((t) => t.key.startsWith("task.wait.") && Number(t.value) > 0)).toBe(true);

    // Links: Jaeger shows OTel links as FOLLOWS_FROM references. The waiting span links to the
    // gather_dep spans that fetched its dependencies (here, its own child among them)...
    const waitingLinks = waiting.references.filter((r) => r.refType === "FOLLOWS_FROM");
    expect(waitingLinks.map((r) => r.spanID)).toContain(gather.spanID);
    // ...and the task span links to the journeys that produced its dependencies on other
    // workers (their context travelled with the data): worker journeys in other traces, of
    // K's dependencies.
    const producerLinks = task.references.filter((r) => r.refType === "FOLLOWS_FROM" && r.traceID !== trace.traceID);
    expect(producerLinks.length).toBeGreaterThan(0);
    for (const link of producerLinks.slice(0, 3)) {
      const producerTrace = await traceById(jaeger, link.traceID);
      const producer = producerTrace.spans.find((s) => s.spanID === link.spanID);
      expect(producer, `linked span ${link.spanID} in trace ${link.traceID}`).toBeDefined();
      expect(producer!.operationName).toBe(level === 1 ? "task square" : "task sum");
      expect(String(tag(producer!, "task.key"))).toMatch(dependencyKey);
      expect(processTag(producerTrace, producer!, "taskjourney.role")).toBe("worker");
    }

    // Every CHILD_OF reference points inside the trace.
    for (const span of trace.spans) {
      const parent = parentOf(span);
      if (parent !== undefined) expect(byId.has(parent), `parent of ${span.operationName}`).toBe(true);
    }
    explainedKey = key;
  });

  it("Jaeger shows a task slowed by a major GC, one by a blocked event loop, and a transfer slowed by the sender's unspill", async () => {
    needWorkload();
    const jaeger = backendsEnv().JAEGER_QUERY_URL;
    // The first run's injected keys (a second, larger run has other keys of its own).
    const { gc, blocked } = injectedKeys(withInjected(buildGraph("reduction", { size: 4000, seed: 1 }), INJECTED));
    const executingOf = async (key: string): Promise<JaegerSpan | undefined> => {
      const search = `${jaeger}/api/traces?${new URLSearchParams({ service: SERVICE, tags: JSON.stringify({ "task.key": key }), limit: "5", lookback: "1h" })}`;
      for (const trace of (await getJson<JaegerAnswer<JaegerTrace[]>>(search)).data ?? []) {
        const task = trace.spans.find(
          (s) =>
            s.operationName.startsWith("task ") &&
            tag(s, "task.key") === key &&
            processTag(trace, s, "taskjourney.role") === "worker",
        );
        const executing =
          task === undefined ? undefined : childrenOf(trace, task).find((s) => s.operationName === "executing");
        if (executing !== undefined) return executing;
      }
      return undefined;
    };
    // The state span carries the overlap (task.stall.*), from which `taskjourney explain` and the
    // report place it under executing's other.
    const majors: number[] = [];
    for (const key of gc.slice(0, 10))
      majors.push(
        Number(tag((await executingOf(key)) ?? ({ tags: [] } as unknown as JaegerSpan), "task.stall.gc.major") ?? 0),
      );
    expect(
      Math.max(...majors),
      `task.stall.gc.major on the executing spans of ${gc.slice(0, 10).join(", ")}`,
    ).toBeGreaterThan(0);
    const loops: number[] = [];
    for (const key of blocked.slice(0, 10))
      loops.push(
        Number(tag((await executingOf(key)) ?? ({ tags: [] } as unknown as JaegerSpan), "task.stall.event-loop") ?? 0),
      );
    expect(
      Math.max(...loops),
      `task.stall.event-loop on the executing spans of ${blocked.slice(0, 10).join(", ")}`,
    ).toBeGreaterThanOrEqual(0.03);

    // A get_data whose sender read the value back from disk: a child of the gather_dep that asked,
    // in the same trace (every get_data is: none stands as a root), with its disk-read; the
    // gather_dep links to it.
    const search = `${jaeger}/api/traces?${new URLSearchParams({ service: SERVICE, operation: "get_data", limit: "50", lookback: "1h" })}`;
    const traces = (await getJson<JaegerAnswer<JaegerTrace[]>>(search)).data ?? [];
    let unspilled = 0;
    for (const trace of traces) {
      const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
      for (const getData of trace.spans.filter((s) => s.operationName === "get_data")) {
        const gatherDep = byId.get(parentOf(getData) ?? "");
        expect(gatherDep?.operationName, "the parent of a get_data span").toBe("gather_dep");
        // Linked back, unless the gather_dep was cancelled and ended before the reply came.
        const linked = gatherDep!.references.some((r) => r.refType === "FOLLOWS_FROM" && r.spanID === getData.spanID);
        if (linked && childrenOf(trace, getData).some((s) => s.operationName === "disk-read")) unspilled++;
      }
    }
    expect(unspilled, "get_data spans with a disk-read child, linked from their gather_dep").toBeGreaterThan(0);
  });

  it("PromQL returns task.state.time by prefix and finite duration quantiles, each metric stored once", async () => {
    needWorkload();
    const prometheus = backendsEnv().PROMETHEUS_URL;
    const sel = `service_name="${SERVICE}"`;

    const byPrefix = await promQuery(prometheus, `sum by (task_prefix) (task_state_time_seconds_total{${sel}})`);
    const seconds = Object.fromEntries(byPrefix.map((row) => [row.metric.task_prefix, Number(row.value![1])]));
    for (const prefix of ["arange", "square", "sum", "final-sum"])
      expect(seconds[prefix], `task_state_time_seconds_total{task_prefix="${prefix}"}`).toBeGreaterThan(0);

    const byState = await promQuery(
      prometheus,
      `sum by (task_state) (task_state_time_seconds_total{${sel}, taskjourney_role="worker"})`,
    );
    expect(byState.map((row) => row.metric.task_state)).toEqual(
      expect.arrayContaining(["waiting", "ready", "executing", "fetch", "flight"]),
    );

    // task.state.duration is a native histogram (no _bucket series): quantiles straight from it,
    // and from its rate as the dashboard does.
    expect(await promQuery(prometheus, `task_state_duration_seconds_bucket{${sel}}`)).toEqual([]);
    for (const expr of [
      (q: number) =>
        `histogram_quantile(${q}, sum by (task_prefix) (task_state_duration_seconds{${sel}, task_state="executing"}))`,
      (q: number) =>
        `histogram_quantile(${q}, sum by (task_prefix) (rate(task_state_duration_seconds{${sel}, task_state="executing"}[1m])))`,
    ]) {
      const p50 = Object.fromEntries(
        (await promQuery(prometheus, expr(0.5))).map((row) => [row.metric.task_prefix, Number(row.value![1])]),
      );
      const p99 = Object.fromEntries(
        (await promQuery(prometheus, expr(0.99))).map((row) => [row.metric.task_prefix, Number(row.value![1])]),
      );
      expect(Object.keys(p50), expr(0.5)).toEqual(expect.arrayContaining(["arange", "square", "sum"]));
      for (const prefix of ["arange", "square", "sum"]) {
        expect(Number.isFinite(p50[prefix]) && p50[prefix] > 0, `p50 of ${prefix}: ${p50[prefix]}`).toBe(true);
        expect(Number.isFinite(p99[prefix]) && p99[prefix] >= p50[prefix], `p99 of ${prefix}: ${p99[prefix]}`).toBe(
          true,
        );
      }
    }
    const count = await promQuery(
      prometheus,
      `sum(histogram_count(task_state_duration_seconds{${sel}, task_state="executing", taskjourney_role="worker"}))`,
    );
    expect(Number(count[0].value![1])).toBeGreaterThanOrEqual(needWorkload().tasks);

    // Once each: by remote write only, never a second copy of a series through a scrape.
    expect(
      await promQuery(
        prometheus,
        `count by (service_instance_id, task_prefix, task_state) (task_state_time_seconds_total{${sel}}) > 1`,
      ),
    ).toEqual([]);
    const scrapedJobs = await promQuery(prometheus, `count by (job) (up)`);
    expect(scrapedJobs.map((row) => row.metric.job)).toEqual(["otelcol-self"]);
  });

  it("the Collector's prometheus exporter answers over HTTP with our metric names", async () => {
    needWorkload();
    const { text } = await http(backendsEnv().TJ_COLLECTOR_PROMETHEUS_URL);
    for (const name of [
      "task_state_time_seconds_total",
      "task_transitions_total",
      "task_execute_time_seconds_total",
      "task_execute_size_bytes_total",
      "task_gather_size_bytes_total",
      "task_wait_time_seconds_total",
      "task_active",
    ]) {
      expect(text, name).toMatch(new RegExp(`^${name}\\{[^}]*service_name="${SERVICE}"`, "m"));
    }
  });

  it("every dashboard panel returns one role's series by default, the scheduler's alone when chosen", async () => {
    needWorkload();
    const prometheus = backendsEnv().PROMETHEUS_URL;
    const dashboard = loadDashboard();
    // One role at a time: a single-valued variable, workers by default (Grafana's first load).
    const role = dashboard.templating.list.find((variable) => variable.name === "role")!;
    expect(role.multi).toBe(false);
    expect(role.includeAll).toBe(false);
    const values = defaultValues(dashboard, { service: SERVICE });
    expect(values.role).toBe("worker");
    expect(values.duration_state).toBe("executing");

    // Template variables: each label_values() query gives values; the role's include both roles.
    for (const variable of dashboard.templating.list.filter((v) => v.type === "query")) {
      const query = substitute(typeof variable.query === "string" ? variable.query : variable.query.query, values);
      const match = /^label_values\((.*),\s*(\w+)\)$/.exec(query);
      expect(match, `variable ${variable.name}: ${query}`).not.toBeNull();
      const answer = await getJson<{ data: string[] }>(
        `${prometheus}/api/v1/label/${match![2]}/values?${new URLSearchParams({ "match[]": match![1] })}`,
      );
      expect(answer.data.length, `values of $${variable.name} (${query})`).toBeGreaterThan(0);
      if (variable.name === "role") expect(answer.data.sort()).toEqual(["scheduler", "worker"]);
    }

    // Panels, as first loaded: every target returns series, all of one role (each keeps
    // taskjourney_role in its result, so a query that mixed roles would show two).
    const panels = queryPanels(dashboard);
    expect(panels.length).toBeGreaterThanOrEqual(9);
    const problems: string[] = [];
    const rolesOf = (rows: PromSample[]) =>
      [...new Set(rows.map((row) => row.metric.taskjourney_role ?? "(none)"))].sort();
    for (const panel of panels) {
      expect(panel.datasource?.uid, `${panel.title}: data source by variable`).toBe("${datasource}");
      expect(panel.targets?.length, `${panel.title}: targets`).toBeGreaterThan(0);
      for (const target of panel.targets!) {
        const query = substitute(target.expr, values);
        const rows = await promQuery(prometheus, query);
        if (rows.length === 0) problems.push(`${panel.title} [${target.refId}]: no series from ${query}`);
        else if (rolesOf(rows).join() !== "worker")
          problems.push(`${panel.title} [${target.refId}]: roles ${rolesOf(rows).join(", ")} from ${query}`);
      }
    }
    expect(problems, "panel queries without one role's data").toEqual([]);

    // With role = scheduler, the panels that follow the variable show the scheduler only, and
    // the workers' panels (execute, gather, wait breakdown, bytes) still the workers only.
    const scheduler = defaultValues(dashboard, { service: SERVICE, role: "scheduler", duration_state: "processing" });
    for (const panel of panels) {
      for (const target of panel.targets!) {
        const rows = await promQuery(prometheus, substitute(target.expr, scheduler));
        const expected = target.expr.includes('taskjourney_role="$role"') ? "scheduler" : "worker";
        if (rows.length > 0 && rolesOf(rows).join() !== expected)
          problems.push(`${panel.title} [${target.refId}] with role=scheduler: roles ${rolesOf(rows).join(", ")}`);
        if (target.expr.includes("task_state_time_seconds_total") && rows.length === 0)
          problems.push(`${panel.title}: no scheduler series`);
      }
    }
    expect(problems, "panels with role=scheduler").toEqual([]);
  });

  it("the dashboard's totals are what the workload recorded and the journeys' explain() totals", async () => {
    const { reports } = needWorkload();
    const env = backendsEnv();
    const dashboard = loadDashboard();
    const panels = queryPanels(dashboard);
    const panelOf = (metric: string): Panel => {
      const found = panels.filter(
        (panel) => panel.targets?.some((target) => target.expr.includes(metric)) && panel.type !== "stat",
      );
      expect(
        found.map((panel) => panel.title),
        metric,
      ).toHaveLength(1);
      return found[0];
    };
    /** A panel's totals (its rates integrated: the counters' last values, grouped as the panel groups), keyed by its legend labels. */
    const totalsOf = async (
      metric: string,
      labels: string[],
      values = defaultValues(dashboard, { service: SERVICE }),
    ): Promise<Record<string, number>> => {
      const expr = totalsQuery(panelOf(metric).targets![0].expr);
      expect(expr, `${metric}: a rate panel`).toBeDefined();
      const rows = await promQuery(env.PROMETHEUS_URL, substitute(expr!, values));
      return Object.fromEntries(
        rows.map((row) => [labels.map((label) => row.metric[label]).join(" "), Number(row.value![1])]),
      );
    };

    // What the workload recorded: summary.json of each run, read back from each process's
    // metric producer at the end of the run (workers' totals apart from the scheduler's).
    const recorded = {
      worker: {} as Record<string, number>,
      scheduler: {} as Record<string, number>,
      wait: {} as Record<string, number>,
      execute: {} as Record<string, number>,
      gather: {} as Record<string, number>,
      bytes: {} as Record<string, number>,
    };
    const add = (into: Record<string, number>, key: string, value: number) => (into[key] = (into[key] ?? 0) + value);
    for (const report of reports) {
      for (const row of report.rows)
        for (const [state, seconds] of Object.entries(row.stateSeconds))
          add(recorded.worker, `${row.prefix} ${state}`, seconds);
      for (const row of report.schedulerRows)
        for (const [state, seconds] of Object.entries(row.stateSeconds))
          add(recorded.scheduler, `${row.prefix} ${state}`, seconds);
      for (const [prefix, activities] of Object.entries(report.waitByPrefix))
        for (const [activity, seconds] of Object.entries(activities))
          add(recorded.wait, `${prefix} ${activity}`, seconds);
      for (const [activity, seconds] of Object.entries(report.execute)) add(recorded.execute, activity, seconds);
      for (const [activity, seconds] of Object.entries(report.gather)) add(recorded.gather, activity, seconds);
      for (const [outcome, bytes] of Object.entries(report.gatherBytes)) add(recorded.bytes, outcome, bytes);
    }
    // `memory` visits of keys still held when the run was summed end later (at release or
    // shutdown), after the summary: their time is not comparable, and is left out.
    const comparable = (totals: Record<string, number>) =>
      Object.fromEntries(Object.entries(totals).filter(([key]) => !key.endsWith(" memory")));
    /**
     * `actual` equals `expected` key for key, within `tolerance` seconds (or bytes) per unit of
     * `expected` plus `absolute`; lists every difference.
     */
    const expectTotals = (
      what: string,
      actual: Record<string, number>,
      expected: Record<string, number>,
      tolerance: number,
      absolute = 0,
    ) => {
      const differences: string[] = [];
      for (const key of new Set([...Object.keys(actual), ...Object.keys(expected)])) {
        const a = actual[key] ?? 0;
        const e = expected[key] ?? 0;
        if (!(Math.abs(a - e) <= tolerance * Math.abs(e) + absolute))
          differences.push(`${key}: dashboard ${a}, expected ${e}`);
      }
      expect(differences, what).toEqual([]);
      expect(Object.keys(actual).length, `${what}: series`).toBeGreaterThan(0);
    };

    // Remote write carries each process's float64 counters unchanged (no scrape, no resampling),
    // and the last sample of each series is the process's final export, after the summary; the
    // times compared ended before it. What remains is the order of float additions across
    // processes (Prometheus' sum against ours): a relative 1e-9 is far above it (~1e-15 per add).
    const exact = 1e-9;
    const stateTime = "task_state_time_seconds_total";
    const workerStates = comparable(await totalsOf(stateTime, ["task_prefix", "task_state"]));
    expectTotals(
      "time by state (workers, the default) = the workers' task.state.time",
      workerStates,
      comparable(recorded.worker),
      exact,
    );
    const schedulerValues = defaultValues(dashboard, { service: SERVICE, role: "scheduler" });
    const schedulerStates = comparable(await totalsOf(stateTime, ["task_prefix", "task_state"], schedulerValues));
    expectTotals(
      "time by state (role = scheduler) = the scheduler's task.state.time",
      schedulerStates,
      comparable(recorded.scheduler),
      exact,
    );
    const workerWait = await totalsOf("task_wait_time_seconds_total", ["task_prefix", "task_activity"]);
    expectTotals("wait breakdown = the workers' task.wait.time", workerWait, recorded.wait, exact);
    // The wait breakdown stays the workers' when the role variable says scheduler.
    expect(await totalsOf("task_wait_time_seconds_total", ["task_prefix", "task_activity"], schedulerValues)).toEqual(
      workerWait,
    );
    expectTotals(
      "execute breakdown",
      await totalsOf("task_execute_time_seconds_total", ["task_activity"]),
      recorded.execute,
      exact,
    );
    expectTotals(
      "gather breakdown",
      await totalsOf("task_gather_time_seconds_total", ["task_activity"]),
      recorded.gather,
      exact,
    );
    expectTotals(
      "gather bytes",
      await totalsOf("task_gather_size_bytes_total", ["transfer_outcome"]),
      recorded.bytes,
      exact,
    );
    // The workers' wait breakdown sums to their waiting time, prefix by prefix.
    const waitingOf = (totals: Record<string, number>) =>
      Object.fromEntries(
        Object.entries(totals)
          .filter(([key]) => key.endsWith(" waiting"))
          .map(([key, seconds]) => [key.slice(0, -" waiting".length), seconds]),
      );
    const waitByPrefix: Record<string, number> = {};
    for (const [key, seconds] of Object.entries(workerWait)) add(waitByPrefix, key.split(" ")[0], seconds);
    expectTotals("wait breakdown by prefix = the workers' waiting", waitByPrefix, waitingOf(workerStates), 1e-9);

    // The journeys' explain() totals, rebuilt from every span the Collector wrote (the trace
    // ratio is 1): span times are whole nanoseconds, so a visit's seconds can be off by the
    // rounding of its start and end (1 ns), and a journey has a handful of visits; 10 ns per
    // journey bounds the sum (measured on the demo: at most 1e-11 s apart in all).
    const file = env.TJ_TRACES_FILE;
    const fromTraces = await pollUntil(
      "every journey's spans in the traces file",
      async () => {
        const totals = traceTotals(file, SERVICE);
        const states = comparable(totals.stateSeconds.worker ?? {});
        const close = Object.entries(comparable(recorded.worker)).every(
          ([key, seconds]) => Math.abs((states[key] ?? 0) - seconds) <= 1e-8 * (totals.journeys.worker ?? 0),
        );
        return close ? totals : undefined;
      },
      30_000,
      1000,
    ).catch(() => traceTotals(file, SERVICE));
    const slack = (role: string) => 1e-8 * (fromTraces.journeys[role] ?? 0);
    expectTotals(
      "time by state (workers) = the workers' journeys' explain() totals",
      workerStates,
      comparable(fromTraces.stateSeconds.worker ?? {}),
      0,
      slack("worker"),
    );
    expectTotals(
      "time by state (scheduler) = the scheduler's journeys' explain() totals",
      schedulerStates,
      comparable(fromTraces.stateSeconds.scheduler ?? {}),
      0,
      slack("scheduler"),
    );
    expectTotals(
      "wait breakdown = the workers' journeys' explain() waiting",
      workerWait,
      fromTraces.workerWait,
      0,
      slack("worker"),
    );

    // Dropped telemetry: the bad input the in-process worker journal was fed (the cluster
    // example drops nothing), by the stat panel (totals over the range) and by the rate panel.
    const dropped: Record<string, number> = { "unknown-state": 2, "unknown-key": 1 };
    for (const report of reports)
      for (const [reason, count] of Object.entries(report.dropped)) add(dropped, reason, count);
    const stat = panels.find(
      (panel) =>
        panel.type === "stat" && panel.targets?.some((target) => target.expr.includes("taskjourney_dropped_total")),
    )!;
    const statRows = await promQuery(
      env.PROMETHEUS_URL,
      substitute(stat.targets![0].expr, defaultValues(dashboard, { service: SERVICE })),
    );
    expect(Object.fromEntries(statRows.map((row) => [row.metric.reason, Number(row.value![1])]))).toEqual(dropped);
    expect(await totalsOf("taskjourney_dropped_total", ["reason"])).toEqual(dropped);
  });

  it("`taskjourney explain` rebuilds a task's breakdown from the Collector's file exporter output", async () => {
    needWorkload();
    const key = explainedKey;
    expect(key, "a key from the Jaeger test").toBeDefined();
    const file = backendsEnv().TJ_TRACES_FILE;
    await pollUntil(
      `${key} in ${file}`,
      async () => (fs.existsSync(file) && fs.readFileSync(file, "utf8").includes(`"${key}"`) ? true : undefined),
      20_000,
    );
    const result = await run(process.execPath, ["--import", "tsx", "src/cli.ts", "explain", key!, "--from", file], {
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^${key} spent .+ on worker tcp://127\\.0\\.0\\.1:\\d+$`));
    expect(lines.some((line) => /^├─ waiting\s/.test(line))).toBe(true);
    expect(lines.some((line) => /^│ {2}[├└]─ gather: network\s/.test(line))).toBe(true);
    expect(lines.some((line) => /^├─ ready\s/.test(line))).toBe(true);
    expect(lines.some((line) => /^└─ executing\s/.test(line))).toBe(true);
    expect(lines.some((line) => /^ {3}[├└]─ thread-cpu\s/.test(line))).toBe(true);
  });
});
