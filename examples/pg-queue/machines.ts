/**
 * The two sides' state machines. The producer's journey of a job is its part alone: from creating
 * the job to the queue's confirmation (or refusal); it never hears how the job ends, so its
 * journey ends at the hand-off. Each attempt a worker runs is a journey of its own, from the time
 * the job (or its retry) was due to the attempt's outcome: the next attempt may run in another
 * process, so an attempt that will be retried ends too, in `retrying`.
 */
// [machines]
import { defineMachine } from "taskjourney";

export const PRODUCER_MACHINE = defineMachine({
  states: ["created", "sending", "enqueued", "refused"],
  transitions: { created: ["sending"], sending: ["enqueued", "refused"] },
  terminal: { success: "enqueued", failure: "refused" },
  initial: "created",
});

export const ATTEMPT_MACHINE = defineMachine({
  states: ["created", "delayed", "queued", "active", "completed", "retrying", "failed"],
  transitions: {
    // A job sent with `startAfter` is delayed until then; a retry's journey begins when it is due.
    created: ["delayed", "queued"],
    delayed: ["queued"],
    queued: ["active"],
    active: ["completed", "retrying", "failed"],
  },
  // An attempt that will be retried is a failure of its own: kept (keepErrors), its reason recorded.
  terminal: { success: "completed", failure: ["failed", "retrying"] },
  initial: "created",
  queued: "queued",
  executing: "active",
});
// [/machines]

export type ProducerState = (typeof PRODUCER_MACHINE.states)[number];
export type AttemptState = (typeof ATTEMPT_MACHINE.states)[number];
