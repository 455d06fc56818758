/**
 * The cost guard: what one journey costs, counted deterministically and held against the
 * committed baseline (bench/guard/baseline.json). CI runs it (`.ci/run`); it fails when a journey
 * grows more than 3% in instructions or bytes allocated, unless the same commit moves the
 * baseline and says why in it.
 *
 *   npx tsx bench/guard/check.ts            count and compare (exit 1 past the tolerance)
 *   npx tsx bench/guard/check.ts --update --why "what changed and why the cost moved"
 *                                           count and write the baseline
 *   npx tsx bench/guard/check.ts --bytes-only   skip valgrind (seconds instead of minutes)
 *   npx tsx bench/guard/check.ts --allocations  where each case's bytes go, by allocating function
 *
 * Instructions: valgrind's callgrind counts the `journey` and `traced` cases (bench/guard/driver.ts)
 * run with FEW and MANY journeys under `node --predictable` (no concurrent compiler or GC threads),
 * on the driver's fixed clock (`--fixed-clock`: readings that do not depend on how fast the machine
 * runs, see the driver); (MANY − FEW) / (MANY − FEW journeys) cancels start-up and warm-up. Bytes:
 * each case runs natively, on the real clock, with a young generation too large to be collected in
 * the measured window, and the heap's used size before and after, over FEW and MANY journeys, gives
 * bytes per journey the same way. Both repeat for the same code and runtime, whatever the load.
 * A Map's table of ~230 KB, reallocated by a rehash every ~4,200 journeys, falls 23 or 24 times in
 * the 100,000 journeys between FEW and MANY: a change that shifts its phase moves bytes by ±2.3.
 *
 * The baseline names the Node.js version it was counted on: on another major version the figures
 * are printed and not judged (another V8 compiles another program).
 */
import { bundleDriver, runCaptured, type Captured } from "../counting.js";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { compareCosts, GUARD_CASES, type Baseline, type Costs, type GuardCase } from "./compare.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BASELINE = path.join(ROOT, "bench/guard/baseline.json");
/** The driver bundled with taskjourney's sources beside the benchmarks (so its relative imports hold). */
const DRIVER = path.join(ROOT, "bench/.guard-driver.mjs");

/** Journeys of the two instruction counts: V8 (--predictable) has tiered the journey up well before FEW. */
const INSTRUCTIONS = { few: 100_000, many: 200_000 };
/** The cases counted in instructions as well as bytes. */
const COUNTED: readonly GuardCase[] = ["journey", "traced"];
/**
 * 100,000 journeys between the two: a Map's rehash (~230 KB every ~4,200 journeys, ~55 B a journey)
 * one more or less in the difference is then ±2.3 B. Over 20,000 (until 2026-12-05) it was ±11.5 B,
 * and which of the two a count read moved with the driver's code, not the journey's.
 */
const BYTES = { few: 20_000, many: 120_000 };
/** Young generation (MiB) for the byte counts: MANY wrapped journeys allocate ~80 MB, the warm-up ~100 MB. */
const SEMI_SPACE_MIB = 512;

const { values } = parseArgs({
  options: {
    update: { type: "boolean", default: false },
    why: { type: "string" },
    "bytes-only": { type: "boolean", default: false },
    allocations: { type: "boolean", default: false },
  },
});
if (values.update && (values.why ?? "").trim() === "") {
  console.error('check: --update needs --why "…": the baseline says why the cost moved');
  process.exit(2);
}

function bundle(): void {
  bundleDriver(path.join(ROOT, "bench/guard/driver.ts"), DRIVER);
}

function run(command: string, args: string[]): Promise<Captured> {
  return runCaptured(command, args, ROOT);
}

async function instructions(name: GuardCase, journeys: number): Promise<number> {
  const { code, stderr } = await run("valgrind", [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    "--callgrind-out-file=/dev/null",
    process.execPath,
    "--predictable",
    DRIVER,
    name,
    String(journeys),
    "--fixed-clock",
  ]);
  const collected = /Collected : (\d+)/.exec(stderr);
  if (code !== 0 || collected === null)
    throw new Error(`valgrind (${name}, ${journeys} journeys) failed, exit ${code}:\n${stderr.slice(-2000)}`);
  return Number(collected[1]);
}

async function bytes(name: GuardCase, journeys: number): Promise<number> {
  const { code, stdout, stderr } = await run(process.execPath, [
    "--predictable",
    "--expose-gc",
    `--min-semi-space-size=${SEMI_SPACE_MIB}`,
    `--max-semi-space-size=${SEMI_SPACE_MIB}`,
    DRIVER,
    name,
    String(journeys),
    "--bytes",
  ]);
  if (code !== 0) throw new Error(`driver ${name} ${journeys} --bytes failed, exit ${code}:\n${stderr.slice(-2000)}`);
  const result = JSON.parse(stdout.trim().split("\n").pop()!) as { bytes: number; collections: number };
  if (result.collections !== 0)
    throw new Error(
      `driver ${name} ${journeys} --bytes: ${result.collections} collections ran while counting; raise SEMI_SPACE_MIB`,
    );
  return result.bytes;
}

async function count(): Promise<Costs> {
  const started = performance.now();
  const costs: Costs = { node: process.version, cases: {} };
  for (const name of GUARD_CASES) {
    const [few, many] = [await bytes(name, BYTES.few), await bytes(name, BYTES.many)];
    costs.cases[name] = { bytes: Math.round((many - few) / (BYTES.many - BYTES.few)) };
  }
  console.log(`bytes per journey counted in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (!values["bytes-only"]) {
    const begun = performance.now();
    // The counts in parallel: each is single-threaded under valgrind, and on the fixed clock it
    // does not depend on how fast it runs.
    const counts = await Promise.all(
      COUNTED.map((name) => Promise.all([instructions(name, INSTRUCTIONS.few), instructions(name, INSTRUCTIONS.many)])),
    );
    COUNTED.forEach((name, index) => {
      const [few, many] = counts[index];
      costs.cases[name].instructions = Math.round((many - few) / (INSTRUCTIONS.many - INSTRUCTIONS.few));
    });
    console.log(`instructions per journey counted in ${((performance.now() - begun) / 1000).toFixed(0)} s`);
  }
  return costs;
}

bundle();
process.on("exit", () => fs.rmSync(DRIVER, { force: true }));
if (values.allocations) {
  for (const name of GUARD_CASES) {
    const { stdout, stderr } = await run(process.execPath, ["--predictable", DRIVER, name, "100000", "--allocations"]);
    console.log(`${name}: ${stdout.trim() || stderr.trim()}\n`);
  }
  process.exit(0);
}
if (!values["bytes-only"] && (await run("valgrind", ["--version"]).catch(() => ({ code: 1 }))).code !== 0) {
  console.error("check: valgrind is not installed (Debian package valgrind); --bytes-only counts without it");
  process.exit(2);
}
const measured = await count();
const baseline: Baseline = fs.existsSync(BASELINE)
  ? (JSON.parse(fs.readFileSync(BASELINE, "utf8")) as Baseline)
  : { node: measured.node, why: "", cases: {} };
if (values.update) {
  const next: Baseline = { ...measured, why: values.why!.trim() };
  if (values["bytes-only"])
    for (const name of GUARD_CASES)
      if (baseline.cases[name]?.instructions !== undefined)
        next.cases[name].instructions = baseline.cases[name].instructions;
  fs.writeFileSync(BASELINE, `${JSON.stringify(next, null, 2)}\n`);
  console.log(`wrote ${path.relative(ROOT, BASELINE)}`);
}
const verdict = compareCosts(
  values.update ? (JSON.parse(fs.readFileSync(BASELINE, "utf8")) as Baseline) : baseline,
  measured,
);
console.log(verdict.table);
for (const line of verdict.notes) console.log(line);
process.exitCode = verdict.ok ? 0 : 1;
