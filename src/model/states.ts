/**
 * The states of a key on a worker and on the scheduler, with Dask's names, and the transitions
 * each role allows. States are interned to small integers once, here, so the recorder indexes
 * typed arrays instead of hashing strings per transition.
 */

export const WORKER_STATES = [
  "released",
  "waiting",
  "fetch",
  "missing",
  "flight",
  "ready",
  "constrained",
  "executing",
  "long-running",
  "rescheduled",
  "cancelled",
  "resumed",
  "memory",
  "error",
  "forgotten",
] as const;

export const SCHEDULER_STATES = [
  "released",
  "waiting",
  "no-worker",
  "queued",
  "processing",
  "memory",
  "erred",
  "forgotten",
] as const;

export type WorkerState = (typeof WORKER_STATES)[number];
export type SchedulerState = (typeof SCHEDULER_STATES)[number];
export type TaskState = WorkerState | SchedulerState;
export type Role = "worker" | "scheduler";

/** Every state of either role, in one id space: worker states first, then the scheduler's own. */
export const ALL_STATES: readonly TaskState[] = [
  ...WORKER_STATES,
  ...SCHEDULER_STATES.filter((state) => !(WORKER_STATES as readonly string[]).includes(state)),
];
export const STATE_COUNT = ALL_STATES.length;

const stateIds = new Map<string, number>(ALL_STATES.map((state, id) => [state, id]));

/** The id of a state name, or -1 when the name is not a state. */
export function stateId(name: string): number {
  const id = stateIds.get(name);
  return id === undefined ? -1 : id;
}

export function stateName(id: number): TaskState {
  return ALL_STATES[id];
}

/** A journey ends when its key enters one of these. `released` also starts journeys. */
export const TERMINAL_STATES: readonly TaskState[] = [
  "memory",
  "error",
  "erred",
  "released",
  "forgotten",
  "cancelled",
];

const WORKER_TRANSITIONS: ReadonlyArray<readonly [WorkerState, WorkerState]> = [
  // After distributed/worker_state_machine.py's transition table, plus the `cancelled` exits that
  // our journeys treat as terminal (a key released while executing or in flight).
  ["released", "waiting"],
  ["released", "fetch"],
  ["released", "missing"],
  ["released", "memory"],
  ["released", "error"],
  ["released", "forgotten"],
  ["waiting", "ready"],
  ["waiting", "constrained"],
  ["waiting", "released"],
  ["waiting", "memory"],
  ["waiting", "cancelled"],
  ["fetch", "flight"],
  ["fetch", "missing"],
  ["fetch", "released"],
  ["fetch", "memory"],
  ["fetch", "cancelled"],
  ["missing", "fetch"],
  ["missing", "released"],
  ["missing", "error"],
  ["missing", "cancelled"],
  ["flight", "memory"],
  ["flight", "fetch"],
  ["flight", "missing"],
  ["flight", "error"],
  ["flight", "released"],
  ["flight", "cancelled"],
  ["ready", "executing"],
  ["ready", "released"],
  ["ready", "cancelled"],
  ["constrained", "executing"],
  ["constrained", "released"],
  ["constrained", "cancelled"],
  ["executing", "memory"],
  ["executing", "error"],
  ["executing", "long-running"],
  ["executing", "rescheduled"],
  ["executing", "released"],
  ["executing", "cancelled"],
  ["long-running", "memory"],
  ["long-running", "error"],
  ["long-running", "rescheduled"],
  ["long-running", "released"],
  ["long-running", "cancelled"],
  ["rescheduled", "released"],
  ["rescheduled", "forgotten"],
  ["resumed", "memory"],
  ["resumed", "error"],
  ["resumed", "fetch"],
  ["resumed", "waiting"],
  ["resumed", "released"],
  ["resumed", "rescheduled"],
  ["resumed", "cancelled"],
  ["cancelled", "resumed"],
  ["cancelled", "released"],
  ["cancelled", "memory"],
  ["cancelled", "error"],
  ["memory", "released"],
  ["memory", "forgotten"],
  ["error", "released"],
  ["error", "forgotten"],
];

const SCHEDULER_TRANSITIONS: ReadonlyArray<readonly [SchedulerState, SchedulerState]> = [
  // After distributed/scheduler.py's SchedulerState._TRANSITIONS_TABLE.
  ["released", "waiting"],
  ["released", "forgotten"],
  ["released", "erred"],
  ["released", "memory"],
  ["waiting", "processing"],
  ["waiting", "queued"],
  ["waiting", "no-worker"],
  ["waiting", "memory"],
  ["waiting", "released"],
  ["waiting", "erred"],
  ["queued", "processing"],
  ["queued", "released"],
  ["queued", "erred"],
  ["queued", "waiting"],
  ["no-worker", "processing"],
  ["no-worker", "released"],
  ["no-worker", "waiting"],
  ["no-worker", "erred"],
  ["no-worker", "memory"],
  ["processing", "memory"],
  ["processing", "erred"],
  ["processing", "released"],
  ["processing", "waiting"],
  ["memory", "released"],
  ["memory", "forgotten"],
  ["erred", "released"],
  ["erred", "forgotten"],
];

/**
 * A dense from × to table of the transitions a role allows: one byte lookup per transition.
 * Entries: 0 not allowed, 1 allowed.
 */
export function transitionTable(role: Role): Uint8Array {
  const table = new Uint8Array(STATE_COUNT * STATE_COUNT);
  const pairs = role === "worker" ? WORKER_TRANSITIONS : SCHEDULER_TRANSITIONS;
  for (const [from, to] of pairs) table[stateId(from) * STATE_COUNT + stateId(to)] = 1;
  return table;
}

/** Whether each state id belongs to a role, for rejecting scheduler states on a worker and back. */
export function stateMembership(role: Role): Uint8Array {
  const member = new Uint8Array(STATE_COUNT);
  const names: readonly string[] = role === "worker" ? WORKER_STATES : SCHEDULER_STATES;
  for (const name of names) member[stateId(name)] = 1;
  return member;
}

export function terminalMask(): Uint8Array {
  const mask = new Uint8Array(STATE_COUNT);
  for (const name of TERMINAL_STATES) mask[stateId(name)] = 1;
  return mask;
}
