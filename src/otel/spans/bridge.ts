import {
  context as contextApi,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Link,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import type { Key } from "../../model/keys.js";
import type { Journey, Transfer } from "../../recorder/journey.js";
import { LETS_GO, type RecorderListener } from "../../recorder/listener.js";
import type { Recorder } from "../../recorder/recorder.js";
import { keyId } from "../../recorder/key-id.js";
import { flush } from "./flush.js";
import { ATTR_ABANDONED, ATTR_STAND_IN, ATTR_TASK_PREFIX, ATTR_UNFINISHED, SPAN_TASK_PREFIX } from "../semconv.js";
import {
  carrierContext,
  formatHandOff,
  handOffOf,
  injectSpanContext,
  isSampled,
  parseTraceparent,
  remoteContext,
  sampledParent,
  spanContextFrom,
  stateSpanOf,
  unsampledTraceparent,
  TRACEPARENT,
  TRACESTATE,
  TRACESTATE_HANDOFF,
  withoutOurState,
  type TraceCarrier,
} from "../propagation.js";
import { tell } from "../warn.js";
import { TailSampler } from "../tail-sampling.js";
import { BoundedMap } from "../bounded-map.js";
import { ActivitySpans } from "./activities.js";
import { TaskSpan, type EndedTask } from "./context.js";
import { HandedOutIds, handOutIds } from "./handed-out.js";
import { injectEnded, ResultEnds } from "./result-ends.js";
import { SpanIds } from "../span-ids.js";
import type { SpanBridgeOptions } from "./options.js";
import { at, TaskSpans } from "./tasks.js";
import { TransferSpans } from "./transfers.js";
import { MAX_OPEN_SERVE_SPANS, ServeSpans } from "./serves.js";
import { OpenSpan } from "./context.js";
import type { Serve } from "../../recorder/serve-ledger.js";
import { SpanWriter } from "./writer.js";

export type { SpanBridgeOptions } from "./options.js";

/**
 * The bridge from journeys to OpenTelemetry span trees (docs/spans.md). Why it is shaped so: a
 * journey's spans reach the exporter only when the journey is over, whole, because activity spans
 * and links are made from the recorder's records at the end (head-sampled journeys open their
 * task and state spans live, so that gather_deps and `inject()` can name them while they run);
 * an unsampled journey has no span object at all unless the tail sampler keeps it at its end;
 * and caps bound every span's children and links. The parts: tasks.ts (task and state spans),
 * transfers.ts (gather_dep spans and links), activities.ts (activity spans), writer.ts (starting,
 * capping and ending spans), context.ts (spans as parent contexts), result-ends.ts (when a
 * child whose result came back ended).
 */

/** Contexts waiting for a key's journey (parents, producers) kept at most; at least the newest half of them. */
export const PENDING_CONTEXTS_LIMIT = 10_000;
/** Task span contexts of ended journeys kept for `inject()` at most; at least the newest half of them. */
export const RECENT_CONTEXTS_LIMIT = 4_096;

const KINDS = 3;

/**
 * Turns the recorder's journeys and transfers into span trees. A RecorderListener: it is told of
 * head-sampled journeys as they run, and of every journey and transfer at its end, where it does
 * nothing for an unsampled, unkept one but one histogram record.
 */
export class SpanBridge implements RecorderListener {
  private readonly open = new Set<Journey>();
  /** The last journey journeyEnded() neither kept nor had spans of: nothing here refers to it (its LETS_GO yes). */
  private letGo: Journey | undefined = undefined;
  /**
   * Contexts received for the key's next journey: a span context, or the raw `traceparent` of a
   * carrier that said "not sampled" and nothing more (unsampledTraceparent()), which is what
   * nearly every task's carrier is: kept as it came, parsed only for a journey that is kept.
   */
  private readonly parents = new BoundedMap<SpanContext | string>(PENDING_CONTEXTS_LIMIT);
  private readonly producers = new BoundedMap<SpanContext>(PENDING_CONTEXTS_LIMIT);
  private readonly recent = new BoundedMap<EndedTask>(RECENT_CONTEXTS_LIMIT);
  /** Keys whose live journey is to be kept at its end because the other side kept its own (`returned()`). */
  private readonly keep = new BoundedMap<true>(PENDING_CONTEXTS_LIMIT);
  /** When the journeys whose results came back to live journeys here ended (`returned()`). */
  private readonly resultEnds: ResultEnds;
  /** Producer side: keys whose live journey handed its carrier off (`handOff()`): its spans are exported only if head-sampled. */
  private readonly handedOff = new BoundedMap<true>(PENDING_CONTEXTS_LIMIT);
  /** Consumer side: keys whose next journey came with a hand-off carrier, and which attempt it is (1: the first). */
  private readonly handOffs = new BoundedMap<number>(PENDING_CONTEXTS_LIMIT);
  /** Whether the one warning that stand-ins cannot be made (ids not ours to choose) was given. */
  private standInWarned = false;
  private readonly tail: TailSampler;
  private readonly writer: SpanWriter;
  private readonly transfers: TransferSpans;
  private readonly tasks: TaskSpans;
  /** The tracer provider's id generator, when it lets us choose ids (useIds()). */
  private ids: SpanIds | undefined;
  private readonly serves: ServeSpans;
  private closed = false;

  constructor(
    private readonly recorder: Recorder,
    tracer: Tracer,
    private readonly options: SpanBridgeOptions,
    /** Flushed (never shut down) at `shutdown()`. */
    private readonly provider?: TracerProvider,
  ) {
    this.tail = new TailSampler(options.keepSlowerThan, options.keepErrors, recorder.prefixes.capacity * KINDS);
    this.writer = new SpanWriter(tracer, options);
    this.resultEnds = new ResultEnds(recorder, this.writer, PENDING_CONTEXTS_LIMIT);
    const activities = new ActivitySpans(this.writer, recorder.activities, options.maxChildrenPerSpan);
    this.transfers = new TransferSpans(this.writer, activities, options);
    this.tasks = new TaskSpans(recorder, this.writer, activities, this.transfers, options, this.producers, this.recent);
    this.serves = new ServeSpans(this.writer, activities, options, (serve) =>
      recorder.drop(
        "live-serves-limit",
        `a traced serve began with ${MAX_OPEN_SERVE_SPANS} traced serves open; the oldest (from ${serve.peer}) had its get_data span ended, marked taskjourney.abandoned`,
      ),
    );
  }

  /**
   * Tells the bridge that the tracer provider takes its span ids from `ids`: `inject()` then hands
   * out ids of its own for a journey that was not head-sampled, with no span, and the journey's
   * task span gets them only if it is kept at its end (taskjourney/sdk does this for its provider).
   */
  useIds(ids: SpanIds): void {
    this.ids = ids;
  }

  /** The generator whose ids the provider is to use: the one in use, else a new one, used from now on (`journeys.idGenerator`). */
  idGenerator(): SpanIds {
    return (this.ids ??= new SpanIds());
  }

  // ---- propagation ----------------------------------------------------------------------------
  //
  // Every journey of a task shares one trace, sampled or not. `inject()` writes the key's task
  // span (it covers whatever the receiver does, whichever state the sender is in) with the
  // current state span as our tracestate member, for the receiver's link. A journey that was not
  // head-sampled has no span: inject() writes ids for it as "not sampled", either ids of its own
  // (HandedOutIds, when the provider lets us choose ids: no span unless the journey is kept at its
  // end) or those of a task span it starts then (deferred: ended and exported only if the journey
  // is kept at its end). `parent()`
  // queues a received context for the key's next journey: a sampled one head-samples it; an
  // unsampled one is kept for the ids, so that journey, if kept at its end, is emitted under
  // them. `returned()` tells that the other side kept its journey: this one is kept too.

  /** Whether a sampled parent context waits for the journey of this key id (the recorder's sampler asks). */
  hasParent(id: string | number): boolean {
    if (this.parents.size === 0) return false;
    const parent = this.parents.get(id);
    return parent !== undefined && typeof parent !== "string" && isSampled(parent);
  }

  /**
   * See TaskJourneys.inject: true when written; "unknown" when `key` has neither a live journey
   * here nor a recently kept one (the caller tells whether it is unknown altogether), false when
   * there is nothing to write otherwise (a key or carrier that is not one: the caller tells).
   * `withState`: name the current state span (for the receiver's link).
   */
  inject(key: Key, carrier: TraceCarrier, withState = true): boolean | "unknown" {
    const id = keyId(key);
    if (id === undefined || carrier === null || typeof carrier !== "object") return false;
    let spanContext: SpanContext | undefined;
    const journey = this.recorder.live.get(id);
    if (journey !== undefined) {
      let spans = journey.spanState;
      if (spans === undefined && this.ids?.ignored === false && !this.closed) spans = this.handOutIds(journey);
      if (spans instanceof HandedOutIds) {
        // Every carrier of the journey names the same ids: the header is made once.
        carrier[TRACEPARENT] = spans.header;
        const traceState = spans.traceState?.serialize();
        if (traceState !== undefined && traceState.length > 0) carrier[TRACESTATE] = traceState;
        return true;
      } else {
        if (!(spans instanceof TaskSpan)) {
          if (this.closed) return false;
          spans = this.startDeferred(journey);
        }
        if (spans instanceof TaskSpan) {
          const state = spans.visits[journey.visitIndex];
          // And when the task span started (TaskSpans.notBefore); a hand-off's member has its own.
          spanContext = carrierContext(
            spans.span.spanContext(),
            !spans.deferred,
            withState ? state?.span.spanContext().spanId : undefined,
            withState ? spans.startTime : undefined,
          );
        }
      }
    } else {
      const ended = this.recent.get(id);
      if (ended === undefined) return "unknown";
      if (!isSpanContextValid(ended.context)) return false;
      injectEnded(ended, carrier);
      return true;
    }
    if (spanContext === undefined || !isSpanContextValid(spanContext)) return false;
    injectSpanContext(spanContext, carrier);
    return true;
  }

  /**
   * See TaskJourneys.handOff: writes `key`'s live journey into `carrier` as inject() does (no
   * state span: the hand-off is where the producer's part ends), plus our hand-off member (the
   * journey's start, `at` and its prefix, for a consumer's stand-in), and marks the journey: it is
   * not kept at its end here (a success), since whether the task is worth keeping is the
   * consumers' to find out, and a stand-in they emit must not meet the same span from here.
   */
  handOff(key: Key, carrier: TraceCarrier, at: number): boolean {
    if (this.closed) return false;
    const id = keyId(key);
    if (id === undefined || carrier === null || typeof carrier !== "object") return false;
    const journey = this.recorder.live.get(id);
    if (journey === undefined || this.inject(key, carrier, false) !== true) return false;
    const start = this.writer.hr(journey.start);
    const startTime: [number, number] = [start[0], start[1]];
    const member = `${TRACESTATE_HANDOFF}=${formatHandOff(startTime, this.writer.hr(Math.max(at, journey.start)), journey.prefixName)}`;
    const existing = carrier[TRACESTATE];
    // W3C: a member added goes first.
    carrier[TRACESTATE] = typeof existing === "string" && existing.length > 0 ? `${member},${existing}` : member;
    this.handedOff.set(id, true);
    return true;
  }

  /**
   * Whether a hand-off carrier waits for the journey of this key id, and if so whether it said
   * sampled: a consumer follows the producer's decision, not its own ratio (its key may not be
   * the producer's, and a journey sampled under a producer's span not exported would lose its root).
   */
  followsHandOff(id: string | number): boolean | undefined {
    if (this.handOffs.size === 0 || !this.handOffs.has(id)) return undefined;
    return this.hasParent(id);
  }

  /**
   * See TaskJourneys.parent: true when queued; "no-context" when `source` holds no span context;
   * "began" when the key's journey here is under way (too late: linked instead when sampled);
   * false otherwise (closed, or a key that is not one). The caller tells what was wrong.
   */
  parent(key: Key, source: unknown, attempt = 1): boolean | "no-context" | "began" {
    if (this.closed) return false;
    // The usual carrier (not sampled, nothing more) is kept as it came; anything else is parsed.
    const header = unsampledTraceparent(source);
    const spanContext = header ?? spanContextFrom(source);
    if (spanContext === undefined) return "no-context";
    const id = keyId(key);
    if (id === undefined) return false;
    const live = this.recorder.live.get(id);
    if (live !== undefined) {
      // Too late to parent, and nothing to link to: a context not sampled names no span kept.
      if (typeof spanContext === "string") return "began";
      // Too late to parent: the journey's spans exist already. Keep the relation as a link.
      const spans = live.spanState;
      if (spans instanceof TaskSpan && isSampled(spanContext)) this.writer.link(spans, spanContext);
      else if (spans instanceof HandedOutIds && isSampled(spanContext)) {
        if ((spans.links?.length ?? 0) < this.options.maxLinksPerSpan)
          (spans.links ??= []).push({ context: spanContext });
        else spans.linksDropped++;
      }
      return "began";
    }
    this.parents.set(id, spanContext);
    if (typeof spanContext !== "string" && spanContext.traceState?.get(TRACESTATE_HANDOFF) !== undefined)
      this.handOffs.set(id, attempt);
    else if (this.handOffs.size !== 0) this.handOffs.take(id);
    return true;
  }

  /** See TaskJourneys.returned. */
  returned(key: Key, source: unknown): boolean {
    if (this.closed) return false;
    // Nearly every result carrier says "not sampled": nothing to do, nothing to parse.
    if (unsampledTraceparent(source) !== undefined) return false;
    const spanContext = spanContextFrom(source);
    if (spanContext === undefined || !isSampled(spanContext)) return false;
    const id = keyId(key);
    if (id === undefined) return false;
    const live = this.recorder.live.get(id);
    // Too late once the journey ended: the ids it handed out belonged to a span no longer kept.
    if (live === undefined) return false;
    this.resultEnds.note(live, spanContext);
    const spans = live.spanState;
    if (spans instanceof TaskSpan && !spans.deferred) return false; // head-sampled: emitted anyway
    this.keep.set(id, true);
    return true;
  }

  /**
   * The context received for `journey`'s key, if any, as a span context (a raw header kept by
   * parent() is parsed now: the journey is being kept or sampled); `take` removes it.
   */
  private parentOf(journey: Journey, take: boolean): SpanContext | undefined {
    if (this.parents.size === 0) return undefined;
    const parent = take ? this.parents.take(journey.id) : this.parents.get(journey.id);
    return typeof parent === "string" ? parseTraceparent(parent) : parent;
  }

  /** A journey's task span started by `inject()` before the journey is kept: its ids are handed out now. */
  private startDeferred(journey: Journey): TaskSpan {
    const parent = this.parentOf(journey, false);
    const spans = this.tasks.start(
      journey,
      parent === undefined ? ROOT_CONTEXT : remoteContext(sampledParent(parent)),
      stateLink(parent),
      false,
      parent,
    );
    spans.deferred = true;
    journey.spanState = spans;
    return spans;
  }

  /** Ids of our own for a journey that was not head-sampled (useIds()), kept on the journey so that every carrier names the same span. */
  private handOutIds(journey: Journey): HandedOutIds {
    const ids = handOutIds(this.parents.size !== 0 ? this.parents.get(journey.id) : undefined);
    journey.spanState = ids;
    return ids;
  }

  /** A journey whose ids were handed out (HandedOutIds), kept at its end: its whole tree, its task span under those ids. */
  private emitHandedOut(
    journey: Journey,
    ids: HandedOutIds,
    parent: SpanContext | undefined,
    resultEnd: number | undefined,
  ): void {
    let links = stateLink(parent);
    if (ids.links !== undefined) links = links === undefined ? ids.links : [...links, ...ids.links];
    const generator = this.ids!;
    let spans: TaskSpan;
    const handedOut = ids.spanContext;
    generator.preset(handedOut.traceId, handedOut.spanId);
    try {
      spans = this.tasks.start(
        journey,
        parent === undefined ? ROOT_CONTEXT : remoteContext(sampledParent(parent)),
        links,
        true,
        parent,
      );
    } finally {
      generator.clear();
    }
    generator.took(spans.span, handedOut.spanId);
    spans.linksDropped += ids.linksDropped;
    this.tasks.emitRetroactively(journey, ROOT_CONTEXT, undefined, spans, undefined, resultEnd);
  }

  /** See TaskJourneys.linkFrom. */
  linkFrom(key: Key, source: unknown): boolean {
    if (this.closed) return false;
    const spanContext = spanContextFrom(source);
    const id = keyId(key);
    if (spanContext === undefined || id === undefined) return false;
    // Our members (the end a carrier written after the journey ended has) are not for a link.
    this.producers.set(id, withoutOurState(spanContext));
    return true;
  }

  // ---- transfers across processes: gather_dep ⇄ get_data (serves.ts) ---------------------------

  /** A serve began at the request of a peer whose gather_dep is in `source` (a carrier or Context): its get_data span, when that one is sampled. */
  serveStarted(serve: Serve, source: unknown): boolean {
    if (this.closed) return false;
    const requester = spanContextFrom(source);
    if (requester === undefined || !isSampled(requester)) return false;
    this.serves.started(serve, requester);
    return true;
  }

  serveEnded(serve: Serve): void {
    this.serves.ended(serve);
  }

  /** See TaskJourneys.injectTransfer: the live gather_dep of `transfer`, or the get_data of `serve`. */
  injectTransfer(subject: Transfer | Serve, carrier: TraceCarrier): boolean {
    if (carrier === null || typeof carrier !== "object") return false;
    const state = subject.spanState;
    if (!(state instanceof OpenSpan)) return false;
    injectSpanContext(state.span.spanContext(), carrier);
    return true;
  }

  /** See TaskJourneys.linkTransfer: the live gather_dep of `transfer` links to the get_data in `source`. */
  linkTransfer(transfer: Transfer, source: unknown): boolean {
    if (this.closed) return false;
    const state = transfer.spanState;
    const spanContext = spanContextFrom(source);
    if (!(state instanceof OpenSpan) || spanContext === undefined) return false;
    this.writer.link(state, spanContext);
    return true;
  }

  // ---- RecorderListener -----------------------------------------------------------------------

  journeyStarted(journey: Journey): void {
    if (this.closed) return;
    const parent = this.parentOf(journey, true);
    let links: Link[] | undefined = stateLink(parent);
    if (this.options.role === "scheduler" && this.options.maxLinksPerSpan > 0) {
      // A submission made under a client span links to it (not parent: a 100k-task graph must
      // not become one trace). One context lookup, for sampled journeys only.
      const client = trace.getSpanContext(contextApi.active());
      if (client !== undefined && isSpanContextValid(client)) (links ??= []).push({ context: client });
    }
    const spans = this.tasks.start(
      journey,
      parent === undefined ? ROOT_CONTEXT : remoteContext(sampledParent(parent)),
      links,
      false,
      parent,
    );
    journey.spanState = spans;
    this.open.add(journey);
    this.tasks.openVisit(journey, spans, journey.visitIndex);
  }

  stateEntered(journey: Journey): void {
    const spans = journey.spanState;
    if (spans instanceof TaskSpan) this.tasks.openVisit(journey, spans, journey.visitIndex);
  }

  [LETS_GO](journey: Journey): boolean {
    return this.letGo === journey;
  }
  journeyEnded(journey: Journey): void {
    this.letGo = undefined; // a reused journey ends here again: never a stale yes
    if (this.closed) return;
    const outcome = journey.outcomeState;
    // keepErrors keeps a journey that failed, or that had an attempt fail (a job retried, then
    // done): the attempt's error is what someone will look for.
    let keep = this.tail.observe(
      journey.prefixId * KINDS + journey.kind,
      journey.end - journey.start,
      this.recorder.machine.failed[outcome] === 1 || journey.hadFailedAttempt,
    );
    if (this.keep.size !== 0 && this.keep.take(journey.id) === true) keep = true;
    // A producer's journey that handed its task off and succeeded: exported only if head-sampled,
    // so that a consumer's stand-in for it (below) never meets the same span from here.
    if (
      this.handedOff.size !== 0 &&
      this.handedOff.take(journey.id) === true &&
      this.recorder.machine.failed[outcome] !== 1
    )
      keep = false;
    // A consumer's journey that came with a hand-off carrier: a retry (attempt 2 on) is kept, since
    // an attempt before it failed (what keepErrors keeps within one journey, hadFailedAttempt).
    const attempt = this.handOffs.size !== 0 ? this.handOffs.take(journey.id) : undefined;
    if (attempt !== undefined && attempt > 1 && this.options.keepErrors) keep = true;
    // The ids another process handed this key: a head-sampled journey took them at its start.
    // Taken whatever happens, parsed only for a journey kept.
    const received = this.parents.size !== 0 ? this.parents.take(journey.id) : undefined;
    const parent = typeof received !== "string" ? received : keep ? parseTraceparent(received) : undefined;
    // The first attempt kept under a producer's hand-off that was not sampled: the producer's
    // span, which no process exported, is emitted here in its stead, so the trace has its root.
    if (keep && attempt === 1 && parent !== undefined && !isSampled(parent)) this.standIn(parent);
    // When a child whose result came back ended, if it said: the task span ends no earlier.
    const resultEnd = this.resultEnds.take(journey);
    const spans = journey.spanState;
    if (spans instanceof HandedOutIds) {
      journey.spanState = undefined;
      if (keep) this.emitHandedOut(journey, spans, parent, resultEnd);
    } else if (spans instanceof TaskSpan) {
      journey.spanState = undefined;
      if (spans.deferred) {
        // Not kept: the span started for inject() is never ended, so it is never exported.
        if (keep) this.tasks.emitRetroactively(journey, ROOT_CONTEXT, undefined, spans, undefined, resultEnd);
        return;
      }
      this.open.delete(journey);
      this.tasks.finishVisits(journey, spans, journey.visitCount - 1);
      this.tasks.finish(journey, spans, resultEnd);
    } else if (!keep)
      this.letGo = journey; // unsampled, not kept: nothing here refers to it
    else {
      this.tasks.emitRetroactively(
        journey,
        parent === undefined ? ROOT_CONTEXT : remoteContext(sampledParent(parent)),
        stateLink(parent),
        undefined,
        parent,
        resultEnd,
      );
    }
  }

  /**
   * The producer's task span, from what the hand-off carrier said of it, under its own ids: a
   * root, marked `taskjourney.stand_in`. Only with ids of our choosing (useIds()); without them it
   * cannot have the ids the consumers' spans name as their parent, and the user is told once.
   */
  private standIn(parent: SpanContext): void {
    const handOff = handOffOf(parent);
    if (handOff === undefined) return;
    const generator = this.ids;
    if (generator === undefined || generator.ignored) {
      if (!this.standInWarned) {
        this.standInWarned = true;
        tell(
          "warn",
          "taskjourney: a journey kept under a producer's hand-off that was not sampled has no root span in its trace: the producer's span can be emitted in its stead only when taskjourney chooses span ids (taskjourney/sdk's tracer provider, or yours given journeys.idGenerator as its idGenerator); see docs/propagation.md#producers-and-consumers",
        );
      }
      return;
    }
    generator.preset(parent.traceId, parent.spanId);
    let span;
    try {
      span = this.writer.startSpan(
        SPAN_TASK_PREFIX + handOff.prefix,
        ROOT_CONTEXT,
        handOff.start,
        SpanKind.INTERNAL,
        { [ATTR_TASK_PREFIX]: handOff.prefix, [ATTR_STAND_IN]: "hand-off" },
        undefined,
      );
    } finally {
      generator.clear();
    }
    // With other ids than the producer's, the span would be a second root: never ended, never exported.
    if (generator.took(span, parent.spanId)) span.end(handOff.end);
  }

  /** A journey evicted past maxLiveJourneys: its live spans end where it was abandoned, marked so. */
  journeyAbandoned(journey: Journey): void {
    const resultEnd = this.resultEnds.take(journey);
    const spans = journey.spanState;
    if (!(spans instanceof TaskSpan)) return;
    journey.spanState = undefined;
    // A span started for inject() is exported only if the journey is kept at its end, which never comes.
    if (spans.deferred || this.closed) return;
    this.open.delete(journey);
    spans.span.setAttribute(ATTR_ABANDONED, "live-journeys-limit");
    this.finishUnfinished(journey, spans, journey.end, resultEnd);
  }

  transferStarted(transfer: Transfer): void {
    if (this.closed) return;
    this.transfers.started(transfer);
  }

  transferEnded(transfer: Transfer): void {
    this.transfers.ended(transfer);
  }

  /** Ends what is still open (at the clock's now, marked unfinished) and flushes the provider. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const now = this.recorder.clock();
    for (const journey of this.open) {
      const spans = journey.spanState as TaskSpan;
      journey.spanState = undefined;
      this.finishUnfinished(journey, spans, now, this.resultEnds.take(journey));
    }
    this.open.clear();
    this.transfers.shutdown(now);
    this.serves.shutdown(now);
    await flush(this.provider);
  }

  /** Ends a live journey's spans at `now`, its current visit included, marked unfinished. */
  private finishUnfinished(journey: Journey, spans: TaskSpan, now: number, resultEnd: number | undefined): void {
    this.tasks.finishVisits(journey, spans, journey.visitCount, now);
    spans.span.setAttribute(ATTR_UNFINISHED, true);
    this.writer.finishSpan(spans, at(spans, journey.start), this.tasks.taskEnd(journey, spans, now, resultEnd));
  }
}

/** The link to the sender's state span a received context names, if any. */
function stateLink(parent: SpanContext | undefined): Link[] | undefined {
  const state = parent === undefined ? undefined : stateSpanOf(parent);
  return state === undefined ? undefined : [{ context: state }];
}
