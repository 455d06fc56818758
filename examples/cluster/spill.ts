/**
 * A worker's data store: values in memory up to a byte limit, the least recently used ones
 * spilled to files beyond it (v8.serialize + fs), read back ("unspilled") when used. Like Dask's
 * SpillBuffer, spilling and unspilling are synchronous and run on the worker's event loop.
 *
 * Each step is a method of its own — spill, unspill, serializeValue, deserializeValue,
 * writeSpillFile, readSpillFile — so that the worker can instrument them as activities with
 * taskjourney's `instrument()`: a spill is then charged to whatever execution or transfer caused
 * it (found through AsyncLocalStorage), and nothing is recorded outside one.
 */
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";

export interface Spilled {
  file: string;
  /** Size in memory, as accounted against the limit. */
  size: number;
  /** Size of the file. */
  bytes: number;
}

export interface SpillCounters {
  spilled: number;
  spilledBytes: number;
  unspilled: number;
  unspilledBytes: number;
  /** Spilled values read from disk to be sent to a peer, without unspilling them. */
  servedFromDisk: number;
}

/** The SpillBuffer methods a worker meters, and the activity each is charged to (for instrument()). */
export const SPILL_ACTIVITIES = [
  { method: "spill", activity: "spill" },
  { method: "serializeValue", activity: "serialize" },
  { method: "writeSpillFile", activity: "disk-write" },
  { method: "unspill", activity: "unspill" },
  { method: "readSpillFile", activity: "disk-read" },
  { method: "deserializeValue", activity: "deserialize" },
] as const satisfies ReadonlyArray<{ method: keyof SpillBuffer; activity: string }>;

export class SpillBuffer {
  /** In memory, least recently used first (a Map iterates in insertion order). */
  private readonly fast = new Map<string, { value: unknown; size: number }>();
  private readonly slow = new Map<string, Spilled>();
  private fastBytes = 0;
  private files = 0;
  readonly counters: SpillCounters = {
    spilled: 0,
    spilledBytes: 0,
    unspilled: 0,
    unspilledBytes: 0,
    servedFromDisk: 0,
  };
  /** Told of every file written or read, with its activity and size (the worker digests them into the current ledger). */
  onFileBytes: (activity: "disk-write" | "disk-read", bytes: number) => void = () => {};

  constructor(
    /** Bytes kept in memory before spilling; Infinity never spills. */
    readonly limit: number,
    /** A directory of this store's own; `close()` removes it. */
    readonly directory: string,
  ) {
    fs.mkdirSync(directory, { recursive: true });
  }

  get memoryBytes(): number {
    return this.fastBytes;
  }

  get spilledKeys(): number {
    return this.slow.size;
  }

  has(key: string): boolean {
    return this.fast.has(key) || this.slow.has(key);
  }

  /** Stores `value` (of `size` bytes in memory), spilling older values if over the limit. */
  set(key: string, value: unknown, size: number): void {
    this.delete(key);
    this.fast.set(key, { value, size });
    this.fastBytes += size;
    this.evict(key);
  }

  /** The value of `key`, unspilled from disk if needed; undefined if not held. */
  get(key: string): unknown {
    const held = this.fast.get(key);
    if (held !== undefined) {
      // Most recently used goes last.
      this.fast.delete(key);
      this.fast.set(key, held);
      return held.value;
    }
    const spilled = this.slow.get(key);
    if (spilled === undefined) return undefined;
    const value = this.unspill(spilled);
    this.slow.delete(key);
    fs.rmSync(spilled.file, { force: true });
    this.counters.unspilled++;
    this.counters.unspilledBytes += spilled.bytes;
    this.fast.set(key, { value, size: spilled.size });
    this.fastBytes += spilled.size;
    this.evict(key);
    return value;
  }

  /**
   * The serialized bytes of `key` for a peer: serialized from memory, or read from its spill
   * file as they are (not unspilled: a transfer does not make a value hot).
   */
  serialized(key: string): Buffer | undefined {
    const held = this.fast.get(key);
    if (held !== undefined) return this.serializeValue(held.value);
    const spilled = this.slow.get(key);
    if (spilled === undefined) return undefined;
    this.counters.servedFromDisk++;
    return this.readSpillFile(spilled.file);
  }

  delete(key: string): void {
    const held = this.fast.get(key);
    if (held !== undefined) {
      this.fast.delete(key);
      this.fastBytes -= held.size;
      return;
    }
    const spilled = this.slow.get(key);
    if (spilled !== undefined) {
      this.slow.delete(key);
      fs.rmSync(spilled.file, { force: true });
    }
  }

  // ---- the steps, one method each (instrumented as activities by the worker) -------------------

  /** Writes a value to `file`; returns the bytes written. */
  spill(value: unknown, file: string): number {
    const data = this.serializeValue(value);
    this.writeSpillFile(file, data);
    return data.length;
  }

  /** Reads a spilled value back. */
  unspill(spilled: Spilled): unknown {
    return this.deserializeValue(this.readSpillFile(spilled.file));
  }

  serializeValue(value: unknown): Buffer {
    return v8.serialize(value);
  }

  deserializeValue(bytes: Uint8Array): unknown {
    return v8.deserialize(bytes);
  }

  writeSpillFile(file: string, data: Uint8Array): void {
    fs.writeFileSync(file, data);
    this.onFileBytes("disk-write", data.length);
  }

  readSpillFile(file: string): Buffer {
    const data = fs.readFileSync(file);
    this.onFileBytes("disk-read", data.length);
    return data;
  }

  /** Removes the spill directory and forgets everything. */
  close(): void {
    this.fast.clear();
    this.slow.clear();
    this.fastBytes = 0;
    fs.rmSync(this.directory, { recursive: true, force: true });
  }

  /** Spills least recently used values until under the limit; `keep` goes last, only if alone too big. */
  private evict(keep: string): void {
    if (this.fastBytes <= this.limit) return;
    for (const [key, held] of this.fast) {
      if (this.fastBytes <= this.limit) break;
      if (key === keep) continue;
      this.spillKey(key, held);
    }
    const kept = this.fast.get(keep);
    if (this.fastBytes > this.limit && kept !== undefined) this.spillKey(keep, kept);
  }

  private spillKey(key: string, held: { value: unknown; size: number }): void {
    const file = path.join(this.directory, `${++this.files}.bin`);
    const bytes = this.spill(held.value, file);
    this.fast.delete(key);
    this.fastBytes -= held.size;
    this.slow.set(key, { file, size: held.size, bytes });
    this.counters.spilled++;
    this.counters.spilledBytes += bytes;
  }
}
