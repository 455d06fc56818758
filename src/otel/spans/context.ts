import { ROOT_CONTEXT, trace, type Context, type HrTime, type Span, type SpanContext } from "@opentelemetry/api";
import { IncompatibleDependencyError } from "../../shared/errors.js";

/**
 * The key under which the API keeps a context's span, learnt from the API itself: it is not
 * exported, and asking beats hardcoding its description. (test/otel/spans/context.test.ts fails
 * if the API stops reading a span this way; bench/parent-context.bench.ts counts what it saves,
 * docs/spans.md gives the figures.)
 */
export const SPAN_KEY: symbol = (() => {
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
  if (key === undefined)
    throw new IncompatibleDependencyError("taskjourney: @opentelemetry/api reads no span key from a context");
  return key;
})();

/**
 * A span as a parent context: the context `trace.setSpan(ROOT_CONTEXT, span)` would give. The SDK
 * only reads a parent context, and a context of our own costs nothing beyond this object, where
 * the API's makes an object, a Map and three closures.
 */
export class ParentContext implements Context {
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
export class OpenSpan extends ParentContext {
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

/** The task span of an emitted journey, which also holds its state spans: one per visit, undefined where capped away. */
export class TaskSpan extends OpenSpan {
  // Room for a compute journey's visits from the start: a store into an empty array would grow it
  // to sixteen slots at the first visit.
  readonly visits: Array<OpenSpan | undefined> = [undefined, undefined, undefined, undefined];
  /**
   * Started for a journey that was not head-sampled, because `inject()` handed its ids out: it is
   * ended (and exported, with its state spans) only if the journey is kept at its end.
   */
  deferred = false;
  /**
   * Recorder seconds none of the journey's spans starts or ends before: the start of the
   * producer's span it continues (a hand-off carrier said when; see TaskSpans.notBefore), else
   * undefined: a double field would be a number boxed per span, for nearly every span in vain.
   */
  notBefore: number | undefined = undefined;
}

/**
 * The task span of a journey that ended and was emitted, for `inject()` after the end (the result
 * going back, the data a peer fetches): its context, and the end it was given, which the result's
 * carrier tells the parent (TRACESTATE_END) so that the parent does not end before it.
 */
export class EndedTask {
  constructor(
    readonly context: SpanContext,
    readonly end: HrTime,
  ) {}
}
