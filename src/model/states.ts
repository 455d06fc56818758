/**
 * Dask's two state machines, a worker's and the scheduler's, declared as any user's machine is
 * (machine.ts): the presets of `role: "worker"` and `role: "scheduler"`. The lists and tables
 * exported here are derived from them. Both presets share one id space (worker states first, then
 * the scheduler's own), so a state of the other role is told as such (`wrong-role-state`).
 */
import { Machine, type StateMachine } from "./machine.js";

/** A worker's machine, after distributed/worker_state_machine.py's transition table. */
export const DASK_WORKER_MACHINE = {
  states: [
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
  ],
  // Plus the `cancelled` exits that our journeys treat as terminal (a key released while
  // executing or in flight).
  transitions: {
    released: ["waiting", "fetch", "missing", "memory", "error", "forgotten"],
    waiting: ["ready", "constrained", "released", "memory", "cancelled"],
    fetch: ["flight", "missing", "released", "memory", "cancelled"],
    missing: ["fetch", "released", "error", "cancelled"],
    flight: ["memory", "fetch", "missing", "error", "released", "cancelled"],
    ready: ["executing", "released", "cancelled"],
    constrained: ["executing", "released", "cancelled"],
    executing: ["memory", "error", "long-running", "rescheduled", "released", "cancelled"],
    "long-running": ["memory", "error", "rescheduled", "released", "cancelled"],
    rescheduled: ["released", "forgotten"],
    resumed: ["memory", "error", "fetch", "waiting", "released", "rescheduled", "cancelled"],
    cancelled: ["resumed", "released", "memory", "error"],
    memory: ["released", "forgotten"],
    error: ["released", "forgotten"],
  },
  terminal: { success: "memory", failure: "error", cancelled: ["cancelled", "released", "forgotten"] },
  initial: "released",
  waiting: "waiting",
  executing: ["executing", "long-running"],
  transfer: { state: "flight", retry: "fetch", missing: "missing" },
  queued: ["fetch", "ready", "constrained"],
  forgotten: "forgotten",
} as const satisfies StateMachine<string>;

/** The scheduler's machine, after distributed/scheduler.py's SchedulerState._TRANSITIONS_TABLE. */
export const DASK_SCHEDULER_MACHINE = {
  states: ["released", "waiting", "no-worker", "queued", "processing", "memory", "erred", "forgotten"],
  transitions: {
    released: ["waiting", "forgotten", "erred", "memory"],
    waiting: ["processing", "queued", "no-worker", "memory", "released", "erred"],
    queued: ["processing", "released", "erred", "waiting"],
    "no-worker": ["processing", "released", "waiting", "erred", "memory"],
    processing: ["memory", "erred", "released", "waiting"],
    memory: ["released", "forgotten"],
    erred: ["released", "forgotten"],
  },
  terminal: { success: "memory", failure: "erred", cancelled: ["released", "forgotten"] },
  initial: "released",
  waiting: "waiting",
  executing: "processing",
  queued: ["queued", "no-worker"],
  forgotten: "forgotten",
} as const satisfies StateMachine<string>;

export const WORKER_STATES = DASK_WORKER_MACHINE.states;
export const SCHEDULER_STATES = DASK_SCHEDULER_MACHINE.states;

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

/** A preset that does not compile is this file's bug, not a user's. */
function presetFault(part: string, expected: string, value: unknown): never {
  throw new Error(`taskjourney: Dask preset${part} must be ${expected}, got ${JSON.stringify(value)}`);
}

/** The compiled presets, by role (ids in ALL_STATES order). */
export const PRESETS: Readonly<Record<Role, Machine>> = {
  worker: new Machine(DASK_WORKER_MACHINE, presetFault, ALL_STATES),
  scheduler: new Machine(DASK_SCHEDULER_MACHINE, presetFault, ALL_STATES),
};

/** The id of a state name of either preset, or -1 when the name is not one. */
export function stateId(name: string): number {
  return PRESETS.worker.id(name);
}

/** Orders state names as a task lives them (their ALL_STATES order), unknown names last, ties by name. */
export function byLifecycle(a: string, b: string): number {
  return PRESETS.worker.compare(a, b);
}

/** A journey of either preset ends when its key enters one of these. `released` also starts journeys. */
export const TERMINAL_STATES: readonly TaskState[] = ALL_STATES.filter(
  (state) => PRESETS.worker.terminal[stateId(state)] === 1 || PRESETS.scheduler.terminal[stateId(state)] === 1,
);

export const WORKER_TRANSITIONS = PRESETS.worker.pairs as ReadonlyArray<readonly [WorkerState, WorkerState]>;
export const SCHEDULER_TRANSITIONS = PRESETS.scheduler.pairs as ReadonlyArray<
  readonly [SchedulerState, SchedulerState]
>;

/** A preset's transition table as docs/state-machines.md shows it (`scripts/transition-tables.ts` writes it, test/docs/ checks it). */
export function transitionTableMarkdown(role: Role): string {
  return PRESETS[role].markdown();
}
