#!/usr/bin/env node
// `npm run demo [-- flags]`: builds the package, then runs the cluster demo on the build (its
// processes import taskjourney by name, which resolves to dist/). Asked only for its flags
// (--help, -h) it computes nothing, so it answers at once from the sources, through the
// `taskjourney-source` export condition, without building.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The commands `npm run demo` runs for `args`, in order: [command, args, extra environment]. */
export function demoPlan(args) {
  const demo = [process.execPath, ["--import", "tsx", "examples/cluster/main.ts", ...args]];
  if (args.includes("--help") || args.includes("-h")) {
    const NODE_OPTIONS = [process.env.NODE_OPTIONS, "--conditions=taskjourney-source"].filter(Boolean).join(" ");
    return [[...demo, { NODE_OPTIONS }]];
  }
  return [
    [process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], {}],
    [...demo, {}],
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  for (const [command, args, env] of demoPlan(process.argv.slice(2))) {
    const { status, error } = spawnSync(command, args, {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, ...env },
    });
    if (error !== undefined) throw error;
    if (status !== 0) process.exit(status ?? 1);
  }
}
