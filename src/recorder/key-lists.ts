/**
 * Lists of keys as callers pass them (gather(), serve(), dependencies()), read without trusting
 * them: a revoked Proxy or a throwing getter is a counted drop, never the host's exception.
 */
import { show } from "../model/show.js";

/** arrayLength(): not an array. */
export const NOT_AN_ARRAY = -1;
/** arrayLength(): an array (or a Proxy of one) that could not be read. */
export const UNREADABLE_ARRAY = -2;

/**
 * The length of an array of keys, or NOT_AN_ARRAY, or UNREADABLE_ARRAY when asking throws: a
 * revoked Proxy throws even from Array.isArray(), one whose traps throw from reading `length`.
 */
export function arrayLength(value: unknown): number {
  try {
    if (!Array.isArray(value)) return NOT_AN_ARRAY;
    const length = (value as readonly unknown[]).length;
    return typeof length === "number" && length >= 0 && length <= 0xffffffff ? length : UNREADABLE_ARRAY;
  } catch {
    return UNREADABLE_ARRAY;
  }
}

/** What a drop says of a list of keys arrayLength() refused. */
export function unlisted(value: unknown, count: number): string {
  return count === UNREADABLE_ARRAY ? "an array (or Proxy) that could not be read" : show(value);
}

/** An element of an array, or undefined (not a key) when reading it throws. */
export function element(array: readonly unknown[], index: number): unknown {
  try {
    return array[index];
  } catch {
    return undefined;
  }
}
