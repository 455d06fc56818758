/** Where one journey's time went: its state visits in order, each with its activities. */
export interface Breakdown {
  /** The key's canonical text. */
  key: string;
  prefix: string;
  /** The worker or scheduler the journey ran on. */
  instance: string;
  /** Wall seconds from the first non-released state to the terminal one (or to now, if live). */
  seconds: number;
  /** "compute", "fetch" or "scheduler". */
  kind: string;
  /** The terminal state, or undefined while the journey is live. */
  outcome: string | undefined;
  children: BreakdownNode[];
}

export interface BreakdownNode {
  /** A state name at the first level, an activity name below it. */
  name: string;
  seconds: number;
  children: BreakdownNode[];
  /** Non-time quantities digested for this activity in this visit, by unit: `{ bytes: 65536 }`. */
  quantities?: Record<string, number>;
}
