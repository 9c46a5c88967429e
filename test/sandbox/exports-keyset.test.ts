// The keyset index against a plain sorted array, under random inserts, removals and queries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compareKeys, KeysetIndex } from '../../src/sandbox/exports/keyset-index.ts';

interface Entry {
  ts: number;
  id: number;
  own: boolean;
}

const byKey = (a: Entry, b: Entry): number => compareKeys(a.ts, a.id, b.ts, b.id);

function collect(index: KeysetIndex, dir: 'f' | 'b', from = dir === 'f' ? index.begin() : index.end(), to = dir === 'f' ? index.end() : index.begin()): Entry[] {
  const out: Entry[] = [];
  const visit = (ts: number, id: number, own: boolean): boolean => (out.push({ ts, id, own }), true);
  if (dir === 'f') index.scanForward(from, to, visit);
  else index.scanBackward(from, to, visit);
  return out;
}

test('matches a sorted array under random inserts and removals, across chunk splits and merges', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), ts: fc.integer({ min: 0, max: 60 }), id: fc.integer({ min: 0, max: 5000 }), own: fc.boolean() }),
    fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 400, size: 'max' }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 2, max: 9 }), (ops, qts, qid, capacity) => {
      const index = new KeysetIndex(capacity);
      const model: Entry[] = [];
      for (const o of ops) {
        if (o.kind === 'insert') {
          if (model.some((e) => e.ts === o.ts && e.id === o.id)) continue;
          index.insert(o.ts, o.id, o.own);
          model.push({ ts: o.ts, id: o.id, own: o.own });
        } else if (model.length > 0) {
          const [victim] = model.splice(o.pick % model.length, 1);
          assert.equal(index.remove(victim!.ts, victim!.id), true);
        }
      }
      model.sort(byKey);
      assert.deepEqual(collect(index, 'f'), model);
      assert.deepEqual(collect(index, 'b'), [...model].reverse());
      assert.equal(index.size, model.length);
      assert.equal(index.ownSize, model.filter((e) => e.own).length);

      const lower = model.findIndex((e) => compareKeys(e.ts, e.id, qts, qid) >= 0);
      const upper = model.findIndex((e) => compareKeys(e.ts, e.id, qts, qid) > 0);
      const lo = lower === -1 ? model.length : lower;
      const up = upper === -1 ? model.length : upper;
      assert.equal(index.rank(index.lowerBound(qts, qid)), lo);
      assert.equal(index.rank(index.upperBound(qts, qid)), up);
      assert.deepEqual(collect(index, 'f', index.upperBound(qts, qid)), model.slice(up));
      assert.deepEqual(collect(index, 'b', index.lowerBound(qts, qid)), model.slice(0, lo).reverse());
      assert.equal(index.countOwnBetween(index.begin(), index.lowerBound(qts, qid)), model.slice(0, lo).filter((e) => e.own).length);
      assert.equal(index.countBetween(index.lowerBound(qts, qid), index.end()), model.length - lo);
      assert.equal(index.remove(qts, -1), false);
    }),
    { numRuns: 150 },
  );
});

test('fromSorted builds full chunks and answers like incremental inserts', () => {
  const n = 5000;
  const ts = new Float64Array(n);
  const id = new Uint32Array(n);
  const own = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    ts[i] = Math.floor(i / 3); // runs of three equal timestamps
    id[i] = i + 1;
    own[i] = i % 4 === 0 ? 0 : 1;
  }
  const bulk = KeysetIndex.fromSorted(ts, id, own, n, 64);
  assert.equal(bulk.size, n);
  assert.equal(bulk.ownSize, n - Math.ceil(n / 4));
  const p = bulk.lowerBound(100, -1);
  assert.equal(bulk.rank(p), 300);
  bulk.insert(100, 0, true); // ties sort by id: before (100, 301)
  assert.equal(bulk.rank(bulk.lowerBound(100, 0)), 300);
  assert.equal(bulk.rank(bulk.upperBound(100, 0)), 301);
  // appends after the last entry start new chunks rather than splitting
  for (let i = 0; i < 3000; i++) bulk.insert(1e9 + i, n + 1 + i, true);
  assert.equal(bulk.rank(bulk.lowerBound(1e9, -1)), n + 1);
  assert.equal(bulk.countOwnBetween(bulk.lowerBound(1e9, -1), bulk.end()), 3000);
});
