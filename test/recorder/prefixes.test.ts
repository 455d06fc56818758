import { afterEach, describe, expect, it } from "vitest";
import { diag } from "@opentelemetry/api";
import { TaskJourneys } from "../../src/index.js";
import { looksLikeId } from "../../src/model/prefix-check.js";
import { FakeClock } from "../helpers/clock.js";
import { harness } from "../otel/spans/helpers.js";
import { captureDiag } from "../helpers/diag.js";

afterEach(() => diag.disable());

/** A scheduler journey of `key` from released to memory, 1 s waiting and 2 s processing. */
function schedule(journeys: TaskJourneys, clock: FakeClock, key: string | number): void {
  journeys.transition(key, "released", "waiting");
  clock.advance(1);
  journeys.transition(key, "waiting", "processing");
  clock.advance(2);
  journeys.transition(key, "processing", "memory");
}

describe("prefixes the caller chooses", () => {
  it("describe() names the prefix of every later journey of the key, retries included, until it is forgotten", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    journeys.describe("42", { prefix: "fetch" });
    schedule(journeys, clock, "42");
    // A retry: a new journey of the same key.
    journeys.transition("42", "memory", "released");
    schedule(journeys, clock, "42");
    expect(journeys.stats("fetch", "processing").count).toBe(2);
    expect(journeys.stats("fetch", "processing").mean).toBe(2);
    expect(journeys.stats("42", "processing").count).toBe(0);
    // Forgotten: the description goes, and the next journey is key_split's again.
    journeys.transition("42", "released", "forgotten");
    schedule(journeys, clock, "42");
    expect(journeys.stats("42", "processing").count).toBe(1);
    expect(journeys.stats("fetch", "processing").count).toBe(2);
  });

  it("a journey under way keeps the prefix it began with; describe() holds from its next journey", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("job-1", "released", "waiting");
    journeys.describe("job-1", { prefix: "render" });
    clock.advance(1);
    journeys.transition("job-1", "waiting", "processing");
    clock.advance(1);
    journeys.transition("job-1", "processing", "memory");
    expect(journeys.stats("job", "processing").count).toBe(1);
    journeys.transition("job-1", "memory", "released");
    schedule(journeys, clock, "job-1");
    expect(journeys.stats("render", "processing").count).toBe(1);
  });

  it("keyPrefix reads the prefix keys encode their own way; describe() wins over it", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "scheduler",
      clock: clock.now,
      keyPrefix: (key) => String(key).split(":")[0],
    });
    schedule(journeys, clock, "fetch:1");
    schedule(journeys, clock, "fetch:2");
    journeys.describe("fetch:3", { prefix: "special" });
    schedule(journeys, clock, "fetch:3");
    expect(journeys.stats("fetch", "processing").count).toBe(2);
    expect(journeys.stats("special", "processing").count).toBe(1);
    expect(journeys.dropped()).toEqual({});
  });

  it("a keyPrefix that throws or returns no string is counted and key_split is used; a throw and a bad value are each told once, saying what it was", () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "scheduler",
      clock: clock.now,
      keyPrefix: (key) => {
        if (key === "bad-1" || key === "bad-4") throw new Error("no");
        return key === "bad-2" ? (undefined as unknown as string) : key === "bad-3" ? "" : "ok";
      },
    });
    for (const key of ["bad-2", "bad-1", "bad-3", "bad-4"]) schedule(journeys, clock, key);
    expect(journeys.stats("bad", "processing").count).toBe(4);
    expect(journeys.dropped()).toEqual({ "key-prefix-error": 4 });
    expect(messages.filter((message) => message.includes("key-prefix-error"))).toEqual([
      expect.stringContaining(
        'the keyPrefix option returned undefined, not a non-empty string for the key "bad-2"; key_split is used.',
      ),
      expect.stringContaining('the keyPrefix option threw Error: no for the key "bad-1"; key_split is used.'),
    ]);
  });

  it("a bad keyPrefix option throws at construction, naming it", () => {
    expect(() => new TaskJourneys({ keyPrefix: "x" as never })).toThrow(/keyPrefix/);
  });

  it("describe() with a bad description is counted, not thrown", () => {
    const journeys = new TaskJourneys({ role: "scheduler" });
    journeys.describe("1", { prefix: "" });
    journeys.describe("1", null as never);
    journeys.describe("1", { group: 3 as never });
    expect(journeys.dropped()).toEqual({ "invalid-description": 3 });
  });

  it("spans carry the described prefix and group", () => {
    const { journeys, exporter, clock } = harness({ role: "scheduler" });
    journeys.describe(7, { prefix: "fetch", group: "fetch-batch-3" });
    schedule(journeys, clock, 7);
    journeys.describe("8", { prefix: "fetch" });
    schedule(journeys, clock, "8");
    const tasks = exporter.getFinishedSpans().filter((span) => span.name.startsWith("task "));
    expect(tasks.map((span) => [span.name, span.attributes["task.prefix"], span.attributes["task.group"]])).toEqual([
      ["task fetch", "fetch", "fetch-batch-3"],
      ["task fetch", "fetch", "fetch"],
    ]);
  });
});

describe("prefix warnings", () => {
  it("an id-like prefix is told once, naming it, and counted once per distinct prefix", () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    // key_split makes "1", "2", "9f86d081884c7d65" and "123e4567" of these (a number is "Other").
    for (const key of ["1", "2", 3, "1", "9f86d081884c7d65", "123e4567-e89b-12d3-a456-426614174000", "inc-1"])
      schedule(journeys, clock, key);
    expect(journeys.dropped()).toEqual({ "prefix-looks-like-id": 4 });
    const told = messages.filter((message) => message.includes("looks like an id"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('"1"');
    expect(told[0]).toContain("describe(key, { prefix })");
  });

  it("prefixes past prefixLimit are told once, naming a few and the fix, and counted once per folded prefix", () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "scheduler",
      runtime: { clock: clock.now },
      sampling: { ratio: 0 },
      limits: { maxPrefixes: 3 },
    });
    for (const key of ["a-1", "b-1", "c-1", "d-1", "e-1", "d-2", "a-2"]) schedule(journeys, clock, key);
    expect(journeys.dropped()).toEqual({ "prefix-limit": 2 });
    expect(journeys.stats("other", "processing").count).toBe(3);
    const told = messages.filter((message) => message.includes("limits.maxPrefixes"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('"a", "b", "c", "d"');
    expect(told[0]).toContain("describe(key, { prefix })");
    expect(told[0]).toContain("raise limits.maxPrefixes");
  });

  it("names longer than 256 characters (metric attributes) are cut to 256, counted each time, and told once", () => {
    const messages = captureDiag();
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({ clock: clock.now, sampling: { ratio: 0, keepSlowerThan: 0 } });
    const long = "x".repeat(300);
    // An emoji across the cut: the cut name keeps no half of it.
    const astral = `${"y".repeat(255)}😀z`;
    for (const key of [`${long}-1`, `${long}-2`, `${astral}-1`]) {
      journeys.transition(key, "released", "waiting");
      journeys.transition(key, "waiting", "ready");
      journeys.transition(key, "ready", "executing");
      const ledger = journeys.execute(key);
      ledger.meter("d".repeat(1000), () => clock.advance(1));
      ledger.end("memory");
    }
    expect(journeys.dropped()).toEqual({ "name-too-long": 6 });
    expect(journeys.stats("x".repeat(256), "executing").count).toBe(2);
    expect(journeys.stats("y".repeat(255), "executing").count).toBe(1);
    const activities = journeys.explain(`${long}-2`)!.children.find((node) => node.name === "executing")!.children;
    expect(activities.map((node) => [node.name, node.seconds])).toEqual([["d".repeat(256), 1]]);
    const told = messages.filter((message) => message.includes("characters"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`a task prefix of 300 characters ("${"x".repeat(64)}…"): names are cut to 256`);
  });

  it("tells ids apart from family names", () => {
    for (const id of ["1", "0042", "9f86d081", "DEADBEEF01", "123e4567-e89b-12d3-a456-426614174000"])
      expect(looksLikeId(id), id).toBe(true);
    for (const name of ["inc", "fetch", "deadbeef", "x", "data", "other", "add-1f"])
      expect(looksLikeId(name), name).toBe(false);
  });
});

describe("times from the scheduler's own clock", () => {
  it("a journey backdated before the clock's 0 (created before this process started) is recorded as given", () => {
    const clock = new FakeClock(10);
    const journeys = new TaskJourneys({ role: "scheduler", clock: clock.now, sampling: { ratio: 0 } });
    journeys.transition("job-1", "released", "waiting", -30);
    journeys.transition("job-1", "waiting", "processing", -5);
    journeys.transition("job-1", "processing", "memory", 2);
    expect(journeys.stats("job", "waiting").mean).toBe(25);
    expect(journeys.stats("job", "processing").mean).toBe(7);
    expect(journeys.dropped()).toEqual({});
  });

  it("an epoch clock: at in epoch seconds, timeOrigin 0, spans stamped with the scheduler's times", () => {
    const created = 1_700_000_000.5;
    let now = created + 60;
    const { journeys, exporter } = harness({ role: "scheduler", clock: () => now, timeOrigin: 0 });
    journeys.transition("job-1", "released", "waiting", created);
    journeys.transition("job-1", "waiting", "processing", created + 10);
    now += 5;
    journeys.transition("job-1", "processing", "memory");
    const task = exporter.getFinishedSpans().find((span) => span.name === "task job")!;
    expect(task.startTime).toEqual([1_700_000_000, 500_000_000]);
    expect(task.endTime).toEqual([1_700_000_065, 500_000_000]);
    expect(journeys.stats("job", "waiting").mean).toBe(10);
  });
});

describe("prefixes past prefixLimit", () => {
  it("are counted once each however many there are, in bounded memory (the count stopped at 10,000)", () => {
    const journeys = new TaskJourneys({ role: "worker", prefixLimit: 10, clock: new FakeClock(1).now });
    captureDiag();
    for (let n = 1; n <= 50_000; n++) journeys.transition(`pf${n}-1`, "released", "waiting");
    expect(journeys.dropped()["prefix-limit"]).toBe(50_000 - 10);
    // Seen again soon: remembered, not counted twice.
    for (let n = 49_000; n <= 50_000; n++) journeys.transition(`pf${n}-2`, "released", "waiting");
    expect(journeys.dropped()["prefix-limit"]).toBe(50_000 - 10);
  });
});

describe("the recorder's cache of key prefixes (keyPrefixId)", () => {
  it("gives every journey key_split's prefix: keys whose prefixes share a cache slot, fill its pair, or are no slice of the key", () => {
    const clock = new FakeClock(0);
    const journeys = new TaskJourneys({
      role: "scheduler",
      clock: clock.now,
      sampling: { ratio: 0 },
      limits: { maxPrefixes: 2000 },
    });
    const hex = "45c08a19689ab7b8b5db2ccd0a8634f5";
    // "abcde" and "axyde": one length, and the same characters where the cache's slot reads them
    // (first, last, three quarters in): one slot, told apart only by comparing the key's start.
    const named = ["abcde", "axyde", "inc", "inc-ab", "rechunk-merge", "rechunk-split", "x"];
    // 300 more: more than some slot pairs hold, so that prefixes evict one another.
    for (let index = 0; index < 300; index++)
      named.push(
        `family-${"abcdefghij"[index % 10]}${"klmnopqrst"[Math.floor(index / 10) % 10]}${"uvwxyz"[Math.floor(index / 100)]}`,
      );
    const keys = named.map((name) => `${name}-${hex}`);
    // Keys whose prefix is not the key's own start, or not a plain one: key_split's answers.
    const others: Array<[string, string]> = [
      [hex, "data"],
      ["('y-2', 1)", "y"],
      ["_(z)-1", "z"],
      ["été-1", "été"],
      ["<module.sub.myclass object at 0x1>", "myclass"],
      // Past MAX_NAME_LENGTH: cut (and told), never found in the cache by its full length.
      [`${"long".repeat(70)}-1`, ""],
    ];
    for (let round = 0; round < 3; round++) {
      for (const key of keys) schedule(journeys, clock, key);
      for (const [key] of others) schedule(journeys, clock, key);
    }
    for (const name of named) expect(journeys.stats(name, "processing").count, name).toBe(3);
    for (const [key, prefix] of others.slice(0, -1)) expect(journeys.stats(prefix, "processing").count, key).toBe(3);
  });
});
