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

/**
 * State names to ids without hashing the name: a perfect hash of its length and first and last
 * characters picks a slot, and one comparison with the name in that slot confirms it. It runs
 * twice per transition, where a Map lookup would cost several times as much.
 */
const SLOT_MASK = 63;
const [FIRST_FACTOR, LAST_FACTOR] = perfectFactors();
const STATE_SLOTS = new Int8Array(SLOT_MASK + 1).fill(-1);
for (let id = 0; id < STATE_COUNT; id++) STATE_SLOTS[stateSlot(ALL_STATES[id])] = id;

function stateSlot(name: string): number {
  return (name.length + name.charCodeAt(0) * FIRST_FACTOR + name.charCodeAt(name.length - 1) * LAST_FACTOR) & SLOT_MASK;
}

/** The smallest factors that give every state a slot of its own (found once, at load). */
function perfectFactors(): [number, number] {
  for (let first = 1; first <= SLOT_MASK; first++) {
    for (let last = 1; last <= SLOT_MASK; last++) {
      const taken = new Set<number>();
      for (const name of ALL_STATES) {
        taken.add((name.length + name.charCodeAt(0) * first + name.charCodeAt(name.length - 1) * last) & SLOT_MASK);
      }
      if (taken.size === STATE_COUNT) return [first, last];
    }
  }
  throw new Error("taskjourney: no perfect hash for the state names");
}

/** The id of a state name, or -1 when the name is not a state. */
export function stateId(name: string): number {
  if (typeof name !== "string" || name.length === 0) return -1;
  const id = STATE_SLOTS[stateSlot(name)];
  return id !== -1 && ALL_STATES[id] === name ? id : -1;
}

/** Orders state names as a task lives them (their ALL_STATES order), unknown names last, ties by name. */
export function byLifecycle(a: string, b: string): number {
  const x = stateId(a);
  const y = stateId(b);
  return (x === -1 ? Number.MAX_SAFE_INTEGER : x) - (y === -1 ? Number.MAX_SAFE_INTEGER : y) || a.localeCompare(b);
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

export const WORKER_TRANSITIONS: ReadonlyArray<readonly [WorkerState, WorkerState]> = [
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

export const SCHEDULER_TRANSITIONS: ReadonlyArray<readonly [SchedulerState, SchedulerState]> = [
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

/**
 * A role's transition table as the README shows it: one row per state, the states it may move
 * to, in lifecycle order. Generated here so the README cannot drift from the table the recorder
 * checks (`scripts/transition-tables.ts` writes it, test/docs/ checks it).
 */
export function transitionTableMarkdown(role: Role): string {
  const pairs: ReadonlyArray<readonly [string, string]> = role === "worker" ? WORKER_TRANSITIONS : SCHEDULER_TRANSITIONS;
  const states: readonly string[] = role === "worker" ? WORKER_STATES : SCHEDULER_STATES;
  const rows = ["| from | to |", "|---|---|"];
  for (const from of states) {
    const targets = pairs.filter(([source]) => source === from).map(([, to]) => to);
    if (targets.length === 0) continue;
    targets.sort(byLifecycle);
    rows.push(`| \`${from}\` | ${targets.map((to) => `\`${to}\``).join(", ")} |`);
  }
  return rows.join("\n");
}
