import { tell } from "./warn.js";

/**
 * Span and trace ids that the span bridge can choose before the span exists. `inject()` hands out
 * the ids of a journey that was not head-sampled, and almost every such journey ends unkept: with
 * a tracer provider whose id generator is a SpanIds (taskjourney/sdk makes its provider so), the
 * bridge writes ids of its own into the carrier and starts no span; if the journey is kept at its
 * end, its task span is started then, and given those ids through `preset()`. Without one (a
 * provider of the user's), the bridge starts the task span at `inject()` to learn its ids.
 *
 * Shaped as @opentelemetry/sdk-trace's IdGenerator (not imported: the core depends on the API
 * only). Ids are random as the SDK's RandomIdGenerator makes them: Math.random, lower-case hex,
 * never all zeros.
 */
export class SpanIds {
  private nextTraceId: string | undefined;
  private nextSpanId: string | undefined;
  /**
   * A span started with preset ids came out with others: the provider does not take its ids from
   * here (`journeys.idGenerator` read but not given to it). Told once; the bridge hands out no
   * more ids of its own from then on.
   */
  ignored = false;

  /**
   * Whether `span`, started with `spanId` preset, has it. A recording span that has not means the
   * provider's ids are not ours to choose after all (`ignored`, told once); a no-op tracer's span
   * (before an SDK registered) records nothing and says nothing.
   */
  took(span: { spanContext(): { spanId: string }; isRecording(): boolean }, spanId: string): boolean {
    const actual = span.spanContext().spanId;
    if (actual === spanId) return true;
    if (span.isRecording() && !this.ignored) {
      this.ignored = true;
      tell(
        "warn",
        `taskjourney: a span started with the ids taskjourney chose came out with others (span id ${actual}, not ${spanId}): the tracer provider does not take its ids from journeys.idGenerator; pass it as the provider's idGenerator (NodeSDK's idGenerator option). Until then traces kept only by their end may lack their parent span; see docs/propagation.md#producers-and-consumers`,
      );
    }
    return false;
  }

  /** The ids the next span started gets: `spanId`, and `traceId` when it is a root (a child keeps its parent's). */
  preset(traceId: string, spanId: string): void {
    this.nextTraceId = traceId;
    this.nextSpanId = spanId;
  }

  /** Forgets a preset the span start did not take (e.g. tracing suppressed in its context). */
  clear(): void {
    this.nextTraceId = undefined;
    this.nextSpanId = undefined;
  }

  generateTraceId(): string {
    const preset = this.nextTraceId;
    if (preset === undefined) return randomTraceId();
    this.nextTraceId = undefined;
    return preset;
  }

  generateSpanId(): string {
    const preset = this.nextSpanId;
    if (preset === undefined) return randomSpanId();
    this.nextSpanId = undefined;
    return preset;
  }
}

/** 32 random lower-case hex digits, not all zero. */
export function randomTraceId(): string {
  randomHexInto(SCRATCH, 0, 4);
  return SCRATCH.toString("latin1", 0, 32);
}

/** 16 random lower-case hex digits, not all zero. */
export function randomSpanId(): string {
  randomHexInto(SCRATCH, 0, 2);
  return SCRATCH.toString("latin1", 0, 16);
}

/** Where randomTraceId() and randomSpanId() write their digits before making the string. */
const SCRATCH = Buffer.alloc(32);
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/**
 * `words` random 32-bit words as lower-case hex digits into `into` at `at` (latin1 bytes), never all
 * zeros: ids as the SDK's RandomIdGenerator makes them (Math.random). Written into a buffer, not
 * joined from strings: the hand-out's traceparent is made in place (handed-out.ts).
 */
export function randomHexInto(into: Buffer, at: number, words: number): void {
  let all = 0;
  for (let word = 0; word < words; word++) {
    let n = (Math.random() * 0x1_0000_0000) >>> 0;
    all |= n;
    for (let digit = at + word * 8 + 7; digit >= at + word * 8; digit--) {
      into[digit] = HEX_DIGITS[n & 15];
      n >>>= 4;
    }
  }
  if (all === 0) into[at + words * 8 - 1] = HEX_DIGITS[1];
}
