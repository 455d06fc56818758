#!/usr/bin/env node
// The last step of `npm run build`: tsc writes dist/cli.js without its execute bit, so after any
// rebuild in a checkout `npx taskjourney` (which runs the linked bin directly) failed with
// "Permission denied". npm sets the bit when it installs a package, not when a checkout builds.
// Every file package.json's "bin" names gets it here. `node scripts/bin-executable.mjs [root]`.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Adds the execute bits (where read bits are) to every "bin" file of the package at `root`; returns them. */
export function makeBinsExecutable(root) {
  const { bin } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const files = typeof bin === "string" ? [bin] : Object.values(bin ?? {});
  return files.map((file) => {
    const target = path.join(root, file);
    const { mode } = fs.statSync(target); // missing: the build did not emit it, and says so
    fs.chmodSync(target, mode | ((mode & 0o444) >> 2));
    return target;
  });
}

if (import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  makeBinsExecutable(process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url)));
}
