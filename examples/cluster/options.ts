/** The command line of the cluster demo. */
import { parseArgs } from "node:util";
import type { ClusterOptions } from "./cluster.js";
import { WORKLOADS, type Workload } from "./workloads.js";

export const HELP = `Usage: npm run demo -- [options]
  (in a checkout of taskjourney: builds the package, then runs the demo cluster on it)

  --workload NAME      reduction | shuffle | skewed             (default reduction)
  --size N             about N tasks                             (default 2000)
  --length N           float64 elements per array (reduction 8192, shuffle 4096)
  --workers N          worker processes                          (default 3)
  --threads N          threads per worker (piscina pool)          (default 2)
  --memory-limit SIZE  per worker before spilling, e.g. 256MiB, 2MB, 500k, inf
                       (default 512KiB: small on purpose, so that the demo spills)
  --out DIR            output directory                          (default ./taskjourney-out)
  --no-telemetry       run without taskjourney (for comparison)
  --trace-ratio R      fraction of task journeys traced          (default 0.01)
                       (slow and failed ones are kept too; "off": no traces, metrics only)
  --seed N             workload seed                             (default 1)
  --fail-every N       every Nth task raises; it and its dependents err, the rest
                       is computed (the result is then none)     (default: none fail)
  --slow-every N       every Nth task holds its thread --slow-seconds first
                                                                 (default: none slow)
  --slow-seconds S     how long a slow task waits                (default 2)
  --gc-every N         every Nth task has its worker force a major GC as it starts
                                                                 (default: none)
  --block-every N      every Nth task has its worker block its event loop 60 ms
                       as it starts                              (default: none)
  --warmup N           rounds of the workload (keys of their own) computed before
                       the measured one, on the same processes   (default 0)
  --verbose            log scheduling decisions and worker events
  --quiet              no progress bar and no report on stdout
  --json               print summary.json to stdout at the end
`;

/** "256MiB", "2MB", "500k", "1e6", "inf" → bytes. */
export function parseSize(text: string): number {
  const match = /^\s*([\d.e+]+|inf(?:inity)?)\s*([kmg]?)(i?)b?\s*$/i.exec(text);
  if (match === null) throw new Error(`--memory-limit: cannot read "${text}" (try 256MiB, 2MB, 500k)`);
  if (/^inf/i.test(match[1])) return Infinity;
  const base = match[3] === "" && match[2] !== "" ? 1000 : 1024;
  const power = { "": 0, k: 1, m: 2, g: 3 }[match[2].toLowerCase() as "" | "k" | "m" | "g"];
  const bytes = Number(match[1]) * (match[2] === "" ? 1 : base ** power);
  if (!Number.isFinite(bytes) || bytes < 0) throw new Error(`--memory-limit: "${text}" is not a size`);
  return Math.floor(bytes);
}

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${text}"`);
  return value;
}

function count(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name} must be a whole number (0 or more), got "${text}"`);
  return value;
}

export function parseOptions(argv: string[]): (ClusterOptions & { json: boolean; quiet: boolean }) | "help" {
  const { values } = parseArgs({
    args: argv,
    allowNegative: true,
    options: {
      workload: { type: "string", default: "reduction" },
      size: { type: "string", default: "2000" },
      length: { type: "string" },
      workers: { type: "string", default: "3" },
      threads: { type: "string", default: "2" },
      "memory-limit": { type: "string", default: "512KiB" },
      out: { type: "string", default: "taskjourney-out" },
      telemetry: { type: "boolean", default: true },
      "trace-ratio": { type: "string", default: "0.01" },
      seed: { type: "string", default: "1" },
      "fail-every": { type: "string" },
      "slow-every": { type: "string" },
      "slow-seconds": { type: "string", default: "2" },
      "gc-every": { type: "string" },
      "block-every": { type: "string" },
      warmup: { type: "string", default: "0" },
      verbose: { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  if (!(WORKLOADS as readonly string[]).includes(values.workload)) {
    throw new Error(`--workload must be one of ${WORKLOADS.join(", ")}, got "${values.workload}"`);
  }
  const traceRatio = values["trace-ratio"] === "off" ? "off" : Number(values["trace-ratio"]);
  if (traceRatio !== "off" && !(traceRatio >= 0 && traceRatio <= 1))
    throw new Error(`--trace-ratio must be in [0, 1] or "off", got "${values["trace-ratio"]}"`);
  const slowSeconds = Number(values["slow-seconds"]);
  if (!(slowSeconds >= 0 && slowSeconds <= 3600))
    throw new Error(`--slow-seconds must be a number of seconds from 0 to 3600, got "${values["slow-seconds"]}"`);
  return {
    workload: values.workload as Workload,
    size: positive("size", values.size),
    length: values.length === undefined ? undefined : positive("length", values.length),
    workers: positive("workers", values.workers),
    threads: positive("threads", values.threads),
    memoryLimit: parseSize(values["memory-limit"]),
    outDir: values.out,
    telemetry: values.telemetry,
    traceRatio,
    seed: Number(values.seed),
    failEvery: values["fail-every"] === undefined ? undefined : positive("fail-every", values["fail-every"]),
    slowEvery: values["slow-every"] === undefined ? undefined : positive("slow-every", values["slow-every"]),
    slowSeconds,
    gcEvery: values["gc-every"] === undefined ? undefined : positive("gc-every", values["gc-every"]),
    blockEvery: values["block-every"] === undefined ? undefined : positive("block-every", values["block-every"]),
    warmup: count("warmup", values.warmup),
    verbose: values.verbose,
    progress: !values.quiet,
    quiet: values.quiet,
    json: values.json,
  };
}
