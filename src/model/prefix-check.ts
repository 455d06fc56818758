/**
 * Whether a task prefix looks like an id rather than a family name: all digits, a long run of
 * hex with a digit in it, or a UUID. Such prefixes mean the key was its own prefix (a job queue's
 * numeric or UUID ids through Dask's key_split), so every task becomes a series of its own.
 */
const DIGITS = /^\d+$/;
const HEX = /^(?=[0-9a-f]*\d)[0-9a-f]{8,}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function looksLikeId(prefix: string): boolean {
  return DIGITS.test(prefix) || HEX.test(prefix) || UUID.test(prefix);
}
