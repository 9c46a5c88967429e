// The batching and ordering bookkeeping, without I/O: batch limits, parking behind in-flight
// keys, and (property) per-key write order whatever order the batches settle in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BatchPlanner, type Batch } from '../../src/accounts/batch-planner.ts';

interface E {
  key: string;
  bytes: number;
  seq: number;
}
const entry = (seq: number, key: string, bytes = 10): E => ({ seq, key, bytes });
const seqs = (batch: Batch<E> | undefined) => batch?.entries.map((e) => e.seq);

describe('BatchPlanner', () => {
  it('seals at batchSize and hands batches out in order', () => {
    const p = new BatchPlanner<E>({ batchSize: 2, maxBatchBytes: 1000 });
    for (let i = 0; i < 5; i++) p.add(entry(i, `k${i}`));
    assert.equal(p.readyCount, 2);
    assert.equal(p.openCount, 1);
    assert.deepEqual(seqs(p.take()), [0, 1]);
    assert.deepEqual(seqs(p.take()), [2, 3]);
    assert.equal(p.take(), undefined);
    p.seal();
    assert.deepEqual(seqs(p.take()), [4]);
    assert.equal(p.buffered, 5);
    assert.equal(p.sealedCount, 3);
  });

  it('seals before a record would push the batch over maxBatchBytes; an oversized record goes alone', () => {
    const p = new BatchPlanner<E>({ batchSize: 100, maxBatchBytes: 25 });
    p.add(entry(0, 'a', 10));
    p.add(entry(1, 'b', 10));
    p.add(entry(2, 'c', 10));
    p.add(entry(3, 'd', 60));
    p.add(entry(4, 'e', 5));
    assert.deepEqual(seqs(p.take()), [0, 1]);
    assert.deepEqual(seqs(p.take()), [2]);
    assert.deepEqual(seqs(p.take()), [3]);
    assert.equal(p.openCount, 1);
  });

  it('lets records of one key share the open batch, in write order', () => {
    const p = new BatchPlanner<E>({ batchSize: 3, maxBatchBytes: 1000 });
    p.add(entry(0, 'k'));
    p.add(entry(1, 'k'));
    p.add(entry(2, 'x'));
    assert.deepEqual(seqs(p.take()), [0, 1, 2]);
  });

  it('parks a record whose key is in a sealed batch, and everything of that key after it', () => {
    const p = new BatchPlanner<E>({ batchSize: 2, maxBatchBytes: 1000 });
    p.add(entry(0, 'k'));
    p.add(entry(1, 'a'));
    const first = p.take()!;
    p.add(entry(2, 'k')); // parked: k is in flight
    p.add(entry(3, 'b'));
    p.add(entry(4, 'k')); // parked behind 2
    p.add(entry(5, 'c'));
    assert.equal(p.parkedCount, 2);
    assert.deepEqual(seqs(p.take()), [3, 5]);
    p.settle(first);
    assert.equal(p.parkedCount, 0);
    p.seal();
    assert.deepEqual(seqs(p.take()), [2, 4]);
  });

  it('keeps a parked record parked while its key is still held by another sealed batch', () => {
    const p = new BatchPlanner<E>({ batchSize: 1, maxBatchBytes: 1000 });
    p.add(entry(0, 'k'));
    p.add(entry(1, 'k'));
    p.add(entry(2, 'x'));
    const a = p.take()!;
    const x = p.take()!;
    assert.deepEqual(seqs(x), [2]);
    p.settle(x);
    assert.equal(p.parkedCount, 1);
    p.settle(a);
    assert.deepEqual(seqs(p.take()), [1]);
    assert.throws(() => p.settle(a), /not in flight/);
  });

  it('sealing on maxBatchBytes parks a record whose key went with the sealed batch', () => {
    const p = new BatchPlanner<E>({ batchSize: 10, maxBatchBytes: 15 });
    p.add(entry(0, 'k', 10));
    p.add(entry(1, 'k', 10));
    assert.equal(p.readyCount, 1);
    assert.equal(p.parkedCount, 1);
  });

  it('property: per key, records are taken in write order and never in two unsettled batches', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
        (keys, batchSize, concurrency, choices) => {
          const p = new BatchPlanner<E>({ batchSize, maxBatchBytes: 35 });
          const inFlight: Batch<E>[] = [];
          const sent: E[] = [];
          let c = 0;
          const step = (finishing: boolean) => {
            if (finishing) p.seal();
            while (inFlight.length < concurrency) {
              const b = p.take();
              if (b === undefined) break;
              for (const e of b.entries) {
                for (const other of inFlight) assert.ok(!other.keys.has(e.key), 'key in two unsettled batches');
              }
              inFlight.push(b);
              sent.push(...b.entries);
            }
            if (inFlight.length > 0 && (finishing || (choices[c++ % choices.length] ?? 0) % 2 === 0)) {
              const i = (choices[c++ % choices.length] ?? 0) % inFlight.length;
              p.settle(inFlight.splice(i, 1)[0]!);
            }
          };
          keys.forEach((key, seq) => {
            p.add(entry(seq, key, 10 + (seq % 3) * 10));
            step(false);
          });
          for (let guard = 0; !p.idle && guard < 10_000; guard++) step(true);
          assert.ok(p.idle);
          assert.equal(sent.length, keys.length);
          for (const key of new Set(keys)) {
            const order = sent.filter((e) => e.key === key).map((e) => e.seq);
            assert.deepEqual(order, [...order].sort((x, y) => x - y));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
