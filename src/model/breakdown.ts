import type { ComputationTotals } from "./computation-totals.js";

/** Where one journey's time went: its state visits in order, each with its activities. */
export interface Breakdown {
  /** The key's canonical text. */
  key: string;
  prefix: string;
  /** The worker or scheduler the journey ran on. */
  instance: string;
  /** Wall seconds from the first non-released state to the terminal one (or to now, if live). */
  seconds: number;
  /** "compute", "fetch" or "scheduler". */
  kind: string;
  /** The terminal state, or undefined while the journey is live. */
  outcome: string | undefined;
  /**
   * True when that terminal state is a failure state of the journey's state machine (Dask: error,
   * erred; a machine of your own: its `terminal.failure` states); from a trace file, a task span
   * with status ERROR. Absent otherwise.
   */
  failed?: true;
  children: BreakdownNode[];
  /**
   * The state this journey waited for its dependencies in (a compute journey's visits of the
   * machine's `waiting` state, whatever its name: its activities are its fetches', printed
   * `gather: …`), or "" when it waited in none. Absent in breakdowns made by hand or by versions
   * before 0.1.0's release, which are read as Dask's: a compute journey's `waiting`.
   */
  waitingState?: string;
  /**
   * On a worker, the get_data requests of peers it served this key's data to (`journeys.serve`),
   * oldest first: one `serve <peer>` node each, with the key's share of the serve's activities.
   */
  served?: BreakdownNode[];
  /**
   * The computation (one graph submission, one flow) the journey was begun under
   * (`transition(…, { computation })`; a trace's `task.computation`). Absent when none.
   */
  computation?: string;
  /** That computation's totals in this process, when known (explain(); from a trace only with its metrics). */
  computationTotals?: ComputationTotals;
}

export interface BreakdownNode {
  /** A state name at the first level, an activity name below it. */
  name: string;
  seconds: number;
  children: BreakdownNode[];
  /** Non-time quantities digested for this activity in this visit, by unit: `{ bytes: 65536 }`. */
  quantities?: Record<string, number>;
  /**
   * A state visit that was an attempt that did not succeed: an execution's outcome ("error",
   * "cancelled") or a fetch's transfer outcome ("failed", "busy", "missing", "cancelled").
   */
  outcome?: string;
  /** Why it failed, when the ledger was told: "TypeError: no such file". */
  error?: string;
}

/** How a failure reads in a breakdown: "TypeError: no such file", or the type alone. */
export function failureText(type: string, message: string): string {
  return message === "" ? type : `${type}: ${message}`;
}

/**
 * Adds a quantity to the node of its activity among `nodes` (the first of that name, outermost
 * first), or to a new node of no time of its own when the activity was not timed. explain() and
 * the trace-file rebuild place quantities alike through it.
 */
export function addQuantity(nodes: BreakdownNode[], activity: string, unit: string, value: number): void {
  let node = findNode(nodes, activity);
  if (node === undefined) {
    node = { name: activity, seconds: 0, children: [] };
    nodes.push(node);
  }
  // Null-prototype: a unit named "constructor" or "__proto__" is a unit like any other.
  const totals = (node.quantities ??= Object.create(null) as Record<string, number>);
  totals[unit] = (totals[unit] ?? 0) + value;
}

function findNode(nodes: readonly BreakdownNode[], name: string): BreakdownNode | undefined {
  const here = nodes.find((node) => node.name === name);
  if (here !== undefined) return here;
  for (const node of nodes) {
    const nested = findNode(node.children, name);
    if (nested !== undefined) return nested;
  }
  return undefined;
}
