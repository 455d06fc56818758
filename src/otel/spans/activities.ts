import { SpanKind, type Span } from "@opentelemetry/api";
import { THREAD_CPU_ACTIVITY as THREAD_CPU, THREAD_NONCPU_ACTIVITY as THREAD_NONCPU } from "../../model/activities.js";
import {
  ACTIVITY_END,
  ACTIVITY_FIELDS,
  ACTIVITY_ID,
  ACTIVITY_PARENT,
  ACTIVITY_START,
  ACTIVITY_VISIT,
  firstRecordOf,
  isDigested,
} from "../../recorder/journey.js";
import { ATTR_DIGEST, SPAN_RUN } from "../semconv.js";
import { ParentContext, type OpenSpan } from "./context.js";
import type { SpanWriter } from "./writer.js";

/**
 * Activity spans, made retroactively from the recorder's flat activity records when the state
 * visit or transfer that owns them ends. Records become spans named after the activity, nested as
 * metered, clamped into their parent's interval (an activity that outlived its state, e.g. a task
 * cancelled while executing, is cut at the state's end). `thread-cpu` / `thread-noncpu` digests
 * are measurements over one interval, not consecutive slices, so they are not spans: nested in an
 * activity, they become its `thread.cpu_time` / `thread.noncpu_time` attributes; at top level,
 * one `run` span ending at the latest digest and lasting their sum. The `other` remainder is a
 * gap, not a span.
 */

/** Marks an activity span made from a digest: its interval is inferred, ending when it was taken. */
const DIGEST_ATTRIBUTES = Object.freeze({ [ATTR_DIGEST]: true });

/**
 * The activity spans of one `emit` call, in arrays indexed by record (offset / ACTIVITY_FIELDS)
 * that are kept from call to call: an activity span starts and ends within the call, so an object
 * per span would be garbage at once. A slot holds what a record's span needs while the records
 * nested in it are emitted.
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

export class ActivitySpans {
  private readonly slots = new ActivitySlots();

  constructor(
    private readonly writer: SpanWriter,
    /** The recorder's activity names, by id. */
    private readonly activities: { name(id: number): string },
    private readonly maxChildrenPerSpan: number,
  ) {}

  /** Activity spans of the records of `visit` (-1: a transfer's), under `owner` (of that interval), ended here. */
  emit(records: readonly number[], visit: number, owner: OpenSpan, ownerStart: number, ownerEnd: number): void {
    const slots = this.slots.busy ? new ActivitySlots() : this.slots;
    slots.reserve(records.length / ACTIVITY_FIELDS);
    slots.busy = true;
    try {
      this.emitSpans(records, visit, owner, ownerStart, ownerEnd, slots);
    } finally {
      slots.busy = false;
    }
  }

  private emitSpans(
    records: readonly number[],
    visit: number,
    owner: OpenSpan,
    ownerStart: number,
    ownerEnd: number,
    slots: ActivitySlots,
  ): void {
    const writer = this.writer;
    let lastSlot = -1;
    let runCpu = -1;
    let runNoncpu = -1;
    let runEnd = Number.NEGATIVE_INFINITY;
    const first = firstRecordOf(records, visit);
    for (
      let record = first, slot = first / ACTIVITY_FIELDS;
      record < records.length;
      record += ACTIVITY_FIELDS, slot++
    ) {
      if (records[record + ACTIVITY_VISIT] !== visit) break;
      // Cleared before anything can skip it: a nested record reads its parent's slot, which comes
      // earlier and so was written in this call, never left over from another (one a span
      // processor's exception cut short).
      slots.spans[slot] = undefined;
      lastSlot = slot;
      const parentRecord = records[record + ACTIVITY_PARENT];
      // Nested under its parent activity's span; at top level when that activity belongs to an
      // earlier visit (metered across executing → long-running). A child of an activity capped
      // away goes with it (counted on that activity's parent).
      const parentSlot =
        parentRecord === -1 || records[parentRecord + ACTIVITY_VISIT] !== visit ? -1 : parentRecord / ACTIVITY_FIELDS;
      if (parentSlot !== -1 && slots.spans[parentSlot] === undefined) continue;
      const parentStart = parentSlot === -1 ? ownerStart : slots.start[parentSlot];
      const parentEnd = parentSlot === -1 ? ownerEnd : slots.end[parentSlot];
      const start = clamp(records[record + ACTIVITY_START], parentStart, parentEnd);
      const recordedEnd = records[record + ACTIVITY_END];
      const end = clamp(recordedEnd === recordedEnd ? recordedEnd : parentEnd, start, parentEnd);
      const name = this.activities.name(records[record + ACTIVITY_ID]);
      if (name === THREAD_CPU || name === THREAD_NONCPU) {
        // The seconds digested, as explain() counts them: a measurement, not the interval it was
        // placed on. That interval ends at the clock's reading when digest() was called, which
        // lies past the state's end when the ledger ended at an earlier `at` (a queue's backdated
        // time): clamped, it lasted 0 s, and the span said thread.cpu_time 0 where explain() had it.
        const seconds = recordedEnd - records[record + ACTIVITY_START];
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
        if (!writer.admitChild(owner)) continue;
        parent = owner;
      } else {
        if (slots.children[parentSlot] >= this.maxChildrenPerSpan) {
          slots.childrenDropped[parentSlot]++;
          continue;
        }
        slots.children[parentSlot]++;
        parent = slots.parent(parentSlot);
      }
      const attributes = isDigested(records, record) ? DIGEST_ATTRIBUTES : undefined;
      slots.open(
        slot,
        writer.startSpan(name, parent, writer.hr(start), SpanKind.INTERNAL, attributes, undefined),
        start,
        end,
      );
    }
    if (runEnd !== Number.NEGATIVE_INFINITY && writer.admitChild(owner)) {
      const start = Math.max(ownerStart, runEnd - Math.max(runCpu, 0) - Math.max(runNoncpu, 0));
      writer.endSpan(
        writer.startSpan(SPAN_RUN, owner, writer.hr(start), SpanKind.INTERNAL, undefined, undefined),
        start,
        runEnd,
        undefined,
        0,
        0,
        runCpu,
        runNoncpu,
      );
    }
    // Children end before their parents, which come earlier: reversed record order.
    for (let slot = lastSlot; slot >= first / ACTIVITY_FIELDS; slot--) {
      const span = slots.spans[slot];
      if (span === undefined) continue;
      slots.release(slot);
      writer.endSpan(
        span,
        slots.start[slot],
        slots.end[slot],
        undefined,
        slots.childrenDropped[slot],
        0,
        slots.cpu[slot],
        slots.noncpu[slot],
      );
    }
  }
}

function clamp(value: number, low: number, high: number): number {
  if (value < low) return low;
  if (high === high && value > high) return high;
  return value;
}
