/**
 * The package under test, imported by its own name so that package.json "exports" decides: by
 * default the built dist/ (what users run, and what `npm run bench` builds just before); with
 * NODE_OPTIONS=--conditions=taskjourney-source the TypeScript sources through tsx, e.g. while
 * profiling an edit without rebuilding (NODE_OPTIONS reaches the children bench/run.ts starts).
 * TASKJOURNEY_BENCH_DIST=<dir> loads another build (a directory holding index.js), e.g. to
 * compare two builds side by side. Types always come from src/.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

type Library = typeof import("../src/index.js");

const otherBuild = process.env.TASKJOURNEY_BENCH_DIST;
const fromOtherBuild = otherBuild !== undefined && otherBuild !== "";
const entry = fromOtherBuild ? resolve(otherBuild, "index.js") : import.meta.resolve("taskjourney");
const fromSource = !fromOtherBuild && entry.endsWith(".ts");

if (fromOtherBuild && !existsSync(entry))
  throw new Error(`bench: TASKJOURNEY_BENCH_DIST=${otherBuild} holds no index.js`);

async function load(): Promise<Library> {
  if (fromOtherBuild) return (await import(pathToFileURL(entry).href)) as Library;
  try {
    return await import("taskjourney");
  } catch (error) {
    if (!fromSource && (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") {
      throw new Error(
        "bench: dist/ is not built; run `npm run build` (npm run bench does) or set NODE_OPTIONS=--conditions=taskjourney-source",
        { cause: error },
      );
    }
    throw error;
  }
}

export const library: Library = await load();
export const source = fromSource ? "src/ (tsx)" : fromOtherBuild ? entry : "dist/";
