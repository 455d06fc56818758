/**
 * The manual's code — fenced blocks and inline code of README.md and docs/*.md — writes every
 * call in its current form: optional arguments in one trailing options object
 * (`transition(key, from, to, { at, error })`, `serve(peer, keys, { context })`,
 * `end("failed", { error })`), never the positional forms of 0.1 a user would copy and be told
 * are deprecated. Only a paragraph that names those forms as deprecated may write them.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { page, ROOT } from "./pages.js";

const PAGES = [
  "README.md",
  ...fs
    .readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** How many arguments each call takes before its trailing options object. */
const REQUIRED: Record<string, number> = { transition: 3, execute: 1, gather: 2, serve: 2, end: 1 };

/** The top-level arguments of the call whose "(" is at `open` in `text` (to its ")" or the text's end). */
export function callArguments(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote = "";
  let current = "";
  for (let index = open + 1; index < text.length; index++) {
    const char = text[index];
    if (quote !== "") {
      current += char;
      if (char === quote && text[index - 1] !== "\\") quote = "";
      continue;
    }
    if (char === '"' || char === "'" || char === "`") quote = char;
    else if ("([{".includes(char)) depth++;
    else if (")]}".includes(char)) {
      if (depth === 0) break;
      depth--;
    } else if (char === "," && depth === 0) {
      args.push(current.trim());
      current = "";
      continue;
    }
    current += char;
  }
  if (current.trim() !== "") args.push(current.trim());
  return args;
}

/** The calls of `code` in a positional form of 0.1: an optional argument that is not one options object. */
export function positionalCalls(code: string): string[] {
  const found: string[] = [];
  for (const match of code.matchAll(/\b(transition|execute|gather|serve|end)\(/g)) {
    const args = callArguments(code, match.index + match[0].length - 1);
    const required = REQUIRED[match[1]];
    if (args.length > required + 1 || (args.length === required + 1 && !args[required].startsWith("{")))
      found.push(`${match[1]}(${args.join(", ")})`);
  }
  return found;
}

/** The code of a page, paragraph by paragraph: each fenced block, and each prose paragraph's inline code. */
function codeOf(text: string): { code: string; paragraph: string }[] {
  const result: { code: string; paragraph: string }[] = [];
  const prose = text.replace(/^```[^\n]*\n([\s\S]*?)^```/gm, (_whole, block: string) => {
    result.push({ code: block, paragraph: block });
    return "";
  });
  for (const paragraph of prose.split(/\n\s*\n/)) {
    for (const [, code] of paragraph.matchAll(/`([^`]+)`/g)) result.push({ code, paragraph });
  }
  return result;
}

describe("the manual's code uses the current call forms", () => {
  it("finds a positional form where there is one, and only there", () => {
    expect(positionalCalls('journeys.transition(key, "active", "failed", at, reason)')).toHaveLength(1);
    expect(positionalCalls('transition(key, "a", "b", undefined, "why")')).toHaveLength(1);
    expect(positionalCalls("journeys.serve(peer, keys, request)")).toHaveLength(1);
    expect(positionalCalls("run.end(outcome, error, at)")).toHaveLength(1);
    expect(positionalCalls("execute(key, at)")).toHaveLength(1);
    expect(positionalCalls('transition(key, "active", "failed", { at, error: f(a, b) })')).toEqual([]);
    expect(positionalCalls("journeys.serve(peer, keys, { context: request })")).toEqual([]);
    expect(positionalCalls('run.end("failed", { error })')).toEqual([]);
    expect(positionalCalls('transition(key, "a", "b")')).toEqual([]);
  });

  for (const name of PAGES) {
    it(`${name}: no positional form outside a paragraph that calls it deprecated`, () => {
      const offending = codeOf(page(name))
        .filter(({ paragraph }) => !/deprecated|of 0\.1\b/.test(paragraph))
        .flatMap(({ code }) => positionalCalls(code));
      expect(offending).toEqual([]);
    });
  }
});
