import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CHUNK, ChunkList } from "../../src/recorder/chunk-list.js";

function items<T>(list: ChunkList<T>): T[] {
  return Array.from({ length: list.length }, (_, index) => list.at(index));
}

describe("ChunkList", () => {
  it("holds what was pushed, in order, across chunk boundaries", () => {
    const list = new ChunkList(0);
    for (let i = 1; i < 3 * CHUNK + 7; i++) list.push(i);
    expect(list.length).toBe(3 * CHUNK + 7);
    expect(items(list)).toEqual(Array.from({ length: 3 * CHUNK + 7 }, (_, i) => i));
  });

  it("retain() and remove() keep the order of what is left, and pushes after them land at the end", () => {
    const list = new ChunkList(0);
    for (let i = 1; i < 2 * CHUNK + 10; i++) list.push(i);
    list.retain((item) => item % 3 !== 0);
    const expected = Array.from({ length: 2 * CHUNK + 10 }, (_, i) => i).filter((i) => i % 3 !== 0);
    expect(items(list)).toEqual(expected);
    expect(list.remove(1)).toBe(true);
    expect(list.remove(1)).toBe(false);
    list.push(-1);
    expect(items(list)).toEqual([...expected.slice(1), -1]);
  });

  it("behaves as an array under any sequence of pushes, retains and removes", () => {
    const operation = fc.oneof(
      fc.record({ push: fc.integer({ min: 1, max: 3 * CHUNK }) }),
      fc.record({ retainModulo: fc.integer({ min: 2, max: 5 }) }),
      fc.record({ remove: fc.integer({ min: 0, max: 4 * CHUNK }) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 12 }), (operations) => {
        const list = new ChunkList(0);
        const model = [0];
        let next = 1;
        for (const op of operations) {
          if ("push" in op) {
            for (let i = 0; i < op.push; i++) {
              list.push(next);
              model.push(next++);
            }
          } else if ("retainModulo" in op) {
            list.retain((item) => item % op.retainModulo !== 0);
            model.splice(0, model.length, ...model.filter((item) => item % op.retainModulo !== 0));
          } else {
            const at = model.indexOf(op.remove);
            expect(list.remove(op.remove)).toBe(at !== -1);
            if (at !== -1) model.splice(at, 1);
          }
          expect(list.length).toBe(model.length);
        }
        expect(items(list)).toEqual(model);
      }),
      { numRuns: 200 },
    );
  });
});
