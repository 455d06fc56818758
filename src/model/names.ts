/**
 * How long a task prefix or an activity name may be. They become metric attributes, exported on
 * every interval for every series, and folded names past the limits are remembered to count
 * each once (10,000 of them): a 1 MB prefix would travel in every export and, folded, pin 10 GB.
 * Dask's prefixes are function names; 256 is room for any name a person reads.
 */
export const MAX_NAME_LENGTH = 256;

/** `name` cut to MAX_NAME_LENGTH, never between the two halves of a surrogate pair. */
export function cutName(name: string): string {
  let end = MAX_NAME_LENGTH;
  const last = name.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return name.slice(0, end);
}
