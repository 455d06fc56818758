import { SpanKind, type Attributes, type Context, type SpanContext } from "@opentelemetry/api";
import type { Serve } from "../../recorder/serve-ledger.js";
import {
  ATTR_TRANSFER_BYTES,
  ATTR_TRANSFER_KEY_COUNT,
  ATTR_TRANSFER_KEYS,
  ATTR_TRANSFER_OUTCOME,
  ATTR_TRANSFER_PEER,
  ATTR_ABANDONED,
  ATTR_UNFINISHED,
  SPAN_GET_DATA,
} from "../semconv.js";
import { remoteContext } from "../propagation.js";
import type { ActivitySpans } from "./activities.js";
import { OpenSpan } from "./context.js";
import type { SpanBridgeOptions } from "./options.js";
import { truncate, type SpanWriter } from "./writer.js";

/** Traced serves whose ledgers are still open, at most; past it the oldest is abandoned. */
export const MAX_OPEN_SERVE_SPANS = 10_000;

/**
 * get_data spans: the serving side of a traced gather_dep. A serve gets a span only when the
 * request carried a sampled gather_dep context (`journeys.serve(peer, keys, carrier)`): it is a
 * SERVER child of that gather_dep, in its trace (the requester's sampling decision, carried in
 * the carrier's flags, decides: an unsampled gather_dep is not exported, so a get_data under it
 * would have no parent); the reply carries the get_data
 * span's context back (`journeys.propagation.sender.injectTransfer(ledger, reply)`), and the gather_dep links to it
 * (`journeys.propagation.receiver.replyFrom(ledger, reply)`). Its activity spans (disk-read, serialize, network)
 * are made from the serve's records when it ends.
 */
export class ServeSpans {
  /** Serves whose get_data span is open, oldest first (a Set keeps insertion order). */
  private readonly open = new Set<Serve>();

  constructor(
    private readonly writer: SpanWriter,
    private readonly activities: ActivitySpans,
    private readonly options: Pick<SpanBridgeOptions, "maxAttributeLength" | "maxKeysPerTransfer">,
    /** Told of each serve abandoned past MAX_OPEN_SERVE_SPANS (counted as live-serves-limit). */
    private readonly abandoned: (serve: Serve) => void,
  ) {}

  started(serve: Serve, requester: SpanContext): void {
    if (this.open.size >= MAX_OPEN_SERVE_SPANS) {
      // Serves whose ledgers are never ended would hold their spans (~1.5 KB each) for good: the
      // oldest one's span ends now, marked, and a later end() of its ledger adds nothing to it.
      const oldest = this.open.values().next().value!;
      this.open.delete(oldest);
      const open = oldest.spanState as OpenSpan;
      open.span.setAttribute(ATTR_UNFINISHED, true);
      open.span.setAttribute(ATTR_ABANDONED, true);
      this.finish(oldest, open, Math.max(serve.start, oldest.start));
      this.abandoned(oldest);
    }
    const parent: Context = remoteContext(requester);
    // A child of the gather_dep, not also linked to it: Jaeger turns a parent that is also a link
    // into a FOLLOWS_FROM reference, and the get_data would stand as a root of the trace.
    const span = this.writer.startSpan(
      SPAN_GET_DATA,
      parent,
      this.writer.hr(serve.start),
      SpanKind.SERVER,
      this.attributes(serve),
      undefined,
    );
    const open = new OpenSpan(span, this.writer.hr(serve.start));
    serve.spanState = open;
    this.open.add(serve);
  }

  ended(serve: Serve): void {
    const open = serve.spanState;
    if (!(open instanceof OpenSpan)) return;
    this.open.delete(serve);
    this.finish(serve, open, serve.end);
  }

  shutdown(now: number): void {
    for (const serve of this.open) {
      const open = serve.spanState as OpenSpan;
      open.span.setAttribute(ATTR_UNFINISHED, true);
      this.finish(serve, open, now);
    }
    this.open.clear();
  }

  private finish(serve: Serve, open: OpenSpan, end: number): void {
    this.activities.emit(serve.activities, -1, open, serve.start, end);
    const span = open.span;
    span.setAttribute(ATTR_TRANSFER_BYTES, serve.bytes);
    if (serve.outcome !== "") span.setAttribute(ATTR_TRANSFER_OUTCOME, serve.outcome);
    if (serve.outcome === "failed") this.writer.fail(span, serve.failure, "serve failed", end);
    this.writer.finishSpan(open, serve.start, end);
    serve.spanState = span.spanContext();
  }

  private attributes(serve: Serve): Attributes {
    const limit = this.options.maxAttributeLength;
    const attributes: Attributes = {
      [ATTR_TRANSFER_PEER]: truncate(serve.peer, limit),
      [ATTR_TRANSFER_KEY_COUNT]: serve.keyIds.length,
    };
    const listed = Math.min(serve.keyIds.length, this.options.maxKeysPerTransfer);
    if (listed > 0)
      attributes[ATTR_TRANSFER_KEYS] = serve.keyIds.slice(0, listed).map((id) => truncate(String(id), limit));
    return attributes;
  }
}
