import { keyToText } from "../model/keys.js";

/**
 * A key's identity in maps: a string or number as it is, any other key (bytes, a tuple) as its
 * canonical text; undefined for what is not a key (NaN included: nothing could look it up).
 */
export function keyId(key: unknown): string | number | undefined {
  if (typeof key === "string") return key;
  if (typeof key === "number") return key === key ? key : undefined;
  return keyToText(key);
}
