/**
 * A state machine as a user declares it (the `machine` option), and the compiled form the
 * recorder reads on the hot path: state names to small ids through a perfect hash found once, a
 * dense from × to table, and one byte mask per role a state can play. Dask's two machines are
 * presets declared the same way (states.ts).
 */
import type { ExecuteOutcome } from "./activities.js";

/**
 * Declares a state machine for the `machine` option, with its state names as a type: a name in
 * its transitions or roles that is not one of its states does not compile, and the journeys it
 * is given to take only its states in `transition()`.
 */
export function defineMachine<const S extends string>(machine: StateMachine<S>): StateMachine<S> {
  return machine;
}

/** One state, or several. */
export type OneOrMore<S extends string> = S | readonly S[];

/**
 * A scheduler's state machine. `S` is inferred from `states` only, so a name elsewhere that is
 * not one of them does not compile.
 */
export interface StateMachine<S extends string = string> {
  /** Every state, in the order a task lives them (tables and reports sort by it). At most 32. */
  readonly states: readonly S[];
  /** From each state, the states it may move to; any other move is an `impossible-transition`. */
  readonly transitions: { readonly [F in NoInfer<S>]?: readonly NoInfer<S>[] };
  /**
   * Where journeys end: `success` (an execution's "memory"), `failure` (kept by `keepErrors`,
   * span status ERROR) and `cancelled`, ends that are neither (Dask: released, forgotten). The
   * first of each is where a ledger's `end()` moves the key.
   */
  readonly terminal: {
    readonly success: OneOrMore<NoInfer<S>>;
    readonly failure: OneOrMore<NoInfer<S>>;
    readonly cancelled?: OneOrMore<NoInfer<S>>;
  };
  /**
   * The state a key is in before its journey here: a move out of it begins a journey without an
   * `unknown-key` drop, as a move out of a terminal state does (Dask: `released`, terminal too).
   */
  readonly initial?: NoInfer<S>;
  /** The state that waits for the task's dependencies: its time is apportioned among their fetch journeys. */
  readonly waiting?: NoInfer<S>;
  /** The states that run the task: `execute()` moves to the first; the execute ledger and `stats()` default to it. */
  readonly executing?: OneOrMore<NoInfer<S>>;
  /**
   * The transfer of a task's data from a peer (`gather()` moves keys to `state`); a busy or failed
   * transfer goes back to `retry`, a peer without the data to `missing` (else `retry`).
   */
  readonly transfer?: { readonly state: NoInfer<S>; readonly retry: NoInfer<S>; readonly missing?: NoInfer<S> };
  /** States a task waits in for a slot: `queued(key, reason)` reports their time under the reason. */
  readonly queued?: OneOrMore<NoInfer<S>>;
  /** The states in which the key is forgotten: its `describe()` ends there (Dask: forgotten). */
  readonly forgotten?: OneOrMore<NoInfer<S>>;
}

/**
 * Ids run from 0 to 31 in every machine: the per-(prefix, state) arrays have this stride, and a
 * state slot fits a byte. More states than this is a configuration error.
 */
export const STATE_STRIDE = 32;

/** The largest slot table the perfect hash may use. */
const MAX_SLOT_MASK = 255;

/** A declared machine, checked and compiled; see StateMachine for what each part means. */
export class Machine {
  /** State names by id: the machine's states, or the id space given (the Dask presets share one). */
  readonly names: readonly string[];
  /** The machine's own states, in its order. */
  readonly states: readonly string[];
  /** The allowed moves, as declared. */
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  /** 1 for the ids of this machine's states (the rest of a shared id space is another role's). */
  readonly member = new Uint8Array(STATE_STRIDE);
  /** from × to (stride STATE_STRIDE): 1 where the move is allowed. */
  readonly table = new Uint8Array(STATE_STRIDE * STATE_STRIDE);
  readonly terminal = new Uint8Array(STATE_STRIDE);
  /** Terminal states that are failures. */
  readonly failed = new Uint8Array(STATE_STRIDE);
  /** Terminal states that are successes. */
  readonly succeeded = new Uint8Array(STATE_STRIDE);
  /** The executing states. */
  readonly running = new Uint8Array(STATE_STRIDE);
  readonly queued = new Uint8Array(STATE_STRIDE);
  /** The transfer states (state, retry, missing): a worker journey beginning in one is a fetch journey. */
  readonly fetching = new Uint8Array(STATE_STRIDE);
  /** The states that forget a key. */
  readonly forgets = new Uint8Array(STATE_STRIDE);
  /**
   * The states an execution's `end(state)` may move to: this machine's, not executing, that an
   * executing state moves to. Decided here so that end() looks one up.
   */
  readonly endsExecution = new Uint8Array(STATE_STRIDE);
  /** Role ids; -1 where the machine has none. */
  readonly initial: number;
  readonly waiting: number;
  readonly executing: number;
  readonly transfer: number;
  readonly retry: number;
  readonly missing: number;
  readonly success: number;
  readonly failure: number;
  readonly cancelled: number;
  /** The terminal states' names. */
  readonly terminalNames: readonly string[];
  private readonly slots: Uint8Array;
  private readonly slotMask: number;
  private readonly firstFactor: number;
  private readonly lastFactor: number;
  private readonly middleFactor: number;
  /** Names no perfect hash separates are looked up here instead (slower, still correct). */
  private readonly byName: Map<string, number> | undefined;

  /**
   * Checks `definition` and compiles it; a fault is given to `bad` with the part at fault
   * (".states", ".transitions[\"x\"][0]", …), what it must be and what it is, and `bad` throws.
   * `idSpace`, when given, holds every state of the definition and fixes the ids.
   */
  constructor(
    definition: unknown,
    bad: (part: string, expected: string, value: unknown) => never,
    idSpace?: readonly string[],
  ) {
    if (definition === null || typeof definition !== "object")
      bad("", "a state machine { states, transitions, terminal, … }", definition);
    const given = definition as Record<string, unknown>;
    const states = given.states;
    if (
      !Array.isArray(states) ||
      states.length === 0 ||
      states.some((state) => typeof state !== "string" || state.length === 0)
    ) {
      bad(".states", "a non-empty array of non-empty state names", states);
    }
    const names = states as string[];
    for (let index = 0; index < names.length; index++) {
      if (names.indexOf(names[index]) !== index)
        bad(".states", `names without duplicates ("${names[index]}" is listed twice)`, states);
    }
    const space = idSpace ?? names;
    if (space.length > STATE_STRIDE) bad(".states", `at most ${STATE_STRIDE} states`, states.length);
    this.names = space;
    this.states = names;
    const idOf = (name: string): number => space.indexOf(name);
    for (const name of names) this.member[idOf(name)] = 1;
    const known = (part: string, value: unknown): number => {
      if (typeof value !== "string" || !names.includes(value))
        bad(part, `one of the machine's states (${names.join(", ")})`, value);
      return idOf(value as string);
    };
    const some = (part: string, value: unknown, required: boolean): number[] => {
      if (value === undefined && !required) return [];
      const list = typeof value === "string" ? [value] : value;
      if (!Array.isArray(list) || list.length === 0) bad(part, "a state or a non-empty array of states", value);
      return (list as unknown[]).map((state, index) =>
        known(typeof value === "string" ? part : `${part}[${index}]`, state),
      );
    };

    const transitions = given.transitions;
    if (transitions === null || typeof transitions !== "object" || Array.isArray(transitions)) {
      bad(".transitions", "an object from each state to the states it may move to", transitions);
    }
    const pairs: Array<readonly [string, string]> = [];
    for (const [from, targets] of Object.entries(transitions as object)) {
      const fromId = known(`.transitions`, from);
      if (!Array.isArray(targets)) bad(`.transitions["${from}"]`, "an array of states", targets);
      (targets as unknown[]).forEach((to, index) => {
        const toId = known(`.transitions["${from}"][${index}]`, to);
        if (this.table[fromId * STATE_STRIDE + toId] === 1) return;
        this.table[fromId * STATE_STRIDE + toId] = 1;
        pairs.push([from, to as string]);
      });
    }
    this.pairs = pairs;

    const terminal = given.terminal;
    if (terminal === null || typeof terminal !== "object")
      bad(".terminal", "{ success, failure, cancelled? } naming terminal states", terminal);
    const ends = terminal as Record<string, unknown>;
    const success = some(".terminal.success", ends.success, true);
    const failure = some(".terminal.failure", ends.failure, true);
    const cancelled = some(".terminal.cancelled", ends.cancelled, false);
    for (const id of [...success, ...failure, ...cancelled]) {
      if (this.terminal[id] === 1)
        bad(
          ".terminal",
          `each terminal state in one of success, failure, cancelled ("${space[id]}" is in two)`,
          terminal,
        );
      this.terminal[id] = 1;
    }
    for (const id of failure) this.failed[id] = 1;
    for (const id of success) this.succeeded[id] = 1;
    this.success = success[0];
    this.failure = failure[0];
    // An execution or transfer cancelled in a machine with no cancelled state fails.
    this.cancelled = cancelled[0] ?? failure[0];
    this.terminalNames = [...success, ...failure, ...cancelled].map((id) => space[id]);

    const live = (part: string, value: unknown): number => {
      const id = known(part, value);
      if (this.terminal[id] === 1) bad(part, "a state that is not terminal", value);
      return id;
    };
    this.initial = given.initial === undefined ? -1 : known(".initial", given.initial);
    this.waiting = given.waiting === undefined ? -1 : live(".waiting", given.waiting);
    const executing = some(".executing", given.executing, false).map((id, index) => {
      if (this.terminal[id] === 1) bad(`.executing[${index}]`, "a state that is not terminal", space[id]);
      return id;
    });
    for (const id of executing) {
      if (id === this.waiting) bad(".executing", `states other than the waiting one ("${space[id]}")`, given.executing);
      this.running[id] = 1;
    }
    this.executing = executing[0] ?? -1;
    for (const id of some(".queued", given.queued, false)) {
      if (this.terminal[id] === 1) bad(".queued", "states that are not terminal", given.queued);
      this.queued[id] = 1;
    }
    for (const id of some(".forgotten", given.forgotten, false)) this.forgets[id] = 1;
    const transfer = given.transfer;
    if (transfer === undefined) {
      this.transfer = this.retry = this.missing = -1;
    } else {
      if (transfer === null || typeof transfer !== "object") bad(".transfer", "{ state, retry, missing? }", transfer);
      const parts = transfer as Record<string, unknown>;
      this.transfer = live(".transfer.state", parts.state);
      this.retry = live(".transfer.retry", parts.retry);
      this.missing = parts.missing === undefined ? -1 : live(".transfer.missing", parts.missing);
      if (this.running[this.transfer] === 1 || this.transfer === this.waiting)
        bad(".transfer.state", "a state that neither waits nor executes", parts.state);
      for (const id of [this.transfer, this.retry, this.missing]) if (id !== -1) this.fetching[id] = 1;
    }

    for (let to = 0; to < STATE_STRIDE; to++) {
      if (this.member[to] !== 1 || this.running[to] === 1) continue;
      for (let from = 0; from < STATE_STRIDE; from++)
        if (this.running[from] === 1 && this.table[from * STATE_STRIDE + to] === 1) this.endsExecution[to] = 1;
    }

    const hash = perfectHash(space);
    this.slotMask = hash?.mask ?? 0;
    this.firstFactor = hash?.first ?? 0;
    this.lastFactor = hash?.last ?? 0;
    this.middleFactor = hash?.middle ?? 0;
    this.slots = new Uint8Array(this.slotMask + 1).fill(255);
    if (hash !== undefined)
      for (let id = 0; id < space.length; id++)
        this.slots[slot(space[id], hash.first, hash.last, hash.middle, hash.mask)] = id;
    this.byName = hash === undefined ? new Map(space.map((name, id) => [name, id])) : undefined;
  }

  /**
   * The id of a state name in the id space, or -1. A slot from the name's length and first, last
   * (and, where those do not tell the names apart, middle) characters, and one comparison with
   * the name in that slot: it runs twice per transition, where a Map lookup costs several times as much.
   */
  id(name: string): number {
    if (typeof name !== "string" || name.length === 0) return -1;
    const last = name.length - 1;
    const middle = this.middleFactor;
    const id =
      this.slots[
        (name.length +
          name.charCodeAt(0) * this.firstFactor +
          name.charCodeAt(last) * this.lastFactor +
          (middle === 0 ? 0 : name.charCodeAt(last >> 1) * middle)) &
          this.slotMask
      ];
    if (id !== 255 && this.names[id] === name) return id;
    // Without a perfect hash every slot is empty: the Map answers, off the path of the presets.
    const byName = this.byName;
    return byName === undefined ? -1 : (byName.get(name) ?? -1);
  }

  /**
   * What an execution that ends in state `id` was: "memory" into a success, "cancelled" into a
   * terminal state that is neither success nor failure (Dask's released), else "error" (a
   * failure, or a state the journey goes on from, a retry's delayed).
   */
  executeOutcome(id: number): ExecuteOutcome {
    if (this.succeeded[id] === 1) return "memory";
    return this.terminal[id] === 1 && this.failed[id] !== 1 ? "cancelled" : "error";
  }

  /** Orders state names as a task lives them (the id order), unknown names last, ties by name. */
  compare(a: string, b: string): number {
    const x = this.id(a);
    const y = this.id(b);
    return (x === -1 ? Number.MAX_SAFE_INTEGER : x) - (y === -1 ? Number.MAX_SAFE_INTEGER : y) || a.localeCompare(b);
  }

  /** The transition table as docs/state-machines.md shows it: one row per state with moves, its targets in lifecycle order. */
  markdown(): string {
    const rows = ["| from | to |", "|---|---|"];
    for (const from of this.states) {
      const targets = this.pairs.filter(([source]) => source === from).map(([, to]) => to);
      if (targets.length === 0) continue;
      targets.sort((a, b) => this.compare(a, b));
      rows.push(`| \`${from}\` | ${targets.map((to) => `\`${to}\``).join(", ")} |`);
    }
    return rows.join("\n");
  }
}

function slot(name: string, first: number, last: number, middle: number, mask: number): number {
  const end = name.length - 1;
  return (
    (name.length +
      name.charCodeAt(0) * first +
      name.charCodeAt(end) * last +
      (middle === 0 ? 0 : name.charCodeAt(end >> 1) * middle)) &
    mask
  );
}

/**
 * The smallest table and factors that give every name a slot of its own, found once per machine:
 * first without the middle character (cheaper per lookup), then with it; undefined when names
 * alike in all four (length, first, middle, last) leave no perfect hash.
 */
function perfectHash(
  names: readonly string[],
): { mask: number; first: number; last: number; middle: number } | undefined {
  const taken = new Uint8Array(MAX_SLOT_MASK + 1);
  const fits = (first: number, last: number, middle: number, mask: number): boolean => {
    taken.fill(0, 0, mask + 1);
    for (const name of names) {
      const at = slot(name, first, last, middle, mask);
      if (taken[at] === 1) return false;
      taken[at] = 1;
    }
    return true;
  };
  for (let mask = 63; mask <= MAX_SLOT_MASK; mask = mask * 2 + 1) {
    for (let first = 1; first <= 63; first++)
      for (let last = 1; last <= 63; last++) if (fits(first, last, 0, mask)) return { mask, first, last, middle: 0 };
    for (let middle = 1; middle <= 15; middle++) {
      for (let first = 1; first <= 31; first++)
        for (let last = 1; last <= 31; last++)
          if (fits(first, last, middle, mask)) return { mask, first, last, middle };
    }
  }
  return undefined;
}
