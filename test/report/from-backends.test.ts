/**
 * `taskjourney explain` and `report` reading Jaeger and Prometheus, against loopback fakes that
 * answer with what the real ones answered (test/fixtures/backends/: recorded from Jaeger v1.76's
 * query API and Prometheus 2.42 after docs/exporting.md's NodeSDK app, test/fixtures/nodesdk-otlp-app.ts,
 * exported to the Collector: three jobs of test/fixtures/nodesdk-work.ts, load-1 failing, the
 * failed one's trace alone kept at the default 1% sampling). And every way a backend can fail
 * ends the command with an error naming the URL and what went wrong, in bounded time and bytes.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run.js";
import { readBackends } from "../../src/report/from-backends.js";
import { reportDataFromTelemetry } from "../../src/report/from-telemetry.js";
import { requestJson } from "../../src/report/http-json.js";
import { nativeToExponential } from "../../src/report/prometheus.js";
import { histogramQuantile } from "../../src/report/histograms.js";

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), "../fixtures/backends");
const fixture = (name: string): string => fs.readFileSync(path.join(FIXTURES, name), "utf8");
/** When the fixtures were recorded (Prometheus' sample times): "now" for the queries. */
const RECORDED_AT = 1796478960_000;
const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';

type Handler = (request: http.IncomingMessage, url: URL, body: string, response: http.ServerResponse) => void;

const servers: http.Server[] = [];
const requests: string[] = [];

async function serve(handler: Handler): Promise<string> {
  const server = http.createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://localhost");
      requests.push(
        `${request.method} ${url.pathname}${url.search}${body === "" ? "" : ` ${decodeURIComponent(body)}`}`,
      );
      handler(request, url, body, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function json(response: http.ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "application/json" }).end(text);
}

/** Jaeger's query API as v1.76 answers it, from the recordings. */
const fakeJaeger: Handler = (_request, url, _body, response) => {
  if (url.pathname === "/api/v3/services") return json(response, 200, fixture("jaeger-services.json"));
  if (url.pathname === "/api/v3/traces") {
    if (url.searchParams.get("query.num_traces") === null)
      return json(
        response,
        500,
        '{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}',
      );
    if (url.searchParams.get("query.service_name") !== "tj-probe")
      return json(response, 404, fixture("jaeger-v3-none.json"));
    return json(response, 200, fixture("jaeger-v3-find.json"));
  }
  if (url.pathname === "/api/v3/traces/dc7099083cea893722578d85387d1a4d")
    return json(response, 200, fixture("jaeger-v3-trace.json"));
  if (url.pathname.startsWith("/api/v3/traces/")) return json(response, 404, fixture("jaeger-v3-none.json"));
  if (url.pathname === "/api/traces") {
    const tags = JSON.parse(url.searchParams.get("tags") ?? "{}") as Record<string, string>;
    if (url.searchParams.get("service") === null)
      return json(response, 400, `{"data":null,"errors":[{"code":400,"msg":"parameter 'service' is required"}]}`);
    if (tags["task.key"] === "load-1") return json(response, 200, fixture("jaeger-v1-search.json"));
    return json(response, 200, '{"data":[],"total":0,"limit":0,"offset":0,"errors":null}');
  }
  // The UI's placeholder page, as the Go-built Jaeger serves every other path.
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!DOCTYPE html>\n<html></html>");
};

/** Prometheus 2.42's query API, from the recordings: last_over_time of a native histogram is a float 0 there. */
const fakePrometheus: Handler = (request, url, body, response) => {
  if (request.method !== "POST" || url.pathname !== "/api/v1/query") return json(response, 404, "404 page not found");
  const query = new URLSearchParams(body).get("query") ?? "";
  const last = /^last_over_time\((\w+)\{service_name="tj-probe"\}\[3600s\]\)$/.exec(query);
  if (last !== null) {
    const file = `prom-last-${last[1]}.json`;
    return json(response, 200, fs.existsSync(path.join(FIXTURES, file)) ? fixture(file) : EMPTY_VECTOR);
  }
  if (query === 'task_state_duration_seconds{service_name="tj-probe"}[3600s]')
    return json(response, 200, fixture("prom-matrix-task_state_duration_seconds.json"));
  return json(response, 400, fixture("prom-error.json"));
};

afterEach(() => {
  requests.length = 0;
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const cli = runCli;

describe("reading Jaeger and Prometheus as their query APIs answer", () => {
  let jaeger: string;
  let prometheus: string;
  let tmp: string;
  beforeAll(async () => {
    jaeger = await serve(fakeJaeger);
    prometheus = await serve(fakePrometheus);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-backends-"));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("explain <key> --jaeger finds the key's trace by its task.key and prints its tree", async () => {
    const result = await cli("explain", "load-1", "--jaeger", jaeger);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        "load-1 spent 1.0 s on worker queue-1 (ended in error)",
        "├─ waiting          125.0 ms",
        "│  └─ dependencies  125.0 ms",
        "├─ ready            125.0 ms",
        "└─ executing        750.0 ms  error: Error: bad row 7 in load-1",
        "",
      ].join("\n"),
    );
    // The services listed, the v1 search by tag in each (within the window), the trace by its ID.
    expect(requests.map((line) => line.replace(/start=\d+&end=\d+/, "start=…&end=…"))).toEqual([
      "GET /api/v3/services",
      "GET /api/traces?service=tj-probe&tags=%7B%22task.key%22%3A%22load-1%22%7D&start=…&end=…&limit=20",
      "GET /api/v3/traces/dc7099083cea893722578d85387d1a4d",
    ]);
  });

  it("explain of a key no trace holds says so, naming Jaeger, the window and why a journey may not be there", async () => {
    const result = await cli("explain", "inc-2", "--jaeger", jaeger, "--service", "tj-probe", "--since", "2h");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `taskjourney: no trace holds task.key "inc-2" in Jaeger at ${jaeger} (0 traces of service tj-probe), begun in the last 2h. ` +
        "Only journeys that became spans are there: sampled ones (sampling.ratio, 1% of keys by default), slow ones and failed ones " +
        "(and those a Collector's tail sampling kept); an older one needs a longer --since\n",
    );
  });

  it("report data from Jaeger and Prometheus: the metrics' tables, counts and failures, the spans' failed task and why", async () => {
    const read = await readBackends({
      jaeger,
      prometheus,
      service: "tj-probe",
      sinceMs: 3_600_000,
      limit: 1000,
      timeoutMs: 10_000,
      maxBytes: 1 << 20,
      now: RECORDED_AT,
    });
    expect(read.warnings).toEqual([]);
    expect(read.sources).toEqual([
      `Jaeger at ${jaeger} (1 trace of service tj-probe)`,
      `Prometheus at ${prometheus} (24 series of service tj-probe)`,
    ]);
    // Prometheus 2.42 answers last_over_time of a native histogram with a float 0: the window's samples are asked.
    expect(requests.filter((line) => line.includes("task_state_duration_seconds"))).toEqual([
      'POST /api/v1/query query=last_over_time(task_state_duration_seconds{service_name="tj-probe"}[3600s])&time=1796478960.000',
      'POST /api/v1/query query=task_state_duration_seconds{service_name="tj-probe"}[3600s]&time=1796478960.000',
    ]);
    const data = reportDataFromTelemetry(
      { spans: read.spans, metrics: read.metrics, summaries: [], files: read.sources },
      { generatedAt: "x", inputs: read.sources.join(", ") },
    );
    // The jobs of nodesdk-work.ts: inc-1 (0.25 s waiting, 0.125 s ready, 1.5 s executing), inc-2 (0.5, 0.125, 2.25), load-1 (0.125, 0.125, 0.75, failed).
    const rows = Object.fromEntries(data.prefixes.map((row) => [row.prefix, row]));
    expect(rows.inc.count).toBe(2);
    expect({ ...rows.inc.stateSeconds }).toEqual({ executing: 3.75, ready: 0.25, waiting: 0.75 });
    expect(rows.load.count).toBe(1);
    expect({ ...rows.load.stateSeconds }).toEqual({ executing: 0.75, ready: 0.125, waiting: 0.125 });
    // Quantiles from buckets of scale 8 without min or max: within a bucket's width (2^(1/256)) of the durations.
    const width = 2 ** (1 / 256);
    for (const [quantile, seconds] of [
      [rows.inc.p50, 1.5],
      [rows.inc.p90, 2.25],
      [rows.load.p50, 0.75],
    ]) {
      expect(quantile / seconds).toBeGreaterThan(1 / width);
      expect(quantile / seconds).toBeLessThan(width);
    }
    expect({ ...data.execute }).toEqual({ failed: 0.75, other: 3.75 });
    expect({ ...data.failureCounts }).toEqual({ "worker:error": 1 });
    expect(data.failures!.map((failure) => [failure.key, failure.error])).toEqual([
      ["load-1", "Error: bad row 7 in load-1"],
    ]);
    expect(data.slowest!.map((breakdown) => breakdown.key)).toEqual(["load-1"]);
    expect(data.description).toBe(
      `from the metrics of 1 process and 1 sampled journeys' spans, Jaeger at ${jaeger} (1 trace of service tj-probe), Prometheus at ${prometheus} (24 series of service tj-probe)`,
    );
  });

  it("report --jaeger --prometheus writes the page", async () => {
    const out = path.join(tmp, "report.html");
    const result = await cli(
      "report",
      "--jaeger",
      jaeger,
      "--prometheus",
      prometheus,
      "--service",
      "tj-probe",
      "--out",
      out,
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`wrote ${out}\n`);
    const page = fs.readFileSync(out, "utf8");
    expect(page.includes('<td class="why">Error: bad row 7 in load-1</td>')).toBe(true);
    expect(page.includes('<td class="name">inc</td><td>2</td>')).toBe(true);
  });

  it("Jaeger's --limit bounds the traces read, and reaching it is told", async () => {
    const read = await readBackends({ jaeger, sinceMs: 3_600_000, limit: 1, timeoutMs: 10_000, maxBytes: 1 << 20 });
    expect(requests.at(-1)).toContain("query.service_name=tj-probe");
    expect(requests.at(-1)).toContain("query.num_traces=1");
    expect(read.warnings).toEqual([
      `Jaeger at ${jaeger}: 1 traces read, the --limit: the newest of service "tj-probe"; older ones are left out (raise --limit, or narrow --since)`,
    ]);
  });
});

describe("spans as Jaeger v2 stores them", () => {
  it("a span that ends where it begins, stored 1 ns long with a warning, reads as exported: 0 s, the warning gone", async () => {
    // As Jaeger v1.76 answered for a task ready the moment it became so (its negative-duration sanitizer).
    const span = (
      name: string,
      id: string,
      parent: string,
      start: string,
      end: string,
      attributes: unknown[] = [],
    ) => ({
      traceId: "4fa88dae26bb233b5e8c066ff3862917",
      spanId: id,
      parentSpanId: parent,
      name,
      kind: 1,
      startTimeUnixNano: start,
      endTimeUnixNano: end,
      attributes,
      status: {},
    });
    const warning = {
      key: "@jaeger@warnings",
      value: {
        arrayValue: {
          values: [
            {
              stringValue:
                "Negative duration detected, sanitizing end timestamp. Original end timestamp: 2026-12-05 14:08:30.895042896 +0000 UTC, adjusted to: 2026-12-05 14:08:30.895042897 +0000 UTC",
            },
          ],
        },
      },
    };
    const answer = {
      result: {
        resourceSpans: [
          {
            resource: { attributes: [{ key: "taskjourney.role", value: { stringValue: "worker" } }] },
            scopeSpans: [
              {
                scope: { name: "taskjourney" },
                spans: [
                  span("task load", "aaaaaaaaaaaaaaa1", "", "1796479710770042896", "1796479712145042896", [
                    { key: "task.key", value: { stringValue: "load-4" } },
                    { key: "task.prefix", value: { stringValue: "load" } },
                  ]),
                  span("waiting", "aaaaaaaaaaaaaaa2", "aaaaaaaaaaaaaaa1", "1796479710770042896", "1796479710895042896"),
                  span("ready", "aaaaaaaaaaaaaaa3", "aaaaaaaaaaaaaaa1", "1796479710895042896", "1796479710895042897", [
                    warning,
                  ]),
                  span(
                    "executing",
                    "aaaaaaaaaaaaaaa4",
                    "aaaaaaaaaaaaaaa1",
                    "1796479710895042896",
                    "1796479712145042896",
                  ),
                ],
              },
            ],
          },
        ],
      },
    };
    const jaeger = await serve((_request, url, _body, response) => {
      if (url.pathname === "/api/traces")
        return json(response, 200, '{"data":[{"traceID":"4fa88dae26bb233b5e8c066ff3862917"}]}');
      if (url.pathname.startsWith("/api/v3/traces")) return json(response, 200, JSON.stringify(answer));
      json(response, 404, fixture("jaeger-v3-none.json"));
    });
    const read = await readBackends({
      jaeger,
      service: "s",
      sinceMs: 3_600_000,
      limit: 10,
      timeoutMs: 10_000,
      maxBytes: 1 << 20,
    });
    const ready = read.spans.find((s) => s.name === "ready")!;
    expect(ready.endNanos).toBe(ready.startNanos);
    expect(ready.attributes["@jaeger@warnings"]).toBeUndefined();
    const result = await cli("explain", "load-4", "--jaeger", jaeger, "--service", "s");
    expect(result.stdout).toBe(
      [
        "load-4 spent 1.4 s (not ended)",
        "├─ waiting    125.0 ms",
        "├─ ready           0 s",
        "└─ executing     1.3 s",
        "",
      ].join("\n"),
    );
  });
});

describe("duration histograms as other Prometheus versions and exporters keep them", () => {
  const labels = {
    service_name: "s",
    service_instance_id: "w1",
    taskjourney_role: "worker",
    task_prefix: "inc",
    task_state: "executing",
  };
  const vector = (result: unknown[]) => JSON.stringify({ status: "success", data: { resultType: "vector", result } });
  /** A Prometheus answering `answers[query]`, an empty vector to any other query. */
  const fake = (answers: Record<string, string>) =>
    serve((_request, _url, body, response) =>
      json(response, 200, answers[new URLSearchParams(body).get("query") ?? ""] ?? vector([])),
    );
  const timeCounter = vector([
    { metric: { ...labels, __name__: "task_state_time_seconds_total" }, value: [100, "4.5"] },
  ]);

  it("Prometheus 3's last_over_time of a native histogram is the histogram: no window of samples is read", async () => {
    const prometheus = await fake({
      'last_over_time(task_state_time_seconds_total{service_name="s"}[60s])': timeCounter,
      'last_over_time(task_state_duration_seconds{service_name="s"}[60s])': vector([
        {
          metric: labels,
          histogram: [
            100,
            {
              count: "2",
              sum: "3.75",
              buckets: [
                [0, "1.4969554117672352", "1.5010140696264251", "1"],
                [0, "2.2469511346660394", "2.2530432372164837", "1"],
              ],
            },
          ],
        },
      ]),
    });
    const read = await readBackends({
      prometheus,
      service: "s",
      sinceMs: 60_000,
      limit: 1,
      timeoutMs: 10_000,
      maxBytes: 1 << 20,
    });
    expect(requests.filter((line) => line.includes("task_state_duration"))).toHaveLength(1);
    const [point] = read.metrics.filter((p) => p.exponential !== undefined);
    expect(point.exponential).toMatchObject({
      count: 2,
      sum: 3.75,
      scale: 8,
      offset: 149,
      counts: [1, ...new Array<number>(149).fill(0), 1],
    });
    expect(histogramQuantile(point.exponential!, 0.5) / 1.5).toBeCloseTo(1, 2);
    expect({ ...point.attributes }).toEqual({ "task.prefix": "inc", "task.state": "executing" });
    expect({ ...point.resource }).toEqual({
      "service.name": "s",
      "service.instance.id": "w1",
      "taskjourney.role": "worker",
    });
  });

  it("a classic histogram (exported with explicit buckets): _bucket by le and _sum, into explicit buckets", async () => {
    const bucket = (le: string, count: string) => ({
      metric: { ...labels, __name__: "task_state_duration_seconds_bucket", le },
      value: [100, count],
    });
    const prometheus = await fake({
      'last_over_time(task_state_time_seconds_total{service_name="s"}[60s])': timeCounter,
      'last_over_time(task_state_duration_seconds_bucket{service_name="s"}[60s])': vector([
        bucket("+Inf", "3"),
        bucket("1", "1"),
        bucket("0.5", "1"),
        bucket("2.5", "3"),
      ]),
      'last_over_time(task_state_duration_seconds_sum{service_name="s"}[60s])': vector([
        { metric: { ...labels, __name__: "task_state_duration_seconds_sum" }, value: [100, "4.5"] },
      ]),
    });
    const read = await readBackends({
      prometheus,
      service: "s",
      sinceMs: 60_000,
      limit: 1,
      timeoutMs: 10_000,
      maxBytes: 1 << 20,
    });
    const [point] = read.metrics.filter((p) => p.explicit !== undefined);
    expect(point.explicit).toEqual({
      count: 3,
      sum: 4.5,
      min: NaN,
      max: NaN,
      bounds: [0.5, 1, 2.5],
      counts: [1, 0, 2, 0],
    });
    const data = reportDataFromTelemetry(
      { spans: [], metrics: read.metrics, summaries: [], files: [] },
      { generatedAt: "x" },
    );
    // Rank 2 of 3 in (1, 2.5], which holds 2: 1 + 1.5 × 1/2.
    expect(data.prefixes[0]).toMatchObject({ prefix: "inc", count: 3, p50: 1.75, stateSeconds: { executing: 4.5 } });
  });
});

describe("a native histogram's buckets as the query API writes them, back into OTel's exponential buckets", () => {
  it("gives the scale, the OTel indexes and the zero bucket the histogram had", () => {
    // OTel scale 3, buckets 5..7 (base^5, base^8] with counts 1, 0, 2, and 4 zeros: Prometheus indexes 6..8.
    const base = 2 ** (2 ** -3);
    const buckets: Array<[number, string, string, string]> = [
      [3, "-0", "0", "4"],
      [0, String(base ** 5), String(base ** 6), "1"],
      [0, String(base ** 7), String(base ** 8), "2"],
    ];
    const h = nativeToExponential({ count: "7", sum: "9.5", buckets })!;
    expect(h).toEqual({ count: 7, sum: 9.5, min: NaN, max: NaN, scale: 3, zeroCount: 4, offset: 5, counts: [1, 0, 2] });
    expect(histogramQuantile(h, 1)).toBe(2 ** (7.5 / 8));
  });

  it("refuses buckets of mixed widths (not an exponential layout)", () => {
    expect(
      nativeToExponential({
        count: "2",
        sum: "3",
        buckets: [
          [0, "1", "2", "1"],
          [0, "2", "3", "1"],
        ],
      }),
    ).toBeUndefined();
  });
});

describe("a backend that cannot answer as its API does: an error naming the URL and what went wrong", () => {
  const bounds = { timeoutMs: 2_000, maxBytes: 1024 };

  it("connection refused", async () => {
    const url = await serve(() => {});
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const result = await cli("explain", "k", "--jaeger", url);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `taskjourney: Jaeger at ${url}/api/v3/services: connection refused (is it running, on that port?)\n`,
    );
  });

  it("a server that never answers: cut off at the timeout", async () => {
    const url = await serve(() => {}); // never responds
    await expect(requestJson("Prometheus", url, { ...bounds, timeoutMs: 300 })).rejects.toThrow(
      `Prometheus at ${url}: no whole answer within 0.3 s (the --timeout)`,
    );
  });

  it("a server that drips its answer: cut off at the timeout too", async () => {
    const url = await serve((_request, _url, _body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write("[");
      const timer = setInterval(() => response.write(" "), 50);
      response.on("close", () => clearInterval(timer));
    });
    await expect(requestJson("Jaeger", url, { ...bounds, maxBytes: 1 << 20, timeoutMs: 300 })).rejects.toThrow(
      `Jaeger at ${url}: no whole answer within 0.3 s (the --timeout)`,
    );
  });

  it("many requests, each within its timeout, cannot add up to a hang: all of them end by one deadline", async () => {
    // Five services, each answering after 150 ms: the 400 ms left for all of them cut the third.
    const slow = await serve((_request, url, _body, response) => {
      if (url.pathname === "/api/v3/services") return json(response, 200, '{"services":["a","b","c","d","e"]}');
      setTimeout(() => json(response, 404, fixture("jaeger-v3-none.json")), 150);
    });
    const reading = readBackends({
      jaeger: slow,
      sinceMs: 60_000,
      limit: 10,
      timeoutMs: 10_000,
      maxBytes: 1 << 20,
      deadline: Date.now() + 400,
    });
    await expect(reading).rejects.toThrow(
      "no whole answer by the end of the time all requests may take (10 × the --timeout of 10 s; ask for less: --service, --limit)",
    );
    expect(requests.filter((line) => line.startsWith("GET /api/v3/traces")).length).toBeLessThan(5);
  });

  it("an answer larger than the cap, with or without its length declared", async () => {
    const declared = await serve((_request, _url, _body, response) =>
      response
        .writeHead(200, { "content-type": "application/json", "content-length": "5002" })
        .end(JSON.stringify("x".repeat(5000))),
    );
    await expect(requestJson("Jaeger", declared, bounds)).rejects.toThrow(
      `Jaeger at ${declared}: the answer is 5002 bytes, more than 1024 bytes, the most read`,
    );
    const chunked = await serve((_request, _url, _body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify("x".repeat(5000)));
    });
    await expect(requestJson("Jaeger", chunked, bounds)).rejects.toThrow(
      `Jaeger at ${chunked}: the answer is more than 1024 bytes, the most read`,
    );
  });

  it("a page that is not JSON (Jaeger's UI placeholder): says what it began with", async () => {
    const jaeger = await serve(fakeJaeger);
    const result = await cli("explain", "k", "--jaeger", `${jaeger}/ui`);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `taskjourney: Jaeger at ${jaeger}/ui/api/v3/services: the answer is not JSON (text/html; charset=utf-8, beginning "<!DOCTYPE html>\\n<html></html>"): is the URL Jaeger's API?\n`,
    );
  });

  it("a 404 of a server that is not the API, and Prometheus' own error", async () => {
    const prometheus = await serve(fakePrometheus);
    const notFound = await cli("report", "--prometheus", `${prometheus}/x`);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toContain(
      `Prometheus at ${prometheus}/x/api/v1/query: HTTP 404 (not found: is the URL the API's base, and the right server?)`,
    );
    const refused = await cli("report", "--prometheus", prometheus, "--service", "other");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Prometheus at ${prometheus}/api/v1/query: HTTP 400`);
    expect(refused.stderr).toContain("parse error");
  });

  it("bad options are usage errors naming the option", async () => {
    for (const [args, message] of [
      [["explain", "k", "--jaeger", "ftp://x"], '--jaeger takes an http(s) URL, got "ftp://x" (ftp:)'],
      [["report", "--prometheus", "http://x", "--since", "0s"], "--since takes a time from 1s to 400d"],
      [["report", "--jaeger", "http://x", "--limit", "0"], "--limit takes a whole number from 1 to 100000"],
      [["explain", "k", "--prometheus", "http://x"], "explain reads spans: --jaeger <url>, not --prometheus"],
      [["report", "./otlp", "--since", "1h"], "--since is for --jaeger or --prometheus, and neither is given"],
    ] as const) {
      const result = await cli(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });
});
