/** Reading the manual's pages (README.md and docs/*.md) for the tests that hold them to the code. */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A page of the repository by its path from the root, e.g. "docs/metrics.md". */
export function page(path: string): string {
  return fs.readFileSync(`${ROOT}${path}`, "utf8");
}

/** The body rows of the table of `text` (the page `name`) whose header row is `header`, as trimmed cells. */
export function table(text: string, name: string, header: string): string[][] {
  const lines = text.split("\n");
  const start = lines.indexOf(header);
  expect(start, `${name} has a table headed ${header}`).toBeGreaterThan(-1);
  expect(lines[start + 1], "a separator row follows the header").toMatch(/^\|(-+\|)+$/);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) {
      // GitHub takes a line right under a table into it as a row: a blank line must end the table.
      expect(line, `the table headed ${header} ends with a blank line`).toBe("");
      break;
    }
    rows.push(
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The backticked words of a cell, in order. */
export function quoted(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
}
