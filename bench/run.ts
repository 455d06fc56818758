/**
 * Runs the benchmarks: every `bench/*.bench.ts`, each in a child process of its own (so one
 * benchmark's JIT state and heap do not disturb another's), then prints one summary table of
 * medians and ratios.
 *
 *   npm run bench                    all of them
 *   npm run bench -- core            only bench/core.bench.ts (names or parts of names)
 *   npm run bench -- core memory     several
 *   npm run bench -- --list          what there is
 *   npm run bench -- core --cpu-time --interleaved   options passed on to each benchmark (see harness.ts)
 *
 * Children run as `node --expose-gc --import tsx <file>`; a bench file that uses ./harness.ts
 * reports its results through the file named by TASKJOURNEY_BENCH_REPORT. Unmet targets do not
 * fail the run (benchmarks are not tests); a crashing benchmark does.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatNs, ratioTarget, table, type SuiteResult } from "./harness.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, "..");

/** The order to run them in when all are asked for: the quick overhead benchmarks first. */
const PREFERRED_ORDER = ["core", "spans", "wrap", "cluster", "memory"];

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
const flags = args.filter((arg) => arg.startsWith("-"));
const wanted = args.filter((arg) => !arg.startsWith("-"));
const available = discover();

if (flags.includes("--list") || flags.includes("-l")) {
  for (const name of available) console.log(name);
  process.exit(0);
}

const selected = wanted.length === 0 ? available : available.filter((name) => wanted.some((want) => name === want || name.includes(want)));
const unknown = wanted.filter((want) => !available.some((name) => name === want || name.includes(want)));
if (unknown.length > 0) {
  console.error(`bench: no benchmark named ${unknown.map((name) => `"${name}"`).join(", ")}; there are: ${available.join(", ")}`);
  process.exit(2);
}

const passthrough = flags.filter((flag) => flag !== "--list" && flag !== "-l");
const scratch = mkdtempSync(join(tmpdir(), "taskjourney-bench-"));
const results: SuiteResult[] = [];
const failures: string[] = [];

for (const name of selected) {
  const file = join(benchDir, `${name}.bench.ts`);
  const reportPath = join(scratch, `${name}.json`);
  console.log(`\n### bench/${basename(file)}`);
  const started = performance.now();
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", file, ...passthrough], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, TASKJOURNEY_BENCH_REPORT: reportPath },
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (child.status !== 0) {
    failures.push(`${name} (${child.signal ?? `exit ${child.status}`})`);
    console.error(`bench/${basename(file)} failed after ${seconds} s: ${child.signal ?? `exit code ${child.status}`}`);
  } else {
    console.log(`(bench/${basename(file)}: ${seconds} s)`);
  }
  if (existsSync(reportPath)) results.push(JSON.parse(readFileSync(reportPath, "utf8")) as SuiteResult);
}
rmSync(scratch, { recursive: true, force: true });

if (results.length > 0) {
  console.log("\n==================== summary ====================");
  const verdict = (met: boolean | undefined): string => (met === undefined ? "" : met ? "yes" : "NO");
  const caseRows = results.flatMap((result) =>
    result.cases.map((c) => [result.suite, c.name, formatNs(c.median), c.maxNs === undefined ? "" : `≤ ${formatNs(c.maxNs)}`, verdict(c.met)]),
  );
  console.log(table(["suite", "case", "median/op", "target", "met"], caseRows, 2));
  const ratioRows = results.flatMap((result) =>
    result.ratios.map((r) => [
      result.suite,
      r.name,
      `${r.value.toFixed(2)}×`,
      ratioTarget(r),
      verdict(r.met),
    ]),
  );
  if (ratioRows.length > 0) {
    console.log("");
    console.log(table(["suite", "ratio (of medians)", "value", "target", "met"], ratioRows, 2));
  }
  const factRows = results.flatMap((result) => Object.entries(result.facts ?? {}).map(([name, value]) => [result.suite, name, String(value)]));
  if (factRows.length > 0) {
    console.log("");
    console.log(table(["suite", "fact", "value"], factRows, 2));
  }
}
if (failures.length > 0) {
  console.error(`\nbench: ${failures.length} benchmark(s) failed: ${failures.join(", ")}`);
  process.exitCode = 1;
}
