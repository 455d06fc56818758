/**
 * Runs the benchmarks: every `bench/*.bench.ts`, each in a child process of its own (so one
 * benchmark's JIT state and heap do not disturb another's), then prints one summary table of
 * medians and ratios.
 *
 *   npm run bench                    all of them but those run on request only (instructions, soak)
 *   npm run bench -- instructions    instructions per journey counted by valgrind (about 15 minutes)
 *   npm run bench -- core            only bench/core.bench.ts (names or parts of names)
 *   npm run bench -- core memory     several
 *   npm run bench -- --list          what there is
 *   npm run bench -- core --repeat=5 five processes each; the summary gives the median of their
 *                                    medians and the range (a shared machine varies a lot from one
 *                                    process to the next, far less within one)
 *   npm run bench -- core --cpu-time --interleaved   options passed on to each benchmark (harness.ts);
 *                                    names come first, options after (`--stimulus file` or `--stimulus=file`)
 *   npm run bench -- core --node=20,24.22.3   on each runtime in turn, then their figures side by side:
 *                                    a path to a node binary, "current" (this one), or an exact
 *                                    version installed from the npm registry (scripts/node-runtime.sh);
 *                                    a bare major picks the version CI uses (20 = the machine's)
 *
 * Children run as `node --expose-gc --import tsx <file>`; a bench file that uses ./harness.ts
 * reports its results through the file named by TASKJOURNEY_BENCH_REPORT. Unmet targets do not
 * fail the run (benchmarks are not tests); a crashing benchmark does.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatNs, median, ratioTarget, table, type SuiteResult } from "./harness.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, "..");

/** The order to run them in when all are asked for: the quick overhead benchmarks first. */
const PREFERRED_ORDER = ["core", "spans", "wrap", "scale", "cluster", "memory"];
/** Run only when named: they take long or need tools beyond Node (valgrind). */
const ON_REQUEST = ["instructions", "cluster-instructions", "parent-context", "soak"];

function discover(): string[] {
  const names = readdirSync(benchDir)
    .filter((file) => file.endsWith(".bench.ts"))
    .map((file) => file.slice(0, -".bench.ts".length));
  const rank = (name: string): number => {
    const index = PREFERRED_ORDER.indexOf(name);
    return index === -1 ? PREFERRED_ORDER.length - 1 : index;
  };
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const args = process.argv.slice(2);
// Names first, then options: everything from the first option on is an option or its value, so a
// benchmark's `--stimulus file` reaches it as written (its own parseArgs takes `--x=v` and `--x v`).
const firstFlag = args.findIndex((arg) => arg.startsWith("-"));
const wanted = firstFlag === -1 ? args : args.slice(0, firstFlag);
const flags = firstFlag === -1 ? [] : args.slice(firstFlag);
const available = discover();

if (flags.includes("--list") || flags.includes("-l")) {
  for (const name of available) console.log(name);
  process.exit(0);
}

const repeatFlag = flags.find((flag) => flag.startsWith("--repeat="));
const repeat = repeatFlag === undefined ? 1 : Number(repeatFlag.slice("--repeat=".length));
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error(`bench: --repeat takes a whole number of runs, got ${repeatFlag}`);
  process.exit(2);
}

// A name that is a benchmark's whole name means that one only ("cluster", not also "cluster-instructions").
const matches = (name: string, want: string): boolean =>
  name === want || (!available.includes(want) && name.includes(want));
const selected =
  wanted.length === 0
    ? available.filter((name) => !ON_REQUEST.includes(name))
    : available.filter((name) => wanted.some((want) => matches(name, want)));
const unknown = wanted.filter((want) => !available.some((name) => name === want || name.includes(want)));
if (unknown.length > 0) {
  console.error(
    `bench: no benchmark named ${unknown.map((name) => `"${name}"`).join(", ")}; there are: ${available.join(", ")}`,
  );
  process.exit(2);
}

/** The runtimes CI tests, by major: what a bare `--node=24` means. */
const CI_RUNTIMES: Record<string, string> = { "24": "24.22.3", "26": "26.12.1" };

interface Runtime {
  label: string;
  execPath: string;
}

function runtimeOf(spec: string): Runtime {
  if (spec === "current" || spec === process.versions.node || spec === process.versions.node.split(".")[0])
    return { label: `node ${process.version}`, execPath: process.execPath };
  let execPath = spec;
  if (/^\d+(\.\d+\.\d+)?$/.test(spec)) {
    const version = CI_RUNTIMES[spec] ?? spec;
    if (!/^\d+\.\d+\.\d+$/.test(version))
      throw new Error(`bench: --node=${spec}: no Node.js ${spec} here; give an exact version (e.g. 24.22.3) or a path`);
    execPath = join(
      execFileSync("bash", [join(root, "scripts/node-runtime.sh"), version], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      }).trim(),
      "node",
    );
  }
  const version = execFileSync(execPath, ["--version"], { encoding: "utf8" }).trim();
  return { label: `node ${version}`, execPath };
}

const nodeFlag = flags.find((flag) => flag.startsWith("--node="));
const runtimes: Runtime[] =
  nodeFlag === undefined
    ? [runtimeOf("current")]
    : nodeFlag
        .slice("--node=".length)
        .split(",")
        .filter((spec) => spec !== "")
        .map(runtimeOf);

const passthrough = flags.filter(
  (flag) => flag !== "--list" && flag !== "-l" && !flag.startsWith("--repeat=") && !flag.startsWith("--node="),
);
const scratch = mkdtempSync(join(tmpdir(), "taskjourney-bench-"));
/** Per runtime, per benchmark, one result per run. */
const byRuntime = new Map<string, Map<string, SuiteResult[]>>();
const failures: string[] = [];

for (const runtime of runtimes) {
  const results = new Map<string, SuiteResult[]>();
  byRuntime.set(runtime.label, results);
  for (const name of selected) {
    const file = join(benchDir, `${name}.bench.ts`);
    for (let run = 1; run <= repeat; run++) {
      const reportPath = join(scratch, `${name}-${runtimes.indexOf(runtime)}-${run}.json`);
      console.log(`\n### bench/${basename(file)} on ${runtime.label}${repeat > 1 ? ` (run ${run} of ${repeat})` : ""}`);
      const started = performance.now();
      const child = spawnSync(runtime.execPath, ["--expose-gc", "--import", "tsx", file, ...passthrough], {
        cwd: root,
        stdio: "inherit",
        // Processes a benchmark starts (the cluster's) run on the same node.
        env: {
          ...process.env,
          TASKJOURNEY_BENCH_REPORT: reportPath,
          PATH: `${dirname(runtime.execPath)}:${process.env.PATH ?? ""}`,
        },
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (child.status !== 0) {
        failures.push(`${name} on ${runtime.label} (${child.signal ?? `exit ${child.status}`})`);
        console.error(
          `bench/${basename(file)} failed after ${seconds} s: ${child.signal ?? `exit code ${child.status}`}`,
        );
      } else {
        console.log(`(bench/${basename(file)}: ${seconds} s)`);
      }
      if (existsSync(reportPath)) {
        const runs = results.get(name) ?? [];
        runs.push(JSON.parse(readFileSync(reportPath, "utf8")) as SuiteResult);
        results.set(name, runs);
      }
    }
  }
}
rmSync(scratch, { recursive: true, force: true });

/** "1.23 µs", or with several runs "1.23 µs (1.10–1.40)". */
function spread(values: number[], format: (value: number) => string): string {
  if (values.length === 1) return format(values[0]);
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

for (const [label, results] of byRuntime) {
  if (results.size === 0) continue;
  console.log(
    `\n==================== summary${runtimes.length > 1 ? ` on ${label}` : ""}${repeat > 1 ? `: median of ${repeat} runs (range)` : ""} ====================`,
  );
  const verdict = (met: boolean | undefined): string => (met === undefined ? "" : met ? "yes" : "NO");
  const caseRows: string[][] = [];
  const ratioRows: string[][] = [];
  const factRows: string[][] = [];
  for (const runs of results.values()) {
    const first = runs[0];
    for (const c of first.cases) {
      const medians = runs
        .map((run) => run.cases.find((other) => other.name === c.name)?.median)
        .filter((value) => value !== undefined);
      const value = median(medians);
      const met = c.maxNs === undefined ? undefined : value <= c.maxNs;
      caseRows.push([
        first.suite,
        c.name,
        spread(medians, formatNs),
        c.maxNs === undefined ? "" : `≤ ${formatNs(c.maxNs)}`,
        verdict(met),
      ]);
    }
    for (const r of first.ratios) {
      const values = runs
        .map((run) => run.ratios.find((other) => other.name === r.name)?.value)
        .filter((value) => value !== undefined);
      const value = median(values);
      const met =
        r.max === undefined && r.min === undefined
          ? undefined
          : (r.max === undefined || value <= r.max) && (r.min === undefined || value >= r.min);
      ratioRows.push([first.suite, r.name, spread(values, (v) => `${v.toFixed(2)}×`), ratioTarget(r), verdict(met)]);
    }
    for (const run of runs) {
      for (const [name, value] of Object.entries(run.facts ?? {})) {
        factRows.push([first.suite, runs.length > 1 ? `${name} (run ${runs.indexOf(run) + 1})` : name, String(value)]);
      }
    }
  }
  console.log(table(["suite", "case", "median/op", "target", "met"], caseRows, 2));
  if (ratioRows.length > 0) {
    console.log("");
    console.log(table(["suite", "ratio (of medians)", "value", "target", "met"], ratioRows, 2));
  }
  if (factRows.length > 0) {
    console.log("");
    console.log(table(["suite", "fact", "value"], factRows, 2));
  }
}
if (byRuntime.size > 1) sideBySide();

/** One row per case and ratio, one column per runtime (medians of the runs), and each against the first. */
function sideBySide(): void {
  const labels = [...byRuntime.keys()];
  const first = byRuntime.get(labels[0])!;
  const value = (label: string, suite: string, kind: "cases" | "ratios", name: string): number | undefined => {
    const runs = byRuntime.get(label)?.get(suite) ?? [];
    const values = runs.flatMap((run) =>
      kind === "cases"
        ? run.cases.filter((c) => c.name === name).map((c) => c.median)
        : run.ratios.filter((r) => r.name === name).map((r) => r.value),
    );
    return values.length === 0 ? undefined : median(values);
  };
  const rows = (kind: "cases" | "ratios", format: (v: number) => string): string[][] =>
    [...first].flatMap(([suite, runs]) =>
      (kind === "cases" ? runs[0].cases.map((c) => c.name) : runs[0].ratios.map((r) => r.name)).map((name) => {
        const values = labels.map((label) => value(label, suite, kind, name));
        const base = values[0];
        const against = values
          .slice(1)
          .map((v) => (v === undefined || base === undefined || base === 0 ? "" : `${(v / base).toFixed(2)}×`));
        return [suite, name, ...values.map((v) => (v === undefined ? "" : format(v))), ...against];
      }),
    );
  const versus = labels.slice(1).map((label) => `${label} / ${labels[0]}`);
  console.log(
    `\n==================== side by side${repeat > 1 ? `: medians of ${repeat} runs` : ""} ====================`,
  );
  console.log(table(["suite", "case", ...labels, ...versus], rows("cases", formatNs), 2));
  const ratioRows = rows("ratios", (v) => `${v.toFixed(2)}×`);
  if (ratioRows.length > 0) {
    console.log("");
    console.log(table(["suite", "ratio (of medians)", ...labels, ...versus], ratioRows, 2));
  }
}

if (failures.length > 0) {
  console.error(`\nbench: ${failures.length} benchmark run(s) failed: ${failures.join(", ")}`);
  process.exitCode = 1;
}
