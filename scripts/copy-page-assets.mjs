// Part of `npm run build`: tsc compiles TypeScript only, so the report page's script and style
// (src/report/page/, read by src/report/html.ts beside itself at run time) are copied into dist,
// and so is ECharts (echarts.min.js, its version, its Apache-2.0 LICENSE and NOTICE): the package
// ships the one file of it the page inlines, so that an installed `taskjourney report` writes a
// page that draws its charts offline, without a 50 MB runtime dependency or a CDN.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

cpSync("src/report/page", "dist/report/page", { recursive: true });

const require = createRequire(import.meta.url);
const echarts = dirname(require.resolve("echarts/package.json"));
const target = "dist/report/page";
cpSync(join(echarts, "dist", "echarts.min.js"), join(target, "echarts.min.js"));
cpSync(join(echarts, "LICENSE"), join(target, "echarts.LICENSE"));
cpSync(join(echarts, "NOTICE"), join(target, "echarts.NOTICE"));
const { version } = JSON.parse(readFileSync(join(echarts, "package.json"), "utf8"));
writeFileSync(join(target, "echarts.version"), `${version}\n`);
