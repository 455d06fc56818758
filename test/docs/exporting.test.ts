/**
 * docs/exporting.md's NodeSDK recipes are the code of the apps test/integration/nodesdk*.test.ts
 * run with the real NodeSDK (test/fixtures/nodesdk-*-app.ts): the page's code block is the app's
 * region between `// [nodesdk]` and `// [/nodesdk]`, a line `// … at exit:`, and its region
 * between `// [exit]` and `// [/exit]`, so the page cannot drift from code that works.
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

/** The page's ts code blocks that make a NodeSDK. */
function nodeSdkBlocks(): string[] {
  return [...page("docs/exporting.md").matchAll(/```ts\n([\s\S]*?)\n```/g)]
    .map((match) => match[1])
    .filter((block) => block.includes("new NodeSDK("));
}

describe("docs/exporting.md", () => {
  it("quotes the NodeSDK apps the integration tests run, exactly", () => {
    const apps = ["test/fixtures/nodesdk-otlp-app.ts", "test/fixtures/nodesdk-files-app.ts"].map((path) => page(path));
    expect(nodeSdkBlocks()).toEqual(
      apps.map((app) => `${region(app, "nodesdk")}\n// … at exit:\n${region(app, "exit")}`),
    );
  });
});
