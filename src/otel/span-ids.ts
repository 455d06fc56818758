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
  const id = word() + word() + word() + word();
  return id === "00000000000000000000000000000000" ? "00000000000000000000000000000001" : id;
}

/** 16 random lower-case hex digits, not all zero. */
export function randomSpanId(): string {
  const id = word() + word();
  return id === "0000000000000000" ? "0000000000000001" : id;
}

/** Two hex digits per byte value: Number#toString(16) took most of a hand-out's time. */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** 8 random hex digits. */
function word(): string {
  const n = (Math.random() * 0x1_0000_0000) >>> 0;
  return HEX_BYTES[n >>> 24] + HEX_BYTES[(n >>> 16) & 0xff] + HEX_BYTES[(n >>> 8) & 0xff] + HEX_BYTES[n & 0xff];
}
