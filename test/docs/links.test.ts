/**
 * Every relative link of the README and the manual (docs/*.md, and bench/README.md, which they
 * send readers to) leads somewhere: to a file of the repository and, with `#anchor`, to a heading
 * of that page as GitHub names it. Moving a section between pages cannot leave a dead link behind.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./pages.js";

const PAGES = [
  "README.md",
  ...fs
    .readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "bench/README.md",
];

/** The text of a page outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: formatting dropped, lower case, punctuation gone, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a page's headings, the second of a name as GitHub numbers it (`-1`, `-2`, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The relative link targets of a page: `[text](target)`, not web addresses. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z]+:/i.test(target));
}

describe("the links of the README and docs/", () => {
  it("slugs headings as GitHub does", () => {
    expect(slug("Wrapping the methods you have: `instrument()` and `wrap()`")).toBe(
      "wrapping-the-methods-you-have-instrument-and-wrap",
    );
    expect(slug("`taskjourney/sdk`")).toBe("taskjourneysdk");
    expect(slug("5. The two carriers of a task")).toBe("5-the-two-carriers-of-a-task");
    expect(slug("Transfers: the get_data request and its reply")).toBe("transfers-the-get_data-request-and-its-reply");
  });

  for (const page of PAGES) {
    it(`${page}: every relative link names a file that exists, and a heading of it`, () => {
      const text = fs.readFileSync(`${ROOT}${page}`, "utf8");
      const targets = links(text);
      for (const target of targets) {
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const resolved = file === "" ? `${ROOT}${page}` : path.resolve(ROOT, path.dirname(page), decodeURI(file));
        expect(fs.existsSync(resolved), `${page} links to ${target}: no such file`).toBe(true);
        if (anchor === undefined) continue;
        expect(resolved.endsWith(".md"), `${page} links to ${target}: an anchor of a page`).toBe(true);
        expect([...anchors(fs.readFileSync(resolved, "utf8"))], `${page} links to ${target}`).toContain(anchor);
      }
    });
  }

  // The package ships only package.json "files" (README.md, docs/, collector/, dist/): a user
  // reading the installed docs follows a link to anything else into nothing, so its line says
  // where it is.
  const shipped = (JSON.parse(fs.readFileSync(`${ROOT}package.json`, "utf8")) as { files: string[] }).files;
  for (const page of PAGES.filter((name) => shipped.some((entry) => name === entry || name.startsWith(`${entry}/`)))) {
    it(`${page}: a link to a file the package does not ship says it is in the source repository`, () => {
      for (const line of prose(fs.readFileSync(`${ROOT}${page}`, "utf8")).split("\n")) {
        for (const target of links(line)) {
          const file = target.split("#")[0];
          if (file === "") continue;
          const relative = path.relative(ROOT, path.resolve(ROOT, path.dirname(page), decodeURI(file)));
          if (shipped.some((entry) => relative === entry || relative.startsWith(`${entry}/`))) continue;
          expect(line, `${page} links to ${target}, which is not in the package`).toMatch(/source repository/);
        }
      }
    });
  }

  it("finds the links it checks", () => {
    // A parser that found nothing would pass every page above.
    expect(links(fs.readFileSync(`${ROOT}README.md`, "utf8")).length).toBeGreaterThan(15);
  });
});
