/**
 * A computation's totals (one graph submission, one flow: what Dask calls a span), as explain(),
 * `journeys.computations()` and the report give them. Plain data; the recorder keeps them in
 * src/recorder/computations.ts.
 */
export interface ComputationTotals {
  /** Its name, as given to `transition(…, { computation })`; `other` for the overflow past `limits.maxComputations`. */
  name: string;
  /** Journeys begun here under it. */
  tasks: number;
  /** Of them, not ended yet. */
  live: number;
  /** Tasks ended, by the terminal state they ended in (so cancellations are apart from failures). */
  ended: Record<string, number>;
  /** Tasks that ended in a failure state of the machine: per task, a retried attempt that then succeeded is none. */
  failed: number;
  /** Tasks evicted past `limits.maxLiveJourneys` before they ended. */
  abandoned: number;
  /** Task-seconds of finished visits, by state: summed over its tasks, not wall time. */
  seconds: Record<string, number>;
  /** When its first journey began, in the journeys' clock (seconds); from `taskjourney explain`, epoch seconds of its earliest task span. */
  start: number;
  /** When its last journey ended; undefined while one is live (from `taskjourney explain`: its latest task span's end). */
  end: number | undefined;
  /** Wall seconds from `start` to `end` (to now while live). */
  wall: number;
}
