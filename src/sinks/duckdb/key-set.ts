// The identities a table holds, as 64-bit hashes in memory: what lets the sink keep one row per
// identity without an index in DuckDB. A key the set has never seen is not in the table, so a
// page whose keys are all new is appended as it is; a key the set holds is (almost surely) in the
// table, and its row is merged. Two keys with the same 64-bit hash only send a row through the
// merge, which is exact whatever the set says: the set may hold more than the table, never less.
// 11 to 16 bytes a key (open addressing, two 32-bit words a slot, at most three quarters full,
// half a time larger at each growth): 12 MB for a million keys, where DuckDB's index on them took
// 90 MB. Growing by half rather than doubling keeps the set less empty on average (16.8 MB for a
// million keys when it doubled), and the old slots and the new ones are held together for less.

/** The two halves of the last key hashed (no allocation per key: this runs for every row). */
let h1 = 0;
let h2 = 0;

/** A 64-bit hash of text[start, end) in two 32-bit halves (cyrb53's mixing, both words kept),
 * over two UTF-16 units at a time. */
function hash(text: string, start: number, end: number): void {
  const length = end - start;
  let a = 0xdeadbeef ^ length;
  let b = 0x41c6ce57 ^ length;
  const even = start + (length & ~1);
  for (let i = start; i < even; i += 2) {
    const c = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  if (even < end) {
    const c = text.charCodeAt(even);
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
  }
  a = Math.imul(a ^ (a >>> 16), 2246822507);
  a ^= Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507);
  b ^= Math.imul(a ^ (a >>> 13), 3266489909);
  h1 = a >>> 0;
  // 0 marks an empty slot: a hash whose second half is 0 is stored as 1 (one more possible
  // collision, which only costs a merge).
  h2 = b >>> 0 || 1;
}

const MIN_SLOTS = 1024;
const MAX_LOAD = 0.75;
const GROWTH = 1.5;

export class KeySet {
  /** Slot i holds hash halves [2i, 2i+1]; an empty slot has 0 as its second half. */
  #slots: Uint32Array;
  #count: number;
  #size = 0;

  /** `expected`: how many keys the set will hold soon (it grows past that anyway). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots * MAX_LOAD < expected) slots = Math.ceil(slots * GROWTH);
    this.#count = slots;
    this.#slots = new Uint32Array(slots * 2);
  }

  /** How many distinct hashes the set holds. */
  get size(): number {
    return this.#size;
  }

  /** The bytes its slots take. */
  get bytes(): number {
    return this.#slots.byteLength;
  }

  /** False: the key was never added. True: it was, or a key with the same hash was. */
  has(key: string): boolean {
    hash(key, 0, key.length);
    const slots = this.#slots;
    const count = this.#count;
    for (let i = home(h1, count); ; i = i + 1 === count ? 0 : i + 1) {
      const second = slots[2 * i + 1]!;
      if (second === 0) return false;
      if (second === h2 && slots[2 * i] === h1) return true;
    }
  }

  /** Adds the key; false when it was there already (has() was true). */
  add(key: string): boolean {
    hash(key, 0, key.length);
    return this.#insert(h1, h2);
  }

  /** add(text.slice(start, end)), without making that string. */
  addSlice(text: string, start: number, end: number): boolean {
    hash(text, start, end);
    return this.#insert(h1, h2);
  }

  #insert(first: number, second: number): boolean {
    const slots = this.#slots;
    const count = this.#count;
    for (let i = home(first, count); ; i = i + 1 === count ? 0 : i + 1) {
      const held = slots[2 * i + 1]!;
      if (held === 0) {
        slots[2 * i] = first;
        slots[2 * i + 1] = second;
        this.#size += 1;
        if (this.#size > count * MAX_LOAD) this.#grow();
        return true;
      }
      if (held === second && slots[2 * i] === first) return false;
    }
  }

  #grow(): void {
    const old = this.#slots;
    this.#count = Math.ceil(this.#count * GROWTH);
    this.#slots = new Uint32Array(this.#count * 2);
    this.#size = 0;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] !== 0) this.#insert(old[i]!, old[i + 1]!);
    }
  }
}

/** The slot a hash half starts its search at, in [0, count): its share of the 32-bit range
 * (exact in doubles below 2^21 slots, and deterministic above). */
function home(first: number, count: number): number {
  return Math.floor((first * count) / 4294967296);
}
