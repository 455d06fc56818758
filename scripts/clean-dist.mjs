#!/usr/bin/env node
// Empties dist/ before `npm run build`: tsc writes over what it emits and never deletes, so a source
// file removed or renamed would leave its old module in dist/, and `npm pack` ships dist/ whole.
import fs from "node:fs";

fs.rmSync(new URL("../dist/", import.meta.url), { recursive: true, force: true });
