/**
 * docs/bad-input.md's table is the user's list of what `taskjourney.dropped{reason}` can say: exactly
 * the reasons of src/recorder/drop-reasons.ts, each saying what happened and what was done.
 */
import { describe, expect, it } from "vitest";
import { DROP_REASONS } from "../../src/recorder/drop-reasons.js";
import { page, quoted, table } from "./pages.js";

describe("docs/bad-input.md's drop-reasons table", () => {
  const rows = table(
    page("docs/bad-input.md"),
    "docs/bad-input.md",
    "| reason | what happened | what taskjourney did |",
  );

  it("lists exactly the reasons of src/recorder/drop-reasons.ts, each once, each saying what happened and what was done", () => {
    const reasons = rows.map(([reason]) => quoted(reason));
    for (const words of reasons) expect(words).toHaveLength(1);
    const names = reasons.map(([name]) => name);
    expect(new Set(names).size, "no reason listed twice").toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(DROP_REASONS).sort());
    for (const [reason, happened, did] of rows) {
      expect(happened, reason).not.toBe("");
      expect(did, reason).not.toBe("");
    }
  });
});
