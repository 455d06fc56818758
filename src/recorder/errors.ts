/** Thrown only with `strict: true`: bad data that would otherwise be counted and repaired. */
export class InvalidTransition extends Error {
  override readonly name = "InvalidTransition";

  constructor(
    message: string,
    /** What went wrong, as counted in `taskjourney.dropped{reason}`. */
    readonly reason: string,
    /** The key's recent story: its last state visits, oldest first, e.g. "waiting@1.000". */
    readonly story: readonly string[],
  ) {
    super(story.length > 0 ? `${message}; recent story: ${story.join(" → ")}` : message);
  }
}
