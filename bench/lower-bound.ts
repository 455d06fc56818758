/**
 * A lower bound for the core benchmark's targets: the least any recorder with taskjourney's call
 * shape (`transition(key, from, to)`, `execute(key).meter(activity, fn)`, `end()`) must do for the
 * same journey and the same statistics. It reads the clock where taskjourney does, keeps live
 * journeys in a Map by key, finds the key's prefix, and records each finished visit's duration in
 * the same DurationStatistics that `stats(prefix, state)` answers from, and each activity's seconds
 * per (prefix, activity).
 *
 * It is deliberately less than a recorder: it checks nothing (no unknown states, impossible
 * transitions, bad times, bad keys, role), cuts the prefix at the last hyphen instead of Dask's
 * key_split rules, caps no prefixes, keeps no visit list and no activity records (so no nesting, no spans, no
 * explain), no dependencies or transfers, no sampling, no finished-journey ring, no ambient ledger.
 * Whatever it costs, a recorder that does those things costs more; how far taskjourney is above it
 * says how much of a target is left to our own bookkeeping. Not exported, never used outside bench/.
 */
// DurationStatistics is an internal, not in the package entry: from its source (the same code).
import { DurationStatistics } from "../src/model/statistics/index.js";
import { library } from "./lib.js";

const { WORKER_STATES, TERMINAL_STATES } = library;
type DurationStatisticsType = DurationStatistics;

const STATE_IDS = new Map<string, number>(WORKER_STATES.map((state, id) => [state, id]));
const IS_TERMINAL = Uint8Array.from(WORKER_STATES, (state) =>
  (TERMINAL_STATES as readonly string[]).includes(state) ? 1 : 0,
);
const MEMORY = STATE_IDS.get("memory")!;
const EXECUTING = STATE_IDS.get("executing")!;
const MAX_PREFIXES = 1024;
const MAX_ACTIVITIES = 64;

class MinimalJourney {
  stateStart: number;
  constructor(
    readonly prefixId: number,
    public state: number,
    start: number,
  ) {
    this.stateStart = start;
  }
}

export class MinimalRecorder {
  private readonly live = new Map<string, MinimalJourney>();
  private readonly prefixes = new Map<string, number>();
  private readonly activities = new Map<string, number>();
  private readonly durations: DurationStatisticsType[] = [];
  private readonly activitySeconds = new Float64Array(MAX_PREFIXES * MAX_ACTIVITIES);

  constructor(readonly clock: () => number) {}

  transition(key: string, from: string, to: string): void {
    const toId = STATE_IDS.get(to)!;
    const journey = this.live.get(key);
    // As taskjourney does, the clock is read only once the call records something.
    if (journey === undefined) {
      if (IS_TERMINAL[toId] === 1 || STATE_IDS.get(from) === undefined) return;
      this.live.set(key, new MinimalJourney(this.prefixId(key), toId, this.clock()));
      return;
    }
    this.leave(journey, this.clock());
    journey.state = toId;
    if (IS_TERMINAL[toId] === 1) this.live.delete(key);
  }

  execute(key: string): MinimalLedger {
    return new MinimalLedger(this, this.live.get(key)!, key);
  }

  /** The statistics of a (prefix, state), as `stats()` would read them. */
  statistics(prefix: string, state: string): DurationStatisticsType | undefined {
    const prefixId = this.prefixes.get(prefix);
    return prefixId === undefined ? undefined : this.durations[prefixId * WORKER_STATES.length + STATE_IDS.get(state)!];
  }

  /** @internal for MinimalLedger */
  leave(journey: MinimalJourney, time: number): void {
    const cell = journey.prefixId * WORKER_STATES.length + journey.state;
    (this.durations[cell] ??= new DurationStatistics()).record(time - journey.stateStart);
    journey.stateStart = time;
  }

  /** @internal for MinimalLedger */
  addActivity(journey: MinimalJourney, activity: string, seconds: number): void {
    let id = this.activities.get(activity);
    if (id === undefined) this.activities.set(activity, (id = this.activities.size));
    this.activitySeconds[journey.prefixId * MAX_ACTIVITIES + id] += seconds;
  }

  /** @internal for MinimalLedger: the journey ends in memory when its execution does. */
  finish(key: string, journey: MinimalJourney, time: number): void {
    this.leave(journey, time);
    journey.state = MEMORY;
    this.live.delete(key);
  }

  private prefixId(key: string): number {
    const prefix = key.slice(0, key.lastIndexOf("-"));
    let id = this.prefixes.get(prefix);
    if (id === undefined) this.prefixes.set(prefix, (id = this.prefixes.size));
    return id;
  }
}

export class MinimalLedger {
  constructor(
    private readonly recorder: MinimalRecorder,
    private readonly journey: MinimalJourney,
    private readonly key: string,
  ) {
    // An execute ledger's start, read as taskjourney's is.
    recorder.clock();
  }

  meter<T>(activity: string, fn: () => T): T {
    const start = this.recorder.clock();
    try {
      return fn();
    } finally {
      this.recorder.addActivity(this.journey, activity, this.recorder.clock() - start);
    }
  }

  end(): void {
    if (this.journey.state === EXECUTING) this.recorder.finish(this.key, this.journey, this.recorder.clock());
  }
}
