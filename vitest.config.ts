import { defineConfig } from "vitest/config";

/**
 * Tests run against the sources, never a dist/ that may be missing or stale: where the examples
 * and benchmarks import the package by its own name ("taskjourney"), the `taskjourney-source`
 * export condition (package.json "exports") resolves it to src/. In this process through Vite's
 * conditions; in the processes tests start (the example cluster and its forked workers) through
 * NODE_OPTIONS, which they inherit.
 */
const CONDITION = "taskjourney-source";
const fromSource = {
  resolve: { conditions: [CONDITION] },
  ssr: { resolve: { conditions: [CONDITION] } },
};
const env = { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--conditions=${CONDITION}`].filter(Boolean).join(" ") };

export default defineConfig({
  test: {
    projects: [
      {
        ...fromSource,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/integration/**", "test/e2e/**", "test/examples/**"],
          // A bound, not a timing check: property tests of 200 seeded runs take ~5 s alone and 20 s on a
          // machine loaded by other work.
          testTimeout: 90_000,
          // The lenient-mode tests feed bad input on purpose, and with no diag logger taskjourney tells
          // each kind once on stderr (src/otel/warn.ts): OTEL_LOG_LEVEL=error keeps that out of the
          // output. test/otel/warn.test.ts sets its own.
          env: { ...env, OTEL_LOG_LEVEL: "error" },
        },
      },
      {
        ...fromSource,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts", "test/examples/**/*.test.ts"],
          testTimeout: 90_000,
          hookTimeout: 90_000,
          env,
        },
      },
      {
        ...fromSource,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          // Installs (cached; a cold build takes 10–30 min, allowed up to 45) and starts the real
          // backends, provides their addresses (inject("backends")) and stops them at the end.
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          env,
        },
      },
    ],
  },
});
