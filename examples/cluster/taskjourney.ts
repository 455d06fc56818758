/**
 * taskjourney as the cluster's processes load it: the package imports itself by name, so
 * package.json "exports" decides. By default that is the built dist/ — what users run, and what
 * `npm run demo` builds just before. With the `taskjourney-source` export condition it is the
 * TypeScript sources through tsx, e.g. while editing src/ without rebuilding:
 *
 *   NODE_OPTIONS=--conditions=taskjourney-source npx tsx examples/cluster/main.ts
 *
 * (NODE_OPTIONS rather than a flag: the forked workers inherit the environment, not this
 * process's flags, and must load the same copy.) The test suites set it in vitest.config.ts.
 *
 * In your own code this is simply `import { … } from "taskjourney"` and `"taskjourney/sdk"`.
 */

/** Where "taskjourney" resolves in this process: the built dist/ or the sources. */
export const source: "dist" | "src" = import.meta.resolve("taskjourney").endsWith(".ts") ? "src" : "dist";

async function load<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (source === "dist" && (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") {
      throw new Error(
        "taskjourney: dist/ is not built: run `npm run build` (npm run demo does), or load the sources with NODE_OPTIONS=--conditions=taskjourney-source",
        { cause: error },
      );
    }
    throw error;
  }
}

/** The public API (`taskjourney`). */
export const taskjourney = await load(() => import("taskjourney"));
/** The SDK setup (`taskjourney/sdk`). */
export const sdk = await load(() => import("taskjourney/sdk"));
