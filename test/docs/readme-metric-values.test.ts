/**
 * The README's table of metric attribute values is what a user writes dashboards and alerts
 * against: every value taskjourney itself gives an attribute — each role's states, the activities
 * it names (the remainder, waiting no fetch explains, a dependency queued or missing, the lumps
 * of what did not succeed: `failed` included), transfer outcomes, drop reasons — must be in it,
 * read from the source so that a value added there and not to the README fails here. Names the
 * user chooses (prefixes, their own activities) are not listed, only described.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EXECUTE_ACTIVITIES, EXECUTE_LUMP, GATHER_ACTIVITIES, TRANSFER_LUMP, TRANSFER_OUTCOMES } from "../../src/model/activities.js";
import { SCHEDULER_STATES, WORKER_STATES } from "../../src/model/states.js";
import { SEED_ACTIVITIES } from "../../src/recorder/activity-ids.js";
import { DROP_REASONS } from "../../src/recorder/drop-reasons.js";

const README = fs.readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

/** The README's attribute-values table under "### Metrics": attribute → its values cell. */
function valuesTable(): Map<string, string> {
  const start = README.indexOf("\n### Metrics\n");
  expect(start, "README has a ### Metrics section").toBeGreaterThan(-1);
  const section = README.slice(start + 1).split(/\n#{2,3} /)[0];
  const rows = new Map<string, string>();
  let inTable = false;
  for (const line of section.split("\n")) {
    if (/^\|\s*attribute\s*\|\s*values\s*\|/.test(line)) inTable = true;
    else if (inTable && !line.startsWith("|")) break;
    const cells = inTable ? /^\|\s*([a-z_.]+)\s*\|(.*)\|\s*$/.exec(line) : null;
    if (cells !== null && cells[1] !== "attribute") rows.set(cells[1], cells[2]);
  }
  return rows;
}

/** The reasons of the README's drop-reasons table (under "### Bad input"). */
function readmeReasons(): string[] {
  const section = README.slice(README.indexOf("\n### Bad input\n") + 1).split(/\n#{2,3} /)[0];
  return [...section.matchAll(/^\|\s*`([a-z-]+)`\s*\|/gm)].map((match) => match[1]);
}

describe("the README's metric attribute values", () => {
  const table = valuesTable();

  it("lists every attribute the metrics table names", () => {
    expect([...table.keys()]).toEqual(["task.prefix", "task.state", "task.activity", "transfer.outcome", "reason"]);
    expect(table.get("task.prefix")).toContain("`other` past `prefixLimit`");
  });

  it("task.state: every state of each role, in that role's list", () => {
    const cell = table.get("task.state")!;
    const worker = /worker: ([^;)]*)/.exec(cell)?.[1] ?? "";
    const scheduler = /scheduler: ([^;)]*)/.exec(cell)?.[1] ?? "";
    expect(worker.split(", ")).toEqual([...WORKER_STATES]);
    expect(scheduler.split(", ")).toEqual([...SCHEDULER_STATES]);
  });

  it("task.activity: every activity taskjourney names itself, failed included; queued (<reason>)", () => {
    const cell = table.get("task.activity")!;
    const standard = new Set<string>([...EXECUTE_ACTIVITIES, ...GATHER_ACTIVITIES].filter((name) => name !== "other"));
    // Those it records whatever the user meters: the remainder, waiting's own names and the lumps.
    const own = [...new Set(SEED_ACTIVITIES.filter((name) => !standard.has(name)))];
    expect(own).toEqual(["other", "dependencies", "queued", "missing", "busy", "failed", "cancelled"]);
    const lumps = [...Object.values(EXECUTE_LUMP), ...Object.values(TRANSFER_LUMP)].filter((name) => name !== undefined);
    for (const name of new Set([...own, ...lumps])) expect(cell, `task.activity value ${name}`).toContain(`\`${name}\``);
    expect(cell).toContain("`queued (<reason>)`");
    expect(cell).toContain("`failed` (an execution ended in `error`, a transfer in `failed`)");
  });

  it("transfer.outcome: every outcome", () => {
    const cell = table.get("transfer.outcome")!;
    expect([...cell.matchAll(/`([a-z]+)`/g)].map((match) => match[1])).toEqual([...TRANSFER_OUTCOMES]);
  });

  it("reason: the drop-reasons table has every reason, and no other", () => {
    expect(table.get("reason")).toContain("[drop reasons](#bad-input)");
    expect(readmeReasons().sort()).toEqual(Object.keys(DROP_REASONS).sort());
  });
});
