import type { ResolvedOptions } from "./options.js";
import type { Recorder } from "./recorder/recorder.js";
import type { SpanBridge } from "./otel/spans/bridge.js";
import type { ProcessStalls } from "./runtime/process-stalls.js";

/**
 * What sdk.ts, wrap/ and the tests reach inside a TaskJourneys for. Kept off its public type, so
 * users see a sealed facade: no package entry exports this module.
 */
export interface JourneysInternals {
  readonly recorder: Recorder;
  readonly options: ResolvedOptions;
  /** The span-tree bridge (src/otel/spans). */
  readonly spans: SpanBridge;
  /** The GC and event-loop watcher, when `processStalls` is on. */
  readonly processStalls: ProcessStalls | undefined;
}

// A WeakMap, not a field: a field would be on the public type (or reachable by name at runtime).
// Only failure paths and tests look it up, never the hot path. Keyed by any object, not by
// TaskJourneys: this file imports nothing of journeys.ts, which imports it (no import cycle).
const internals = new WeakMap<object, JourneysInternals>();

/** Called once by the TaskJourneys constructor. */
export function registerInternals(journeys: object, parts: JourneysInternals): void {
  internals.set(journeys, parts);
}

/** The internals of `journeys`, or undefined for anything that is not a TaskJourneys. */
export function internalsOf(journeys: object): JourneysInternals | undefined {
  return internals.get(journeys);
}
