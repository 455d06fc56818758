import type { SpanContext } from "@opentelemetry/api";
import { show } from "../../model/show.js";
import type { Journey } from "../../recorder/journey.js";
import type { Recorder } from "../../recorder/recorder.js";
import { BoundedMap } from "../bounded-map.js";
import {
  timeOf,
  formatTime,
  injectSpanContext,
  isSampled,
  TRACESTATE,
  TRACESTATE_END,
  type TraceCarrier,
} from "../propagation.js";
import type { EndedTask } from "./context.js";
import type { SpanWriter } from "./writer.js";

/**
 * A task's result carrier says when the journey that sent it ended, so that the journey it goes
 * back to, its parent, never ends its task span before that child's (docs/propagation.md):
 * `inject()` after a journey ended writes its span's end (TRACESTATE_END), `resultFrom()` notes
 * it for the live journey here, and TaskSpans.taskEnd ends the task span no earlier.
 */

/**
 * Writes an ended journey's task span into `carrier` (the result going back, the data a peer
 * fetches) with, when it was sampled, our member saying when it ended; a span not sampled names
 * nothing kept, and `resultFrom()` drops its carrier anyway.
 */
export function injectEnded(ended: EndedTask, carrier: TraceCarrier): void {
  injectSpanContext(ended.context, carrier);
  if (!isSampled(ended.context)) return;
  const member = `${TRACESTATE_END}=${formatTime(ended.end)}`;
  const existing = carrier[TRACESTATE];
  // W3C: a member added goes first.
  carrier[TRACESTATE] = typeof existing === "string" && existing.length > 0 ? `${member},${existing}` : member;
}

/** The ends results said, per live journey, until the journey ends. */
export class ResultEnds {
  /** Recorder seconds by key id: the latest end a result carrier gave for the key's live journey. */
  private readonly ends: BoundedMap<number>;

  constructor(
    private readonly recorder: Recorder,
    private readonly writer: SpanWriter,
    limit: number,
  ) {
    this.ends = new BoundedMap<number>(limit);
  }

  /**
   * Notes when the journey whose result came back to the live `journey` ended, as its sampled
   * carrier says; several results (one per attempt) keep the latest. A member that is not one, or
   * that is further from the clock than limits.maxClockSkew (a carrier that would stretch the span
   * by days), is counted and ignored (`invalid-result-end`): never thrown, even strict, since it is
   * another process's making.
   */
  note(journey: Journey, spanContext: SpanContext): void {
    const end = timeOf(spanContext, TRACESTATE_END);
    if (end === undefined) return;
    const recorder = this.recorder;
    let seconds = Number.NaN;
    if (end !== null && end[1] < 1e9) {
      seconds = this.writer.secondsNotBefore(end);
      if (!(Math.abs(seconds - recorder.clock()) <= recorder.maxClockSkew)) seconds = Number.NaN;
    }
    if (Number.isNaN(seconds)) {
      recorder.failures.fault(
        "invalid-result-end",
        `resultFrom(${show(journey.key)}) given a carrier whose ${TRACESTATE_END} member is ${show(spanContext.traceState?.get(TRACESTATE_END))}: ` +
          `not the end of the other side's journey as inject() writes it (<epoch seconds>:<nanoseconds>, within limits.maxClockSkew ${recorder.maxClockSkew} s of the clock); ignored, the journey is kept as the carrier says`,
      );
      return;
    }
    const previous = this.ends.get(journey.id);
    if (previous === undefined || seconds > previous) this.ends.set(journey.id, seconds);
  }

  /** The end noted for `journey`, taken (undefined without one): one size check for nearly every journey. */
  take(journey: Journey): number | undefined {
    return this.ends.size !== 0 ? this.ends.take(journey.id) : undefined;
  }
}
