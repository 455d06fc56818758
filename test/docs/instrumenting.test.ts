/**
 * docs/instrumenting.md quotes the job queue's instrumentation: the code blocks must be the code
 * of examples/job-queue/instrument.ts (which test/examples/job-queue.test.ts runs), so the guide
 * cannot drift from code that works.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The text between `// [name]` and `// [/name]` in the example. */
function region(source: string, name: string): string {
  const start = source.indexOf(`// [${name}]\n`);
  const end = source.indexOf(`// [/${name}]`);
  expect(start, `region ${name}`).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return source.slice(start + `// [${name}]\n`.length, end).trimEnd();
}

describe("docs/instrumenting.md", () => {
  it("quotes the job queue's instrumentation exactly: its machine and both sides", () => {
    const guide = fs.readFileSync(`${ROOT}docs/instrumenting.md`, "utf8");
    const source = fs.readFileSync(`${ROOT}examples/job-queue/instrument.ts`, "utf8");
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((match) => match[1]);
    expect(blocks).toEqual([region(source, "machine"), region(source, "queue"), region(source, "worker")]);
  });

  it("links only to pages that exist", () => {
    const guide = fs.readFileSync(`${ROOT}docs/instrumenting.md`, "utf8");
    for (const [, target] of guide.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g))
      expect(fs.existsSync(`${ROOT}docs/${target}`), target).toBe(true);
  });
});
