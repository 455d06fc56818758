import {
  context as contextApi,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { keySplit, keySplitGroup, keyToText, type Key } from "../model/keys.js";
import { ALL_STATES, stateId, type Role } from "../model/states.js";
import { DEPENDENCIES_ACTIVITY, THREAD_CPU_ACTIVITY as THREAD_CPU, THREAD_NONCPU_ACTIVITY as THREAD_NONCPU } from "../model/activities.js";
import {
  ACTIVITY_END,
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_PARENT,
  ACTIVITY_START,
  ACTIVITY_VISIT,
  COMPUTE_JOURNEY,
  FETCH_JOURNEY,
  type Journey,
  type Transfer,
  QUANTITY_ACTIVITY,
  QUANTITY_FIELDS,
  QUANTITY_UNIT,
  QUANTITY_VALUE,
  QUANTITY_VISIT,
} from "../recorder/journey.js";
import type { RecorderListener } from "../recorder/listener.js";
import type { Recorder } from "../recorder/recorder.js";
import {
  ATTR_CHILDREN_DROPPED,
  ATTR_DIGEST,
  ATTR_LINKS_DROPPED,
  ATTR_TASK_DEPENDENCIES,
  ATTR_TASK_GROUP,
  ATTR_TASK_KEY,
  ATTR_TASK_KEY_LENGTH,
  ATTR_TASK_OUTCOME,
  ATTR_TASK_PREFIX,
  ATTR_TASK_QUANTITY_PREFIX,
  ATTR_TASK_ROLE,
  ATTR_TASK_WAIT_PREFIX,
  ATTR_TASK_WORKER,
  ATTR_THREAD_CPU_TIME,
  ATTR_THREAD_NONCPU_TIME,
  ATTR_TRANSFER_BYTES,
  ATTR_TRANSFER_KEY_COUNT,
  ATTR_TRANSFER_KEYS,
  ATTR_TRANSFER_OUTCOME,
  ATTR_TRANSFER_PEER,
  ATTR_UNFINISHED,
  SPAN_GATHER_DEP,
  SPAN_RUN,
  SPAN_TASK_PREFIX,
} from "./semconv.js";
import { injectSpanContext, isSampled, remoteContext, spanContextFrom, type TraceCarrier } from "./propagation.js";
import { TailSampler } from "./tail-sampling.js";
import { BoundedMap } from "./bounded-map.js";

/**
 * The bridge from journeys to OpenTelemetry span trees (DESIGN.md, "Spans").
 *
 * EMISSION RULE
 *
 * - A head-sampled journey (the recorder calls `journeyStarted` / `stateEntered` only for those)
 *   opens its `task <prefix>` span and each state span *live*, at their recorded times, as the
 *   journey reaches them: a gather_dep can then be parented under a dependent's waiting span
 *   while it waits, and `inject()` can name the scheduler's processing span while the task is
 *   processing. None of them is ended before the journey ends: at `journeyEnded` each state span
 *   gets its activity spans (emitted retroactively from the recorder's flat records), its links
 *   to gather_deps and its cap counts, and is ended with its recorded end time; the task span
 *   ends last. So nothing about a journey reaches the exporter before the journey is over.
 * - A journey that was not head-sampled has no span objects at all while it runs. At its end the
 *   tail sampler (tail-sampling.ts) may keep it — failed, or slower than its (prefix, kind)'s
 *   `keepSlowerThan` quantile — and then the whole tree is emitted retroactively, in one go,
 *   from the recorded timestamps.
 * - A gather_dep span is made once per transfer, by the first journey that needs it: live at
 *   `transferStarted` when one of the dependents waiting for its keys is head-sampled (parent:
 *   the first such dependent's current — waiting — span; failing that a head-sampled fetch
 *   journey of one of its keys, under its flight span), and ended with its activity spans at
 *   `transferEnded`; otherwise retroactively, under the waiting (or flight) span of the first
 *   kept journey it served, when that journey ends.
 *
 * LINK DIRECTION RULE
 *
 * A link is added to a span only while that span is open. Between a gather_dep G and the
 * dependents D it served:
 * - every emitted D's waiting span links to every G that fetched one of D's dependencies during
 *   that waiting visit (its own gather_dep children included), added when D ends — G exists by
 *   then (it is emitted on the spot if it was not);
 * - a live G links, at its start, to the task spans of the *other* head-sampled dependents it
 *   serves. A dependent kept only at its end has no span while G is open, so that G → D link
 *   cannot be made; the D → G link above stands for it ("the other direction").
 * Likewise a fetch journey's flight span links to the gather_dep that carried it.
 *
 * PROPAGATION
 *
 * `inject()` writes the key's current span (the processing span of a live scheduler journey; the
 * task span on a worker, live or recently ended) as W3C traceparent. `parent()` queues a sampled
 * context for a key's next journey: that journey is head-sampled (trace flags win over the ratio)
 * and its task span becomes a child of the context. `linkFrom()` notes the producer of a key's
 * data: the task span of the key's journey here and of every journey depending on it link to it
 * when they end. Journeys kept only at their end cannot have been injected while running, so one
 * trace across processes is for head-sampled journeys; unsampled upstream contexts are ignored
 * (parenting under them would make a parent-based SDK sampler drop our spans).
 *
 * CAPS
 *
 * Children per span (`maxChildrenPerSpan`: states under a task, activities and gather_deps
 * under a state, activities under an activity or a gather_dep) and links per span
 * (`maxLinksPerSpan`) are capped; what was left out is counted on the parent span in
 * `taskjourney.children_dropped` / `taskjourney.links_dropped`. Keys in attributes are cut to
 * `maxAttributeLength` characters; `transfer.keys` lists at most `maxKeysPerTransfer` keys, with
 * the full count in `transfer.key_count`.
 *
 * ACTIVITIES
 *
 * Activity records become spans named after the activity, nested as metered, clamped into their
 * parent's interval (an activity that outlived its state, e.g. a task cancelled while executing,
 * is cut at the state's end). `thread-cpu` / `thread-noncpu` digests are measurements over one
 * interval, not consecutive slices, so they are not spans: nested in an activity, they become its
 * `thread.cpu_time` / `thread.noncpu_time` attributes; at top level, they become one `run` span
 * ending at the latest digest and lasting their sum. The `other` remainder is a gap, not a span.
 * Fetch journeys carry only per-key shares of their transfer's activities, which the gather_dep
 * span shows in full, so their state spans have no activity children. A compute journey's waiting
 * span carries the apportioned breakdown of the wait (what explain() shows) as
 * `task.wait.<activity>` = seconds attributes.
 */

export interface SpanBridgeOptions {
  role: Role;
  instance: string;
  /** Epoch seconds at which the recorder's clock read 0. */
  timeOrigin: number;
  keepSlowerThan: number;
  keepErrors: boolean;
  maxLinksPerSpan: number;
  maxChildrenPerSpan: number;
  maxAttributeLength: number;
  maxKeysPerTransfer: number;
}

/** A waiting visit's attribute when no fetched dependency explains its time. */
const WAIT_DEPENDENCIES = ATTR_TASK_WAIT_PREFIX + DEPENDENCIES_ACTIVITY;

/** Contexts waiting for a key's journey (parents, producers) kept at most; at least the newest half of them. */
export const PENDING_CONTEXTS_LIMIT = 10_000;
/** Task span contexts of ended journeys kept for `inject()` at most; at least the newest half of them. */
export const RECENT_CONTEXTS_LIMIT = 4_096;

const WAITING = stateId("waiting");
const FLIGHT = stateId("flight");
const FETCH = stateId("fetch");
const ERROR = stateId("error");
const ERRED = stateId("erred");
const KINDS = 3;
/** Marks an activity span made from a digest: its interval is inferred, ending when it was taken. */
const DIGEST_ATTRIBUTES = Object.freeze({ [ATTR_DIGEST]: true });
const TRANSFER_DROPPED = Symbol("gather_dep capped away");
/** The links of a span started without: the SDK copies the array it is given, so one empty array serves all. */
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];

/**
 * The key under which the API keeps a context's span, learnt from the API itself: it is not
 * exported, and asking beats hardcoding its description.
 */
const SPAN_KEY: symbol = (() => {
  let key: symbol | undefined;
  const probe: Context = {
    getValue(asked) {
      key = asked;
      return undefined;
    },
    setValue: () => probe,
    deleteValue: () => probe,
  };
  trace.getSpan(probe);
  if (key === undefined) throw new Error("taskjourney: @opentelemetry/api reads no span key from a context");
  return key;
})();

/**
 * A span as a parent context: the context `trace.setSpan(ROOT_CONTEXT, span)` would give. The SDK
 * only reads a parent context, and a context of our own costs nothing beyond this object, where
 * the API's makes an object, a Map and three closures.
 */
class ParentContext implements Context {
  constructor(readonly span: Span) {}

  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.span : undefined;
  }

  // Writes make a real context, as writing to any context does; the SDK writes to a parent only
  // for a root span, which taskjourney never asks for.
  setValue(key: symbol, value: unknown): Context {
    return trace.setSpan(ROOT_CONTEXT, this.span).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return trace.setSpan(ROOT_CONTEXT, this.span).deleteValue(key);
  }
}

/**
 * A task, state or gather_dep span taskjourney started and has not ended yet, with what its caps
 * counted; its own parent context. Its interval is not kept here but passed along from the
 * journey or transfer, which has it anyway. (Activity spans live in ActivitySlots.)
 */
class OpenSpan extends ParentContext {
  children = 0;
  childrenDropped = 0;
  links = 0;
  linksDropped = 0;

  constructor(
    span: Span,
    /** The start time given to the SDK: a state span's is also the end time of the state before. */
    readonly startTime: HrTime,
  ) {
    super(span);
  }
}

/**
 * The activity spans of one `emitActivities` call, in arrays indexed by record (offset /
 * ACTIVITY_FIELDS) that the bridge keeps from call to call: an activity span starts and ends
 * within the call, so an object per span would be garbage at once. A slot holds what a record's
 * span needs while the records nested in it are emitted.
 */
class ActivitySlots {
  /** Taken by a call under way: a call made meanwhile (from a span processor) gets slots of its own. */
  busy = false;
  readonly spans: Array<Span | undefined> = [];
  /** Parent contexts of the activity spans that have nested activity spans, made for the first. */
  readonly parents: Array<ParentContext | undefined> = [];
  /** Recorder seconds, clamped into the parent's interval. */
  start = new Float64Array(8);
  end = new Float64Array(8);
  children = new Int32Array(8);
  childrenDropped = new Int32Array(8);
  /** Thread seconds digested under the activity, or -1 when none. */
  cpu = new Float64Array(8);
  noncpu = new Float64Array(8);

  reserve(count: number): void {
    if (count <= this.start.length) return;
    const length = Math.max(count, this.start.length * 2);
    this.start = new Float64Array(length);
    this.end = new Float64Array(length);
    this.children = new Int32Array(length);
    this.childrenDropped = new Int32Array(length);
    this.cpu = new Float64Array(length);
    this.noncpu = new Float64Array(length);
  }

  open(slot: number, span: Span, start: number, end: number): void {
    this.spans[slot] = span;
    this.parents[slot] = undefined;
    this.start[slot] = start;
    this.end[slot] = end;
    this.children[slot] = 0;
    this.childrenDropped[slot] = 0;
    this.cpu[slot] = -1;
    this.noncpu[slot] = -1;
  }

  /** The parent context of slot's span, made on first use. */
  parent(slot: number): ParentContext {
    return (this.parents[slot] ??= new ParentContext(this.spans[slot]!));
  }

  /** Forgets a slot's span, so that the slots keep no ended span alive. */
  release(slot: number): void {
    this.spans[slot] = undefined;
    this.parents[slot] = undefined;
  }
}

/** The task span of an emitted journey, which also holds its state spans: one per visit, undefined where capped away. */
class TaskSpan extends OpenSpan {
  // Room for a compute journey's visits from the start: a store into an empty array would grow it
  // to sixteen slots at the first visit.
  readonly visits: Array<OpenSpan | undefined> = [undefined, undefined, undefined, undefined];
}

/**
 * Turns the recorder's journeys and transfers into span trees. A RecorderListener: it is told of
 * head-sampled journeys as they run, and of every journey and transfer at its end, where it does
 * nothing for an unsampled, unkept one but one histogram record.
 */
export class SpanBridge implements RecorderListener {
  private readonly open = new Set<Journey>();
  private readonly openTransfers = new Set<Transfer>();
  private readonly parents = new BoundedMap<SpanContext>(PENDING_CONTEXTS_LIMIT);
  private readonly producers = new BoundedMap<SpanContext>(PENDING_CONTEXTS_LIMIT);
  private readonly recent = new BoundedMap<SpanContext>(RECENT_CONTEXTS_LIMIT);
  private readonly tail: TailSampler;
  private readonly taskNames: string[] = [];
  private readonly waitNames: string[] = [];
  private readonly activitySlots = new ActivitySlots();
  private readonly originWhole: number;
  private readonly originFraction: number;
  /** The last time `hr()` made, and of which recorder seconds. */
  private lastSeconds = Number.NaN;
  private lastTime: HrTime = [0, 0];
  private closed = false;

  constructor(
    private readonly recorder: Recorder,
    private readonly tracer: Tracer,
    private readonly options: SpanBridgeOptions,
    /** Flushed (never shut down) at `shutdown()`. */
    private readonly provider?: TracerProvider,
  ) {
    this.tail = new TailSampler(options.keepSlowerThan, options.keepErrors, recorder.prefixes.capacity * KINDS);
    this.originWhole = Math.floor(options.timeOrigin);
    this.originFraction = options.timeOrigin - this.originWhole;
  }

  // ---- propagation ----------------------------------------------------------------------------

  /** Whether a sampled parent context waits for the journey of this key id (the recorder's sampler asks). */
  hasParent(id: string | number): boolean {
    return this.parents.size !== 0 && this.parents.has(id);
  }

  /** See TaskJourneys.inject. */
  inject(key: Key, carrier: TraceCarrier): boolean {
    const id = idOfKey(key);
    if (id === undefined || carrier === null || typeof carrier !== "object") return false;
    let spanContext: SpanContext | undefined;
    const journey = this.recorder.live.get(id);
    const spans = journey?.spanState;
    if (spans instanceof TaskSpan) {
      const current = this.options.role === "scheduler" ? spans.visits[journey!.visitIndex] : undefined;
      spanContext = (current ?? spans).span.spanContext();
    } else {
      spanContext = this.recent.get(id);
    }
    if (spanContext === undefined || !isSpanContextValid(spanContext)) return false;
    injectSpanContext(spanContext, carrier);
    return true;
  }

  /** See TaskJourneys.parent. */
  parent(key: Key, source: unknown): boolean {
    if (this.closed) return false;
    const spanContext = spanContextFrom(source);
    if (spanContext === undefined || !isSampled(spanContext)) return false;
    const id = idOfKey(key);
    if (id === undefined) return false;
    const live = this.recorder.live.get(id);
    if (live !== undefined) {
      // Too late to parent: the journey's spans exist already. Keep the relation as a link.
      const spans = live.spanState;
      if (spans instanceof TaskSpan) this.link(spans, spanContext);
      return false;
    }
    this.parents.set(id, spanContext);
    return true;
  }

  /** See TaskJourneys.linkFrom. */
  linkFrom(key: Key, source: unknown): boolean {
    if (this.closed) return false;
    const spanContext = spanContextFrom(source);
    const id = idOfKey(key);
    if (spanContext === undefined || id === undefined) return false;
    this.producers.set(id, spanContext);
    return true;
  }

  // ---- RecorderListener -----------------------------------------------------------------------

  journeyStarted(journey: Journey): void {
    if (this.closed) return;
    const parent = this.parents.size !== 0 ? this.parents.take(journey.id) : undefined;
    let links: Link[] | undefined;
    if (this.options.role === "scheduler" && this.options.maxLinksPerSpan > 0) {
      // A submission made under a client span links to it (not parent: a 100k-task graph must
      // not become one trace). One context lookup, for sampled journeys only.
      const client = trace.getSpanContext(contextApi.active());
      if (client !== undefined && isSpanContextValid(client)) links = [{ context: client }];
    }
    const spans = this.startTask(journey, parent === undefined ? ROOT_CONTEXT : remoteContext(parent), links, false);
    journey.spanState = spans;
    this.open.add(journey);
    this.openVisit(journey, spans, journey.visitIndex);
  }

  stateEntered(journey: Journey): void {
    const spans = journey.spanState;
    if (spans instanceof TaskSpan) this.openVisit(journey, spans, journey.visitIndex);
  }

  journeyEnded(journey: Journey): void {
    if (this.closed) return;
    const outcome = journey.outcomeState;
    const keep = this.tail.observe(journey.prefixId * KINDS + journey.kind, journey.end - journey.start, outcome === ERROR || outcome === ERRED);
    const spans = journey.spanState;
    if (spans instanceof TaskSpan) {
      this.open.delete(journey);
      journey.spanState = undefined;
      this.finishVisits(journey, spans, journey.visitCount - 1);
      this.finishTask(journey, spans);
    } else if (keep) {
      this.emitRetroactively(journey);
    }
  }

  transferStarted(transfer: Transfer): void {
    if (this.closed) return;
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
    if (!this.admitChild(parent)) {
      transfer.spanState = TRANSFER_DROPPED;
      return;
    }
    let links: Link[] | undefined;
    let linksDropped = 0;
    if (others !== undefined) {
      links = [];
      for (const other of others) {
        if (links.length < this.options.maxLinksPerSpan) links.push({ context: (other.spanState as TaskSpan).span.spanContext() });
        else linksDropped++;
      }
    }
    const gather = this.startChild(SPAN_GATHER_DEP, parent, transfer.start, SpanKind.CLIENT, this.transferAttributes(transfer), links);
    gather.links = links?.length ?? 0;
    gather.linksDropped = linksDropped;
    transfer.spanState = gather;
    this.openTransfers.add(transfer);
  }

  transferEnded(transfer: Transfer): void {
    const gather = transfer.spanState;
    if (!(gather instanceof OpenSpan)) return;
    this.openTransfers.delete(transfer);
    this.finishTransfer(transfer, gather, transfer.end);
  }

  /** Ends what is still open (at the clock's now, marked unfinished) and flushes the provider. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const now = this.recorder.clock();
    for (const journey of this.open) {
      const spans = journey.spanState as TaskSpan;
      journey.spanState = undefined;
      this.finishVisits(journey, spans, journey.visitCount, now);
      spans.span.setAttribute(ATTR_UNFINISHED, true);
      this.finishSpan(spans, journey.start, now);
    }
    for (const transfer of this.openTransfers) {
      const gather = transfer.spanState as OpenSpan;
      gather.span.setAttribute(ATTR_UNFINISHED, true);
      this.finishTransfer(transfer, gather, now);
    }
    this.open.clear();
    this.openTransfers.clear();
    await flush(this.provider);
  }

  // ---- journeys -------------------------------------------------------------------------------

  private emitRetroactively(journey: Journey): void {
    const spans = this.startTask(journey, ROOT_CONTEXT, undefined, true);
    const visits = journey.visitCount - 1;
    for (let visit = 0; visit < visits; visit++) this.openVisit(journey, spans, visit);
    this.finishVisits(journey, spans, visits);
    this.finishTask(journey, spans);
  }

  private startTask(journey: Journey, parent: Context, links: Link[] | undefined, ended: boolean): TaskSpan {
    const limit = this.options.maxAttributeLength;
    const key = typeof journey.id === "string" ? journey.id : String(journey.id);
    const attributes: Attributes = {
      [ATTR_TASK_KEY]: truncate(key, limit),
      [ATTR_TASK_PREFIX]: truncate(keySplit(journey.key), limit),
      [ATTR_TASK_GROUP]: truncate(keySplitGroup(journey.key), limit),
      [ATTR_TASK_ROLE]: this.options.role,
    };
    // So that `explain --from` can still find a key longer than the limit: its beginning and length.
    if (key.length > limit) attributes[ATTR_TASK_KEY_LENGTH] = key.length;
    if (this.options.role === "worker") attributes[ATTR_TASK_WORKER] = this.options.instance;
    if (ended) attributes[ATTR_TASK_OUTCOME] = ALL_STATES[journey.outcomeState];
    let name = this.taskNames[journey.prefixId];
    if (name === undefined) {
      name = SPAN_TASK_PREFIX + this.recorder.prefixes.name(journey.prefixId);
      this.taskNames[journey.prefixId] = name;
    }
    const startTime = this.hr(journey.start);
    const task = new TaskSpan(this.startSpan(name, parent, startTime, SpanKind.INTERNAL, attributes, links), startTime);
    task.links = links?.length ?? 0;
    return task;
  }

  private openVisit(journey: Journey, spans: TaskSpan, visit: number): void {
    if (!this.admitChild(spans)) {
      spans.visits[visit] = undefined;
      return;
    }
    spans.visits[visit] = this.startChild(ALL_STATES[journey.visitState(visit)], spans, journey.visitStart(visit));
  }

  /** Gives visits [0, count) their children and links and ends them; `now` ends a journey cut short. */
  private finishVisits(journey: Journey, spans: TaskSpan, count: number, now?: number): void {
    for (let visit = 0; visit < count; visit++) {
      const span = spans.visits[visit];
      if (span === undefined) continue;
      const start = journey.visitStart(visit);
      const end = visit + 1 < journey.visitCount ? journey.visitStart(visit + 1) : (now ?? journey.end);
      const state = journey.visitState(visit);
      if (journey.kind === COMPUTE_JOURNEY) {
        if (state === WAITING) {
          this.linkTransfers(journey.fetchedBy, span, start, end);
          this.waitAttributes(journey, visit, span, end - start);
        }
        this.emitActivities(journey.activities, visit, span, start, end, journey.digestRecords);
      } else if (journey.kind === FETCH_JOURNEY) {
        if (state === FLIGHT) this.linkFlightTransfers(journey, span, visit);
        // Why the key sat in fetch (`queued (<reason>)`), as explain() shows it: the only records
        // of a fetch visit (the transfer's own activities are on its gather_dep span).
        else if (state === FETCH) this.emitActivities(journey.activities, visit, span, start, end, journey.digestRecords);
      }
      if (journey.quantities !== undefined) this.quantityAttributes(journey.quantities, visit, span);
      // The next state span, when there is one, starts at this one's end with an HrTime to share.
      this.finishSpan(span, start, end, visit + 1 < count ? spans.visits[visit + 1]?.startTime : undefined);
    }
  }

  /** A visit's digested quantities as `task.quantity.<unit>.<activity>` = their total, so a trace alone can rebuild explain(). */
  private quantityAttributes(quantities: readonly number[], visit: number, span: OpenSpan): void {
    let attributes: Attributes | undefined;
    for (let index = 0; index < quantities.length; index += QUANTITY_FIELDS) {
      if (quantities[index + QUANTITY_VISIT] !== visit) continue;
      const unit = this.recorder.units.name(quantities[index + QUANTITY_UNIT]);
      const name = `${ATTR_TASK_QUANTITY_PREFIX}${unit}.${this.recorder.activities.name(quantities[index + QUANTITY_ACTIVITY])}`;
      attributes ??= {};
      attributes[name] = ((attributes[name] as number | undefined) ?? 0) + quantities[index + QUANTITY_VALUE];
    }
    if (attributes !== undefined) span.span.setAttributes(attributes);
  }

  /**
   * The waiting visit's apportioned breakdown (what explain() shows under waiting) as
   * `task.wait.<activity>` = seconds, so a trace alone can rebuild explain(). Without a
   * breakdown (no dependency was fetched during the visit), its whole time is `dependencies`.
   */
  private waitAttributes(journey: Journey, visit: number, span: OpenSpan, seconds: number): void {
    const breakdown = journey.waitBreakdown;
    let attributes: Attributes | undefined;
    if (breakdown !== undefined) {
      for (let index = 0; index < breakdown.length; index += 3) {
        if (breakdown[index] !== visit) continue;
        const name = this.waitAttributeName(breakdown[index + 1]);
        attributes ??= {};
        attributes[name] = ((attributes[name] as number | undefined) ?? 0) + breakdown[index + 2];
      }
    }
    if (attributes !== undefined) {
      span.span.setAttributes(attributes);
      return;
    }
    if (seconds > 0) span.span.setAttribute(WAIT_DEPENDENCIES, seconds);
  }

  /** `task.wait.<activity>` of an activity id, built once per id. */
  private waitAttributeName(activityId: number): string {
    let name = this.waitNames[activityId];
    if (name === undefined) {
      name = ATTR_TASK_WAIT_PREFIX + this.recorder.activities.name(activityId);
      this.waitNames[activityId] = name;
    }
    return name;
  }

  private finishTask(journey: Journey, task: TaskSpan): void {
    const outcome = journey.outcomeState;
    const span = task.span;
    span.setAttribute(ATTR_TASK_OUTCOME, ALL_STATES[outcome]);
    if (journey.dependencyIds !== undefined) span.setAttribute(ATTR_TASK_DEPENDENCIES, journey.dependencyIds.length);
    if (outcome === ERROR || outcome === ERRED) span.setStatus({ code: SpanStatusCode.ERROR, message: `task ended in ${ALL_STATES[outcome]}` });
    if (this.producers.size !== 0) {
      // The journeys that produced this key's data, and its dependencies' data, elsewhere.
      const own = this.producers.get(journey.id);
      if (own !== undefined) this.link(task, own);
      const dependencies = journey.dependencyIds;
      if (dependencies !== undefined) {
        for (const dependency of dependencies) {
          const producer = this.producers.get(dependency);
          if (producer !== undefined) this.link(task, producer);
        }
      }
    }
    this.finishSpan(task, journey.start, journey.end);
    this.recent.set(journey.id, span.spanContext());
  }

  // ---- transfers ------------------------------------------------------------------------------

  /**
   * Links a dependent's waiting span to the gather_dep of every transfer that carried one of
   * `sources` during it (any transfer that overlapped it), emitting the transfers no journey
   * emitted yet under it.
   */
  private linkTransfers(sources: Journey[] | undefined, span: OpenSpan, start: number, end: number): void {
    if (sources === undefined) return;
    let seen: Transfer[] | undefined;
    for (const source of sources) {
      const transfers = source.transfers;
      if (transfers === undefined) continue;
      for (const transfer of transfers) {
        if (transfer.start > end || transfer.end < start) continue;
        if (seen === undefined) seen = [];
        else if (seen.includes(transfer)) continue;
        seen.push(transfer);
        this.linkTransfer(transfer, span);
      }
    }
  }

  /**
   * Links a fetch journey's flight span to the gather_dep of the transfer that carried it, which
   * began exactly with the visit. A transfer is listed twice when its keys repeat one: the first
   * is the one linked, found without a list of those seen.
   */
  /** Links a flight visit to the transfers that began in it (a key listed twice in one gather, once). */
  private linkFlightTransfers(journey: Journey, span: OpenSpan, visit: number): void {
    const transfers = journey.transfers;
    const visits = journey.transferVisits;
    if (transfers === undefined || visits === undefined) return;
    for (let index = 0; index < transfers.length; index++) {
      const transfer = transfers[index];
      if (visits[index] === visit && transfers.indexOf(transfer) === index) this.linkTransfer(transfer, span);
    }
  }

  private linkTransfer(transfer: Transfer, span: OpenSpan): void {
    if (transfer.spanState === undefined && transfer.end === transfer.end) this.emitTransfer(transfer, span);
    const state = transfer.spanState;
    if (state instanceof OpenSpan) this.link(span, state.span.spanContext());
    else if (state !== undefined && state !== TRANSFER_DROPPED) this.link(span, state as SpanContext);
  }

  /** A gather_dep emitted retroactively, whole, under `parent`. */
  private emitTransfer(transfer: Transfer, parent: OpenSpan): void {
    if (!this.admitChild(parent)) {
      transfer.spanState = TRANSFER_DROPPED;
      return;
    }
    const gather = this.startChild(SPAN_GATHER_DEP, parent, transfer.start, SpanKind.CLIENT, this.transferAttributes(transfer));
    this.finishTransfer(transfer, gather, transfer.end);
  }

  private finishTransfer(transfer: Transfer, gather: OpenSpan, end: number): void {
    this.emitActivities(transfer.activities, -1, gather, transfer.start, end, transfer.digestRecords);
    const span = gather.span;
    span.setAttribute(ATTR_TRANSFER_BYTES, transfer.bytes);
    if (transfer.outcome !== "") span.setAttribute(ATTR_TRANSFER_OUTCOME, transfer.outcome);
    if (transfer.outcome === "failed") span.setStatus({ code: SpanStatusCode.ERROR, message: "transfer failed" });
    this.finishSpan(gather, transfer.start, end);
    transfer.spanState = span.spanContext();
  }

  private transferAttributes(transfer: Transfer): Attributes {
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

  // ---- activities -----------------------------------------------------------------------------

  /** Activity spans of the records of `visit` (-1: a transfer's), under `owner` (of that interval), ended here. */
  private emitActivities(records: readonly number[], visit: number, owner: OpenSpan, ownerStart: number, ownerEnd: number, digests: number[] | undefined): void {
    const slots = this.activitySlots.busy ? new ActivitySlots() : this.activitySlots;
    slots.reserve(records.length / ACTIVITY_FIELDS);
    slots.busy = true;
    try {
      this.emitActivitySpans(records, visit, owner, ownerStart, ownerEnd, digests, slots);
    } finally {
      slots.busy = false;
    }
  }

  private emitActivitySpans(
    records: readonly number[],
    visit: number,
    owner: OpenSpan,
    ownerStart: number,
    ownerEnd: number,
    digests: number[] | undefined,
    slots: ActivitySlots,
  ): void {
    let lastSlot = -1;
    let runCpu = -1;
    let runNoncpu = -1;
    let runEnd = Number.NEGATIVE_INFINITY;
    for (let record = 0, slot = 0; record < records.length; record += ACTIVITY_FIELDS, slot++) {
      if (records[record + ACTIVITY_VISIT] !== visit) continue;
      // Cleared before anything can skip it: a nested record reads its parent's slot, which comes
      // earlier and so was written in this call, never left over from another (one a span
      // processor's exception cut short).
      slots.spans[slot] = undefined;
      lastSlot = slot;
      const parentRecord = records[record + ACTIVITY_PARENT];
      // Nested under its parent activity's span; at top level when that activity belongs to an
      // earlier visit (metered across executing → long-running). A child of an activity capped
      // away goes with it (counted on that activity's parent).
      const parentSlot = parentRecord === -1 || records[parentRecord + ACTIVITY_VISIT] !== visit ? -1 : parentRecord / ACTIVITY_FIELDS;
      if (parentSlot !== -1 && slots.spans[parentSlot] === undefined) continue;
      const parentStart = parentSlot === -1 ? ownerStart : slots.start[parentSlot];
      const parentEnd = parentSlot === -1 ? ownerEnd : slots.end[parentSlot];
      const start = clamp(records[record + ACTIVITY_START], parentStart, parentEnd);
      const recordedEnd = records[record + ACTIVITY_END];
      const end = clamp(recordedEnd === recordedEnd ? recordedEnd : parentEnd, start, parentEnd);
      const name = this.recorder.activities.name(records[record + ACTIVITY_ID]);
      if (name === THREAD_CPU || name === THREAD_NONCPU) {
        const seconds = end - start;
        if (parentSlot !== -1) {
          if (name === THREAD_CPU) slots.cpu[parentSlot] = Math.max(slots.cpu[parentSlot], 0) + seconds;
          else slots.noncpu[parentSlot] = Math.max(slots.noncpu[parentSlot], 0) + seconds;
        } else {
          // -1 until digested, so the run span carries only the kinds actually measured.
          if (name === THREAD_CPU) runCpu = Math.max(runCpu, 0) + seconds;
          else runNoncpu = Math.max(runNoncpu, 0) + seconds;
          if (end > runEnd) runEnd = end;
        }
        continue;
      }
      let parent: ParentContext;
      if (parentSlot === -1) {
        if (!this.admitChild(owner)) continue;
        parent = owner;
      } else {
        if (slots.children[parentSlot] >= this.options.maxChildrenPerSpan) {
          slots.childrenDropped[parentSlot]++;
          continue;
        }
        slots.children[parentSlot]++;
        parent = slots.parent(parentSlot);
      }
      const attributes = digests !== undefined && digests.includes(record) ? DIGEST_ATTRIBUTES : undefined;
      slots.open(slot, this.startSpan(name, parent, this.hr(start), SpanKind.INTERNAL, attributes, undefined), start, end);
    }
    if (runEnd !== Number.NEGATIVE_INFINITY && this.admitChild(owner)) {
      const start = Math.max(ownerStart, runEnd - Math.max(runCpu, 0) - Math.max(runNoncpu, 0));
      this.endSpan(this.startSpan(SPAN_RUN, owner, this.hr(start), SpanKind.INTERNAL, undefined, undefined), start, runEnd, undefined, 0, 0, runCpu, runNoncpu);
    }
    // Children end before their parents, which come earlier: reversed record order.
    for (let slot = lastSlot; slot >= 0; slot--) {
      if (records[slot * ACTIVITY_FIELDS + ACTIVITY_VISIT] !== visit) continue;
      const span = slots.spans[slot];
      if (span === undefined) continue;
      slots.release(slot);
      this.endSpan(span, slots.start[slot], slots.end[slot], undefined, slots.childrenDropped[slot], 0, slots.cpu[slot], slots.noncpu[slot]);
    }
  }

  // ---- spans ----------------------------------------------------------------------------------

  /** Counts a child of `parent` against the cap; false (and counted as dropped) past it. */
  private admitChild(parent: OpenSpan): boolean {
    if (parent.children >= this.options.maxChildrenPerSpan) {
      parent.childrenDropped++;
      return false;
    }
    parent.children++;
    return true;
  }

  private startChild(name: string, parent: OpenSpan, start: number, kind: SpanKind = SpanKind.INTERNAL, attributes?: Attributes, links?: Link[]): OpenSpan {
    const startTime = this.hr(start);
    return new OpenSpan(this.startSpan(name, parent, startTime, kind, attributes, links), startTime);
  }

  private startSpan(name: string, parent: Context, startTime: HrTime, kind: SpanKind, attributes: Attributes | undefined, links: Link[] | undefined): Span {
    // A fresh options object each time, though the SDK keeps none of it: a tracer of the user's
    // (a test double recording its calls) may, and must not see it change afterwards.
    return this.tracer.startSpan(name, { kind, startTime, attributes, links: links ?? NO_LINKS }, parent);
  }

  private link(span: OpenSpan, context: SpanContext): void {
    if (span.links >= this.options.maxLinksPerSpan) {
      span.linksDropped++;
      return;
    }
    span.links++;
    span.span.addLink({ context });
  }

  private finishSpan(open: OpenSpan, start: number, end: number, endTime?: HrTime): void {
    this.endSpan(open.span, start, end, endTime, open.childrenDropped, open.linksDropped, -1, -1);
  }

  /**
   * Ends a span with its cap counts and digested thread seconds (-1: none), never before `start`;
   * `endTime`, when given, is `end` as an HrTime already made.
   */
  private endSpan(
    span: Span,
    start: number,
    end: number,
    endTime: HrTime | undefined,
    childrenDropped: number,
    linksDropped: number,
    cpu: number,
    noncpu: number,
  ): void {
    if (childrenDropped > 0) span.setAttribute(ATTR_CHILDREN_DROPPED, childrenDropped);
    if (linksDropped > 0) span.setAttribute(ATTR_LINKS_DROPPED, linksDropped);
    if (cpu >= 0) span.setAttribute(ATTR_THREAD_CPU_TIME, cpu);
    if (noncpu >= 0) span.setAttribute(ATTR_THREAD_NONCPU_TIME, noncpu);
    span.end(end > start ? (endTime ?? this.hr(end)) : this.hr(start));
  }

  /** Recorder seconds as an HrTime, split so that whole seconds of the epoch lose no precision. */
  private hr(seconds: number): HrTime {
    // Consecutive times are often equal (a task span starts with its first state span, ends with
    // its last); the SDK keeps the array it is given and never writes to it, so one array serves.
    if (seconds === this.lastSeconds) return this.lastTime;
    const sum = this.originFraction + seconds;
    let whole = Math.floor(sum);
    let nanos = Math.round((sum - whole) * 1e9);
    if (nanos >= 1e9) {
      whole += 1;
      nanos -= 1e9;
    }
    const time: HrTime = [this.originWhole + whole, nanos];
    this.lastSeconds = seconds;
    this.lastTime = time;
    return time;
  }
}

/** The map id of a key, as the recorder spells it, without counting bad keys as dropped. */
function idOfKey(key: Key): string | number | undefined {
  if (typeof key === "string") return key;
  if (typeof key === "number") return key === key ? key : undefined;
  return keyToText(key);
}

function truncate(text: string, limit: number): string {
  return text.length > limit ? text.slice(0, limit) : text;
}

function clamp(value: number, low: number, high: number): number {
  if (value < low) return low;
  if (high === high && value > high) return high;
  return value;
}

/** Flushes a provider's processors, if it has any; a global proxy is asked for its delegate. */
async function flush(provider: TracerProvider | undefined): Promise<void> {
  if (provider === undefined) return;
  type Flushable = { forceFlush?: () => Promise<unknown>; getDelegate?: () => unknown };
  let target = provider as Flushable;
  if (typeof target.forceFlush !== "function" && typeof target.getDelegate === "function") target = target.getDelegate() as Flushable;
  if (typeof target?.forceFlush === "function") await target.forceFlush();
}
