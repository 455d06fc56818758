/**
 * Task keys and the names derived from them.
 *
 * A key is a task's identity; its prefix (`keySplit`) and group (`keySplitGroup`) are the
 * low-cardinality names that metrics and span names may carry. The two functions reproduce
 * Dask's own `key_split` (dask/utils.py) and `key_split_group` (distributed/utils.py) rule for
 * rule, so that a prefix seen in taskjourney is the same string a Dask user sees on the
 * dashboard. Where Dask raises or returns an empty string we return "Other" instead: this code
 * runs inside the user's scheduler and must never throw into it, and an empty name is useless
 * as a metric attribute. Why our own: no JavaScript library knows Dask's key naming rules.
 *
 * `keySplit` runs once for every new key on the hot path, so it scans the key in place with
 * `indexOf` and character codes rather than splitting it into arrays (a regular expression is
 * consulted only for non-ASCII letters), and it remembers the answer for recent string keys.
 */

/** A task's identity: a string, a number, bytes, or a tuple (array) of keys. */
export type Key = string | number | Uint8Array | readonly Key[];

const OTHER = "Other";
const DATA = "data";

/**
 * Real keys nest a few levels at most (`(("x", 1), 2)`); the bound keeps a cyclic or absurdly
 * deep array from exhausting the stack or looping forever, and such a value is not a key.
 */
const MAX_NESTING = 32;

/**
 * The memo of recently split string keys. Distinct keys are mostly seen a few times close
 * together (the transitions of one task, or the many chunks of one tuple key sharing their
 * name), so a small window of recent keys catches nearly all repeats.
 *
 * It is direct-mapped, like a CPU cache: a key's slot is picked by a cheap hash of a few of
 * its characters, and a new key simply replaces whatever key held its slot. Memory is fixed
 * and a miss costs little more than splitting the key. Splitting a typical key takes about
 * 40-50 ns on Node 20, so a memo has to be cheaper than that to pay off. A Map capped at the
 * same size was measured and rejected: cleared when full, a miss took 130-160 ns (it hashes
 * the whole fresh string, inserts, and regrows the table after each clear); evicting first in,
 * first out through the Map's iterator took about 2 µs per miss, because the iterator skips
 * the deleted entries that pile up at the front of the table until the next rehash.
 */
const CACHE_SLOTS = 4096;

/**
 * Longer keys are split every time instead of being remembered, so that the memo holds at
 * most CACHE_SLOTS × this many characters no matter what keys a user invents. Dask's own keys
 * ("('rechunk-merge-<32 hex>', 0, 1)") are well under it.
 */
const MAX_CACHED_KEY_LENGTH = 256;

// Filled with strings from the start so the arrays never change element kind; the empty key
// never reaches the memo, so "" marks an empty slot.
const cachedKeys: string[] = new Array<string>(CACHE_SLOTS).fill("");
const cachedPrefixes: string[] = new Array<string>(CACHE_SLOTS).fill("");

// Python's bytes.decode() is strict and keeps a leading byte-order mark; TextDecoder drops the
// mark unless told not to.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lossyUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

// Python's str.isalpha() is true for general categories Lu, Ll, Lt, Lm and Lo, which is
// exactly \p{L}. Sticky, so it tests the code point at lastIndex without slicing the string.
const LETTER = /\p{L}/uy;

// Python's str.isprintable() is false for categories C* and Z* (ASCII space aside); repr()
// escapes exactly those characters.
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

// Anything but printable ASCII other than quotes and backslash: a single character class, so
// the search never backtracks.
// eslint-disable-next-line no-control-regex -- control characters are what repr() escapes
const MAY_NEED_ESCAPING = /["'\\\x00-\x1f\x7f-\uffff]/;

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const SINGLE_QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const UNDERSCORE = 0x5f;
const BACKSLASH = 0x5c;

/**
 * The prefix of a task key, as Dask's `key_split`: the leading words of the key's name that
 * are made of letters, without the trailing tokens and indices.
 *
 * "x-1" → "x", "hello-world-1" → "hello-world", ["x-2", 1] → "x", "('x-2', 1)" → "x",
 * "x-abcdefab" → "x", a 32-hex-digit key → "data", "<module.sub.myclass object at 0x1"
 * → "myclass", and "Other" for anything unusable (null, "", numbers, objects).
 * Never throws, never returns an empty string.
 */
export function keySplit(key: unknown): string {
  if (typeof key === "string") return splitCached(key);
  try {
    return splitNonString(key);
  } catch {
    // A Proxy or an array whose elements cannot be read: a key of no name.
    return OTHER;
  }
}

function splitNonString(key: unknown): string {
  let value = key;
  // Dask recurses on a tuple's first element; so do we, but with a bound (see MAX_NESTING).
  for (let depth = 0; Array.isArray(value); depth++) {
    if (value.length === 0 || depth >= MAX_NESTING) return OTHER;
    value = value[0];
  }
  // Tuple keys of one name share their first element, so it is worth remembering.
  if (typeof value === "string") return splitCached(value);
  if (value instanceof Uint8Array) {
    const text = decodeStrict(value);
    return text === undefined ? OTHER : splitString(text);
  }
  // Dask's key_split(1) is "Other" too: an int has no .split, and the exception is caught.
  return OTHER;
}

/**
 * keySplit for a key seen for the first time (the recorder, once per journey): the same answer,
 * without consulting or filling the memo of string keys, which a fresh key would only miss and
 * churn. Tuple keys still go through the memo: their chunks share a first element.
 */
export function keySplitUncached(key: unknown): string {
  return typeof key === "string" ? splitString(key) : keySplit(key);
}

/**
 * The task group of a key, as Distributed's `key_split_group`: finer than the prefix, it
 * keeps the token that tells one submission of a function from another.
 *
 * ["x-2", 1] → "x-2", "('x-2', 1)" → "x-2", "x-1" → "x" (plain strings fall back to
 * keySplit), a 32-hex-digit key → "data", and "Other" for anything unusable.
 * Never throws, never returns an empty string.
 */
export function keySplitGroup(key: unknown): string {
  if (typeof key === "string") return groupOfString(key);
  try {
    return groupOfNonString(key);
  } catch {
    return OTHER;
  }
}

function groupOfNonString(key: unknown): string {
  if (Array.isArray(key)) {
    if (key.length === 0) return OTHER;
    const first: unknown = key[0];
    // Dask returns the first element itself, whatever it is; we need a string, and the key's
    // canonical text is the faithful rendering of a number, bytes or a nested tuple.
    const name = typeof first === "string" ? first : keyToText(first);
    return name === undefined || name.length === 0 ? OTHER : name;
  }
  if (key instanceof Uint8Array) {
    const text = decodeStrict(key);
    return text === undefined ? OTHER : groupOfString(text);
  }
  return OTHER;
}

/**
 * The canonical text of a key, for use as a Map key and as a span attribute: a string as it
 * is, a number as String(n), bytes decoded as UTF-8, and a tuple as Python's repr() renders
 * it ("('x-2', 1)", "('x',)"), because that is how Dask prints tuple keys, which is the form
 * that key_split and key_split_group know how to take apart when a key arrives as text.
 *
 * Returns undefined for anything that is not a key: null, undefined, booleans, objects,
 * functions, NaN (it is not equal to itself, so nothing could ever look it up), and tuples
 * containing any of those.
 *
 * Consequences to know: bytes and the string they decode to have the same text (so do the
 * string "('x', 1)" and the tuple ["x", 1]), which is what a Dask user who prints keys expects;
 * bytes that are not valid UTF-8 decode with U+FFFD in place of the bad sequences; inside a
 * tuple, bytes render as their decoded string ('x', not b'x') so that the text still splits
 * to the same prefix; and numbers render as JavaScript prints them ("1e+21", "Infinity").
 */
export function keyToText(key: unknown): string | undefined {
  if (typeof key === "string") return key;
  if (typeof key === "number") return key === key ? String(key) : undefined;
  try {
    if (key instanceof Uint8Array) return decodeLossy(key);
    if (Array.isArray(key)) return tupleText(key, 0);
  } catch {
    // A Proxy or an array whose elements cannot be read is no key.
  }
  return undefined;
}

/** True when `value` is a key: exactly when keyToText(value) is not undefined. */
export function isKey(value: unknown): value is Key {
  try {
    return isKeyAt(value, 0);
  } catch {
    return false;
  }
}

function isKeyAt(value: unknown, depth: number): boolean {
  if (typeof value === "string") return true;
  if (typeof value === "number") return value === value;
  if (value instanceof Uint8Array) return true;
  if (!Array.isArray(value) || depth >= MAX_NESTING) return false;
  for (let i = 0; i < value.length; i++) {
    if (!isKeyAt(value[i], depth + 1)) return false;
  }
  return true;
}

function splitCached(key: string): string {
  const length = key.length;
  if (length === 0) return OTHER;
  const slot = cacheSlot(key, length);
  if (cachedKeys[slot] === key) return cachedPrefixes[slot];
  const prefix = splitString(key);
  if (length <= MAX_CACHED_KEY_LENGTH) {
    cachedKeys[slot] = key;
    cachedPrefixes[slot] = prefix;
  }
  return prefix;
}

/**
 * Mixes the length with the characters at four spread positions: keys of one family differ in
 * their tokens and indices, which sit in the middle and at the end. Keys that collide only
 * cost a recomputation; hashing every character would cost as much as splitting the key.
 */
function cacheSlot(key: string, length: number): number {
  let hash = Math.imul(length ^ key.charCodeAt(length - 1), 0x9e3779b1);
  hash = Math.imul(hash ^ key.charCodeAt(length >> 1), 0x85ebca6b);
  hash = Math.imul(hash ^ key.charCodeAt(length >> 2), 0xc2b2ae35);
  hash = Math.imul(hash ^ key.charCodeAt(length - 1 - (length >> 2)), 0x27d4eb2f);
  return (hash ^ (hash >>> 16)) & (CACHE_SLOTS - 1);
}

/**
 * key_split for a string. Dask's version, with `words = s.split("-")`:
 *
 *   result = words[0] if words[0][0].isalpha() else words[0].split(",")[0].strip("_'()\"")
 *   for word in words[1:]: append "-" + word while word.isalpha() and it is not an 8-letter
 *     word starting with a-f (hex_pattern.match anchors only at the start)
 *   32 characters of [a-f0-9] → "data"; starting with "<" → strip("<>").split()[0] after its
 *   last "."; any exception (an empty first word, nothing left after stripping) → "Other".
 *
 * The accepted words follow the first word contiguously in the key, so the result is one
 * slice of the key unless the first word was cut short at a comma or stripped at its end.
 */
function splitString(key: string): string {
  const length = key.length;
  let firstEnd = key.indexOf("-");
  if (firstEnd === -1) firstEnd = length;
  if (firstEnd === 0) return OTHER;
  let start = 0;
  let end = firstEnd;
  if (letterWidth(key, 0) === 0) {
    // A stringified tuple, "('x-2', 1)", or a name like "_(x)": keep what is inside.
    const comma = key.indexOf(",");
    if (comma !== -1 && comma < end) end = comma;
    while (start < end && isKeyStripped(key.charCodeAt(start))) start++;
    while (end > start && isKeyStripped(key.charCodeAt(end - 1))) end--;
  }
  const nameEnd = nameWordsEnd(key, firstEnd);
  const result = end === firstEnd ? key.slice(start, nameEnd) : key.slice(start, end) + key.slice(firstEnd, nameEnd);
  if (result.length === 0) return OTHER;
  if (result.length === 32 && isLowerHex(result)) return DATA;
  if (result.charCodeAt(0) === LESS_THAN) return objectReprName(result);
  return result;
}

/** Where the name words that follow the key's first word (ending at `firstEnd`) end: splitString's scan. */
function nameWordsEnd(key: string, firstEnd: number): number {
  const length = key.length;
  let nameEnd = firstEnd;
  while (nameEnd < length) {
    const wordStart = nameEnd + 1;
    // A word that does not begin with a letter is no name word (isNameWord's first test), told
    // before its end is looked for: a key's token, 32 hex digits, is not scanned for a "-" that
    // would not change the answer (~100 instructions a journey, bench/guard).
    if (letterWidth(key, wordStart) === 0) break;
    let wordEnd = key.indexOf("-", wordStart);
    if (wordEnd === -1) wordEnd = length;
    if (!isNameWord(key, wordStart, wordEnd)) break;
    nameEnd = wordEnd;
  }
  return nameEnd;
}

/**
 * Where keySplit(key) ends when it is the key's own beginning, `key.slice(0, end)`: a string key
 * whose first character is an ASCII letter, unless the answer is "data" (32 hex digits). -1 for
 * any other key. splitString's scan without its slice: the recorder finds a prefix it knows by this
 * end and a comparison, without a string made and hashed per journey (naming.ts, keyPrefixId).
 */
export function keySplitEnd(key: string): number {
  // An ASCII letter first (an empty key's NaN is not one), else -1: small, as the recorder's
  // begin() inlines it (letterWidth's regular expression for other letters stays off this path).
  if (((key.charCodeAt(0) | 0x20) - 0x61) >>> 0 >= 26) return -1;
  let firstEnd = key.indexOf("-");
  if (firstEnd === -1) firstEnd = key.length;
  const nameEnd = nameWordsEnd(key, firstEnd);
  return nameEnd === 32 && isLowerHex(key, 32) ? -1 : nameEnd;
}

/**
 * key_split_group for a string:
 *
 *   "(..." → s.split(",", 1)[0].strip("()\"'")   (note: no "_" here, unlike key_split)
 *   32 characters of [a-f0-9] → "data"
 *   "<..." → s.strip("<>").split()[0].split(".")[-1]
 *   anything else → key_split(s)
 */
function groupOfString(key: string): string {
  const length = key.length;
  if (length === 0) return OTHER;
  const first = key.charCodeAt(0);
  if (first === OPEN_PAREN) {
    let start = 0;
    let end = key.indexOf(",");
    if (end === -1) end = length;
    while (start < end && isGroupStripped(key.charCodeAt(start))) start++;
    while (end > start && isGroupStripped(key.charCodeAt(end - 1))) end--;
    return start === end ? OTHER : key.slice(start, end);
  }
  if (length === 32 && isLowerHex(key)) return DATA;
  if (first === LESS_THAN) return objectReprName(key);
  return splitCached(key);
}

/**
 * The class name in a key made from an object's default repr, "<module.sub.myclass object at
 * 0x7f...>": Python's text.strip("<>").split()[0].split(".")[-1], with "Other" where Python
 * would fail (nothing but brackets and spaces) or give "" (the first word ends with ".").
 */
function objectReprName(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isAngleBracket(text.charCodeAt(start))) start++;
  while (end > start && isAngleBracket(text.charCodeAt(end - 1))) end--;
  while (start < end && isPythonSpace(text.charCodeAt(start))) start++;
  let wordEnd = start;
  while (wordEnd < end && !isPythonSpace(text.charCodeAt(wordEnd))) wordEnd++;
  const dot = wordEnd > start ? text.lastIndexOf(".", wordEnd - 1) : -1;
  const nameStart = dot >= start ? dot + 1 : start;
  return nameStart === wordEnd ? OTHER : text.slice(nameStart, wordEnd);
}

/**
 * Whether key[start, end) continues the name: Python's word.isalpha() (non-empty, letters
 * only) and not `len(word) == 8 and hex_pattern.match(word)`. Both lengths are in code points,
 * as Python counts them, hence the count alongside the scan.
 */
function isNameWord(key: string, start: number, end: number): boolean {
  if (start === end) return false;
  let codePoints = 0;
  for (let i = start; i < end; codePoints++) {
    const width = letterWidth(key, i);
    if (width === 0) return false;
    i += width;
  }
  if (codePoints === 8) {
    const first = key.charCodeAt(start);
    if (first >= 0x61 && first <= 0x66) return false;
  }
  return true;
}

/** How many UTF-16 units the letter at `index` spans (1 or 2), or 0 if it is not a letter. */
function letterWidth(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 0x80) return ((code | 0x20) - 0x61) >>> 0 < 26 ? 1 : 0;
  LETTER.lastIndex = index;
  return LETTER.test(text) ? LETTER.lastIndex - index : 0;
}

/** Whether `text`'s first `length` characters (all of them by default) are lowercase hex digits. */
function isLowerHex(text: string, length = text.length): boolean {
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (!((code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66))) return false;
  }
  return true;
}

function isKeyStripped(code: number): boolean {
  return (
    code === UNDERSCORE || code === SINGLE_QUOTE || code === OPEN_PAREN || code === CLOSE_PAREN || code === DOUBLE_QUOTE
  );
}

function isGroupStripped(code: number): boolean {
  return code === OPEN_PAREN || code === CLOSE_PAREN || code === DOUBLE_QUOTE || code === SINGLE_QUOTE;
}

function isAngleBracket(code: number): boolean {
  return code === LESS_THAN || code === GREATER_THAN;
}

/**
 * Python's str.isspace(), which str.split() splits on: it includes the ASCII separators
 * 0x1c–0x1f and U+0085, which JavaScript's \s does not, and excludes U+FEFF, which \s has.
 */
function isPythonSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code >= 0x1c;
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    // Invalid UTF-8 makes Dask's bytes.decode() raise; a prefix of "Other" is our equivalent.
    return undefined;
  }
}

function decodeLossy(bytes: Uint8Array): string | undefined {
  try {
    return lossyUtf8.decode(bytes);
  } catch {
    // Only views TextDecoder refuses outright (a SharedArrayBuffer in some runtimes) get here.
    return undefined;
  }
}

function tupleText(items: readonly unknown[], depth: number): string | undefined {
  if (depth >= MAX_NESTING) return undefined;
  const count = items.length;
  if (count === 0) return "()";
  let text = "(";
  for (let i = 0; i < count; i++) {
    const item = tupleItemText(items[i], depth + 1);
    if (item === undefined) return undefined;
    text += i === 0 ? item : ", " + item;
  }
  return count === 1 ? text + ",)" : text + ")";
}

function tupleItemText(item: unknown, depth: number): string | undefined {
  if (typeof item === "string") return pythonStringRepr(item);
  if (typeof item === "number") return item === item ? String(item) : undefined;
  if (item instanceof Uint8Array) {
    const text = decodeLossy(item);
    return text === undefined ? undefined : pythonStringRepr(text);
  }
  if (Array.isArray(item)) return tupleText(item, depth);
  return undefined;
}

/**
 * Python's repr() of a str: single quotes unless the text has a single quote and no double
 * quote; backslash, the chosen quote, \t \n \r and non-printable characters escaped. Keys are
 * nearly always printable ASCII without quotes, which one native character-class search lets
 * through unchanged.
 */
function pythonStringRepr(text: string): string {
  if (!MAY_NEED_ESCAPING.test(text)) return "'" + text + "'";
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === quote || code === BACKSLASH) out += "\\" + char;
    else if (code === 0x09) out += "\\t";
    else if (code === 0x0a) out += "\\n";
    else if (code === 0x0d) out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + hex(code, 2);
    else if (code < 0x7f || !NON_PRINTABLE.test(char)) out += char;
    else if (code < 0x100) out += "\\x" + hex(code, 2);
    else if (code < 0x10000) out += "\\u" + hex(code, 4);
    else out += "\\U" + hex(code, 8);
  }
  return out + quote;
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, "0");
}
