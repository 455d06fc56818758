/** The example's injected failures and slow tasks (--fail-every, --slow-every): which tasks, and what they compute. */
import { describe, expect, it } from "vitest";
import { FUNCTIONS } from "../../examples/cluster/functions.mjs";
import { buildGraph, evaluateLocally, injectedKeys, withInjected } from "../../examples/cluster/workloads.js";

describe("withInjected", () => {
  const graph = buildGraph("reduction", { size: 30, seed: 3, length: 64 });

  it("makes every Nth task (in graph order) fail or slow, keeping keys and dependencies; failing wins", () => {
    const injected = withInjected(graph, { failEvery: 4, slowEvery: 6, slowSeconds: 0.25 });
    const keys = graph.tasks.map((spec) => spec.key);
    const { failing, slow } = injectedKeys(injected);
    expect(failing).toEqual(keys.filter((_key, index) => (index + 1) % 4 === 0));
    // Index 11 (the 12th task) is both: it fails.
    expect(slow).toEqual(keys.filter((_key, index) => (index + 1) % 6 === 0 && (index + 1) % 4 !== 0));
    expect(injected.tasks.map((spec) => [spec.key, spec.deps])).toEqual(
      graph.tasks.map((spec) => [spec.key, spec.deps]),
    );
    const square = graph.tasks[5];
    expect(injected.tasks[5]).toEqual({ ...square, func: "slow", args: [250, square.func, ...square.args] });
    expect(injected.tasks[3]).toEqual({
      ...graph.tasks[3],
      func: "fail",
      args: [graph.tasks[3].func, ...graph.tasks[3].args],
    });
  });

  it("leaves the graph as it is without either option, and a slow task computes its usual value", () => {
    expect(withInjected(graph, {})).toBe(graph);
    expect(evaluateLocally(withInjected(graph, { slowEvery: 2, slowSeconds: 0 }))).toBe(evaluateLocally(graph));
    expect(() => FUNCTIONS.fail("square")).toThrow("injected failure of a square task (--fail-every)");
  });
});
