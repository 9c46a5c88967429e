// Hashing for generated export rows and cursor checksums; no generator state (the seeded PRNG is src/prng.ts).
// Every value is a pure function of its inputs, so the same seed and scale give byte-identical rows on
// every start, whatever order rows are read in.

const TWO_32 = 4294967296;

/** A 32-bit hash of a list of numbers (integers up to 2^53 keep all their bits). */
export function mix(...parts: readonly number[]): number {
  let h = 0x811c9dc5 | 0;
  for (const part of parts) {
    // Both halves, so ids above 2^32 (foreign rows) still hash differently.
    h = fold(h, part >>> 0);
    h = fold(h, Math.floor(part / TWO_32) >>> 0);
  }
  return avalanche(h) >>> 0;
}

function fold(h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** A bijection on [0, 2^48): a 4-round Feistel network keyed by `key`. Used to turn sequential
 * ids into random-looking but guaranteed-unique identifiers (a PRNG alone would collide). */
export function permute48(value: number, key: number): number {
  let left = Math.floor(value / 0x1000000) & 0xffffff;
  let right = value & 0xffffff;
  for (let round = 0; round < 4; round++) {
    const f = mix(right, key, round) & 0xffffff;
    const next = left ^ f;
    left = right;
    right = next;
  }
  return left * 0x1000000 + right;
}

/** A version-4-shaped UUID, unique per (key, id) for ids below 2^48. */
export function uuidFor(key: number, id: number): string {
  // The head is random per row; uniqueness comes from the tail alone.
  const a = mix(key, id, 1).toString(16).padStart(8, '0');
  const b = mix(key, id, 2).toString(16).padStart(8, '0');
  const variant = (8 + (mix(key, id, 3) & 3)).toString(16);
  const tail = permute48(id, key).toString(16).padStart(12, '0');
  return `${a}-${b.slice(0, 4)}-4${b.slice(4, 7)}-${variant}${a.slice(0, 3)}-${tail}`;
}
