import type { Key } from "../model/keys.js";
import { STATE_STRIDE } from "../model/machine.js";
import { stateCell } from "./accumulators.js";
import {
  ACTIVITY_FIELDS,
  addActivity,
  COMPUTE_JOURNEY,
  FETCH_JOURNEY,
  Journey,
  SCHEDULER_JOURNEY,
  type JourneyDetail,
  type JourneyKindId,
} from "./journey.js";
import { failureDetail } from "./failure-detail.js";
import { NamingRecorder } from "./naming.js";
import { LETS_GO } from "./listener.js";

/** Retired journeys kept for reuse at most: one is nearly always enough (a journey ends before the next begins). */
const SPARE_JOURNEYS = 8;
/**
 * Visits (two numbers each) and activity records (ACTIVITY_FIELDS each) a spare journey keeps room
 * for at most: 24 records, as a cluster worker's tasks have up to 18 (deserialize, the thread's
 * parts, spill writes); 8 left one task in twelve unreused there. At most ~1.4 KB a spare.
 */
const SPARE_VISIT_NUMBERS = 32;
const SPARE_RECORD_NUMBERS = 24 * ACTIVITY_FIELDS;
/**
 * A reused journey leaves the lists of dependents its dependencies hold (Dependencies.release):
 * at most this many dependencies, each listing at most SPARE_LIST_LENGTH dependents (a reduction's
 * few; a shuffle's thousands are not walked at each end, and its journeys not reused).
 */
const SPARE_DEPENDENCIES = 16;
const SPARE_LIST_LENGTH = 16;

/**
 * The recorder's journeys (a layer of the Recorder, see recorder-base.ts), the hot path: a key's
 * transitions begin, move, end and evict its live journey, kept in a Map and a list in begin
 * order; the repairs and drops of moves that do not fit (stale, duplicate, impossible), and the
 * ledgers a journey's end closes.
 */
export abstract class LiveJourneysRecorder extends NamingRecorder {
  /**
   * Retired journeys nothing references any more, reused by begin() (recycle() says which): a
   * journey's object, its visits' room and its activity records' room were ~460 of the ~960 B a
   * plain worker journey allocated (bench/guard). At most SPARE_JOURNEYS.
   */
  private readonly spare: Journey[] = [];

  transition(key: Key, from: string, to: string, at?: number, error?: unknown): void {
    // A time passed in is checked first; the clock is read only once the call records something
    // (a key ending without a journey here, the most common call after a journey, records nothing).
    const given = at === undefined ? Number.NaN : this.now(at);
    const fromId = this.stateOf(from, key);
    if (fromId === -1) return;
    const toId = this.stateOf(to, key);
    if (toId === -1) return;
    const id = this.idOf(key);
    if (id === undefined) return;
    if (this.described.size !== 0 && this.machine.forgets[toId] === 1) this.described.delete(id);
    const journey = this.liveJourney(id);
    if (journey === undefined) {
      // A key that ends without a journey here (memory → released, released → forgotten) is normal.
      const isTerminal = this.isTerminal;
      const fromLive = isTerminal[fromId] !== 1 && fromId !== this.machine.initial;
      if (isTerminal[toId] === 1) {
        // The end told again (after the ledger's end() made it, or re-delivered) is harmless; a
        // different end for a journey that ended is a late event of it.
        if (fromLive) this.endedOtherwise(id, fromId, toId);
        // From a machine's initial state straight to an end (a job skipped before it was ready):
        // a whole journey, begun and ended at once, so that it is counted where it ended. Not
        // from an initial state that is also an end (Dask's released → forgotten ends nothing new).
        else if (fromId === this.machine.initial && isTerminal[fromId] !== 1) this.beginEnded(key, id, toId, given);
        return;
      }
      // A journey begins from the machine's initial state or a terminal one (Dask's released is both).
      if (fromLive && this.withoutJourney(id, fromId, toId)) return;
      // The clock read here, not in begin(): V8 inlined tick() into begin() but not the clock's
      // process.hrtime() beneath it (past begin()'s inlining budget, which keyPrefixId() takes),
      // and each reading allocated its array (+64 B a journey, bench/guard). The reading goes
      // through the field, so none crosses a call boxed (see tick()).
      let time = given;
      if (time !== time) {
        this.tick();
        time = this.lastClock;
      }
      this.begin(key, id, toId, time);
      return;
    }
    if (toId === journey.state && fromId !== toId && !journey.movedByLedger) {
      // The same move told again (a scheduler's retried or re-delivered event): repairing it from
      // where the key is would split one visit into two of the same state.
      const names = this.machine.names;
      this.drop(
        "duplicate-transition",
        `${names[fromId]} → ${names[toId]} of a key already in ${names[toId]} (told twice?); ignored`,
        journey,
      );
      return;
    }
    if (error !== undefined) {
      // The caller's report of a move an execute ledger's end() made (active → delayed): the
      // attempt is the visit before, and the ledger's own error, when it had one, stands.
      if (journey.movedByLedger && journey.state === toId && fromId !== toId) {
        const left = journey.visitIndex - 1;
        if (left >= 0 && journey.visitState(left) === fromId) journey.explainAttempt(failureDetail(error), left);
      } else this.attemptFailed(journey, fromId, toId, error);
    }
    this.move(journey, fromId, toId, given);
  }

  /**
   * A move out of a live state of a key with no live journey. When the key's last journey ended
   * here, among the retained ones, the move is stale (a late or repeated event of that journey): it
   * is dropped, and true returned, so that no journey begins that nothing would ever end and that
   * would stand in explain() for the one that ended. Else the journey begins at `to` (instrumenting
   * a scheduler already running), counted as unknown-key.
   */
  protected withoutJourney(id: string | number, fromId: number, toId: number): boolean {
    const names = this.machine.names;
    const move = `${names[fromId]} → ${names[toId]}`;
    const hint =
      this.machine.running[fromId] === 1
        ? ` (if an execute ledger's end() ended it: end the ledger with the state the key goes to, end("${names[toId]}", error), or return "${names[toId]}" from instrument()'s outcome mapper)`
        : "";
    const ended = this.retained.endedIn(id);
    if (ended !== -1) {
      this.drop(
        "stale-transition",
        `${move} of a key whose journey ended in ${names[ended]}: ignored; a new journey begins only from ` +
          `${this.machine.initial === -1 ? "" : `${names[this.machine.initial]} or `}a terminal state${hint}`,
      );
      return true;
    }
    this.drop("unknown-key", `${move} of a key with no journey; a journey starts at ${names[toId]}${hint}`);
    return false;
  }

  /** A move into an end of a key whose retained journey ended in another: stale, counted. */
  protected endedOtherwise(id: string | number, fromId: number, toId: number): void {
    // The journey that just ended is the ring's newest: found at once in the usual case.
    const ended = this.retained.endedIn(id);
    if (ended === -1 || ended === toId) return;
    const names = this.machine.names;
    this.drop(
      "stale-transition",
      `${names[fromId]} → ${names[toId]} of a key whose journey ended in ${names[ended]}: ignored`,
    );
  }

  /**
   * The live journey of a key id. The last one looked up, begun or ended is remembered, so the
   * calls that follow each other for one key (a transition and its ledger, a ledger's end and
   * the caller's own transition) skip the Map. `recentJourney` is always `live.get(recentId)`:
   * `live` changes only through addLive() and removeLive(), which keep it so.
   */
  protected liveJourney(id: string | number): Journey | undefined {
    if (id === this.recentId) return this.recentJourney;
    const journey = this.live.get(id);
    this.recentId = id;
    this.recentJourney = journey;
    return journey;
  }

  protected addLive(id: string | number, journey: Journey): void {
    this.live.set(id, journey);
    this.recentId = id;
    this.recentJourney = journey;
    const newest = this.newestLive;
    journey.older = newest;
    if (newest === undefined) {
      this.oldestLive = journey;
      // The first live journey after none: the stall probe goes back to its full rate now, not at
      // its next idle tick (up to a second later, missing the stalls of that second's tasks).
      this.onFirstLive?.();
    } else newest.newer = journey;
    this.newestLive = journey;
  }

  /** The live journey that began first (begin order, as eviction takes them), or undefined. */
  oldestLiveJourney(): Journey | undefined {
    return this.oldestLive;
  }

  protected removeLive(journey: Journey): void {
    // Only if it is the live one: a finished journey is never removed in place of its successor.
    if (this.recentJourney !== journey && this.live.get(journey.id) !== journey) return;
    this.live.delete(journey.id);
    this.recentId = journey.id;
    this.recentJourney = undefined;
    const older = journey.older;
    const newer = journey.newer;
    if (older === undefined) this.oldestLive = newer;
    else older.newer = newer;
    if (newer === undefined) this.newestLive = older;
    else newer.older = older;
    // A retained journey must not keep its former neighbours alive.
    journey.older = undefined;
    journey.newer = undefined;
  }

  /**
   * Past maxLiveJourneys, the journey that began first is abandoned to make room: it ends where
   * it is, its current visit counted as abandoned, not finished (it has no end), its open ledgers closed, its
   * spans ended and marked abandoned (the listener's journeyAbandoned); counted and told once.
   */
  protected evictOldest(time: number): void {
    const journey = this.oldestLive!;
    this.failures.fault(
      "live-journeys-limit",
      `more than limits.maxLiveJourneys (${this.maxLive}) journeys live at once: the oldest are abandoned to make room (their spans end marked taskjourney.abandoned). ` +
        "Keys that never reach a terminal state (memory, released, forgotten, …) hold their journeys until they do; else raise limits.maxLiveJourneys.",
    );
    const start = journey.stateStart;
    const end = time > start ? time : start;
    journey.more().abandonedAt = end;
    journey.ended = true;
    this.accumulators.abandon(stateCell(journey.prefixId, journey.state));
    if (journey.computationSlot !== 0) this.computations.abandoned(journey.computationSlot, end);
    if (journey.openLedgers !== 0) this.closeLedgers(journey, end, -1);
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    const listener = this.listener;
    if (listener?.journeyAbandoned !== undefined) this.notify("journeyAbandoned", listener.journeyAbandoned, journey);
  }

  /**
   * A journey ended (`terminal`, a state id) or was evicted (-1) at `time` with ledgers still
   * open: each execution ledger on it closes there (settled under the outcome the terminal state
   * implies, or not at all when evicted), and each transfer carrying it closes once every key it
   * carried ended, else goes on without this key. A closed ledger is counted when its journey
   * ended; an eviction is counted once for all of it.
   */
  protected closeLedgers(journey: Journey, time: number, terminal: number): void {
    const outcome = terminal === -1 ? undefined : this.machine.executeOutcome(terminal);
    for (let ledger = journey.execution; ledger !== undefined; ledger = journey.execution) {
      if (outcome !== undefined) this.ledgerClosed("execute()", terminal);
      ledger.closeEarly(time, outcome);
    }
    const transfers = journey.transfers;
    if (transfers !== undefined) {
      for (const transfer of transfers) {
        const ledger = transfer.ledger;
        if (ledger === undefined || --transfer.liveKeys > 0) continue;
        if (outcome !== undefined) this.ledgerClosed("gather()", terminal);
        ledger.closeEarly(time, outcome !== undefined);
      }
    }
    journey.openLedgers = 0;
  }

  /**
   * Why the attempt the journey is leaving failed, as the scheduler knows it (a job's failedReason,
   * on active → delayed for a retry or active → failed for good): the visit left is marked as a
   * failed attempt, as an execution's error marks its own; a move into a failure state gives the
   * journey its failure too, unless an execution recorded one. With a move into a success state
   * the reason contradicts the move: counted, not recorded.
   */
  protected attemptFailed(journey: Journey, fromId: number, toId: number, error: unknown): void {
    if (this.machine.succeeded[toId] === 1) {
      const names = this.machine.names;
      this.drop(
        "invalid-outcome",
        `an error given with ${names[fromId]} → ${names[toId]}, a success; not recorded`,
        journey,
      );
      return;
    }
    const reason = failureDetail(error);
    const machine = this.machine;
    // A move into a failure state, or on to another attempt, is an error; into another end (a job
    // cancelled because its parent failed), that end says what became of the attempt.
    const ends = this.isTerminal[toId] === 1 && machine.failed[toId] !== 1;
    journey.addReason(reason, journey.visitIndex, ends ? machine.names[toId] : undefined);
    if (machine.failed[toId] === 1 && journey.failure === undefined) journey.failure = reason;
  }

  protected ledgerClosed(ledger: string, terminal: number): void {
    this.failures.fault(
      "ledger-open-at-end",
      `a key reached ${this.machine.names[terminal]} while its ${ledger} ledger was still open: the ledger is closed there, and its own end() later does nothing. ` +
        "End a ledger before the key's terminal transition (end() makes it).",
    );
  }

  /** `time` NaN: now (read here, see tick()). */
  protected begin(key: Key, id: string | number, state: number, time: number): Journey {
    if (time !== time) {
      this.tick();
      time = this.lastClock;
    }
    const description = this.described.size !== 0 ? this.described.get(id) : undefined;
    let prefix = description?.prefix ?? this.prefixHint;
    let prefixId = -1;
    if (prefix === undefined) {
      // The usual journey: a string key's own prefix, one seen before (keyPrefixId, a cache).
      const ownPrefix = typeof key === "string" && this.config.keyPrefix === undefined;
      if (ownPrefix) prefixId = this.keyPrefixId(key);
      if (prefixId === -1) {
        prefix = this.prefixOf(key, id);
        prefixId = this.internPrefix(prefix);
        if (ownPrefix) this.rememberPrefix(key, prefixId);
      }
    } else prefixId = this.internPrefix(prefix);
    const kind: JourneyKindId =
      this.role === "scheduler"
        ? SCHEDULER_JOURNEY
        : this.machine.fetching[state] === 1
          ? FETCH_JOURNEY
          : COMPUTE_JOURNEY;
    const sampler = this.config.sampler;
    const sampled = sampler !== undefined && sampler(id);
    if (this.live.size >= this.maxLive) this.evictOldest(time);
    let journey = this.spare.pop();
    if (journey === undefined) journey = new Journey(key, id, prefixId, kind, time, sampled, state);
    else journey.reuse(key, id, prefixId, kind, time, sampled, state);
    // The interned copy, when there is one: a prefix sliced from the key is a string of its own per journey.
    // (A prefix id found by keyPrefixId is a named one: `prefix` is set whenever it is the overflow.)
    journey.prefixName = prefixId !== this.prefixes.limit ? this.prefixes.names[prefixId] : prefix!;
    if (description?.group !== undefined) journey.group = description.group;
    const computation = this.computationHint;
    if (computation !== undefined) journey.computationSlot = this.computations.begin(computation, time);
    this.addLive(id, journey);
    const deps = this.deps;
    if (state === this.machine.transfer && deps.dependentsOf.size > 0) deps.enteredFlight(journey);
    this.accumulators.transitions[stateCell(prefixId, state)] += 1;
    if (deps.hasWaiting()) deps.begun(journey);
    if (sampled) {
      const listener = this.listener;
      if (listener?.journeyStarted !== undefined) this.notify("journeyStarted", listener.journeyStarted, journey);
    }
    return journey;
  }

  /** `time` NaN: now (read here, see tick()). */
  protected move(journey: Journey, fromId: number, toId: number, time: number): void {
    const current = journey.state;
    const movedByLedger = journey.movedByLedger;
    // Written only when set: the flag's setter (a read-modify-write of the journey's flags) was
    // not inlined here, ~25 instructions a move for nothing most of the time.
    if (movedByLedger) journey.movedByLedger = false;
    if (current !== fromId) {
      // Already there because a ledger moved it (execute() to executing, gather() to flight,
      // end() onwards) before the caller reported the same transition itself.
      if (current === toId && movedByLedger) return;
    }
    // The clock is read only past that repeat, which records nothing (one reading a worker journey).
    if (time !== time) {
      this.tick();
      time = this.lastClock;
    }
    if (current !== fromId) {
      const names = this.machine.names;
      this.drop(
        "state-mismatch",
        `${names[fromId]} → ${names[toId]} but the key is in ${names[current]}; repaired from ${names[current]}`,
        journey,
      );
    } else if (this.table[fromId * STATE_STRIDE + toId] !== 1) {
      const names = this.machine.names;
      this.drop(
        "impossible-transition",
        `${names[fromId]} → ${names[toId]} is not a transition of the ${this.role}'s machine`,
        journey,
      );
    }
    const stateStart = journey.stateStart;
    if (time < stateStart) {
      this.drop("time-backwards", `a transition at ${time} before the state began at ${stateStart}`, journey);
      time = stateStart;
    }
    const accumulators = this.accumulators;
    const prefixId = journey.prefixId;
    accumulators.visit(stateCell(prefixId, current), time - stateStart);
    // One comparison for a journey without a computation; with one, an add into its Float64Array.
    const slot = journey.computationSlot;
    if (slot !== 0) this.computations.visit(slot, current, time - stateStart);
    accumulators.transitions[stateCell(prefixId, toId)] += 1;
    const machine = this.machine;
    if (current === machine.waiting) this.deps.apportion(journey, time);
    else if (machine.queued[current] === 1) this.leaveQueue(journey, time);
    // From fetch as usual, or straight from missing/released when the caller's gather() is first.
    if (toId === machine.transfer && this.deps.dependentsOf.size > 0) this.deps.enteredFlight(journey);

    if (this.isTerminal[toId] === 1) {
      this.finish(journey, toId, time);
      return;
    }
    journey.visits.push(toId, time);
    journey.state = toId;
    if (journey.sampled) {
      const listener = this.listener;
      if (listener?.stateEntered !== undefined) this.notify("stateEntered", listener.stateEntered, journey);
    }
  }

  /** A move a ledger makes on the caller's behalf; the caller may still report it, harmlessly. */
  protected moveForLedger(journey: Journey, toId: number, time: number): void {
    this.move(journey, journey.state, toId, time);
    journey.movedByLedger = true;
  }

  protected finish(journey: Journey, toId: number, time: number): void {
    // Ended first, so a transfer closed here (its last key) does not move this key on.
    journey.ended = true;
    if (journey.openLedgers !== 0) this.closeLedgers(journey, time, toId);
    journey.visits.push(toId, time);
    journey.state = toId;
    journey.outcomeState = toId;
    if (journey.computationSlot !== 0) this.computations.ended(journey.computationSlot, toId, time);
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    this.retire(journey);
  }

  /**
   * A journey that begins in an end (`toId`, terminal): its first visit is its end's zero-length
   * marker, so it ends as finish() ends one without pushing that marker again. Off the hot path.
   */
  private beginEnded(key: Key, id: string | number, toId: number, time: number): void {
    const journey = this.begin(key, id, toId, time);
    journey.ended = true;
    journey.outcomeState = toId;
    if (journey.computationSlot !== 0) this.computations.ended(journey.computationSlot, toId, journey.start);
    this.removeLive(journey);
    if (journey.dependencyIds !== undefined || journey.notedDependents !== undefined) this.deps.ended(journey);
    this.retire(journey);
  }

  /** Hands a finished journey out and keeps it for explain(). */
  protected retire(journey: Journey): void {
    const listener = this.listener;
    if (listener?.journeyEnded !== undefined) this.notify("journeyEnded", listener.journeyEnded, journey);
    const slot = journey.computationSlot;
    this.retained.add(journey, slot === 0 ? undefined : this.computations.at(slot));
    // A listener may keep the journey, unless it says it let it go (the span bridge, unkept).
    if (listener === undefined) this.recycle(journey);
    else if (listener[LETS_GO] !== undefined && listener[LETS_GO](journey)) this.recycle(journey);
  }

  /**
   * Keeps a retired journey for reuse when nothing can reach it any more. The ring copies what
   * it keeps (RetainedJourneys); the live map and list let go of it (removeLive). What may still
   * hold one, and so is never reused:
   * - a listener (the user's through addListener, or the span bridge): any listener, unless it
   *   says it keeps nothing of the journey (LETS_GO: the bridge, for an unsampled one it did not keep);
   * - a sampled journey (spans);
   * - a detail holding what others may reach (waitSources, notedDependents, transfers, span
   *   state, failures); one with dependencies, a waiting breakdown, fetchedBy, quantities, a
   *   group or a tuple key's id is reused, the detail object with it (reset);
   * - a dependent the dependency lists name that cannot leave them cheaply (Dependencies.release:
   *   a shuffle's long lists), or that a live fetch noted (its notedDependents hold it: `notedBy`);
   * - a fetch or scheduler journey (dependents and transfers reference fetches);
   * - an execution ledger that ended with an async activity pending (recordsHeld): it settles
   *   into the records later.
   * An ended ledger the caller still holds reads neither its journey nor its records: each
   * meter(), digest() and end() on it stops at `ended` (counted as ledger-ended as before).
   * Arrays grown past a plain journey's room are not kept: the spares' memory stays bounded.
   */
  private recycle(journey: Journey): void {
    if (
      journey.kind !== COMPUTE_JOURNEY ||
      journey.sampled ||
      // Ids handed out (the span bridge's state): a result carrier may still name them.
      journey.spanState !== undefined ||
      journey.recordsHeld ||
      journey.visits.length > SPARE_VISIT_NUMBERS ||
      journey.activities.length > SPARE_RECORD_NUMBERS ||
      this.spare.length >= SPARE_JOURNEYS
    )
      return;
    const detail = journey.detail;
    if (detail !== undefined) {
      if (!detailLetsGo(detail)) return;
      const ids = detail.dependencyIds;
      if (ids !== undefined && (ids.length > SPARE_DEPENDENCIES || !this.deps.release(journey, SPARE_LIST_LENGTH)))
        return;
    }
    this.spare.push(journey);
  }

  protected leaveQueue(journey: Journey, time: number): void {
    if (journey.queueReason !== -1) {
      const start = journey.stateStart;
      addActivity(journey.activityRecords(), journey.visitIndex, journey.queueReason, start, time, time - start);
      journey.queueReason = -1;
    }
  }
}

/**
 * Whether a retired journey's detail holds nothing another object may still reach or hand back:
 * no dependents' or fetches' lists of its own (waitSources, notedDependents, transfers), no live
 * fetch's list of dependents it is in (notedBy), no failure (kept by reference for explain()). Dependencies, the waiting breakdown and
 * fetchedBy, quantities, the group and the id are its own: copied by the ring, dropped at reuse.
 */
function detailLetsGo(detail: JourneyDetail): boolean {
  return (
    detail.waitSources === undefined &&
    detail.notedDependents === undefined &&
    detail.transfers === undefined &&
    detail.notedBy === 0 &&
    detail.failure === undefined &&
    detail.failureVisit === -1 &&
    detail.reasons === undefined
  );
}
