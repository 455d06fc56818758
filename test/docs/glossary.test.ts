/**
 * docs/glossary.md holds one word per concept (issue 35): each word appears in the pages its row
 * names, the metric and attribute names it gives are the code's, and no page of the manual uses
 * "fetch" for gathering (fetch is Dask's worker state only) or "failure" for what is not a task's
 * outcome (bad input is a drop, an exporter's problem an export error).
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import * as semconv from "../../src/otel/semconv.js";
import { page, quoted, ROOT, table } from "./pages.js";

const GLOSSARY = page("docs/glossary.md");
const ROWS = table(GLOSSARY, "docs/glossary.md", "| word | what it means | where it appears | pages |");

/** README.md and every page of docs/, by path from the root. */
const PAGES = [
  "README.md",
  ...fs
    .readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** Words that say "fetch" for gathering, or "failure" for what is not a task's outcome. */
const WRONG_WORDS: ReadonlyArray<[RegExp, string]> = [
  [/\bfetch(?:es|ed|ing)\b/gi, "fetch as a verb or noun for gathering: write gather / gathered / fetch journey"],
  [
    /\b(?:a|an|the|no|each|any|one|its|their|every) fetch\b(?! (?:journey|visit|span|state))/gi,
    "a fetch (a gather, or a fetch journey)",
  ],
  [/\bexport failures?\b/gi, "export failure: write export error"],
  [/\bfailures? of taskjourney/gi, "taskjourney's own failure: write internal error"],
  [/\bbad configuration\b/gi, "bad configuration: write invalid option"],
];

/** Phrases where the words mean something else (npm fetching the package). */
const ALLOWED = ["npm fetches from", "nothing else is fetched later"];

describe("docs/glossary.md", () => {
  it("has a row per concept, with the words the lead chose", () => {
    const words = ROWS.map((row) => row[0]);
    for (const word of [
      "transfer",
      "gather",
      "serve",
      "fetch",
      "failure",
      "drop",
      "export error",
      "internal error",
      "invalid option",
    ])
      expect(words).toContain(word);
    expect(new Set(words).size, "each word once").toBe(words.length);
  });

  for (const [word, , , pages] of ROWS) {
    it(`"${word}" appears in the pages its row names`, () => {
      const linked = [...pages.matchAll(/\]\(([^)#]+)\)/g)].map((match) => match[1]);
      expect(linked.length, `${word} names at least one page`).toBeGreaterThan(0);
      for (const name of linked) expect(page(`docs/${name}`).toLowerCase(), `docs/${name}`).toContain(word);
    });
  }

  it("gives metric and attribute names the code has (src/shared/semconv.ts)", () => {
    const names = new Set<string>(
      Object.values(semconv as Record<string, unknown>).filter((value): value is string => typeof value === "string"),
    );
    const given = ROWS.flatMap((row) => quoted(row[2]))
      .filter((token) => /^(task|taskjourney|transfer)\./.test(token))
      .map((token) => token.replace(/\{.*\}$/, ""));
    expect(given.length).toBeGreaterThan(5);
    for (const name of given) {
      if (name.endsWith(".*")) {
        const stem = name.slice(0, -1);
        expect(
          [...names].some((known) => known.startsWith(stem)),
          name,
        ).toBe(true);
      } else expect(names, name).toContain(name);
    }
  });
});

describe("one word per concept across the manual", () => {
  for (const path of PAGES) {
    if (path === "docs/glossary.md") continue;
    it(`${path} says gather, not fetch, and failure only of a task`, () => {
      let text = page(path);
      for (const phrase of ALLOWED) text = text.split(phrase).join("");
      const found: string[] = [];
      for (const [pattern, why] of WRONG_WORDS)
        for (const match of text.matchAll(pattern)) {
          const line = text.slice(0, match.index).split("\n").length;
          found.push(`line ${line}: "${match[0]}" (${why})`);
        }
      expect(found).toEqual([]);
    });
  }
});
