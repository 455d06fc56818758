import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/otel/bounded-map.js";

describe("BoundedMap", () => {
  it("holds at most `limit` entries and keeps at least the newest half of them", () => {
    const map = new BoundedMap<number>(100);
    for (let key = 0; key < 1_000; key++) {
      map.set(key, key * 2);
      expect(map.size).toBeLessThanOrEqual(100);
      for (const back of [0, 1, 25, 49]) {
        if (key - back >= 0) expect(map.get(key - back)).toBe((key - back) * 2);
      }
    }
    // The 1,000th set filled a generation of 50 (950–999): it became the older one, the newer is empty.
    expect(map.size).toBe(50);
    expect(map.get(949)).toBeUndefined();
    expect(map.has(950)).toBe(true);
    expect(map.has(999)).toBe(true);
  });

  it("moves a key set again into the newest generation, once", () => {
    const map = new BoundedMap<string>(6);
    map.set("a", "1");
    map.set("b", "2");
    map.set("c", "3"); // a, b, c become the older generation
    map.set("a", "4"); // a moves to the newer one
    expect(map.size).toBe(3);
    map.set("d", "5");
    map.set("e", "6"); // the newer generation fills: b and c are dropped, a stays
    expect(map.get("a")).toBe("4");
    expect(map.has("b")).toBe(false);
    expect(map.get("e")).toBe("6");
  });

  it("take() removes from whichever generation holds the key", () => {
    const map = new BoundedMap<number>(4);
    map.set("old", 1);
    map.set("older", 2);
    map.set("new", 3);
    expect(map.take("old")).toBe(1);
    expect(map.take("new")).toBe(3);
    expect(map.take("old")).toBeUndefined();
    expect(map.size).toBe(1);
  });
});
