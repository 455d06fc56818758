/**
 * A Map that holds at most `limit` entries and keeps at least the `limit / 2` newest: two
 * generations of half the limit each, the older dropped whole when the newer fills. Every
 * operation is O(1); a single Map trimmed by deleting its oldest key each time would make
 * `keys().next()` step over the deleted entries left at the front, growing slower with every
 * entry until the Map rehashes.
 */
export class BoundedMap<V> {
  private current = new Map<string | number, V>();
  private previous = new Map<string | number, V>();
  private readonly generation: number;
  constructor(limit: number) {
    this.generation = Math.max(1, Math.ceil(limit / 2));
  }
  get size(): number {
    return this.current.size + this.previous.size;
  }
  set(key: string | number, value: V): void {
    if (this.previous.size !== 0) this.previous.delete(key);
    this.current.set(key, value);
    if (this.current.size >= this.generation) {
      this.previous = this.current;
      this.current = new Map();
    }
  }
  get(key: string | number): V | undefined {
    return this.current.get(key) ?? this.previous.get(key);
  }
  has(key: string | number): boolean {
    return this.current.has(key) || this.previous.has(key);
  }
  take(key: string | number): V | undefined {
    let value = this.current.get(key);
    if (value !== undefined) {
      this.current.delete(key);
      return value;
    }
    value = this.previous.get(key);
    if (value !== undefined) this.previous.delete(key);
    return value;
  }
}
