/**
 * docs/queues.md quotes the PostgreSQL queue example: its code blocks must be the code of
 * examples/pg-queue/ (which test/examples/pg-queue.test.ts runs), so the recipe cannot drift
 * from code that works.
 */
import { describe, expect, it } from "vitest";
import { page } from "./pages.js";

/** The text between `// [name]` and `// [/name]` of `source`. */
function region(source: string, name: string): string {
  const start = source.indexOf(`// [${name}]\n`);
  const end = source.indexOf(`// [/${name}]`);
  expect(start, `region ${name}`).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return source.slice(start + `// [${name}]\n`.length, end).trimEnd();
}

describe("docs/queues.md", () => {
  it("quotes the example's machines, its producer's send and its worker's attempt, exactly", () => {
    const blocks = [...page("docs/queues.md").matchAll(/```ts\n([\s\S]*?)\n```/g)].map((match) => match[1]);
    expect(blocks).toEqual([
      region(page("examples/pg-queue/machines.ts"), "machines"),
      region(page("examples/pg-queue/producer.ts"), "send"),
      region(page("examples/pg-queue/worker.ts"), "attempt"),
    ]);
  });
});
