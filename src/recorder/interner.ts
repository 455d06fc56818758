/**
 * Strings to small integer ids, decided once at first sight so the hot path indexes typed arrays
 * instead of hashing attribute sets. Capped: past `limit` distinct names everything folds into
 * the overflow id, so a runaway source of names cannot grow memory or metric cardinality.
 */
/** Folded names remembered, at most, for counting each once. */
const OVERFLOW_MEMORY = 20_000;

export class Interner {
  private readonly ids = new Map<string, number>();
  readonly names: string[] = [];
  /** How many distinct names were folded into the overflow id. */
  overflowed = 0;
  /**
   * Folded names recently seen, in two generations of OVERFLOW_MEMORY / 2 (as BoundedMap does):
   * a name is counted once while remembered, so the count goes on past any number of names, in
   * bounded memory; one folded again after that many others is counted again.
   */
  private seenOverflow = new Set<string>();
  private seenOverflowBefore = new Set<string>();

  /**
   * @param limit distinct names kept before folding; the overflow name is id `limit`.
   * @param overflowName the name reported for the folded bucket.
   * @param seed names interned first, in order, so their ids are fixed.
   */
  constructor(
    readonly limit: number,
    readonly overflowName: string,
    seed: readonly string[] = [],
  ) {
    // The seed lists overlap ("other", "deserialize" are both execute and gather activities).
    for (const name of seed) if (!this.ids.has(name)) this.add(name);
  }

  /** The id of `name`, interning it while under the limit. */
  id(name: string): number {
    const known = this.ids.get(name);
    if (known !== undefined) return known;
    // A real name equal to the overflow name joins the overflow bucket rather than becoming a
    // second series with the same attributes.
    if (name !== this.overflowName && this.names.length < this.limit) return this.add(name);
    if (!this.seenOverflow.has(name) && !this.seenOverflowBefore.has(name)) {
      this.overflowed++;
      this.seenOverflow.add(name);
      if (this.seenOverflow.size >= OVERFLOW_MEMORY / 2) {
        this.seenOverflowBefore = this.seenOverflow;
        this.seenOverflow = new Set();
      }
    }
    return this.limit;
  }

  private add(name: string): number {
    const id = this.names.length;
    // A copy of its own, sequential: a prefix sliced from a key is a view into that key (V8's
    // SlicedString, 13 characters or more), which every comparison with it (the recorder's
    // keyPrefixId, this Map's lookups) reads through a slower path, ~250 instructions a
    // comparison; and it kept that first key alive.
    const own = name.split("").join("");
    this.names.push(own);
    this.ids.set(own, id);
    return id;
  }

  /** The id of `name` if interned, -1 otherwise; never interns. */
  find(name: string): number {
    const known = this.ids.get(name);
    if (known !== undefined) return known;
    return name === this.overflowName ? this.limit : -1;
  }

  name(id: number): string {
    return id === this.limit ? this.overflowName : this.names[id];
  }

  /** Number of ids in use, the overflow id included once anything folded into it. */
  get size(): number {
    return this.names.length + (this.overflowed > 0 ? 1 : 0);
  }

  /** Capacity of arrays indexed by these ids: every name plus the overflow id. */
  get capacity(): number {
    return this.limit + 1;
  }
}
