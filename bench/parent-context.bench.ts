/**
 * What src/otel/spans/context.ts's ParentContext saves over the API's own parent context, in
 * instructions counted by valgrind (steady on a shared machine, unlike timings). Each of
 * taskjourney's open spans is its own parent context (OpenSpan extends ParentContext); the
 * alternative is `trace.setSpan(ROOT_CONTEXT, span)` once per span that gets children. One
 * iteration is one parent and one child started under it, as a state span under its task span:
 *
 *   api    a child started under trace.setSpan(ROOT_CONTEXT, parent)
 *   ours   a child started under new ParentContext(parent)
 *
 * through a TracerProvider with no span processor, so that little but the context work differs.
 * Each case runs under `valgrind --tool=callgrind` with FEW and MANY iterations; the difference
 * over the difference of the iterations cancels start-up and warm-up.
 *
 *   npm run bench -- parent-context    (on request only; needs valgrind; 15 minutes on a loaded machine)
 */
import { spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT_CONTEXT, trace, type Context, type Span } from "@opentelemetry/api";
import { TracerProvider } from "@opentelemetry/sdk-trace";
import { ParentContext } from "../src/otel/spans/context.js";

const CASES = {
  api: (span: Span): Context => trace.setSpan(ROOT_CONTEXT, span),
  ours: (span: Span): Context => new ParentContext(span),
};
type Case = keyof typeof CASES;
const FEW = 100_000;
const MANY = 200_000;

/** The driver: `iterations` parents, each with one child under the case's parent context. */
function drive(name: Case, iterations: number): void {
  const tracer = new TracerProvider({ spanProcessors: [] }).getTracer("parent-context");
  const contextOf = CASES[name];
  const parent = tracer.startSpan("task");
  for (let i = 0; i < iterations; i++) tracer.startSpan("state", { startTime: [i, 0] }, contextOf(parent)).end([i, 1]);
  parent.end();
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const driver = join(root, "bench", ".parent-context-driver.mjs");

function instructions(name: Case, iterations: number): Promise<number> {
  const args = [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    "--callgrind-out-file=/dev/null",
    process.execPath,
    "--predictable",
    driver,
    "drive",
    name,
    String(iterations),
  ];
  return new Promise((done, fail) => {
    let output = "";
    const child = spawn("valgrind", args, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("exit", (code) => {
      const collected = /Collected : (\d+)/.exec(output);
      if (code !== 0 || collected === null)
        fail(new Error(`valgrind ${name} ${iterations} failed (exit ${code}):\n${output.slice(-2000)}`));
      else done(Number(collected[1]));
    });
  });
}

async function main(): Promise<void> {
  if (spawnSync("valgrind", ["--version"]).status !== 0) {
    console.log("parent-context: valgrind is not installed (Debian package valgrind); skipped");
    return;
  }
  // Bundled to plain JavaScript, as instructions.bench.ts does: through the tsx loader the counts vary.
  const { buildSync } = await import("esbuild");
  buildSync({
    entryPoints: [fileURLToPath(import.meta.url)],
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    outfile: driver,
    logLevel: "error",
  });
  try {
    const perIteration: Record<string, number> = {};
    for (const name of Object.keys(CASES) as Case[]) {
      const [few, many] = await Promise.all([instructions(name, FEW), instructions(name, MANY)]);
      perIteration[name] = (many - few) / (MANY - FEW);
      console.log(
        `  ${name}: ${Math.round(perIteration[name]).toLocaleString("en-US")} instructions per parent and child`,
      );
    }
    console.log(
      `  ParentContext saves ${Math.round(perIteration.api - perIteration.ours).toLocaleString("en-US")} instructions per parent (node ${process.version}, valgrind callgrind, node --predictable)`,
    );
  } finally {
    rmSync(driver, { force: true });
  }
}

if (process.argv[2] === "drive") drive(process.argv[3] as Case, Number(process.argv[4]));
else await main();
