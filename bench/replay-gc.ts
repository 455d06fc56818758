/**
 * What garbage collection did in the repetitions of one native replay: the output of
 * `node --trace-gc bench/.cluster-replay.mjs …` with TASKJOURNEY_REPLAY_EACH=1, stdout and
 * stderr written to one file (both are synchronous on Linux, so V8's GC lines and the replay's
 * "repetition N" lines come in the order they happened). A GC line belongs to the repetition whose
 * line follows it.
 */

export interface ReplayGc {
  /** Repetitions counted (those after `from`). */
  repetitions: number;
  /** CPU µs per task of each counted repetition, as the replay printed it. */
  cpuMicrosPerTask: number[];
  /** Full (mark-compact) collections in the counted repetitions. */
  fullCollections: number;
  /** Young-generation collections (scavenges, minor mark-sweeps). */
  youngCollections: number;
  /** The main thread's pause of every collection, in ms, summed. */
  pauseMillis: number;
  /** The heap after each full collection, in MB (V8's objects; array buffers' contents are not in it). */
  heapAfterFull: number[];
}

const REPETITION = /^repetition (\d+): ([0-9.]+) µs per task/;
// "[pid:0x…]  288 ms: Mark-Compact 18.1 (30.4) -> 13.5 (31.6) MB, pooled: 0 MB, 4.61 / 0.00 ms  (…"
// (Node 20 has no "pooled" part.)
const COLLECTION =
  /\d+ ms: (Mark-Compact|Scavenge|Minor Mark-Sweep)\b.*?-> ([0-9.]+) \([0-9.]+\) MB,.*? ([0-9.]+) \/ [0-9.]+ ms/;

/** Sums the collections of the repetitions after `from` (1-based: from 10 counts repetition 11 on). */
export function replayGc(output: string, from: number): ReplayGc {
  const result: ReplayGc = {
    repetitions: 0,
    cpuMicrosPerTask: [],
    fullCollections: 0,
    youngCollections: 0,
    pauseMillis: 0,
    heapAfterFull: [],
  };
  // Collections seen since the last repetition line: they belong to the next one.
  let pending: Array<{ full: boolean; heap: number; pause: number }> = [];
  for (const line of output.split("\n")) {
    const repetition = REPETITION.exec(line);
    if (repetition !== null) {
      if (Number(repetition[1]) > from) {
        result.repetitions++;
        result.cpuMicrosPerTask.push(Number(repetition[2]));
        for (const collection of pending) {
          if (collection.full) {
            result.fullCollections++;
            result.heapAfterFull.push(collection.heap);
          } else {
            result.youngCollections++;
          }
          result.pauseMillis += collection.pause;
        }
      }
      pending = [];
      continue;
    }
    const collection = COLLECTION.exec(line);
    if (collection !== null)
      pending.push({
        full: collection[1] === "Mark-Compact",
        heap: Number(collection[2]),
        pause: Number(collection[3]),
      });
  }
  return result;
}
