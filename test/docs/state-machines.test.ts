/** docs/state-machines.md's transition tables are the recorder's: generated from src/model/states.ts, never edited by hand. */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { STATE_STRIDE } from "../../src/model/machine.js";
import { PRESETS, SCHEDULER_TRANSITIONS, transitionTableMarkdown, WORKER_TRANSITIONS } from "../../src/model/states.js";

const PAGE = fs.readFileSync(fileURLToPath(new URL("../../docs/state-machines.md", import.meta.url)), "utf8");

function section(role: string): string {
  const open = `<!-- transitions:${role} -->\n`;
  const start = PAGE.indexOf(open);
  const end = PAGE.indexOf(`\n<!-- /transitions:${role} -->`);
  expect(start, `docs/state-machines.md has the ${role} table`).toBeGreaterThan(-1);
  return PAGE.slice(start + open.length, end);
}

describe("docs/state-machines.md's transition tables", () => {
  for (const role of ["worker", "scheduler"] as const) {
    it(`${role}: as generated (npx tsx scripts/transition-tables.ts), and every row a move the recorder allows`, () => {
      expect(section(role)).toBe(transitionTableMarkdown(role));
      const machine = PRESETS[role];
      const pairs = role === "worker" ? WORKER_TRANSITIONS : SCHEDULER_TRANSITIONS;
      let listed = 0;
      for (const line of section(role).split("\n").slice(2)) {
        const [from, to] = line
          .split("|")
          .slice(1, 3)
          .map((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]));
        for (const target of to) {
          expect(machine.table[machine.id(from[0]) * STATE_STRIDE + machine.id(target)], `${from[0]} → ${target}`).toBe(
            1,
          );
          listed++;
        }
      }
      expect(listed).toBe(pairs.length);
      expect(machine.table.reduce((sum, allowed) => sum + allowed, 0)).toBe(pairs.length);
    });
  }
});
