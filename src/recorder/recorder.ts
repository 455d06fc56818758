import type { Key } from "../model/keys.js";
import { keyId } from "./key-id.js";
import { QUEUED_ACTIVITY } from "../model/activities.js";
import type { DurationStats } from "../model/statistics/index.js";
import { stateCell } from "./accumulators.js";
import { Transfer, type Journey } from "./journey.js";
import type { LedgerHost } from "./ledger.js";
import { ExecutionLedger } from "./execution-ledger.js";
import { addTransferShare, TransferLedger } from "./transfer-ledger.js";
import type { NoLedger } from "./no-ledger.js";
import { show } from "../model/show.js";
import { Serve, ServeLedger } from "./serve-ledger.js";
import { arrayLength, element, fitted, sizedList, unlisted } from "./key-lists.js";
import { LiveJourneysRecorder } from "./live-journeys.js";
import type { Computation } from "./computations.js";

/**
 * The hot path: a pure state machine from transitions and ledger events to journeys and
 * accumulators. It knows nothing of OpenTelemetry; finished journeys go to `listener`.
 */
export class Recorder extends LiveJourneysRecorder implements LedgerHost {
  dependencies(key: Key, dependencies: readonly Key[]): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const count = arrayLength(dependencies);
    if (count < 0) {
      this.drop("invalid-key", `dependencies() takes an array of keys, not ${unlisted(dependencies, count)}`);
      return;
    }
    if (!this.deps.tell(id, this.idsOf(dependencies, count))) {
      this.drop("dependencies-overflow", "over 100000 keys told dependencies() before their journey began");
    }
  }

  /** Why the key sits in a queued state (`fetch`: e.g. "local-saturated"): its queue time is reported under it. */
  queued(key: Key, reason: string): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const journey = this.live.get(id);
    if (journey === undefined || this.machine.queued[journey.state] !== 1) return;
    if (typeof reason !== "string") {
      this.drop("invalid-name", `queued() given a reason that is ${show(reason)}, not a string`);
      return;
    }
    let activity = this.queueReasons.get(reason);
    if (activity === undefined) {
      activity = this.activityId(`${QUEUED_ACTIVITY} (${reason})`);
      // Bounded like the activities themselves: past the limit, reasons are looked up each time.
      if (this.queueReasons.size < this.activities.limit) this.queueReasons.set(reason, activity);
    }
    journey.queueReason = activity;
  }

  execute(key: Key, at?: number): ExecutionLedger | NoLedger {
    const time = this.now(at);
    const id = this.idOf(key);
    if (id === undefined) return this.noLedger;
    const machine = this.machine;
    if (machine.executing === -1) {
      this.drop(
        "no-ledger-state",
        `execute(${show(key)}) with a state machine that declares no executing state: the ledger records nothing. ` +
          `Declare the state a run is in, defineMachine({ …, executing: "<state>" }), or record the run with transition()`,
        undefined,
        "no-ledger-state execute",
      );
      return this.noLedger;
    }
    let journey = this.liveJourney(id);
    if (journey === undefined) journey = this.begin(key, id, machine.executing, time);
    else if (machine.running[journey.state] !== 1) this.moveForLedger(journey, machine.executing, time);
    if (journey.ended) return this.noLedger;
    journey.openLedgers++;
    return new ExecutionLedger(this, journey, time);
  }

  gather(peer: string, keys: readonly Key[], bytes?: number, at?: number): TransferLedger | NoLedger {
    const time = this.now(at);
    const count = arrayLength(keys);
    if (count < 0) {
      this.drop("invalid-key", `gather() takes an array of keys, not ${unlisted(keys, count)}`);
      return this.noLedger;
    }
    if (typeof peer !== "string") {
      this.drop("invalid-name", `gather() given a peer that is ${show(peer)}, not a string; recorded as ""`);
      peer = "";
    }
    const flight = this.machine.transfer;
    if (flight === -1) {
      this.drop(
        "no-ledger-state",
        `gather(${show(peer)}, …) with a state machine that declares no transfer state: the ledger records nothing. ` +
          `Declare one, defineMachine({ …, transfer: { state: "<state>", retry: "<state>" } }), or record the transfer with transition()`,
        undefined,
        "no-ledger-state gather",
      );
      return this.noLedger;
    }
    let nbytes = 0;
    if (bytes !== undefined) {
      if (typeof bytes === "number" && bytes >= 0 && bytes <= Number.MAX_SAFE_INTEGER) nbytes = bytes;
      else this.drop("invalid-value", `gather() bytes ${show(bytes)}`);
    }
    const journeys = sizedList<Journey>(count);
    let filled = 0;
    for (let index = 0; index < count; index++) {
      const key = element(keys, index) as Key;
      const id = this.idOf(key);
      if (id === undefined) continue;
      let journey = this.liveJourney(id);
      if (journey === undefined) journey = this.begin(key, id, flight, time);
      else if (journey.state !== flight) this.moveForLedger(journey, flight, time);
      if (!journey.ended) {
        journeys[filled++] = journey;
        journey.openLedgers++;
      }
    }
    const transfer = new Transfer(++this.transferIds, peer, fitted(journeys, filled), nbytes, time);
    for (const journey of journeys) {
      // Evicted by a later key of this same call (maxLiveJourneys smaller than the transfer).
      if (journey.ended) {
        transfer.liveKeys--;
        continue;
      }
      // Literals when first: one transfer a key is the rule, and a `[]` pushed into reserves 17 slots.
      const transfers = journey.transfers;
      if (transfers === undefined) {
        journey.transfers = [transfer];
        journey.transferVisits = [journey.visitIndex];
      } else {
        transfers.push(transfer);
        journey.transferVisits!.push(journey.visitIndex);
      }
    }
    const listener = this.listener;
    if (listener?.transferStarted !== undefined) this.notify("transferStarted", listener.transferStarted, transfer);
    return new TransferLedger(this, transfer, time);
  }

  /** An execution ledger ended (it settled its own seconds): its journey moves on. */
  executionEnded(journey: Journey, nextState: number, time: number): void {
    // Never for an ended journey: its end closed its ledgers (closeLedgers), and they are quiet since.
    journey.openLedgers--;
    if (this.machine.running[journey.state] === 1) this.moveForLedger(journey, nextState, time);
  }

  /** A transfer ledger ended (it settled its own bytes and seconds): each key carried takes its share and moves on. */
  transferEnded(transfer: Transfer, nextState: number, lumpId: number, other: number, time: number): void {
    const journeys = transfer.journeys;
    const share = journeys.length > 0 ? 1 / journeys.length : 0;
    for (const journey of journeys) {
      // A key that ended (or was evicted) while in this transfer was let go then (closeLedgers).
      if (journey.ended) continue;
      journey.openLedgers--;
      if (journey.state !== this.machine.transfer) continue;
      // Each key carried gets an even share of the transfer's activities, on its flight visit.
      addTransferShare(journey.activityRecords(), journey.visitIndex, transfer, lumpId, other, share);
      this.moveForLedger(journey, nextState, time);
    }
    const listener = this.listener;
    if (listener?.transferEnded !== undefined) this.notify("transferEnded", listener.transferEnded, transfer);
  }

  /**
   * Opens the ledger of one get_data request `peer` made of this worker for `keys`. The keys'
   * journeys are not moved: serving data a worker holds is not a state of it.
   */
  serve(peer: string, keys: readonly Key[], at?: number): ServeLedger | NoLedger {
    const time = this.now(at);
    const count = arrayLength(keys);
    if (count < 0) {
      this.drop("invalid-key", `serve() takes an array of keys, not ${unlisted(keys, count)}`);
      return this.noLedger;
    }
    if (typeof peer !== "string") {
      this.drop("invalid-name", `serve() given a peer that is ${show(peer)}, not a string; recorded as ""`);
      peer = "";
    }
    const serve = new Serve(++this.serveIds, peer, this.idsOf(keys, count), time);
    return new ServeLedger(this, serve, this.serveTotals, (ended) => this.serveEnded(ended));
  }

  /** The map ids of the first `count` of `keys` (a list arrayLength() read), those that are keys; made at its size. */
  private idsOf(keys: readonly Key[], count: number): Array<string | number> {
    const ids = sizedList<string | number>(count);
    let filled = 0;
    for (let index = 0; index < count; index++) {
      const id = this.idOf(element(keys, index) as Key);
      if (id !== undefined) ids[filled++] = id;
    }
    return fitted(ids, filled);
  }

  protected serveEnded(serve: Serve): void {
    this.served.add(serve);
    const listener = this.listener;
    if (listener?.serveEnded !== undefined) this.notify("serveEnded", listener.serveEnded, serve);
  }

  /** The recently ended serves of `key`, oldest first. */
  servesOf(key: Key): Serve[] {
    const id = keyId(key);
    return id === undefined ? [] : this.served.of(id);
  }

  /**
   * Whether `key` has a live journey here or a finished one kept in the ring: journeyOf() without
   * rebuilding a kept journey as objects (inject() asks this of every unsampled result carrier,
   * where unpacking cost ~6.7 KB a task in the replayed worker, bench/cluster-instructions).
   */
  hasJourney(key: Key): boolean {
    let id: string | number | undefined;
    try {
      id = keyId(key);
    } catch {
      id = undefined;
    }
    if (id === undefined) return false;
    return this.live.has(id) || this.retained.endedIn(id) !== -1;
  }

  /** A live journey, or a recently finished one kept in the bounded ring. */
  journeyOf(key: Key): Journey | undefined {
    let id: string | number | undefined;
    try {
      id = keyId(key);
    } catch {
      id = undefined;
    }
    if (id === undefined) return undefined;
    return this.live.get(id) ?? this.retained.find(id);
  }

  /**
   * The computation `journey` was begun under: a live one's by its slot, a finished one's as the
   * retained ring kept it (its computation may have retired since; its totals are then those it
   * had when it retired). Undefined for none.
   */
  computationOfJourney(journey: Journey): Computation | undefined {
    const slot = journey.computationSlot;
    // A slot is the computation's while the journey is live and at its end (one with a live journey never retires).
    if (slot !== 0) return this.computations.at(slot);
    // A finished journey unpacked from the ring carries no slot: the ring kept its computation.
    return journey.ended ? this.retained.computationOf(journey.id) : undefined;
  }

  /** A cell's duration statistics; an unknown state is an `unknown-state` drop with empty statistics. */
  stats(prefix: string, state: string): DurationStats {
    const prefixId = typeof prefix === "string" ? this.prefixes.find(prefix) : -1;
    const id = this.machine.id(state);
    if (id === -1)
      this.drop(
        "unknown-state",
        `stats() of unknown state ${show(state)}; ${this.validStates()}`,
        undefined,
        `unknown-state stats() ${typeof state === "string" ? state.slice(0, 64) : typeof state}`,
      );
    const statistics = prefixId === -1 || id === -1 ? undefined : this.accumulators.durations[stateCell(prefixId, id)];
    return (statistics ?? this.config.makeStatistics()).snapshot();
  }
}
