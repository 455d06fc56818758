/**
 * The Grafana dashboard (collector/grafana/dashboards/taskjourney.json) as the end-to-end tests
 * run it: its panels' PromQL with the variables' defaults substituted, as Grafana would send it
 * on first load, and each rate panel turned into the totals it plots over time.
 */
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers.js";

export const DASHBOARD = path.join(ROOT, "collector/grafana/dashboards/taskjourney.json");

export interface Target {
  expr: string;
  refId: string;
  instant?: boolean;
  datasource?: { uid: string };
}
export interface Panel {
  id: number;
  title: string;
  type: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
export interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
  current?: { value: string | string[] };
}
export interface Dashboard {
  panels: Panel[];
  templating: { list: Variable[] };
}

export function loadDashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(DASHBOARD, "utf8")) as Dashboard;
}

/** Panels with queries (rows have none). */
export function queryPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.filter((panel) => panel.type !== "row");
}

/**
 * What Grafana substitutes on first load: each query variable's saved default (its "All" as its
 * allValue, `.*` here), then the given overrides; Grafana's own $__rate_interval, $__range and
 * $__interval as fixed windows.
 */
export function defaultValues(dashboard: Dashboard, overrides: Record<string, string> = {}): Record<string, string> {
  const values: Record<string, string> = { __rate_interval: "1m", __range: "1h", __interval: "15s" };
  for (const variable of dashboard.templating.list) {
    if (variable.type !== "query") continue;
    const current = variable.current?.value;
    const first = Array.isArray(current) ? current[0] : current;
    values[variable.name] = first === "$__all" ? (variable.allValue ?? ".*") : String(first);
  }
  return { ...values, ...overrides };
}

/** `text` with `$name` and `${name}` (and `${name:format}`) replaced from `values`; throws on an unknown one. */
export function substitute(text: string, values: Record<string, string>): string {
  return text.replace(
    /\$\{(\w+)(?::\w+)?\}|\$(\w+)/g,
    (whole, braced: string | undefined, plain: string | undefined) => {
      const name = braced ?? plain!;
      if (!(name in values)) throw new Error(`unknown variable ${whole} in ${text}`);
      return values[name];
    },
  );
}

/**
 * The totals a rate panel plots: `rate(counter{…}[$__rate_interval])` becomes the counter's
 * last value of each series (`last_over_time(counter{…}[window])`), aggregated exactly as the
 * panel aggregates its rates. The rates integrated over time are the counters' increases, and
 * each process's counter is cumulative from its start (the test exports cumulative temporality),
 * so these are the totals the panel's lines add up to over the processes' lives, with the
 * panel's selectors and grouping. Undefined for a panel that plots no rate.
 */
export function totalsQuery(expr: string, window = "1h"): string | undefined {
  if (!/\brate\(/.test(expr) || /histogram_quantile/.test(expr)) return undefined;
  return expr.replace(/\brate\(([a-z_:][\w:]*\{[^}]*\})\[\$__rate_interval\]\)/g, `last_over_time($1[${window}])`);
}
