/**
 * Trace context across processes: scheduler → worker in the compute-task message (the worker's
 * journey of a key nests under the scheduler's), and producer → consumer in get_data replies
 * (the consumer's journeys link to the journey that produced the data).
 *
 * TODO(context propagation): taskjourney's `inject` / `extract` are being added to TaskJourneys
 * concurrently with this example. Until they exist these call sites feature-detect them
 * (`typeof journeys.inject === "function"`) and do nothing otherwise.
 */
import type { Key, TaskJourneys } from "../../src/index.js";

export type Carrier = Record<string, string>;

interface Propagation {
  inject?: (key: Key, carrier: Carrier) => void;
  extract?: (key: Key, carrier: Carrier) => unknown;
}

function api(journeys: TaskJourneys): Propagation {
  return journeys as unknown as Propagation;
}

function injected(journeys: TaskJourneys, key: Key): Carrier | undefined {
  const propagation = api(journeys);
  if (typeof propagation.inject !== "function") return undefined;
  const carrier: Carrier = {};
  propagation.inject(key, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** On the scheduler: the context of its journey of `key`, for the compute-task message. */
export function injectScheduler(journeys: TaskJourneys, key: Key): Carrier | undefined {
  return injected(journeys, key);
}

/** On a worker: the context of its (producing) journey of `key`, for a get_data reply. */
export function injectProducer(journeys: TaskJourneys, key: Key): Carrier | undefined {
  return injected(journeys, key);
}

/** On a worker receiving compute-task: parents its journey of `key` under the scheduler's. */
export function parentFromScheduler(journeys: TaskJourneys, key: Key, carrier: Carrier | undefined): void {
  const propagation = api(journeys);
  if (carrier === undefined || typeof propagation.extract !== "function") return;
  propagation.extract(key, carrier);
}

/** On a worker receiving data: links its journeys of the received keys to their producers. */
export function linkProducers(journeys: TaskJourneys, carriers: Record<string, Carrier>): void {
  const propagation = api(journeys);
  if (typeof propagation.extract !== "function") return;
  for (const [key, carrier] of Object.entries(carriers)) propagation.extract(key, carrier);
}
