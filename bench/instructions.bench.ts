/**
 * Instructions per journey, counted by valgrind, side by side with plain OpenTelemetry: the
 * steadier complement of the timed benchmarks on a shared machine, where medians of one case
 * move by half between runs while instruction counts repeat within about 1% on an otherwise idle
 * machine (V8's timers still fire by wall time, so heavy load beside it adds a few percent). It misses
 * what instructions do not show (cache misses, a slow clock instruction in a VM), so the timed
 * ratios remain the targets; this says whether a change did less work.
 *
 * Each case runs twice under `valgrind --tool=callgrind` with `node --predictable` (no
 * concurrent compiler or GC threads), with FEW and MANY journeys; the
 * difference of the two counts over the difference of the journeys cancels start-up and
 * warm-up (V8 is still tiering up well past 50,000 journeys with --predictable: FEW is 150,000
 * for the recording cases). Cases as in core.bench.ts and spans.bench.ts:
 *
 *   clock floor     the journey's clock reads alone
 *   journey         taskjourney's worker journey, sampling off
 *   plain metrics   the same journey recorded with histogram.record / counter.add
 *   spans, 100%     taskjourney's journey with every journey a span tree (BatchSpanProcessor)
 *   plain spans     the journey with one live span per state and activity
 *
 * Only on request (`npm run bench -- instructions`): it takes about a quarter of an hour. Needs valgrind
 * (Debian package valgrind); without it, says so and exits 0.
 */
import { spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { table } from "./harness.js";
import type { InstructionCase } from "./instructions-driver.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/**
 * The driver bundled to plain JavaScript beside its source (so its relative paths hold): run
 * through the tsx loader instead, counts of one case varied by a third from run to run.
 */
const driver = join(root, "bench", ".instructions-driver.mjs");

interface Plan {
  name: string;
  driverCase: InstructionCase;
  few: number;
  many: number;
}

const PLANS: Plan[] = [
  { name: "clock floor", driverCase: "clock-floor", few: 150_000, many: 250_000 },
  { name: "journey (taskjourney, sampling off)", driverCase: "journey", few: 150_000, many: 250_000 },
  { name: "journey (plain OpenTelemetry metrics)", driverCase: "plain-metrics", few: 150_000, many: 250_000 },
  { name: "journey, 100% span trees (taskjourney)", driverCase: "spans-all", few: 20_480, many: 40_960 },
  { name: "journey, live spans (plain OpenTelemetry)", driverCase: "plain-spans", few: 20_480, many: 40_960 },
];

function instructions(driverCase: InstructionCase, journeys: number): Promise<number> {
  const args = [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    "--callgrind-out-file=/dev/null",
    process.execPath,
    "--predictable",
    driver,
    driverCase,
    String(journeys),
  ];
  return new Promise((done, fail) => {
    let output = "";
    const child = spawn("valgrind", args, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("exit", (code) => {
      const collected = /Collected : (\d+)/.exec(output);
      if (code !== 0 || collected === null)
        fail(new Error(`valgrind ${driverCase} ${journeys} failed (exit ${code}):\n${output.slice(-2000)}`));
      else done(Number(collected[1]));
    });
  });
}

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("instructions: valgrind is not installed (Debian package valgrind); skipped");
  process.exit(0);
}

buildSync({
  entryPoints: [join(root, "bench", "instructions-driver.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  packages: "external",
  outfile: driver,
  logLevel: "error",
});
process.on("exit", () => rmSync(driver, { force: true }));

const perJourney = new Map<string, number>();
for (const plan of PLANS) {
  const started = performance.now();
  // The two counts of a case in parallel: each is single-threaded under valgrind.
  const [few, many] = await Promise.all([
    instructions(plan.driverCase, plan.few),
    instructions(plan.driverCase, plan.many),
  ]);
  const value = (many - few) / (plan.many - plan.few);
  perJourney.set(plan.name, value);
  console.log(
    `  ${plan.name}: ${Math.round(value).toLocaleString("en-US")} instructions per journey (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
}

const get = (name: string): number => perJourney.get(name)!;
const [floor, journey, plainMetrics, spansAll, plainSpans] = PLANS.map((plan) => get(plan.name));
console.log("");
console.log(
  table(
    ["case", "instructions per journey"],
    PLANS.map((plan) => [plan.name, Math.round(get(plan.name)).toLocaleString("en-US")]),
  ),
);
console.log("");
console.log(
  table(
    ["ratio (instructions)", "value", "timed target"],
    [
      ["journey / clock floor", `${(journey / floor).toFixed(2)}×`, "≤ 1.5×"],
      ["plain metrics journey / taskjourney journey", `${(plainMetrics / journey).toFixed(2)}×`, "≥ 5×"],
      ["taskjourney 100% spans / plain live spans", `${(spansAll / plainSpans).toFixed(2)}×`, "≤ 1×"],
    ],
  ),
);
console.log(
  `node ${process.version}, valgrind callgrind, node --predictable; counts include the clock's own instructions (a clock read in a VM costs more time than its instructions suggest)`,
);
