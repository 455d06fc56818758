/**
 * The default clock: performance.now() in seconds (its epoch performance.timeOrigin), read
 * through process.hrtime(), which counts the same monotonic nanoseconds.
 *
 * Why not performance.now() itself: on Node 20 it is a native call that returns its reading as a
 * fresh HeapNumber, 16 B a reading, and a worker journey reads the clock ~13 times: 224 of its
 * 1,410 B (bench/guard, `--bytes-only` with each clock swapped in). process.hrtime() writes into a
 * typed array through V8's fast API call and returns a two-number array that V8's escape
 * analysis removes once the clock is inlined into the recorder, so a reading allocates nothing.
 */
export function performanceSeconds(): () => number {
  const hrtime = process.hrtime;
  const base = hrtime()[0];
  // Constants of the closure (a `let` it captured would be read as a boxed number, and the
  // reading boxed with it: measured).
  const offset = offsetOf(hrtime, base);
  return () => {
    const reading = hrtime();
    return reading[0] - base + (reading[1] / 1e9 + offset);
  };
}

/**
 * performance.now() in seconds less hrtime()'s seconds since `base`: performance.now() read
 * between two hrtime() readings, at their midpoint. The first reading of either may be slow
 * (lazy loading, milliseconds): the tightest of a few brackets, a fraction of a microsecond wide.
 */
function offsetOf(hrtime: () => [number, number], base: number): number {
  let offset = 0;
  let gap = Infinity;
  for (let attempt = 0; attempt < 8; attempt++) {
    const before = hrtime();
    const now = performance.now() / 1000;
    const after = hrtime();
    const start = before[0] - base + before[1] / 1e9;
    const end = after[0] - base + after[1] / 1e9;
    if (end - start < gap) {
      gap = end - start;
      offset = now - (start + end) / 2;
    }
  }
  return offset;
}
