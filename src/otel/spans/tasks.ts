import { failedAttempt } from "../../recorder/failed-attempt.js";
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type SpanContext,
} from "@opentelemetry/api";
import { DEPENDENCIES_ACTIVITY } from "../../model/activities.js";
import { keySplit, keySplitGroup } from "../../model/keys.js";
import { STALL_ATTRIBUTE_NAMES, type StallOverlap } from "../../model/stalls.js";
import { failureText } from "../../model/breakdown.js";
import {
  COMPUTE_JOURNEY,
  FETCH_JOURNEY,
  QUANTITY_ACTIVITY,
  QUANTITY_FIELDS,
  QUANTITY_UNIT,
  QUANTITY_VALUE,
  QUANTITY_VISIT,
  type Journey,
} from "../../recorder/journey.js";
import type { Recorder } from "../../recorder/recorder.js";
import type { BoundedMap } from "../bounded-map.js";
import {
  ATTR_TASK_DEPENDENCIES,
  ATTR_TASK_ERROR,
  ATTR_TASK_GROUP,
  ATTR_TASK_COMPUTATION,
  ATTR_TASK_KEY,
  ATTR_TASK_KEY_LENGTH,
  ATTR_TASK_OUTCOME,
  ATTR_TASK_PREFIX,
  ATTR_TASK_QUANTITY_PREFIX,
  ATTR_TASK_ROLE,
  ATTR_TASK_STALL_PREFIX,
  ATTR_TASK_WAIT_PREFIX,
  ATTR_TASK_WORKER,
  SPAN_TASK_PREFIX,
} from "../semconv.js";
import type { ActivitySpans } from "./activities.js";
import { EndedTask, TaskSpan, type OpenSpan } from "./context.js";
import type { SpanBridgeOptions } from "./options.js";
import type { TransferSpans } from "./transfers.js";
import { truncate, type SpanWriter } from "./writer.js";
import { handOffOf, timeOf, TRACESTATE_START } from "../propagation.js";
import { show } from "../../model/show.js";

/**
 * A journey's `task <prefix>` span and its state spans, one per visit. They are started as the
 * journey reaches them (or all at once for a journey kept at its end) and none ends before the
 * journey does: then each state span gets its activity spans, its links to gather_deps, the
 * attributes a trace needs to rebuild explain() (`task.wait.<activity>`,
 * `task.quantity.<unit>.<activity>`) and its recorded end time; the task span ends last.
 */

/** A waiting visit's attribute when no fetched dependency explains its time. */
const WAIT_DEPENDENCIES = ATTR_TASK_WAIT_PREFIX + DEPENDENCIES_ACTIVITY;

export class TaskSpans {
  private readonly taskNames: string[] = [];
  private readonly waitNames: string[] = [];

  constructor(
    private readonly recorder: Recorder,
    private readonly writer: SpanWriter,
    private readonly activities: ActivitySpans,
    private readonly transfers: TransferSpans,
    private readonly options: SpanBridgeOptions,
    /** Contexts of the journeys that produced a key's data elsewhere (`linkFrom()`), linked from its task span and its dependents'. */
    private readonly producers: BoundedMap<SpanContext>,
    /** Task spans of ended journeys, for `inject()`. */
    private readonly recent: BoundedMap<EndedTask>,
  ) {}

  /**
   * A journey kept at its end: its whole tree, from the recorded times, under `parent` (the ids
   * another process handed this key) or as a root; or, when `inject()` already started its task
   * span (`spans`, deferred), under that one. `resultEnd`: see finish().
   */
  emitRetroactively(
    journey: Journey,
    parent: Context = ROOT_CONTEXT,
    links?: Link[],
    spans?: TaskSpan,
    received?: SpanContext,
    resultEnd?: number,
  ): void {
    if (spans === undefined) spans = this.start(journey, parent, links, true, received);
    const visits = journey.visitCount - 1;
    for (let visit = 0; visit < visits; visit++) this.openVisit(journey, spans, visit);
    this.finishVisits(journey, spans, visits);
    this.finish(journey, spans, resultEnd);
  }

  /** `received`: the context the journey's key came with (continueFrom()), as it came. */
  start(
    journey: Journey,
    parent: Context,
    links: Link[] | undefined,
    ended: boolean,
    received: SpanContext | undefined,
  ): TaskSpan {
    const limit = this.options.maxAttributeLength;
    const key = typeof journey.id === "string" ? journey.id : String(journey.id);
    const attributes: Attributes = {
      [ATTR_TASK_KEY]: truncate(key, limit),
      [ATTR_TASK_PREFIX]: truncate(journey.prefixName, limit),
      [ATTR_TASK_GROUP]: truncate(groupOf(journey), limit),
      [ATTR_TASK_ROLE]: this.options.role,
    };
    // So that `explain --from` can still find a key longer than the limit: its beginning and length.
    if (key.length > limit) attributes[ATTR_TASK_KEY_LENGTH] = key.length;
    if (this.options.role === "worker") attributes[ATTR_TASK_WORKER] = this.options.instance;
    // The computation the journey was begun under: on the root span, never a metric attribute of the per-prefix metrics.
    // Its slot names it while the journey is live and at its end, when every task span starts.
    const slot = journey.computationSlot;
    if (slot !== 0) attributes[ATTR_TASK_COMPUTATION] = truncate(this.recorder.computations.at(slot).name, limit);
    if (ended) attributes[ATTR_TASK_OUTCOME] = this.recorder.machine.names[journey.outcomeState];
    let name = this.taskNames[journey.prefixId];
    if (name === undefined) {
      name = SPAN_TASK_PREFIX + this.recorder.prefixes.name(journey.prefixId);
      this.taskNames[journey.prefixId] = name;
    }
    const notBefore = received === undefined ? undefined : this.notBefore(journey, received);
    const startTime = this.writer.hr(notBefore !== undefined && journey.start < notBefore ? notBefore : journey.start);
    const task = new TaskSpan(
      this.writer.startSpan(name, parent, startTime, SpanKind.INTERNAL, attributes, links),
      startTime,
    );
    task.notBefore = notBefore;
    task.links = links?.length ?? 0;
    return task;
  }

  /**
   * Where a journey that continues another's span may start its spans: not before that span,
   * whose start the carrier gives (a hand-off's member, or a sampled `inject()` carrier's
   * TRACESTATE_START; undefined without one). Its times are the caller's, on this process's clock
   * or a queue's (milliseconds, a row's timestamp), and the other side's on another's: a job picked
   * up within the millisecond it was created or began, or two clocks apart, begins here before it
   * began there, and its task span would start before its parent. This is the one place that is
   * clamped (every time TaskSpans gives a span goes through `at()`), and in the spans only:
   * explain() and the metrics keep the times given. Within START_ROUNDING it is the times'
   * resolution, not a mistake, and silent, as a parent's end is (taskEnd()); further, counted and
   * told once (`before-hand-off`, `started-before-parent`). A start member that is not one (or
   * beyond limits.maxClockSkew from the journey's start) is counted and ignored
   * (`invalid-parent-start`): never thrown, even strict, since it is another process's making.
   */
  private notBefore(journey: Journey, received: SpanContext): number | undefined {
    const handOff = handOffOf(received);
    const time = handOff !== undefined ? handOff.start : timeOf(received, TRACESTATE_START);
    if (time === undefined) return undefined;
    const recorder = this.recorder;
    let notBefore = Number.NaN;
    if (time !== null && time[1] < 1e9) {
      notBefore = this.writer.secondsNotBefore(time);
      if (handOff === undefined && !(Math.abs(notBefore - journey.start) <= recorder.maxClockSkew))
        notBefore = Number.NaN;
    }
    if (Number.isNaN(notBefore)) {
      recorder.failures.fault(
        "invalid-parent-start",
        `continueFrom(${show(journey.key)}) given a carrier whose ${TRACESTATE_START} member is ${show(received.traceState?.get(TRACESTATE_START))}: ` +
          `not the start of the other side's task span as inject() writes it (<epoch seconds>:<nanoseconds>, within limits.maxClockSkew ${recorder.maxClockSkew} s of the journey's start); ignored, the journey's spans start at the times given`,
      );
      return undefined;
    }
    const early = notBefore - journey.start;
    if (early > START_ROUNDING) {
      const us = (early * 1e6).toFixed(0);
      if (handOff !== undefined)
        recorder.failures.fault(
          "before-hand-off",
          `the journey of ${show(journey.key)} began at ${journey.start}, ${us} µs before the producer's it continues (${notBefore} on this clock, as its hand-off carrier says): ` +
            "the two clocks disagree, or one side gave a queue's millisecond times and the other its clock's readings; its spans start at the producer's start (explain() keeps the times given). " +
            "Give both sides the queue's times, or both their clocks' (docs/instrumenting.md#times-from-a-queue)",
        );
      else
        recorder.failures.fault(
          "started-before-parent",
          `the journey of ${show(journey.key)} began at ${journey.start}, ${us} µs before the journey it continues (receiver.continueFrom()) began (${notBefore} on this clock, as its carrier says): ` +
            "the two clocks disagree, or the other side's start was given after this one began; its spans start at the other's start (explain() keeps the times given). " +
            "Give both sides the queue's times, or both their clocks' (docs/instrumenting.md#times-from-a-queue)",
        );
    }
    return notBefore;
  }

  openVisit(journey: Journey, spans: TaskSpan, visit: number): void {
    if (!this.writer.admitChild(spans)) {
      spans.visits[visit] = undefined;
      return;
    }
    spans.visits[visit] = this.writer.startChild(
      this.recorder.machine.names[journey.visitState(visit)],
      spans,
      at(spans, journey.visitStart(visit)),
    );
  }

  /** Gives visits [0, count) their children and links and ends them; `now` ends a journey cut short. */
  finishVisits(journey: Journey, spans: TaskSpan, count: number, now?: number): void {
    for (let visit = 0; visit < count; visit++) {
      const span = spans.visits[visit];
      if (span === undefined) continue;
      const start = at(spans, journey.visitStart(visit));
      const end = at(spans, visit + 1 < journey.visitCount ? journey.visitStart(visit + 1) : (now ?? journey.end));
      const state = journey.visitState(visit);
      const machine = this.recorder.machine;
      if (journey.kind === COMPUTE_JOURNEY) {
        if (state === machine.waiting) {
          this.transfers.linkOverlapping(journey.fetchedBy, span, start, end);
          this.waitAttributes(journey, visit, span, end - start);
        }
        this.activities.emit(journey.activities, visit, span, start, end);
      } else if (journey.kind === FETCH_JOURNEY) {
        // Fetch journeys carry only per-key shares of their transfer's activities, which the
        // gather_dep span shows in full, so their flight spans have no activity children.
        if (state === machine.transfer) this.transfers.linkFlight(journey, span, visit);
        // Why the key sat in fetch (`queued (<reason>)`), as explain() shows it: the only records
        // of a fetch visit (the transfer's own activities are on its gather_dep span).
        else if (state === machine.retry) this.activities.emit(journey.activities, visit, span, start, end);
      } else {
        // A scheduler's journey: a job queue's scheduler runs its jobs itself, with execute ledgers
        // and meter() calls, and explain() shows their activities under every state.
        this.activities.emit(journey.activities, visit, span, start, end);
      }
      if (journey.quantities !== undefined) this.quantityAttributes(journey.quantities, visit, span);
      const stalls = this.recorder.stalls;
      if (stalls !== undefined && stalls.size > 0) stallAttributes(stalls.overlap(start, end), span);
      this.attemptAttributes(journey, visit, span, end);
      // The next state span, when there is one, starts at this one's end with an HrTime to share.
      this.writer.finishSpan(span, start, end, visit + 1 < count ? spans.visits[visit + 1]?.startTime : undefined);
    }
  }

  /**
   * Ends the task span, with its outcome and its links to the producers of its data and its
   * dependencies; `resultEnd`: the latest end of a child whose result came back (see taskEnd()).
   */
  finish(journey: Journey, task: TaskSpan, resultEnd?: number): void {
    const outcome = journey.outcomeState;
    const span = task.span;
    const machine = this.recorder.machine;
    span.setAttribute(ATTR_TASK_OUTCOME, machine.names[outcome]);
    if (journey.dependencyIds !== undefined) span.setAttribute(ATTR_TASK_DEPENDENCIES, journey.dependencyIds.length);
    if (machine.failed[outcome] === 1) {
      const failure = journey.failure;
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message:
          failure === undefined || failure.message === "" ? `task ended in ${machine.names[outcome]}` : failure.message,
      });
    }
    // The journey that produced this key's data elsewhere (linkFrom), and each dependency's: the
    // producer elsewhere, else the dependency's own journey here if its task span was emitted
    // (an in-process DAG's parent job, or a fetched key's fetch journey), or is open and will be
    // (a dependent cancelled while its parents still wait, as a failure's cascade does).
    const producers = this.producers.size !== 0 ? this.producers : undefined;
    const own = producers?.get(journey.id);
    if (own !== undefined) this.writer.link(task, own);
    const dependencies = journey.dependencyIds;
    if (dependencies !== undefined) {
      for (const dependency of dependencies) {
        const context = producers?.get(dependency) ?? this.recent.get(dependency)?.context ?? this.openTask(dependency);
        if (context !== undefined) this.writer.link(task, context);
      }
    }
    const start = at(task, journey.start);
    const end = this.taskEnd(journey, task, journey.end, resultEnd);
    // The end as the span has it (never before its start), for the carrier of its result.
    const endTime = this.writer.hr(end > start ? end : start);
    this.writer.finishSpan(task, start, end, endTime);
    this.recent.set(journey.id, new EndedTask(span.spanContext(), endTime));
  }

  /**
   * Where a journey's task span ends: at `end`, or later, at `resultEnd`, the end of a child's
   * span whose result came back here (`resultFrom()`: its carrier says when, TRACESTATE_END).
   * The child's times are its process's, the parent's may be a queue's milliseconds (a row's
   * `completed_on`, truncated): a child that ended within the millisecond the parent ended in
   * would outlast it by up to 1 ms. This is the one place a task span's end is clamped (finish()
   * and the bridge's unfinished spans come here), and in the spans only: explain() and the
   * metrics keep the times given. Within END_ROUNDING it is the times' resolution, not a
   * mistake, and silent; further, the clocks disagree (or the parent's end was given before the
   * child really ended): counted and told once (`ended-before-result`).
   */
  taskEnd(journey: Journey, task: TaskSpan, end: number, resultEnd: number | undefined): number {
    end = at(task, end);
    if (resultEnd === undefined || !(resultEnd > end)) return end;
    if (resultEnd - end > END_ROUNDING)
      this.recorder.failures.fault(
        "ended-before-result",
        `the journey of ${show(journey.key)} ended at ${end}, ${((resultEnd - end) * 1e6).toFixed(0)} µs before the journey whose result came back to it (receiver.resultFrom()) ended (${resultEnd} on this clock, as the result's carrier says): ` +
          "the two clocks disagree, or this journey's end was given before the other side's ended; its task span ends at the other's end (explain() keeps the times given). " +
          "Give both sides the queue's times for the same event, or both their clocks' (docs/instrumenting.md#times-from-a-queue)",
      );
    return resultEnd;
  }

  /** The task span of a live journey here that was head-sampled (open, and emitted at its end), else undefined. */
  private openTask(id: string | number): SpanContext | undefined {
    const spans = this.recorder.live.get(id)?.spanState;
    return spans instanceof TaskSpan && !spans.deferred ? spans.span.spanContext() : undefined;
  }

  /**
   * A visit that was an attempt that did not succeed (an execution ended in error or cancelled, a
   * fetch's transfer not ok): its outcome and reason as attributes (`task.outcome`, `task.error`),
   * so a trace alone can rebuild explain(); a failed one gets status ERROR and the exception event.
   */
  private attemptAttributes(journey: Journey, visit: number, span: OpenSpan, end: number): void {
    if (journey.failureVisit === -1 && journey.transfers === undefined && journey.reasonVisits === undefined) return;
    const attempt = failedAttempt(journey, visit);
    if (attempt === undefined) return;
    span.span.setAttribute(ATTR_TASK_OUTCOME, attempt.outcome);
    const failure = attempt.failure;
    if (failure !== undefined) span.span.setAttribute(ATTR_TASK_ERROR, failureText(failure.type, failure.message));
    if (attempt.outcome === "error" || attempt.outcome === "failed")
      this.writer.fail(
        span.span,
        failure,
        `${this.recorder.machine.names[journey.visitState(visit)]} ${attempt.outcome}`,
        end,
      );
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
}

/**
 * How far a parent's end may be clamped to its child's (TaskSpans.taskEnd) without a word: a
 * millisecond timestamp, truncated, stands for an instant up to 1 ms later, and the docs' job
 * queue ends the parent at one (`completed_on`) and its child at a clock's reading; plus a
 * microsecond for the conversions between the two processes' clocks (an epoch second as a double
 * resolves 0.24 µs). A clamp further than that is no rounding: counted and told.
 */
export const END_ROUNDING = 0.001 + 1e-6;

/**
 * How far a journey's start may be clamped to its parent's (TaskSpans.notBefore) without a word:
 * the same millisecond's truncation, the other way (a worker's `started_on` beside a queue side's
 * clock reading in the same millisecond), plus the same microsecond.
 */
export const START_ROUNDING = END_ROUNDING;

/** A time of the journey's for one of its spans: never before `spans.notBefore` (see TaskSpans.notBefore). */
export function at(spans: TaskSpan, seconds: number): number {
  const notBefore = spans.notBefore;
  return notBefore !== undefined && seconds < notBefore ? notBefore : seconds;
}

/** The process stalls a visit overlapped as `task.stall.<kind>` = seconds, so a trace alone can rebuild explain(). */
function stallAttributes(overlap: StallOverlap, span: OpenSpan): void {
  for (let kind = 0; kind < overlap.length; kind++) {
    if (overlap[kind] > 0) span.span.setAttribute(ATTR_TASK_STALL_PREFIX + STALL_ATTRIBUTE_NAMES[kind], overlap[kind]);
  }
}

/**
 * A journey's task group: the one describe() gave, else key_split's group when the prefix is
 * key_split's own, else the prefix (a group made from an id-like key would be that id).
 */
function groupOf(journey: Journey): string {
  if (journey.group !== undefined) return journey.group;
  return journey.prefixName === keySplit(journey.key) ? keySplitGroup(journey.key) : journey.prefixName;
}
