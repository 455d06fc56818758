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

/** Lists made at their final size up to this length; past it `new Array(n)` is V8's slow kind. */
const SIZED_MAX = 1024;

/**
 * An empty list with room for `count` items, to fill by index (`list[filled++] = item`) and end
 * with fitted(list, filled). A `[]` reserves 17 slots at its first push: for the one or two keys
 * of a task's dependencies or a transfer, ≈ 130 B more than they need, on every call.
 */
export function sizedList<T>(count: number): T[] {
  return count <= SIZED_MAX ? new Array<T>(count) : [];
}

/** The list trimmed to the `filled` items put in it (some of the `count` were not keys). */
export function fitted<T>(list: T[], filled: number): T[] {
  if (list.length !== filled) list.length = filled;
  return list;
}
