import { SpanKind, type Attributes, type Link, type SpanContext } from "@opentelemetry/api";
import type { Journey, Transfer } from "../../recorder/journey.js";
import { firstAtOrAfter } from "../../recorder/sorted.js";
import type { ChunkList } from "../../recorder/chunk-list.js";
import {
  ATTR_TRANSFER_BYTES,
  ATTR_TRANSFER_KEY_COUNT,
  ATTR_TRANSFER_KEYS,
  ATTR_TRANSFER_OUTCOME,
  ATTR_TRANSFER_PEER,
  ATTR_UNFINISHED,
  SPAN_GATHER_DEP,
} from "../semconv.js";
import type { ActivitySpans } from "./activities.js";
import { OpenSpan, TaskSpan } from "./context.js";
import type { SpanBridgeOptions } from "./options.js";
import { truncate, type SpanWriter } from "./writer.js";

/**
 * gather_dep spans and the links to them. A gather_dep span is made once per transfer, by the
 * first journey that needs it: live when the transfer starts if one of the dependents waiting for
 * its keys is head-sampled (under the first such dependent's current — waiting — span; failing
 * that a head-sampled fetch journey of one of its keys, under its flight span), and ended with its
 * activity spans when the transfer ends; otherwise retroactively, under the waiting (or flight)
 * span of the first kept journey it served, when that journey ends.
 *
 * Links are added to a span only while it is open: a live gather_dep links at its start to the
 * task spans of the other head-sampled dependents it serves; every emitted dependent's waiting
 * span links, when the dependent ends, to every gather_dep that fetched one of its dependencies
 * during that visit (the direction that stands for a dependent kept only at its end); a fetch
 * journey's flight span links to the gather_dep that carried it.
 */

/** A transfer's spanState when its gather_dep was capped away. */
const TRANSFER_DROPPED = Symbol("gather_dep capped away");

export class TransferSpans {
  /** Transfers with a live gather_dep span, for shutdown. */
  private readonly open = new Set<Transfer>();

  constructor(
    private readonly writer: SpanWriter,
    private readonly activities: ActivitySpans,
    private readonly options: Pick<SpanBridgeOptions, "maxAttributeLength" | "maxKeysPerTransfer" | "maxLinksPerSpan">,
  ) {}

  /** A transfer began: its gather_dep span, live, when a head-sampled journey is involved. */
  started(transfer: Transfer): void {
    // Plain reads only, unless a head-sampled journey is involved.
    let owner: Journey | undefined;
    let fetchOwner: Journey | undefined;
    let others: Journey[] | undefined;
    for (const fetch of transfer.journeys) {
      if (fetchOwner === undefined && fetch.spanState instanceof TaskSpan) fetchOwner = fetch;
      const noted = fetch.notedDependents;
      if (noted === undefined) continue;
      for (const dependent of noted) {
        if (!(dependent.spanState instanceof TaskSpan)) continue;
        if (owner === undefined) owner = dependent;
        else if (dependent !== owner && !(others ??= []).includes(dependent)) others.push(dependent);
      }
    }
    owner ??= fetchOwner;
    if (owner === undefined) return;
    const spans = owner.spanState as TaskSpan;
    const parent = spans.visits[owner.visitIndex] ?? spans;
    if (!this.writer.admitChild(parent)) {
      transfer.spanState = TRANSFER_DROPPED;
      return;
    }
    let links: Link[] | undefined;
    let linksDropped = 0;
    if (others !== undefined) {
      links = [];
      for (const other of others) {
        if (links.length < this.options.maxLinksPerSpan)
          links.push({ context: (other.spanState as TaskSpan).span.spanContext() });
        else linksDropped++;
      }
    }
    const gather = this.writer.startChild(
      SPAN_GATHER_DEP,
      parent,
      transfer.start,
      SpanKind.CLIENT,
      this.attributes(transfer),
      links,
    );
    gather.links = links?.length ?? 0;
    gather.linksDropped = linksDropped;
    transfer.spanState = gather;
    this.open.add(transfer);
  }

  /** A transfer ended: its live gather_dep span, if any, gets its activities and ends. */
  ended(transfer: Transfer): void {
    const gather = transfer.spanState;
    if (!(gather instanceof OpenSpan)) return;
    this.open.delete(transfer);
    this.finish(transfer, gather, transfer.end);
  }

  /** Ends the live gather_dep spans at `now`, marked unfinished. */
  shutdown(now: number): void {
    for (const transfer of this.open) {
      const gather = transfer.spanState as OpenSpan;
      gather.span.setAttribute(ATTR_UNFINISHED, true);
      this.finish(transfer, gather, now);
    }
    this.open.clear();
  }

  /**
   * Links a dependent's waiting span to the gather_dep of every transfer that carried one of
   * `sources` during it (any transfer that overlapped it), emitting the transfers no journey
   * emitted yet under it.
   */
  linkOverlapping(sources: ChunkList<Journey> | undefined, span: OpenSpan, start: number, end: number): void {
    if (sources === undefined) return;
    // A Set, not a list: 16,000 transfers of one dependency overlapping a waiting span made a
    // list's includes() 160 ms (kept journeys only; made on the first overlap).
    let seen: Set<Transfer> | undefined;
    for (let index = 0; index < sources.length; index++) {
      const transfers = sources.at(index).transfers;
      if (transfers === undefined) continue;
      for (const transfer of transfers) {
        if (transfer.start > end || transfer.end < start) continue;
        if (seen === undefined) seen = new Set();
        else if (seen.has(transfer)) continue;
        seen.add(transfer);
        this.link(transfer, span);
      }
    }
  }

  /**
   * Links a fetch journey's flight span to the gather_dep of the transfer that carried it, which
   * began exactly with the visit. A transfer is listed twice in a row when its keys repeat one (all
   * of one gather()'s entries are appended together): the first is the one linked.
   */
  linkFlight(journey: Journey, span: OpenSpan, visit: number): void {
    const transfers = journey.transfers;
    const visits = journey.transferVisits;
    if (transfers === undefined || visits === undefined) return;
    const first = firstAtOrAfter(visits, visit);
    for (let index = first; index < visits.length && visits[index] === visit; index++) {
      const transfer = transfers[index];
      if (index === first || transfers[index - 1] !== transfer) this.link(transfer, span);
    }
  }

  private link(transfer: Transfer, span: OpenSpan): void {
    if (transfer.spanState === undefined && transfer.end === transfer.end) this.emit(transfer, span);
    const state = transfer.spanState;
    if (state instanceof OpenSpan) this.writer.link(span, state.span.spanContext());
    else if (state !== undefined && state !== TRANSFER_DROPPED) this.writer.link(span, state as SpanContext);
  }

  /** A gather_dep emitted retroactively, whole, under `parent`. */
  private emit(transfer: Transfer, parent: OpenSpan): void {
    if (!this.writer.admitChild(parent)) {
      transfer.spanState = TRANSFER_DROPPED;
      return;
    }
    const gather = this.writer.startChild(
      SPAN_GATHER_DEP,
      parent,
      transfer.start,
      SpanKind.CLIENT,
      this.attributes(transfer),
    );
    this.finish(transfer, gather, transfer.end);
  }

  private finish(transfer: Transfer, gather: OpenSpan, end: number): void {
    this.activities.emit(transfer.activities, -1, gather, transfer.start, end);
    const span = gather.span;
    span.setAttribute(ATTR_TRANSFER_BYTES, transfer.bytes);
    if (transfer.outcome !== "") span.setAttribute(ATTR_TRANSFER_OUTCOME, transfer.outcome);
    if (transfer.outcome === "failed") this.writer.fail(span, transfer.failure, "transfer failed", end);
    this.writer.finishSpan(gather, transfer.start, end);
    transfer.spanState = span.spanContext();
  }

  private attributes(transfer: Transfer): Attributes {
    const limit = this.options.maxAttributeLength;
    const journeys = transfer.journeys;
    const attributes: Attributes = {
      [ATTR_TRANSFER_PEER]: truncate(transfer.peer, limit),
      [ATTR_TRANSFER_KEY_COUNT]: journeys.length,
      [ATTR_TRANSFER_BYTES]: transfer.bytes,
    };
    const listed = Math.min(journeys.length, this.options.maxKeysPerTransfer);
    if (listed > 0) {
      const keys = new Array<string>(listed);
      for (let index = 0; index < listed; index++) {
        const id = journeys[index].id;
        keys[index] = truncate(typeof id === "string" ? id : String(id), limit);
      }
      attributes[ATTR_TRANSFER_KEYS] = keys;
    }
    return attributes;
  }
}
