/**
 * The configurations we ship for users (collector/docker-compose.yaml and what it mounts, the
 * Tempo variant, the agent + gateway pair, the Grafana provisioning and dashboard) are checked
 * here without Docker (no engine on our machines): YAML parsed, every referenced file present,
 * images pinned, and every collector / Jaeger / Prometheus configuration validated by the real
 * binaries the end-to-end suite installed (`otelcol-taskjourney validate`, `jaeger validate`,
 * `promtool check config`).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { backendsEnv, ROOT, run } from "./helpers.js";

const COLLECTOR = path.join(ROOT, "collector");

/** A YAML file as plain data (YAML 1.2 core schema; our files read the same under PyYAML's 1.1). */
function parseYaml(file: string): any {
  return parse(fs.readFileSync(file, "utf8"));
}

/** "host:port" or "scheme://host:port/path" → host. */
function hostOf(endpoint: string): string {
  return endpoint.includes("://") ? new URL(endpoint).hostname : endpoint.slice(0, endpoint.lastIndexOf(":"));
}

/** The bind mounts of a compose service: [source relative to the project dir, target]. */
function bindMounts(service: { volumes?: string[] }): [string, string][] {
  return (service.volumes ?? [])
    .filter((volume) => volume.startsWith("."))
    .map((volume) => volume.split(":").slice(0, 2) as [string, string]);
}

const COLLECTOR_CONFIGS = [
  "otelcol.yaml",
  "compose/otelcol.yaml",
  "tempo/otelcol.yaml",
  "agent-gateway/agent.yaml",
  "agent-gateway/gateway.yaml",
];
const JAEGER_CONFIGS = ["jaeger.yaml", "compose/jaeger.yaml"];
const PROMETHEUS_CONFIGS = ["prometheus.yml", "compose/prometheus.yml"];

describe("configurations for users", () => {
  it("docker-compose.yaml: four pinned services, every mounted file present, loopback ports", () => {
    const compose = parseYaml(path.join(COLLECTOR, "docker-compose.yaml"));
    const services = compose.services as Record<string, any>;
    expect(Object.keys(services).sort()).toEqual(["grafana", "jaeger", "otel-collector", "prometheus"]);
    // The builder manifest's release, the contrib image of the same release; Jaeger v2.13.0
    // is module v1.76.0, which backends.sh builds.
    const script = fs.readFileSync(path.join(COLLECTOR, "backends.sh"), "utf8");
    const otelcolVersion = /^OTELCOL_VERSION=v(\S+)/m.exec(script)![1];
    expect(/^JAEGER_VERSION=(\S+)/m.exec(script)![1]).toBe("v1.76.0");
    expect(services["otel-collector"].image).toBe(`otel/opentelemetry-collector-contrib:${otelcolVersion}`);
    expect(services.jaeger.image).toBe("jaegertracing/jaeger:2.13.0");
    expect(services.prometheus.image).toMatch(/^prom\/prometheus:v3\.\d+\.\d+$/);
    expect(services.grafana.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    expect(services.prometheus.command).toEqual(
      expect.arrayContaining(["--web.enable-remote-write-receiver", "--enable-feature=native-histograms"]),
    );

    for (const [name, service] of Object.entries(services)) {
      for (const [source] of bindMounts(service))
        expect(fs.existsSync(path.join(COLLECTOR, source)), `${name} mounts ${source}`).toBe(true);
      for (const port of service.ports ?? [])
        expect(String(port), `${name} publishes ${port}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      for (const dependency of service.depends_on ?? []) expect(Object.keys(services)).toContain(dependency);
      for (const volume of service.volumes ?? []) {
        if (!String(volume).startsWith("."))
          expect(Object.keys(compose.volumes ?? {})).toContain(String(volume).split(":")[0]);
      }
    }
    // The collector's config mount is the file the image is told to read.
    const collectorMounts = Object.fromEntries(
      bindMounts(services["otel-collector"]).map(([source, target]) => [target, source]),
    );
    const configPath = String(
      services["otel-collector"].command.find((arg: string) => arg.startsWith("--config=")).slice("--config=".length),
    );
    expect(collectorMounts[configPath]).toBe("./compose/otelcol.yaml");

    // Grafana: provisioned data sources and dashboard provider, mounted where Grafana reads them.
    const grafanaMounts = Object.fromEntries(bindMounts(services.grafana).map(([source, target]) => [target, source]));
    expect(grafanaMounts["/etc/grafana/provisioning/datasources"]).toBe("./grafana/provisioning/datasources");
    expect(grafanaMounts["/etc/grafana/provisioning/dashboards"]).toBe("./grafana/provisioning/dashboards");
    const provider = parseYaml(path.join(COLLECTOR, "grafana/provisioning/dashboards/dashboards.yaml")).providers[0];
    expect(grafanaMounts[provider.options.path]).toBe("./grafana/dashboards");
    const home = services.grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH as string;
    expect(fs.existsSync(path.join(COLLECTOR, "grafana/dashboards", path.relative(provider.options.path, home)))).toBe(
      true,
    );
  });

  it("the compose collector sends to compose services: Jaeger by OTLP, Prometheus by remote write only", () => {
    const compose = parseYaml(path.join(COLLECTOR, "docker-compose.yaml"));
    const config = parseYaml(path.join(COLLECTOR, "compose/otelcol.yaml"));
    expect(hostOf(config.exporters["otlp_grpc/jaeger"].endpoint)).toBe("jaeger");
    expect(config.exporters.prometheus_remote_write.endpoint).toBe("http://prometheus:9090/api/v1/write");
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(["jaeger", "prometheus"]));
    // Prometheus scrapes only the collector's own telemetry, never the :8889 exporter.
    const prometheus = parseYaml(path.join(COLLECTOR, "compose/prometheus.yml"));
    const targets = prometheus.scrape_configs.flatMap((job: any) => job.static_configs.flatMap((c: any) => c.targets));
    expect(targets).toEqual(["otel-collector:8888"]);
    expect(config.service.telemetry.metrics.readers[0].pull.exporter.prometheus.port).toBe(8888);
    // And the local backends' Prometheus likewise: the collector's own telemetry only.
    const local = parseYaml(path.join(COLLECTOR, "prometheus.yml"));
    expect(local.scrape_configs.flatMap((job: any) => job.static_configs.flatMap((c: any) => c.targets))).toEqual([
      "127.0.0.1:18888",
    ]);
  });

  it("the Tempo override and the ocb Dockerfile reference files that exist", () => {
    const override = parseYaml(path.join(COLLECTOR, "tempo/docker-compose.yaml"));
    expect(override.services.tempo.image).toMatch(/^grafana\/tempo:\d+\.\d+\.\d+$/);
    // Paths of an override file resolve against the first file's directory, collector/.
    for (const [name, service] of Object.entries(override.services as Record<string, any>)) {
      for (const [source] of bindMounts(service))
        expect(fs.existsSync(path.join(COLLECTOR, source)), `${name} mounts ${source}`).toBe(true);
    }
    const collectorConfig = parseYaml(path.join(COLLECTOR, "tempo/otelcol.yaml"));
    expect(collectorConfig.service.pipelines.traces.exporters).toEqual(["otlp_grpc/tempo"]);
    const tempo = parseYaml(path.join(COLLECTOR, "tempo/tempo.yaml"));
    expect(tempo.distributor.receivers.otlp.protocols.grpc.endpoint).toBe("0.0.0.0:4317");
    expect(tempo.server.http_listen_port).toBe(3200);
    const datasources = parseYaml(path.join(COLLECTOR, "tempo/grafana-datasources/datasources.yaml")).datasources;
    expect(datasources.map((d: any) => d.uid).sort()).toEqual(["jaeger", "prometheus", "tempo"]);

    const dockerfile = fs.readFileSync(path.join(COLLECTOR, "Dockerfile"), "utf8");
    for (const match of dockerfile.matchAll(/^COPY (?!--from)(\S+) /gm))
      expect(fs.existsSync(path.join(COLLECTOR, match[1])), `COPY ${match[1]}`).toBe(true);
    expect(dockerfile).toContain("go.opentelemetry.io/collector/cmd/builder@v0.161.0");
  });

  it("Grafana: provisioned data sources match the dashboard's data source variable", () => {
    const datasources = parseYaml(path.join(COLLECTOR, "grafana/provisioning/datasources/datasources.yaml"))
      .datasources as any[];
    expect(datasources.map((d) => `${d.type}:${d.uid}:${d.url}`).sort()).toEqual([
      "jaeger:jaeger:http://jaeger:16686",
      "prometheus:prometheus:http://prometheus:9090",
    ]);
    const dashboard = JSON.parse(fs.readFileSync(path.join(COLLECTOR, "grafana/dashboards/taskjourney.json"), "utf8"));
    expect(dashboard.uid).toBe("taskjourney");
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const variable = dashboard.templating.list.find((v: any) => v.name === "datasource");
    expect(variable.type).toBe("datasource");
    expect(variable.query).toBe("prometheus");
    expect(datasources.map((d) => d.uid)).toContain(variable.current.value);
    const ids = dashboard.panels.map((panel: any) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid, `${panel.title} ${target.refId}`).toBe("${datasource}");
    }
  });

  it("every collector configuration we ship validates with the built collector", async () => {
    const binary = path.join(backendsEnv().TASKJOURNEY_CACHE, "bin/otelcol-taskjourney");
    expect(fs.existsSync(binary), binary).toBe(true);
    for (const config of COLLECTOR_CONFIGS) {
      const result = await run(binary, ["validate", `--config=file:${path.join(COLLECTOR, config)}`], {
        timeoutMs: 60_000,
      });
      expect(result.code, `${config}: ${result.stderr.slice(-2000)}`).toBe(0);
    }
    // The agent needs the loadbalancing exporter, which builder-config.yaml includes for this.
    const components = await run(binary, ["components"], { timeoutMs: 60_000 });
    expect(components.stdout).toMatch(/name: load_balancing\b/);
    // validate does reject a bad configuration (a misspelt key).
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-e2e-")), "bad-otelcol.yaml");
    fs.writeFileSync(
      bad,
      "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpont: 127.0.0.1:4317\nexporters:\n  debug: {}\nservice:\n  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [debug]\n",
    );
    try {
      const result = await run(binary, ["validate", `--config=file:${bad}`], { timeoutMs: 60_000 });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("endpont");
    } finally {
      fs.rmSync(path.dirname(bad), { recursive: true, force: true });
    }
  });

  it("the Jaeger and Prometheus configurations validate with their binaries", async () => {
    const jaeger = path.join(backendsEnv().TASKJOURNEY_CACHE, "bin/jaeger");
    for (const config of JAEGER_CONFIGS) {
      const result = await run(jaeger, ["validate", `--config=file:${path.join(COLLECTOR, config)}`], {
        timeoutMs: 60_000,
      });
      expect(result.code, `${config}: ${result.stderr.slice(-2000)}`).toBe(0);
    }
    const which = await run("bash", ["-c", "command -v promtool || ls /usr/bin/promtool"], { timeoutMs: 10_000 });
    const promtool = which.stdout.trim();
    expect(promtool, "promtool (Debian's prometheus package) next to prometheus").not.toBe("");
    for (const config of PROMETHEUS_CONFIGS) {
      const result = await run(promtool, ["check", "config", path.join(COLLECTOR, config)], { timeoutMs: 60_000 });
      expect(result.code, `${config}: ${result.stdout}${result.stderr}`).toBe(0);
    }
  });
});
