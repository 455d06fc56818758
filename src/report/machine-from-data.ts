import { ALL_STATES, byLifecycle } from "../model/states.js";
import { ATTR_TASK_OUTCOME, ATTR_UNFINISHED } from "../shared/semconv.js";
import { journeyKind, stateVisitsOf, stringAttribute, type SpanIndex } from "./from-trace.js";

/**
 * What exported telemetry tells of the application's state machine, for a report made without
 * it: which state's durations the per-prefix quantiles measure (the executing one) and the order
 * of the state columns. OTLP files carry no machine: any application may export them through any
 * SDK, so nothing here relies on a resource attribute of taskjourney's own making. What the data
 * does carry is the journeys' span trees, whose visits are in the order they were lived and whose
 * last visit is the executing one, and, in the metrics, the execute ledgers' time.
 */

export type Role = "worker" | "scheduler";

/** Dask's measured states, the default whenever the data has them. */
export const DASK_MEASURED: Readonly<Record<Role, string>> = { worker: "executing", scheduler: "processing" };

const PRESET_STATES: ReadonlySet<string> = new Set(ALL_STATES);

/** The visited states of the spans' journeys, by role (fetch journeys left out: they do not execute). */
export interface JourneyShapes {
  /** Each journey's visits in order, including unfinished journeys. */
  sequences: Record<Role, string[][]>;
  /**
   * The state each finished journey left for its terminal state, by how many journeys did:
   * a task ends by its execution (Dask: executing → memory, processing → memory), whatever
   * the machine calls it.
   */
  lastStates: Record<Role, Map<string, number>>;
}

/** The journeys' shapes, read once from the span index. */
export function journeyShapes(index: SpanIndex): JourneyShapes {
  const shapes: JourneyShapes = {
    sequences: { worker: [], scheduler: [] },
    lastStates: { worker: new Map(), scheduler: new Map() },
  };
  for (const task of index.tasks) {
    const kind = journeyKind(index, task);
    if (kind === "fetch") continue;
    const role: Role = kind === "scheduler" ? "scheduler" : "worker";
    const visits = stateVisitsOf(index, task).map((visit) => visit.name);
    if (visits.length === 0) continue;
    shapes.sequences[role].push(visits);
    const ended = task.attributes[ATTR_UNFINISHED] !== true && stringAttribute(task, ATTR_TASK_OUTCOME) !== undefined;
    if (ended) {
      const last = visits[visits.length - 1];
      shapes.lastStates[role].set(last, (shapes.lastStates[role].get(last) ?? 0) + 1);
    }
  }
  return shapes;
}

/**
 * The state whose visit durations a role's per-prefix quantiles show, among `states` (the role's
 * states in the data), by the first rule that names one of them: the one the user gave
 * (`--state`); Dask's (`executing` on a worker, `processing` on the scheduler); the state most
 * finished journeys ended from (the spans' journeys, when there are any); on a worker with
 * metrics only, the state whose time matches the execute ledgers' (stateOfExecuteTime); the other
 * role's measured state (a job queue and its workers share one machine). Undefined when none does.
 */
export function measuredState(
  states: ReadonlySet<string>,
  role: Role,
  options: { explicit?: string; shapes?: JourneyShapes; executeTime?: ExecuteTime; otherRole?: string },
): string | undefined {
  if (options.explicit !== undefined && states.has(options.explicit)) return options.explicit;
  if (states.has(DASK_MEASURED[role])) return DASK_MEASURED[role];
  if (options.shapes !== undefined) {
    let best: string | undefined;
    let most = 0;
    // Ties go to the state met first (Map order): deterministic for one set of files.
    for (const [state, count] of options.shapes.lastStates[role]) {
      if (count > most && states.has(state)) [best, most] = [state, count];
    }
    if (best !== undefined) return best;
  }
  const matched =
    role === "worker" && options.executeTime !== undefined ? stateOfExecuteTime(options.executeTime) : undefined;
  if (matched !== undefined && states.has(matched)) return matched;
  if (options.otherRole !== undefined && states.has(options.otherRole)) return options.otherRole;
  return undefined;
}

/** A worker's task.execute.time summed, and its seconds by state (task.state.time summed over prefixes). */
export interface ExecuteTime {
  executeSeconds: number;
  stateSeconds: ReadonlyMap<string, number>;
}

/** How close a state's time must be to the execute ledgers' time to be taken for the executing state. */
const EXECUTE_MATCH = 0.01;

/**
 * The executing state from metrics alone: an execute ledger runs from `execute()`, which enters
 * the executing state, to `end()`, which leaves it, and task.execute.time holds its whole wall
 * time (activities and `other`, or one lump when it failed); so the executing state's seconds
 * equal the execute time. The state within 1% of it, the closest; undefined when none is (no
 * ledgers, or a machine whose executions span several states).
 */
export function stateOfExecuteTime({ executeSeconds, stateSeconds }: ExecuteTime): string | undefined {
  if (!(executeSeconds > 0)) return undefined;
  let best: string | undefined;
  let closest = EXECUTE_MATCH;
  for (const [state, seconds] of stateSeconds) {
    const off = Math.abs(seconds - executeSeconds) / executeSeconds;
    if (off <= closest) [best, closest] = [state, off];
  }
  return best;
}

/**
 * The state columns' order for `states`: undefined (the tables' own lifecycle order) when every
 * one of them is a Dask state; else the order the journeys lived them (below), then the states
 * no sequence holds, by Dask's lifecycle and then by name.
 *
 * The lived order merges the sequences into one: each move `a → b` seen says `a` comes first,
 * unless `b` already comes before `a` (a retry going back: `delayed → waiting`), and states with
 * nothing before them are taken in the order they were first seen.
 */
export function stateOrder(states: Iterable<string>, sequences: readonly (readonly string[])[]): string[] | undefined {
  const wanted = [...new Set(states)];
  if (wanted.every((state) => PRESET_STATES.has(state))) return undefined;
  const firstSeen = new Map<string, number>();
  const after = new Map<string, Set<string>>();
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const state = stack.pop()!;
      if (state === to) return true;
      if (seen.has(state)) continue;
      seen.add(state);
      for (const next of after.get(state) ?? []) stack.push(next);
    }
    return false;
  };
  for (const sequence of sequences) {
    for (let index = 0; index < sequence.length; index++) {
      const state = sequence[index];
      if (!firstSeen.has(state)) firstSeen.set(state, firstSeen.size);
      if (index === 0) continue;
      const previous = sequence[index - 1];
      if (previous === state || after.get(previous)?.has(state) === true || reaches(state, previous)) continue;
      let targets = after.get(previous);
      if (targets === undefined) after.set(previous, (targets = new Set()));
      targets.add(state);
    }
  }
  // Kahn's topological order over the acyclic moves kept, the earliest seen first among the ready.
  const before = new Map<string, number>();
  for (const state of firstSeen.keys()) before.set(state, 0);
  for (const targets of after.values()) for (const target of targets) before.set(target, before.get(target)! + 1);
  const lived: string[] = [];
  const ready = [...firstSeen.keys()].filter((state) => before.get(state) === 0);
  while (ready.length > 0) {
    ready.sort((a, b) => firstSeen.get(a)! - firstSeen.get(b)!);
    const state = ready.shift()!;
    lived.push(state);
    for (const target of after.get(state) ?? []) {
      const left = before.get(target)! - 1;
      before.set(target, left);
      if (left === 0) ready.push(target);
    }
  }
  const rank = new Map(lived.map((state, position) => [state, position]));
  return wanted.sort(
    (a, b) => (rank.get(a) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b) ?? Number.MAX_SAFE_INTEGER) || byLifecycle(a, b),
  );
}
