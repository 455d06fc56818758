/**
 * Writes each preset's transition table into docs/state-machines.md, between the
 * `<!-- transitions:<role> -->` and `<!-- /transitions:<role> -->` markers, from the table the
 * recorder checks. Run it after changing src/model/states.ts: `npx tsx scripts/transition-tables.ts`.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { transitionTableMarkdown } from "../src/model/states.js";

const PAGE = fileURLToPath(new URL("../docs/state-machines.md", import.meta.url));
let text = fs.readFileSync(PAGE, "utf8");
for (const role of ["worker", "scheduler"] as const) {
  const open = `<!-- transitions:${role} -->`;
  const close = `<!-- /transitions:${role} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start === -1 || end < start) throw new Error(`docs/state-machines.md has no ${open} … ${close} section`);
  text = `${text.slice(0, start + open.length)}\n${transitionTableMarkdown(role)}\n${text.slice(end)}`;
}
fs.writeFileSync(PAGE, text);
