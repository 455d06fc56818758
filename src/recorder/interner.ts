/**
 * Strings to small integer ids, decided once at first sight so the hot path indexes typed arrays
 * instead of hashing attribute sets. Capped: past `limit` distinct names everything folds into
 * the overflow id, so a runaway source of names cannot grow memory or metric cardinality.
 */
export class Interner {
  private readonly ids = new Map<string, number>();
  readonly names: string[] = [];
  /** How many distinct names were folded into the overflow id. */
  overflowed = 0;
  private readonly seenOverflow = new Set<string>();

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
    // Remember folded names up to a bound only to count them; never per call allocation beyond it.
    if (this.seenOverflow.size < 10_000 && !this.seenOverflow.has(name)) {
      this.seenOverflow.add(name);
      this.overflowed++;
    }
    return this.limit;
  }

  private add(name: string): number {
    const id = this.names.length;
    this.names.push(name);
    this.ids.set(name, id);
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
