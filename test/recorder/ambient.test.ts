import { describe, expect, it } from "vitest";
import { TaskJourneys } from "../../src/index.js";
import { ambientLedger } from "../../src/recorder/ambient.js";

function started(options: ConstructorParameters<typeof TaskJourneys>[0]): TaskJourneys {
  const journeys = new TaskJourneys({ role: "worker", instance: "tcp://127.0.0.1:40009", ...options });
  journeys.transition("inc-1", "released", "waiting");
  journeys.transition("inc-1", "waiting", "ready");
  journeys.transition("inc-1", "ready", "executing");
  return journeys;
}

describe("asyncContext: false (synchronous ambient ledger)", () => {
  it("nests under the activity the work is in, after a nested activity returned (one frame reused per ledger)", async () => {
    const journeys = started({ asyncContext: false });
    const ledger = journeys.execute("inc-1");
    // An async function's synchronous part: its activities nest through the ambient frame, not
    // the ledger's synchronous nesting. The frame, reused, is back at "outer" after "inner" returned.
    await ledger.meter("outer", async () => {
      journeys.meter("inner", () => journeys.meter("deep", () => 0));
      journeys.meter("sibling", () => 0);
      await Promise.resolve();
    });
    ledger.end("memory");
    const executing = journeys.explain("inc-1")!.children.find((node) => node.name === "executing")!;
    // "other": the part of an activity's time its children do not cover.
    const names = (node: { children: Array<{ name: string }> }) =>
      node.children
        .map((child) => child.name)
        .filter((name) => name !== "other")
        .sort();
    const outer = executing.children.find((node) => node.name === "outer")!;
    expect(names(outer)).toEqual(["inner", "sibling"]);
    expect(names(outer.children.find((node) => node.name === "inner")!)).toEqual(["deep"]);
    expect(executing.children.map((node) => node.name)).not.toContain("sibling");
  });

  it("finds the ledger synchronously inside run() and meter(), not after an await", async () => {
    const journeys = started({ asyncContext: false });
    const ledger = journeys.execute("inc-1");
    expect(journeys.currentLedger()).toBeUndefined();
    const inside = await ledger.run(async () => {
      const before = journeys.currentLedger();
      const nested = journeys.meter("deserialize", () => journeys.currentLedger());
      await Promise.resolve();
      return { before, nested, after: journeys.currentLedger() };
    });
    expect(inside.before).toBe(ledger);
    expect(inside.nested).toBe(ledger);
    expect(inside.after).toBeUndefined();
    // Re-entered explicitly after the await.
    expect(ledger.run(() => journeys.currentLedger())).toBe(ledger);
    expect(journeys.currentLedger()).toBeUndefined();
    ledger.end("memory");
    const activities = JSON.stringify(journeys.explain("inc-1"));
    expect(activities).toContain("deserialize");
    await journeys.shutdown();
  });

  it("restores the outer frame after a throw, and an async-context run nested in a sync one wins inside it", async () => {
    const sync = started({ asyncContext: false });
    const asyncJourneys = new TaskJourneys({ role: "worker", instance: "tcp://127.0.0.1:40010" });
    asyncJourneys.transition("inc-2", "released", "waiting");
    asyncJourneys.transition("inc-2", "waiting", "ready");
    asyncJourneys.transition("inc-2", "ready", "executing");
    const outer = sync.execute("inc-1");
    const inner = asyncJourneys.execute("inc-2");
    expect(() =>
      outer.run(() => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(ambientLedger.getStore()).toBeUndefined();
    const seen = await outer.run(() =>
      inner.run(async () => {
        await Promise.resolve();
        return asyncJourneys.currentLedger();
      }),
    );
    expect(seen).toBe(inner);
    expect(sync.currentLedger()).toBeUndefined();
    outer.end("memory");
    inner.end("memory");
    await sync.shutdown();
    await asyncJourneys.shutdown();
  });
});

describe("the ambient ledger inside ledger.meter()", () => {
  for (const asyncContext of [true, false]) {
    it(`is found inside a plain function, nested under its activity (asyncContext: ${asyncContext})`, async () => {
      const journeys = started({ asyncContext });
      const ledger = journeys.execute("inc-1");
      const seen = ledger.meter("network", () => journeys.meter("deserialize", () => journeys.currentLedger()));
      expect(seen).toBe(ledger);
      // A non-async function returning a promise: its synchronous part sees the ledger.
      const early = await ledger.meter("disk-read", () => {
        const found = journeys.currentLedger();
        journeys.meter("decompress", () => undefined);
        return Promise.resolve(found);
      });
      expect(early).toBe(ledger);
      expect(journeys.currentLedger()).toBeUndefined();
      ledger.end("memory");
      const tree = journeys.explain("inc-1")!;
      const executing = tree.children.find((node) => node.name === "executing")!;
      expect(executing.children.find((node) => node.name === "network")?.children.map((node) => node.name)).toContain(
        "deserialize",
      );
      expect(executing.children.find((node) => node.name === "disk-read")?.children.map((node) => node.name)).toContain(
        "decompress",
      );
      await journeys.shutdown();
    });
  }

  it("is found after an await inside a non-async function's promise, with asyncContext", async () => {
    const journeys = started({});
    const ledger = journeys.execute("inc-1");
    const socketRead = (): Promise<unknown> =>
      Promise.resolve().then(() => journeys.meter("deserialize", () => journeys.currentLedger()));
    for (let i = 0; i < 100; i++) {
      expect(await ledger.meter("network", () => socketRead())).toBe(ledger);
    }
    ledger.end("memory");
    const executing = journeys.explain("inc-1")!.children.find((node) => node.name === "executing")!;
    const network = executing.children.find((node) => node.name === "network")!;
    // Every execution's nested activity is there, under the activity that made the promise.
    expect(network.children[0].name).toBe("deserialize");
    expect(executing.children.map((node) => node.name)).not.toContain("deserialize");
    await journeys.shutdown();
  });
});
