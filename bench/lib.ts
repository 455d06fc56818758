/**
 * The package under test. By default the built `dist/` (what users run, and what `npm run bench`
 * builds just before); TASKJOURNEY_BENCH_SOURCE=src loads the TypeScript sources through tsx
 * instead, e.g. while profiling an edit without rebuilding; TASKJOURNEY_BENCH_DIST=<dir> loads
 * another build (a directory holding index.js), e.g. to compare two builds side by side.
 * Types always come from src/.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

type Library = typeof import("../src/index.js");

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const fromSource = process.env.TASKJOURNEY_BENCH_SOURCE === "src";
const otherBuild = process.env.TASKJOURNEY_BENCH_DIST;
const fromOtherBuild = !fromSource && otherBuild !== undefined && otherBuild !== "";
const entry = fromSource ? join(root, "src", "index.ts") : fromOtherBuild ? resolve(otherBuild, "index.js") : join(root, "dist", "index.js");

if (fromOtherBuild) {
  if (!existsSync(entry)) throw new Error(`bench: TASKJOURNEY_BENCH_DIST=${otherBuild} holds no index.js`);
} else if (!fromSource) {
  if (!existsSync(entry)) {
    throw new Error("bench: dist/ is not built; run `npm run build` (npm run bench does) or set TASKJOURNEY_BENCH_SOURCE=src");
  }
  const built = statSync(entry).mtimeMs;
  if (newestMtime(join(root, "src")) > built) {
    console.warn("bench: warning: src/ is newer than dist/; run `npm run build` (npm run bench does) to measure the current code");
  }
}

function newestMtime(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export const library: Library = (await import(
  fromSource ? "../src/index.js" : fromOtherBuild ? pathToFileURL(entry).href : "../dist/index.js"
)) as Library;
export const source = fromSource ? "src/ (tsx)" : fromOtherBuild ? entry : "dist/";
