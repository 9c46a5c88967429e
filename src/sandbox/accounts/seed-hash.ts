// Seeds of the seeded portfolio: one unrelated stream of src/prng.ts per (seed, tenant).

/** Mixes two integers into one 32-bit seed, so (seed, tenant index) pairs give unrelated streams. */
export function mixSeed(a: number, b: number): number {
  let h = Math.imul((a >>> 0) ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ (b >>> 0), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
