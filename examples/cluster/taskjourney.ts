/**
 * taskjourney as the cluster's processes load it: the built package in dist/ — what users run,
 * and what `npm run demo` builds just before — when it is there and no source file is newer;
 * otherwise the TypeScript sources through tsx (while editing src/ without rebuilding).
 * TASKJOURNEY_SOURCE=src or =dist forces one. Types always come from src/.
 *
 * In your own code this is simply `import { … } from "taskjourney"` and `"taskjourney/sdk"`.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

type Library = typeof import("../../src/index.js");
type Sdk = typeof import("../../src/sdk.js");

const src = fileURLToPath(new URL("../../src/", import.meta.url));
const distIndex = new URL("../../dist/index.js", import.meta.url);
const distSdk = new URL("../../dist/sdk.js", import.meta.url);

function newestMtime(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = `${directory}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function useDist(): boolean {
  const forced = process.env.TASKJOURNEY_SOURCE;
  if (forced === "src") return false;
  const built = existsSync(distIndex) && existsSync(distSdk);
  if (forced === "dist") {
    if (!built) throw new Error("TASKJOURNEY_SOURCE=dist but dist/ is not built: run `npm run build`");
    return true;
  }
  return built && newestMtime(src) <= Math.min(statSync(distIndex).mtimeMs, statSync(distSdk).mtimeMs);
}

const fromDist = useDist();

/** The public API (`taskjourney`). */
export const taskjourney = (await import(fromDist ? distIndex.href : "../../src/index.js")) as Library;
/** The SDK setup (`taskjourney/sdk`). */
export const sdk = (await import(fromDist ? distSdk.href : "../../src/sdk.js")) as Sdk;
/** Where it was loaded from: "dist" or "src". */
export const source: "dist" | "src" = fromDist ? "dist" : "src";
