#!/usr/bin/env node
// Writes src/version.ts from package.json's version, so the version is kept in one place. Run by
// `npm run build` and by npm's `version` lifecycle (`npm version patch` bumps, rewrites, stages).
// The file is committed too, so that tests and tsx run from a fresh checkout without a build, and
// test/version.test.ts fails if the two ever differ.
import fs from "node:fs";

const root = new URL("../", import.meta.url);
const { version } = JSON.parse(fs.readFileSync(new URL("package.json", root), "utf8"));
const target = new URL("src/version.ts", root);
const text = `// Generated from package.json by scripts/write-version.mjs: edit the version there.\nexport const VERSION = ${JSON.stringify(version)};\n`;
// Unchanged content is not rewritten: a build does not touch the file's mtime for nothing.
if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== text) fs.writeFileSync(target, text);
