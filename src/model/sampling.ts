/**
 * Deterministic per-key sampling: every process that sees a key decides alike, with no
 * coordination, so a sampled task's scheduler, worker and dependency journeys all become spans.
 */

/** FNV-1a over the key text's UTF-16 code units, mapped to [0, 1). */
export function keyHashUnit(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  // Final avalanche (murmur3 fmix32) so keys differing in their last character spread evenly.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) / 4294967296;
}

/** A sampler keeping `ratio` of keys, or undefined when nothing is head-sampled. */
export function ratioSampler(ratio: number): ((id: string | number) => boolean) | undefined {
  if (ratio <= 0) return undefined;
  if (ratio >= 1) return () => true;
  return (id) => keyHashUnit(typeof id === "string" ? id : String(id)) < ratio;
}
