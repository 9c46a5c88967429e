// The ordered index behind every export table: entries sorted by (cursor value, row id), each
// flagged as belonging to the tenant's lender or not. A chunked sorted list of typed arrays: a
// seek is two binary searches whatever the depth, an insert or delete moves at most one chunk,
// and a million entries take about 13 MB. Ids are unsigned 32-bit integers.

/** Entries per chunk. Large enough that the chunk list stays short (1M rows → ~1000 chunks),
 * small enough that an insert's copyWithin is cheap. */
export const CHUNK_CAPACITY = 1024;

interface Chunk {
  readonly ts: Float64Array;
  readonly id: Uint32Array;
  readonly own: Uint8Array;
  size: number;
  ownCount: number;
}

/** A place between entries: before entry `o` of chunk `c`. Normalised so that `o < size` of its
 * chunk, or `c === chunkCount` and `o === 0` for the end. Valid until the next mutation. */
export interface Pos {
  readonly c: number;
  readonly o: number;
}

/** Visits one entry; returns false to stop the scan. */
export type Visit = (ts: number, id: number, own: boolean) => boolean;

export function compareKeys(ts1: number, id1: number, ts2: number, id2: number): number {
  return ts1 !== ts2 ? (ts1 < ts2 ? -1 : 1) : id1 !== id2 ? (id1 < id2 ? -1 : 1) : 0;
}

function newChunk(capacity: number): Chunk {
  return {
    ts: new Float64Array(capacity),
    id: new Uint32Array(capacity),
    own: new Uint8Array(capacity),
    size: 0,
    ownCount: 0,
  };
}

export class KeysetIndex {
  readonly #capacity: number;
  #chunks: Chunk[] = [];
  #size = 0;
  #ownSize = 0;

  /** `capacity` is entries per chunk; tests pass a tiny one to exercise splits. */
  constructor(capacity = CHUNK_CAPACITY) {
    this.#capacity = capacity;
  }

  /** Builds from entries already sorted by (ts, id); `n` of each array are used. */
  static fromSorted(ts: Float64Array, id: Uint32Array, own: Uint8Array, n: number, capacity = CHUNK_CAPACITY): KeysetIndex {
    const index = new KeysetIndex(capacity);
    for (let start = 0; start < n; start += capacity) {
      const chunk = newChunk(capacity);
      const end = Math.min(n, start + capacity);
      chunk.ts.set(ts.subarray(start, end));
      chunk.id.set(id.subarray(start, end));
      chunk.own.set(own.subarray(start, end));
      chunk.size = end - start;
      for (let i = 0; i < chunk.size; i++) chunk.ownCount += chunk.own[i]!;
      index.#chunks.push(chunk);
      index.#size += chunk.size;
      index.#ownSize += chunk.ownCount;
    }
    return index;
  }

  get size(): number {
    return this.#size;
  }

  /** Entries belonging to the tenant's lender. */
  get ownSize(): number {
    return this.#ownSize;
  }

  begin(): Pos {
    return this.#normalize(0, 0);
  }

  end(): Pos {
    return { c: this.#chunks.length, o: 0 };
  }

  /** The first entry >= (ts, id). */
  lowerBound(ts: number, id: number): Pos {
    return this.#bound(ts, id, false);
  }

  /** The first entry > (ts, id). */
  upperBound(ts: number, id: number): Pos {
    return this.#bound(ts, id, true);
  }

  compare(a: Pos, b: Pos): number {
    return a.c !== b.c ? a.c - b.c : a.o - b.o;
  }

  /** Entries before `p`. Sums chunk sizes: O(chunks), which stays in the low thousands. */
  rank(p: Pos): number {
    let n = p.o;
    for (let c = 0; c < p.c; c++) n += this.#chunks[c]!.size;
    return n;
  }

  /** Entries in [from, to). */
  countBetween(from: Pos, to: Pos): number {
    return Math.max(0, this.rank(to) - this.rank(from));
  }

  /** Own entries in [from, to). */
  countOwnBetween(from: Pos, to: Pos): number {
    if (this.compare(from, to) >= 0) return 0;
    const chunks = this.#chunks;
    if (from.c === to.c) return sumOwn(chunks[from.c]!, from.o, to.o);
    let n = sumOwn(chunks[from.c]!, from.o, chunks[from.c]!.size);
    for (let c = from.c + 1; c < to.c; c++) n += chunks[c]!.ownCount;
    if (to.c < chunks.length) n += sumOwn(chunks[to.c]!, 0, to.o);
    return n;
  }

  /** Visits the entries of [from, to) in ascending order. */
  scanForward(from: Pos, to: Pos, visit: Visit): void {
    const chunks = this.#chunks;
    for (let c = from.c; c <= to.c && c < chunks.length; c++) {
      const chunk = chunks[c]!;
      const stop = c === to.c ? to.o : chunk.size;
      for (let o = c === from.c ? from.o : 0; o < stop; o++) {
        if (!visit(chunk.ts[o]!, chunk.id[o]!, chunk.own[o] === 1)) return;
      }
    }
  }

  /** Visits the entries of [to, from) in descending order (`from` is exclusive). */
  scanBackward(from: Pos, to: Pos, visit: Visit): void {
    const chunks = this.#chunks;
    for (let c = Math.min(from.c, chunks.length - 1); c >= to.c && c >= 0; c--) {
      const chunk = chunks[c]!;
      const first = c === to.c ? to.o : 0;
      for (let o = (c === from.c ? from.o : chunk.size) - 1; o >= first; o--) {
        if (!visit(chunk.ts[o]!, chunk.id[o]!, chunk.own[o] === 1)) return;
      }
    }
  }

  /** Inserts an entry; the caller guarantees (ts, id) is not present yet. */
  insert(ts: number, id: number, own: boolean): void {
    const chunks = this.#chunks;
    if (chunks.length === 0) chunks.push(newChunk(this.#capacity));
    let c = this.#chunkFor(ts, id, false);
    if (c === chunks.length) c -= 1; // beyond the last entry: append to the last chunk
    let chunk = chunks[c]!;
    if (chunk.size === this.#capacity && c === chunks.length - 1 && this.#isAfterLast(chunk, ts, id)) {
      // Appends (new writes are stamped with the current time) start a fresh chunk rather than
      // splitting, so chunks filled in order stay full.
      chunk = newChunk(this.#capacity);
      chunks.push(chunk);
    } else if (chunk.size === this.#capacity) {
      this.#split(c);
      const left = chunks[c]!;
      if (compareKeys(ts, id, left.ts[left.size - 1]!, left.id[left.size - 1]!) > 0) c += 1;
      chunk = chunks[c]!;
    }
    const o = searchChunk(chunk, ts, id, true);
    chunk.ts.copyWithin(o + 1, o, chunk.size);
    chunk.id.copyWithin(o + 1, o, chunk.size);
    chunk.own.copyWithin(o + 1, o, chunk.size);
    chunk.ts[o] = ts;
    chunk.id[o] = id;
    chunk.own[o] = own ? 1 : 0;
    chunk.size += 1;
    this.#size += 1;
    if (own) {
      chunk.ownCount += 1;
      this.#ownSize += 1;
    }
  }

  /** Removes the entry (ts, id); false when it is not there. */
  remove(ts: number, id: number): boolean {
    const p = this.lowerBound(ts, id);
    if (p.c >= this.#chunks.length) return false;
    const chunk = this.#chunks[p.c]!;
    if (chunk.ts[p.o] !== ts || chunk.id[p.o] !== id) return false;
    const own = chunk.own[p.o] === 1;
    chunk.ts.copyWithin(p.o, p.o + 1, chunk.size);
    chunk.id.copyWithin(p.o, p.o + 1, chunk.size);
    chunk.own.copyWithin(p.o, p.o + 1, chunk.size);
    chunk.size -= 1;
    this.#size -= 1;
    if (own) {
      chunk.ownCount -= 1;
      this.#ownSize -= 1;
    }
    if (chunk.size === 0) this.#chunks.splice(p.c, 1);
    return true;
  }

  /** All entries in ascending order (tests and small tables only). */
  entries(): { ts: number; id: number; own: boolean }[] {
    const out: { ts: number; id: number; own: boolean }[] = [];
    this.scanForward(this.begin(), this.end(), (ts, id, own) => {
      out.push({ ts, id, own });
      return true;
    });
    return out;
  }

  #bound(ts: number, id: number, strict: boolean): Pos {
    const c = this.#chunkFor(ts, id, strict);
    if (c === this.#chunks.length) return this.end();
    return this.#normalize(c, searchChunk(this.#chunks[c]!, ts, id, strict));
  }

  /** The first chunk whose last entry is >= (ts, id) (> when strict); chunkCount when none. */
  #chunkFor(ts: number, id: number, strict: boolean): number {
    const chunks = this.#chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid]!;
      const cmp = compareKeys(chunk.ts[chunk.size - 1]!, chunk.id[chunk.size - 1]!, ts, id);
      if (strict ? cmp > 0 : cmp >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  #normalize(c: number, o: number): Pos {
    const chunks = this.#chunks;
    while (c < chunks.length && o >= chunks[c]!.size) {
      c += 1;
      o = 0;
    }
    return c >= chunks.length ? { c: chunks.length, o: 0 } : { c, o };
  }

  #isAfterLast(chunk: Chunk, ts: number, id: number): boolean {
    return compareKeys(ts, id, chunk.ts[chunk.size - 1]!, chunk.id[chunk.size - 1]!) > 0;
  }

  #split(c: number): void {
    const chunk = this.#chunks[c]!;
    const half = chunk.size >>> 1;
    const right = newChunk(this.#capacity);
    right.ts.set(chunk.ts.subarray(half, chunk.size));
    right.id.set(chunk.id.subarray(half, chunk.size));
    right.own.set(chunk.own.subarray(half, chunk.size));
    right.size = chunk.size - half;
    right.ownCount = sumOwn(right, 0, right.size);
    chunk.size = half;
    chunk.ownCount -= right.ownCount;
    this.#chunks.splice(c + 1, 0, right);
  }
}

/** Offset of the first entry >= (ts, id) in a chunk (> when strict). */
function searchChunk(chunk: Chunk, ts: number, id: number, strict: boolean): number {
  let lo = 0;
  let hi = chunk.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = compareKeys(chunk.ts[mid]!, chunk.id[mid]!, ts, id);
    if (strict ? cmp > 0 : cmp >= 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function sumOwn(chunk: Chunk, from: number, to: number): number {
  let n = 0;
  for (let o = from; o < to; o++) n += chunk.own[o]!;
  return n;
}
