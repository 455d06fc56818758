import { keySplitEnd, keySplitUncached, type Key } from "../model/keys.js";
import { looksLikeId } from "../model/prefix-check.js";
import { cutName, MAX_NAME_LENGTH } from "../model/names.js";
import { OTHER_ACTIVITY, QUANTITY_UNITS } from "../model/activities.js";
import { OTHER } from "./activity-ids.js";
import { show } from "../model/show.js";
import { failureDetail } from "./failure-detail.js";
import { failureText } from "../model/breakdown.js";
import { DESCRIBED_LIMIT, type KeyDescription } from "./recorder-config.js";
import { ACTIVITY_CACHE_MASK, PREFIX_CACHE_MASK, RecorderBase, STATE_CACHE_MASK } from "./recorder-base.js";

/**
 * The recorder's names (a layer of the Recorder, see recorder-base.ts): activity, unit and state
 * names to ids, a journey's prefix (describe(), the keyPrefix option, key_split) and its interning,
 * with the drops and one-time tellings of names that are wrong, too long or too many.
 */
export abstract class NamingRecorder extends RecorderBase {
  /**
   * Activity names arrive as the same few literals over and over ("deserialize", "thread-cpu"):
   * a small direct-mapped cache by length and first character answers them without hashing.
   */
  activityId(name: string): number {
    // An empty name would also hit the cache's empty slots (id 0, other) silently: counted instead.
    if (typeof name !== "string" || name.length === 0) {
      this.drop(
        "invalid-name",
        `an activity name that is ${show(name)}, not a non-empty string; recorded as "${OTHER_ACTIVITY}"`,
      );
      return OTHER;
    }
    if (name.length > MAX_NAME_LENGTH) name = this.cut("activity name", name);
    const slot = (name.length + name.charCodeAt(0) * 3) & ACTIVITY_CACHE_MASK;
    if (this.activityCacheNames[slot] === name) return this.activityCacheIds[slot];
    let id = this.activities.id(name);
    if (id === this.activities.limit) id = OTHER;
    this.activityCacheNames[slot] = name;
    this.activityCacheIds[slot] = id;
    return id;
  }

  unitId(name: string): number {
    return this.units.id(name);
  }

  /** The QUANTITY_UNITS index of a unit id, or -1 for a unit metrics do not aggregate. */
  quantityUnit(unitId: number): number {
    return (QUANTITY_UNITS as readonly string[]).indexOf(this.units.name(unitId));
  }

  /** A state name's id, or -1 (dropped, told once per name, naming `key` when given). */
  protected stateOf(name: string, key?: unknown): number {
    if (typeof name === "string") {
      const slot = name.length & STATE_CACHE_MASK;
      if (this.stateCacheNames[slot] === name) {
        const cached = this.stateCacheIds[slot];
        if (cached !== -1) return cached;
      }
    }
    const id = this.machine.id(name);
    if (id !== -1 && this.member[id] === 1) {
      // Only a state of this role's machine is kept: anything else is dropped on every call.
      const slot = name.length & STATE_CACHE_MASK;
      this.stateCacheNames[slot] = name;
      this.stateCacheIds[slot] = id;
      return id;
    }
    this.badState(name, id, key);
    return -1;
  }

  /**
   * A state name that is not one of this role's, dropped and told once per name. Out of
   * stateOf(), which transition() calls twice a move: its message building is cold, and kept out
   * of the small function V8 inlines there.
   */
  protected badState(name: string, id: number, key: unknown): void {
    const call = key === undefined ? "" : `transition(${show(key)}, …): `;
    const reason = id === -1 ? "unknown-state" : "wrong-role-state";
    this.drop(
      reason,
      id === -1
        ? `${call}unknown state ${show(name)}; ${this.validStates()}`
        : `${call}state "${name}" is not a ${this.role} state; ${this.validStates()}`,
      undefined,
      // Each name told once: the first misspelt state would otherwise hide every other.
      `${reason} ${typeof name === "string" ? name.slice(0, 64) : typeof name}`,
    );
  }

  /** The prefix of a key nothing described: the keyPrefix option's, or Dask's key_split. */
  protected prefixOf(key: Key, id: string | number): string {
    const keyPrefix = this.config.keyPrefix;
    // Once per journey, and a journey's key is new: the memo of keySplit would only churn.
    if (keyPrefix === undefined) return safeKeySplit(key, id);
    let prefix: unknown;
    let threw = false;
    try {
      prefix = keyPrefix(key);
    } catch (error) {
      prefix = error;
      threw = true;
    }
    if (!threw && typeof prefix === "string" && prefix.length > 0) return prefix;
    // Told once for a throw and once for a value: the first of one would hide the other.
    this.failures.fault(
      "key-prefix-error",
      `dropped input (key-prefix-error): the keyPrefix option ${
        threw ? `threw ${thrownText(prefix)}` : `returned ${show(prefix)}, not a non-empty string`
      } for the key ${show(key)}; key_split is used.`,
      threw ? "key-prefix-error threw" : "key-prefix-error returned",
    );
    return safeKeySplit(key, id);
  }

  /**
   * The id of a string key's own prefix (key_split's, no keyPrefix option) when it is one this
   * recorder has seen: found by where key_split ends (keySplitEnd) in a small cache of ids and
   * checked against the key's beginning, so the prefix is not sliced from the key as a string of
   * its own and hashed into the prefixes' Map (with the interned names sequential, see Interner,
   * 13,854 → 13,634 instructions and 508 → 489 B a worker journey, bench/guard). -1 when
   * not found so: the caller goes the whole way (prefixOf, internPrefix) and then rememberPrefix().
   * A hit is exactly what that way gives: the interned name equals key_split's answer.
   */
  protected keyPrefixId(key: string): number {
    const end = keySplitEnd(key);
    if (end <= 0) return -1;
    const slot = prefixSlot(key, end);
    // The slot's pair, in turn (a small loop: begin() inlines this, see keySplitEnd).
    const names = this.prefixes.names;
    for (let way = 0; way < 2; way++) {
      const cached = this.prefixCacheIds[slot + way];
      if (cached !== -1 && names[cached].length === end && key.startsWith(names[cached])) return cached;
    }
    return -1;
  }

  /** Remembers that a string key's prefix is `prefixId` (a named one, not the overflow), for keyPrefixId(). */
  protected rememberPrefix(key: string, prefixId: number): void {
    if (prefixId === this.prefixes.limit) return;
    const name = this.prefixes.names[prefixId];
    // Only a prefix that is the key's beginning can be found again so ("data" of a hex key is not).
    if (name.length === 0 || !key.startsWith(name)) return;
    const ids = this.prefixCacheIds;
    const slot = prefixSlot(key, name.length);
    // The pair's empty slot, else the first: a third prefix of a pair evicts one.
    ids[ids[slot] !== -1 && ids[slot ^ 1] === -1 ? slot ^ 1 : slot] = prefixId;
  }

  /**
   * A prefix's id. A prefix seen for the first time is checked, off the hot path of known ones:
   * one that looks like an id, or one past prefixLimit, is counted and told once, with what to do.
   */
  protected internPrefix(prefix: string): number {
    if (prefix.length > MAX_NAME_LENGTH) prefix = this.cut("task prefix", prefix);
    const prefixes = this.prefixes;
    const known = prefixes.names.length;
    const folded = prefixes.overflowed;
    const id = prefixes.id(prefix);
    if (prefixes.names.length === known && prefixes.overflowed === folded) return id;
    if (looksLikeId(prefix)) {
      this.failures.fault(
        "prefix-looks-like-id",
        `task prefix "${prefix.slice(0, 64)}" looks like an id: keys like it are their own prefix, one metric series each. ` +
          "Give keys their family name with journeys.describe(key, { prefix }), the keyPrefix option or an instrument() prefix extractor.",
      );
    }
    if (id === prefixes.limit) {
      const few = prefixes.names
        .slice(0, 3)
        .concat(prefix.slice(0, 64))
        .map((name) => `"${name}"`);
      this.failures.fault(
        "prefix-limit",
        `more than limits.maxPrefixes (${prefixes.limit}) distinct task prefixes (${few.join(", ")}, …): further ones fold into "other". ` +
          "If these are ids, give keys their family name with journeys.describe(key, { prefix }), the keyPrefix option or an instrument() prefix extractor; else raise limits.maxPrefixes.",
      );
    }
    return id;
  }

  /** A name past MAX_NAME_LENGTH, cut to it: counted, and told once. */
  protected cut(what: string, name: string): string {
    const cut = cutName(name);
    this.failures.fault(
      "name-too-long",
      `a ${what} of ${name.length} characters ("${name.slice(0, 64)}…"): names are cut to ${MAX_NAME_LENGTH} characters, as metric attributes.`,
    );
    return cut;
  }

  /** See TaskJourneys.describe. */
  describe(key: Key, description: KeyDescription): void {
    const id = this.idOf(key);
    if (id === undefined) return;
    const given = description as { prefix?: unknown; group?: unknown } | null;
    let prefix: unknown;
    let group: unknown;
    try {
      // Read once: a getter or a Proxy trap could answer differently, or throw.
      prefix = given?.prefix;
      group = given?.group;
    } catch {
      this.drop("invalid-description", "describe() given a description whose prefix or group could not be read");
      return;
    }
    if (
      given === null ||
      typeof given !== "object" ||
      (prefix !== undefined && (typeof prefix !== "string" || prefix.length === 0)) ||
      (group !== undefined && (typeof group !== "string" || group.length === 0))
    ) {
      this.drop("invalid-description", "describe() takes { prefix?, group? } of non-empty strings");
      return;
    }
    if (!this.described.has(id) && this.described.size >= DESCRIBED_LIMIT) {
      this.failures.fault(
        "describe-overflow",
        `dropped input (describe-overflow): describe() of more than ${DESCRIBED_LIMIT} keys not yet forgotten.`,
      );
      return;
    }
    // A copy: the caller's object may change afterwards.
    this.described.set(id, { prefix: prefix as string | undefined, group: group as string | undefined });
  }
}

/**
 * keyPrefixId()'s slot for the prefix `key.slice(0, end)`, the first of a pair: its length and
 * three of its characters (prefixes of one length often differ in one word: "rechunk-merge",
 * "rechunk-split"), mixed by a multiplication whose top bits are the slot. Out of a short prefix
 * charCodeAt gives NaN: 0 to the xor. Small, as keyPrefixId() (see keySplitEnd).
 */
function prefixSlot(key: string, end: number): number {
  const mixed =
    end ^ (key.charCodeAt(0) << 8) ^ (key.charCodeAt(end - 1) << 16) ^ (key.charCodeAt(end - 1 - (end >> 2)) << 24);
  return (Math.imul(mixed, 0x9e3779b1) >>> 22) & (PREFIX_CACHE_MASK - 1);
}

/** A key's prefix; for a key that cannot be read again (a hostile Proxy), the prefix of its map id. */
function safeKeySplit(key: Key, id: string | number): string {
  if (typeof key === "string") return keySplitUncached(key);
  try {
    return keySplitUncached(key);
  } catch {
    return keySplitUncached(typeof id === "string" ? id : String(id));
  }
}

/** What the user's code threw, as explain() words a failure ("TypeError: no"); never throws. */
function thrownText(error: unknown): string {
  const detail = failureDetail(error);
  return failureText(detail.type, detail.message);
}
