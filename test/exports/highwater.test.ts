import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HighWaterTracker, advanceLast, applyFilters, boundaryFilter, compareCursorValues, pruneSeen, recordSeen, rowKey, seenFilter,
} from '../../src/exports/highwater.ts';

const row = (id: string, t: string) => ({ public_id: id, updated_at: t });

test('rowKey prefers public_id, then id', () => {
  assert.equal(rowKey({ public_id: 'a', id: 1 }), 'a');
  assert.equal(rowKey({ id: 7 }), '7');
  assert.equal(rowKey({ x: 1 }), '{"x":1}');
});

test('cursor values compare by instant, whatever their textual form', () => {
  assert.equal(compareCursorValues('2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.001Z'), -1);
  assert.equal(compareCursorValues('2025-01-01T02:00:00+01:00', '2025-01-01T00:30:00.000Z'), 1);
  assert.equal(compareCursorValues('2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z'), 0);
});

test('the high-water mark keeps the greatest value and every id delivered at it', () => {
  const hw = new HighWaterTracker();
  hw.observe([row('a', '2025-01-01T00:00:00.000Z'), row('b', '2025-01-02T00:00:00.000Z')], 'updated_at');
  hw.observe([row('c', '2025-01-02T00:00:00.000Z'), row('d', '2025-01-01T12:00:00.000Z')], 'updated_at');
  assert.deepEqual(hw.snapshot(), { value: '2025-01-02T00:00:00.000Z', ids: ['b', 'c'] });
  hw.observe([row('e', '2025-01-03T00:00:00.000Z')], 'updated_at');
  assert.deepEqual(hw.snapshot(), { value: '2025-01-03T00:00:00.000Z', ids: ['e'] });
  assert.deepEqual(new HighWaterTracker({ value: 'x', ids: ['1'] }).snapshot(), { value: 'x', ids: ['1'] });
});

test('the last position in a window carries ids across pages at the same value', () => {
  const t = '2025-01-02T00:00:00.000Z';
  let last = advanceLast(null, [row('a', '2025-01-01T00:00:00.000Z'), row('b', t)], 'updated_at');
  assert.deepEqual(last, { value: t, ids: ['b'] });
  last = advanceLast(last, [row('c', t)], 'updated_at');
  assert.deepEqual(last!.ids.sort(), ['b', 'c']);
  assert.equal(advanceLast(last, [], 'updated_at'), last);
  assert.deepEqual(advanceLast(last, [row('d', '2025-01-03T00:00:00.000Z')], 'updated_at'), { value: '2025-01-03T00:00:00.000Z', ids: ['d'] });
});

test('the boundary filter drops only rows at exactly the mark whose id was delivered', () => {
  const t = '2025-01-02T00:00:00.000Z';
  const rows = [row('a', t), row('b', t), row('a', '2025-01-03T00:00:00.000Z')];
  const kept = applyFilters(rows, [boundaryFilter({ value: t, ids: ['a'] })], 'updated_at');
  assert.deepEqual(kept, [row('b', t), row('a', '2025-01-03T00:00:00.000Z')]);
  assert.equal(applyFilters(rows, [boundaryFilter(null)], 'updated_at'), rows);
});

test('the lookback memory drops rows already delivered in the same version only', () => {
  const seen: Record<string, string> = {};
  recordSeen(seen, [row('a', '2025-01-01T00:00:00.000Z'), row('b', '2025-01-05T00:00:00.000Z')], 'updated_at', '2025-01-02T00:00:00.000Z');
  assert.deepEqual(seen, { b: '2025-01-05T00:00:00.000Z' });
  const rows = [row('b', '2025-01-05T00:00:00.000Z'), row('b2', '2025-01-04T00:00:00.000Z'), row('b', '2025-01-06T00:00:00.000Z')];
  assert.deepEqual(applyFilters(rows, [seenFilter(seen)], 'updated_at').map((r) => r.updated_at), ['2025-01-04T00:00:00.000Z', '2025-01-06T00:00:00.000Z']);
  assert.deepEqual(pruneSeen({ a: '2025-01-01T00:00:00.000Z', b: '2025-01-05T00:00:00.000Z' }, '2025-01-03T00:00:00.000Z'), { b: '2025-01-05T00:00:00.000Z' });
});

test('property: observing a page at once gives the same mark as observing its rows one by one', async () => {
  const fc = (await import('fast-check')).default;
  const value = fc.constantFrom('2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.001Z', '2025-01-02T00:00:00.000Z', '2025-01-01T01:00:00+01:00', null);
  const page = fc.array(fc.record({ public_id: fc.constantFrom('a', 'b', 'c', 'd'), updated_at: value }), { maxLength: 6 });
  fc.assert(
    fc.property(fc.array(page, { maxLength: 5 }), (pages) => {
      const paged = new HighWaterTracker();
      const single = new HighWaterTracker();
      for (const rows of pages) {
        paged.observe(rows, 'updated_at');
        for (const r of rows) single.observe([r], 'updated_at');
        const a = paged.snapshot();
        const b = single.snapshot();
        assert.deepEqual(a && { ...a, ids: [...a.ids].sort() }, b && { ...b, ids: [...b.ids].sort() });
      }
    }),
    { numRuns: 500 },
  );
});
