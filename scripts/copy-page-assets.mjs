// Part of `npm run build`: tsc compiles TypeScript only, so the report page's script and style
// (src/report/page/, read by src/report/html.ts beside itself at run time) are copied into dist.
import { cpSync } from "node:fs";

cpSync("src/report/page", "dist/report/page", { recursive: true });
