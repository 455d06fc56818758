import {
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from "@opentelemetry/api";
import {
  ATTR_CHILDREN_DROPPED,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_STACKTRACE,
  ATTR_EXCEPTION_TYPE,
  ATTR_LINKS_DROPPED,
  ATTR_THREAD_CPU_TIME,
  ATTR_THREAD_NONCPU_TIME,
  EVENT_EXCEPTION,
} from "../semconv.js";
import type { FailureDetail } from "../../recorder/failure-detail.js";
import { OpenSpan } from "./context.js";
import type { SpanBridgeOptions } from "./options.js";

/** The links of a span started without: the SDK copies the array it is given, so one empty array serves all. */
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];

/**
 * The one place the bridge's spans are started, capped, linked and ended, on recorder seconds
 * turned into HrTime. Every span taskjourney makes goes through here, so caps and times are
 * applied alike to task, state, gather_dep and activity spans.
 */
export class SpanWriter {
  private readonly originWhole: number;
  private readonly originFraction: number;
  /** The last time `hr()` made, and of which recorder seconds. */
  private lastSeconds = Number.NaN;
  private lastTime: HrTime = [0, 0];

  constructor(
    private readonly tracer: Tracer,
    private readonly options: Pick<SpanBridgeOptions, "timeOrigin" | "maxChildrenPerSpan" | "maxLinksPerSpan">,
  ) {
    this.originWhole = Math.floor(options.timeOrigin);
    this.originFraction = options.timeOrigin - this.originWhole;
  }

  /**
   * Marks a span as failed: status ERROR with the failure's message (or `fallback`), and, when
   * the failure is known, the semantic conventions' `exception` event at `at` (its type, message
   * and stack trace, capped when the ledger ended).
   */
  fail(span: Span, failure: FailureDetail | undefined, fallback: string, at: number): void {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: failure === undefined || failure.message === "" ? fallback : failure.message,
    });
    if (failure === undefined) return;
    const attributes: Attributes = { [ATTR_EXCEPTION_TYPE]: failure.type, [ATTR_EXCEPTION_MESSAGE]: failure.message };
    if (failure.stack !== "") attributes[ATTR_EXCEPTION_STACKTRACE] = failure.stack;
    span.addEvent(EVENT_EXCEPTION, attributes, this.hr(at));
  }

  /** Counts a child of `parent` against the cap; false (and counted as dropped) past it. */
  admitChild(parent: OpenSpan): boolean {
    if (parent.children >= this.options.maxChildrenPerSpan) {
      parent.childrenDropped++;
      return false;
    }
    parent.children++;
    return true;
  }

  startChild(
    name: string,
    parent: OpenSpan,
    start: number,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes?: Attributes,
    links?: Link[],
  ): OpenSpan {
    const startTime = this.hr(start);
    return new OpenSpan(this.startSpan(name, parent, startTime, kind, attributes, links), startTime);
  }

  startSpan(
    name: string,
    parent: Context,
    startTime: HrTime,
    kind: SpanKind,
    attributes: Attributes | undefined,
    links: Link[] | undefined,
  ): Span {
    // A fresh options object each time, though the SDK keeps none of it: a tracer of the user's
    // (a test double recording its calls) may, and must not see it change afterwards.
    return this.tracer.startSpan(name, { kind, startTime, attributes, links: links ?? NO_LINKS }, parent);
  }

  link(span: OpenSpan, context: SpanContext): void {
    if (span.links >= this.options.maxLinksPerSpan) {
      span.linksDropped++;
      return;
    }
    span.links++;
    span.span.addLink({ context });
  }

  finishSpan(open: OpenSpan, start: number, end: number, endTime?: HrTime): void {
    this.endSpan(open.span, start, end, endTime, open.childrenDropped, open.linksDropped, -1, -1);
  }

  /**
   * Ends a span with its cap counts and digested thread seconds (-1: none), never before `start`;
   * `endTime`, when given, is `end` as an HrTime already made.
   */
  endSpan(
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

  /**
   * Recorder seconds whose hr() is not before `time` (an epoch HrTime from another process) and
   * within a few nanoseconds of it: converted back naively, a double rounds either way, and a time
   * 1 ns early is early.
   */
  secondsNotBefore(time: readonly [number, number]): number {
    let seconds = time[0] - this.originWhole + (time[1] / 1e9 - this.originFraction);
    // A few steps of at least one ulp each: the rounding error is at most a couple of ulps.
    for (let step = 0; step < 8 && compareHr(this.hr(seconds), time) < 0; step++)
      seconds += Math.max(Math.abs(seconds) * Number.EPSILON, Number.MIN_VALUE);
    return seconds;
  }

  /** Recorder seconds as an HrTime, split so that whole seconds of the epoch lose no precision. */
  hr(seconds: number): HrTime {
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

/** Negative, zero or positive as `a` is before, at or after `b`. */
function compareHr(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

/** An attribute value cut to `limit` characters (`maxAttributeLength`). */
export function truncate(text: string, limit: number): string {
  return text.length > limit ? text.slice(0, limit) : text;
}
