import type { Context } from "@opentelemetry/api";
import type { Key } from "./model/keys.js";
import { show } from "./model/show.js";
import type { Recorder } from "./recorder/recorder.js";
import { TransferLedger } from "./recorder/transfer-ledger.js";
import { ServeLedger as ServeLedgerImpl } from "./recorder/serve-ledger.js";
import type { SpanBridge } from "./otel/spans/bridge.js";
import { extractSpanContext, remoteContext } from "./otel/propagation.js";
import { tell } from "./otel/warn.js";
import type { GatherLedger, Propagation, ServeLedger, TraceCarrier } from "./types.js";

/** What the propagation calls need of their TaskJourneys (journeys.ts). */
export interface PropagationHost {
  readonly recorder: Recorder;
  readonly spans: SpanBridge;
  /** Whether the journeys are shut down: the calls then do nothing. */
  closed(): boolean;
  /** Whether spans are made now (the `traces` option, a tracer provider that is not a no-op, or one registered since). */
  tracing(): boolean;
}

/**
 * The calls of `journeys.propagation` (trace context across processes, by side), and of the
 * deprecated facade verbs of 0.1 that lead to them: every carrier read or written inside a guard,
 * a carrier that throws counted as `invalid-carrier`, never thrown into the host.
 */
export class JourneysPropagation<S extends string> {
  /** Whether a handOff() that could write no carrier, spans being off, was told (once). */
  private toldUntracedHandOff = false;

  constructor(private readonly host: PropagationHost) {}

  /** The frozen `journeys.propagation` object: its methods, by side. */
  sides(): Propagation<S> {
    return Object.freeze({
      sender: Object.freeze({
        inject: (key: Key, carrier: TraceCarrier) => this.inject(key, carrier),
        injectTransfer: (ledger: GatherLedger | ServeLedger, carrier: TraceCarrier) =>
          this.injectTransfer(ledger, carrier),
        handOff: (key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }) =>
          this.handOff(key, carrier, options),
      }),
      receiver: Object.freeze({
        extract: (carrier: Readonly<Record<string, unknown>>) => this.extract(carrier),
        continueFrom: (
          key: Key,
          carrier: Readonly<Record<string, unknown>> | Context,
          options?: { readonly attempt?: number },
        ) => this.parent(key, carrier, options),
        resultFrom: (key: Key, carrier: Readonly<Record<string, unknown>> | Context) => this.returned(key, carrier),
        dataFrom: (key: Key, carrier: Readonly<Record<string, unknown>> | Context) => this.linkFrom(key, carrier),
        replyFrom: (ledger: GatherLedger, carrier: Readonly<Record<string, unknown>> | Context) =>
          this.linkTransfer(ledger, carrier),
      }),
    });
  }

  /**
   * Writes the trace context of `key`'s journey here into `carrier` (W3C `traceparent`, and
   * `tracestate`), for the message that carries the task on: the key's task span, which covers
   * whatever the receiver does whichever state this journey is in (the state span it was made in
   * travels as a `taskjourney` tracestate member, for the receiver's link); after the journey
   * ended, its task span if it was emitted (for the data a peer gathers, or the result going back).
   * A journey that is not head-sampled hands out ids too, flagged not sampled: if it is kept at its
   * end it is emitted under them, so every journey of a task shares one trace. Returns false and
   * writes nothing when there is nothing to name (no journey here, or one ended long ago or unkept).
   */
  inject(key: Key, carrier: TraceCarrier): boolean {
    if (!this.host.tracing()) return false;
    let written: boolean | "unknown";
    try {
      written = this.host.spans.inject(key, carrier);
    } catch {
      return this.badCarrier("propagation.sender.inject()");
    }
    if (written === true) return true;
    // Told outside the guard: when strict, the drop throws, and must not be taken for a carrier's throw.
    const recorder = this.host.recorder;
    if (written === "unknown") {
      // A journey that ended unkept (not sampled) is there to name nothing: that is no mistake.
      // Not counted: a worker asked for data whose journey ended before the last retainedJourneys
      // is on a normal path; told once, so that the usual mistake (a key never seen here) is known.
      if (!recorder.hasJourney(key))
        recorder.failures.notice(
          "inject() unknown key",
          `inject(${show(key)}) wrote nothing: no journey of this key here, live or among the last retention.journeys ended. ` +
            "propagation.sender.inject() names the key's journey in this process: call it while the key's journey is under way here (when sending the task on), or after it ended and was kept",
        );
    } else if (carrier === null || typeof carrier !== "object")
      recorder.drop(
        "invalid-carrier",
        `inject(${show(key)}) given ${show(carrier)}, not a carrier (an object its headers are written into); nothing written`,
        undefined,
        "invalid-carrier inject()",
      );
    else recorder.idOf(key);
    return false;
  }

  /**
   * Writes the trace context of a ledger's live span into `carrier`: a gather ledger's gather_dep
   * (into the get_data request) or a serve ledger's get_data (into the reply). Returns false and
   * writes nothing when the transfer is not traced.
   */
  injectTransfer(ledger: GatherLedger | ServeLedger, carrier: TraceCarrier): boolean {
    if (!this.host.tracing()) return false;
    try {
      if (ledger instanceof TransferLedger) return this.host.spans.injectTransfer(ledger.transfer, carrier);
      if (ledger instanceof ServeLedgerImpl) return this.host.spans.injectTransfer(ledger.serve, carrier);
      return false;
    } catch {
      return this.badCarrier("propagation.sender.injectTransfer()", "its ledger or carrier");
    }
  }

  /**
   * A producer's hand-off: `key`'s journey here passes the task on to consumers it never hears
   * from again (a job enqueued, a message published). Writes the journey into `carrier` as
   * `inject()` does, plus what the consumers need to keep the task's trace whole: the producer's
   * head-sampling decision (the consumers follow it, whatever their own ratio) and the producer's
   * span as far as now (`at`), which the first consumer attempt that keeps its journey emits in
   * the producer's stead when the producer did not sample it (docs/propagation.md). Put the
   * carrier in the message; consumers call `parent(key, carrier, { attempt })`.
   *
   * With `to`, the journey ends here too, moving from its current state to `to` at `at` (e.g.
   * `handOff(id, carrier, { to: "enqueued" })`); without it, end it yourself when the hand-off is
   * done (`transition(id, "sending", "enqueued", at)` once the queue confirmed it). Either way the
   * journey is exported from here only if it was head-sampled (or failed): its keeping, for slowness or
   * failure, is the consumers' to decide. Returns false (writing nothing) when `key` has no live
   * journey here or traces are off; `to` still ends a live journey.
   */
  handOff(key: Key, carrier: TraceCarrier, options?: { readonly at?: number; readonly to?: S }): boolean {
    if (this.host.closed()) return false;
    let at: number | undefined;
    let to: S | undefined;
    try {
      at = options?.at;
      to = options?.to;
    } catch {
      return this.badCarrier("propagation.sender.handOff()", "its options");
    }
    const recorder = this.host.recorder;
    const journey = recorder.journeyOf(key);
    if (journey === undefined || journey.ended) {
      recorder.drop(
        "hand-off-without-journey",
        `handOff() of key ${show(key)} with no live journey of it here: begin one (a transition out of the machine's initial state) before handing it off; nothing written or ended`,
      );
      return false;
    }
    let written = false;
    if (this.host.tracing()) {
      try {
        written = this.host.spans.handOff(
          key,
          carrier,
          typeof at === "number" && Number.isFinite(at) ? at : recorder.clock(),
        );
      } catch {
        this.badCarrier("propagation.sender.handOff()");
      }
    } else if (!this.toldUntracedHandOff) {
      // Not a mistake in the call, so not a drop: the journeys were made without spans.
      this.toldUntracedHandOff = true;
      tell(
        "warn",
        `taskjourney: propagation.sender.handOff(${show(key)}) wrote no carrier (returned false): these journeys make no spans ` +
          `(no tracerProvider given and none registered globally, or traces: false), so there is no trace for consumers ` +
          `to continue. Give new TaskJourneys({ tracerProvider }) one, or use startTelemetry(); told once`,
      );
    }
    if (to !== undefined) recorder.transition(key, recorder.machine.names[journey.state] as S, to, at);
    return written;
  }

  /**
   * The trace context in a received `carrier`, as an OpenTelemetry Context with the remote span
   * (for your own spans, or for `parent()` / `linkFrom()`), or undefined when it holds no valid
   * `traceparent`. Independent of the global propagator.
   */
  extract(carrier: Readonly<Record<string, unknown>>): Context | undefined {
    let spanContext: ReturnType<typeof extractSpanContext>;
    try {
      spanContext = extractSpanContext(carrier);
    } catch {
      this.badCarrier("propagation.receiver.extract()");
      return undefined;
    }
    return spanContext === undefined ? undefined : remoteContext(spanContext);
  }

  /**
   * Makes `key`'s next journey here a child of the span in `context` (a carrier or an extracted
   * Context): on a worker, call it with the compute-task message's carrier before the key's first
   * transition, and the worker's journey nests under the scheduler's task span, linked to the
   * state span the carrier was made in — one trace per task across processes. A sampled context
   * makes this journey head-sampled too, whatever the ratio says; an unsampled one is kept for
   * its ids, under which this journey is emitted if it is kept at its end (error, slow). Returns
   * true when queued. A journey already under way cannot be re-parented: its task span links to a
   * sampled context instead (returns false).
   */
  parent(
    key: Key,
    context: Readonly<Record<string, unknown>> | Context,
    options?: { readonly attempt?: number },
  ): boolean {
    if (this.host.closed() || !this.host.tracing()) return false;
    let attempt = 1;
    const given = options?.attempt;
    if (given !== undefined) {
      if (typeof given === "number" && Number.isSafeInteger(given) && given >= 1) attempt = given;
      else
        this.host.recorder.drop(
          "invalid-value",
          `continueFrom() given attempt ${typeof given === "number" ? given : typeof given}, not an integer >= 1 (1: the first delivery); took 1`,
        );
    }
    let queued: boolean | "no-context" | "began";
    let problem: string | undefined;
    try {
      queued = this.host.spans.parent(key, context, attempt);
      if (queued === "no-context") problem = carrierProblem(context);
    } catch {
      return this.badCarrier("propagation.receiver.continueFrom()");
    }
    if (queued === true) return true;
    // Told outside the guard: when strict, the drop throws, and must not be taken for a carrier's throw.
    const recorder = this.host.recorder;
    if (queued === "began") {
      const journey = recorder.journeyOf(key);
      const state = journey === undefined ? undefined : recorder.machine.names[journey.state];
      recorder.drop(
        "late-parent",
        `continueFrom(${show(key)}) after its journey here began (it is in ${state ?? "a live state"}): too late to make the context its parent; ` +
          "a sampled one is linked from its task span instead. Call propagation.receiver.continueFrom() with the message's carrier before the key's first transition here",
        undefined,
      );
    } else if (problem !== undefined)
      recorder.drop(
        "invalid-carrier",
        `continueFrom(${show(key)}) given ${problem}; nothing queued`,
        undefined,
        "invalid-carrier parent()",
      );
    else if (queued === false) recorder.idOf(key);
    return false;
  }

  /**
   * The second carrier of a task: the one that comes back with its result or error, which the
   * other side filled with `inject(key, …)` after its journey ended. When that side kept its
   * journey (the carrier says sampled: head-sampled, or kept at its end for an error or
   * slowness), `key`'s live journey here is kept too, so the task's trace holds both sides. Call
   * it before the transition that ends the journey. Returns true when it made the journey kept.
   */
  returned(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.host.closed()) return false;
    try {
      return this.host.spans.returned(key, context);
    } catch {
      return this.badCarrier("propagation.receiver.resultFrom()");
    }
  }

  /**
   * Tells that the data of `key` came with this producer's trace context (a carrier the producer
   * filled with `inject(key, …)`, or an extracted Context): the task span of `key`'s journey here
   * and of every journey here that depends on `key` link to the producer's journey when they are
   * emitted. On the scheduler, `linkFrom(key, clientCarrier)` links a submission to a client's
   * span in another process.
   */
  linkFrom(key: Key, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.host.closed() || !this.host.tracing()) return false;
    try {
      return this.host.spans.linkFrom(key, context);
    } catch {
      return this.badCarrier("propagation.receiver.dataFrom()");
    }
  }

  /** Links a gather ledger's live gather_dep span to the get_data span whose context a reply carried. */
  linkTransfer(ledger: GatherLedger, context: Readonly<Record<string, unknown>> | Context): boolean {
    if (this.host.closed() || !this.host.tracing()) return false;
    try {
      // Inside the guard: `instanceof` asks a Proxy's getPrototypeOf trap, which may throw.
      if (!(ledger instanceof TransferLedger)) return false;
      return this.host.spans.linkTransfer(ledger.transfer, context);
    } catch {
      return this.badCarrier("propagation.receiver.replyFrom()", "its ledger or carrier");
    }
  }

  /** A carrier (or a ledger) that threw when read or written: counted (thrown when strict); the call did nothing. */
  badCarrier(call: string, what = "its carrier"): false {
    this.host.recorder.drop("invalid-carrier", `${call} could not read or write ${what}`);
    return false;
  }
}

/**
 * What is wrong with a carrier in which parent() found no span context, or undefined when nothing
 * is: a carrier without a traceparent comes from a sender that does not trace (or a Context with
 * no span), which is no mistake. Reads the carrier (the caller guards it).
 */
function carrierProblem(source: unknown): string | undefined {
  if (source === null || typeof source !== "object")
    return `${show(source)}, not a carrier (an object of headers) or a Context from extract()`;
  if (typeof (source as Partial<Context>).getValue === "function") return undefined;
  const traceparent = (source as Record<string, unknown>).traceparent;
  if (traceparent === undefined) return undefined;
  return `a carrier whose traceparent ${show(traceparent)} is not a W3C one ("00-" 32 hex digits "-" 16 hex digits "-" 2 hex digits)`;
}
