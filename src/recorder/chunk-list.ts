/** Items a chunk holds: what one push may copy at most, when its chunk reaches V8's next capacity. */
export const CHUNK = 256;

/**
 * A list that grows in chunks of at most CHUNK items, so that no push copies more than that.
 * Why not a plain array: the lists of dependencies grow in lockstep. 2,000 dependents told the
 * same 2,000 dependencies add one entry to each of 2,000 lists of dependents per dependent, so
 * all of them reach V8's next capacity in the same call, which then copies all of them: one
 * transition took 60 ms at 1,334 entries a list, another 120 ms later on (bench/scale.bench.ts,
 * `shared`). Amortized the cost was always O(1) a push; a single call's was not bounded.
 */
export class ChunkList<T> {
  length = 0;
  /** The first CHUNK items; the rest in `tail`, CHUNK a chunk. */
  private readonly head: T[];
  private tail: T[][] | undefined = undefined;

  constructor(first: T) {
    // Made with its first item: most lists (a dependency of one or two dependents) hold a few.
    this.head = [first];
    this.length = 1;
  }

  push(item: T): void {
    const index = this.length++;
    if (index < CHUNK) {
      this.head.push(item);
      return;
    }
    const tail = (this.tail ??= []);
    if ((index - CHUNK) % CHUNK === 0) tail.push([item]);
    else tail[tail.length - 1].push(item);
  }

  /** The item at `index` (0 ≤ index < length). */
  at(index: number): T {
    if (index < CHUNK) return this.head[index];
    const offset = index - CHUNK;
    return this.tail![Math.floor(offset / CHUNK)][offset % CHUNK];
  }

  /** Keeps the items `keep` says yes to, in order, in place. */
  retain(keep: (item: T) => boolean): void {
    let kept = 0;
    for (let index = 0; index < this.length; index++) {
      const item = this.at(index);
      if (keep(item)) this.set(kept++, item);
    }
    this.truncate(kept);
  }

  /** Removes the first `item` found; false when it is not in the list. */
  remove(item: T): boolean {
    for (let index = 0; index < this.length; index++) {
      if (this.at(index) !== item) continue;
      for (let next = index + 1; next < this.length; next++) this.set(next - 1, this.at(next));
      this.truncate(this.length - 1);
      return true;
    }
    return false;
  }

  private set(index: number, item: T): void {
    if (index < CHUNK) this.head[index] = item;
    else {
      const offset = index - CHUNK;
      this.tail![Math.floor(offset / CHUNK)][offset % CHUNK] = item;
    }
  }

  private truncate(length: number): void {
    this.length = length;
    if (length <= CHUNK) {
      this.head.length = length;
      this.tail = undefined;
      return;
    }
    const tail = this.tail!;
    const chunks = Math.ceil((length - CHUNK) / CHUNK);
    tail.length = chunks;
    tail[chunks - 1].length = length - CHUNK - (chunks - 1) * CHUNK;
  }
}
