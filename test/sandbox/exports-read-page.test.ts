// Page reads on small hand-made tables (pure): bounds, order with ties, cursors, via pages,
// the unbounded scan budget and totals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { KeysetIndex } from '../../src/sandbox/exports/keyset-index.ts';
import { type PageLimits, type PageRequest, readPage } from '../../src/sandbox/exports/read-page.ts';
import type { ExportTable } from '../../src/sandbox/exports/table.ts';

interface Row {
  ts: number;
  id: number;
  own: boolean;
}

function tableOf(rows: readonly Row[], capacity = 4): ExportTable {
  const index = new KeysetIndex(capacity);
  for (const r of rows) index.insert(r.ts, r.id, r.own);
  return { index, render: (id, ts) => ({ id, ts }) };
}

const DIRECT: PageLimits = { pathKind: 'direct', scanBudget: null, countBudget: 1e9, totalCap: 1e9 };
const VIA: PageLimits = { ...DIRECT, pathKind: 'via' };
const FIRST: PageRequest = { since: null, until: null, after: null, limit: 500, sort: 'asc', includeTotal: false };

function page(table: ExportTable, req: Partial<PageRequest>, limits = DIRECT) {
  const result = readPage(table, { ...FIRST, ...req }, limits);
  assert.equal(result.kind, 'page');
  if (result.kind !== 'page') throw new Error('unreachable');
  return result;
}

/** Follows next to the end; returns rows and page sizes. */
function walk(table: ExportTable, req: Partial<PageRequest>, limits = DIRECT): { rows: { id: number; ts: number }[]; sizes: number[] } {
  const rows: { id: number; ts: number }[] = [];
  const sizes: number[] = [];
  let after: PageRequest['after'] = null;
  for (let i = 0; i < 10_000; i++) {
    const p = page(table, { ...req, after }, limits);
    rows.push(...(p.rows as { id: number; ts: number }[]));
    sizes.push(p.rows.length);
    if (p.next === null) return { rows, sizes };
    after = p.next;
  }
  throw new Error('walk did not end');
}

const rowsArb = fc.uniqueArray(
  fc.record({ ts: fc.integer({ min: 0, max: 30 }), id: fc.integer({ min: 1, max: 400 }), own: fc.boolean() }),
  { selector: (r) => `${r.ts}/${r.id}`, maxLength: 120 },
);

test('a walk returns every own row in range exactly once, in (ts, id) order both ways, for any limit', () => {
  fc.assert(
    fc.property(rowsArb, fc.integer({ min: 1, max: 9 }), fc.option(fc.integer({ min: 0, max: 30 })), fc.option(fc.integer({ min: 0, max: 31 })), fc.boolean(), (rows, limit, since, until, via) => {
      const table = tableOf(rows);
      const expected = rows
        .filter((r) => r.own && (since === null || r.ts >= since) && (until === null || r.ts < until))
        .sort((a, b) => a.ts - b.ts || a.id - b.id)
        .map(({ ts, id }) => ({ id, ts }));
      const limits = via ? VIA : DIRECT;
      const asc = walk(table, { limit, since, until }, limits);
      assert.deepEqual(asc.rows, expected);
      const desc = walk(table, { limit, since, until, sort: 'desc' }, limits);
      assert.deepEqual(desc.rows, [...expected].reverse());
      if (!via) assert.ok(asc.sizes.slice(0, -1).every((n) => n === limit), 'direct pages are full until the last');
      assert.ok(asc.sizes.every((n) => n <= limit));
    }),
    { numRuns: 300 },
  );
});

test('since is inclusive, until exclusive, ties broken by id', () => {
  const table = tableOf([
    { ts: 10, id: 3, own: true }, { ts: 10, id: 1, own: true }, { ts: 20, id: 2, own: true }, { ts: 20, id: 0, own: true }, { ts: 30, id: 9, own: true },
  ]);
  assert.deepEqual(page(table, { since: 10, until: 30 }).rows.map((r) => r.id), [1, 3, 0, 2]);
  assert.deepEqual(page(table, { since: 20, until: 30, sort: 'desc' }).rows.map((r) => r.id), [2, 0]);
  assert.deepEqual(page(table, { since: 30, until: 30 }).rows, []);
  assert.equal(page(table, { since: 31 }).next, null);
});

test('a cursor is a keyset position: replay gives the same page, and deleted boundaries still work', () => {
  const rows = Array.from({ length: 20 }, (_, i) => ({ ts: Math.floor(i / 2), id: 100 - i, own: true }));
  const table = tableOf(rows);
  const first = page(table, { limit: 5 });
  const again = page(table, { limit: 5, after: first.next });
  assert.deepEqual(page(table, { limit: 5, after: first.next }), again);
  table.index.remove(first.next!.ts, first.next!.id); // the boundary row itself is gone
  assert.deepEqual(page(table, { limit: 5, after: first.next }).rows, again.rows);
});

test('via pages can be short or empty with a cursor; the end is only a null cursor', () => {
  const rows: Row[] = [];
  for (let i = 0; i < 40; i++) rows.push({ ts: i, id: i + 1, own: i < 5 || i >= 35 }); // a long foreign run
  const table = tableOf(rows);
  const { rows: got, sizes } = walk(table, { limit: 4 }, VIA);
  assert.equal(got.length, 10);
  assert.ok(sizes.includes(0), `an empty page with a cursor: ${sizes}`);
  assert.ok(sizes.some((n) => n > 0 && n < 4), `a short page: ${sizes}`);
  const direct = walk(table, { limit: 4 }, DIRECT);
  assert.deepEqual(direct.sizes, [4, 4, 2]);
});

test('a full final page ends with a null cursor (no silent truncation, no extra call)', () => {
  const table = tableOf(Array.from({ length: 8 }, (_, i) => ({ ts: i, id: i, own: true })));
  assert.equal(page(table, { limit: 8 }).next, null);
  const p = page(table, { limit: 7 });
  assert.notEqual(p.next, null);
  assert.equal(page(table, { limit: 7, after: p.next }).rows.length, 1);
});

test('a read whose window holds more rows than the scan budget is a gateway timeout, bounded or not', () => {
  const table = tableOf(Array.from({ length: 50 }, (_, i) => ({ ts: i, id: i, own: i % 2 === 0 })));
  const limits: PageLimits = { ...VIA, scanBudget: 20 };
  assert.deepEqual(readPage(table, FIRST, limits), { kind: 'gateway-timeout', wouldScan: 50 });
  // A bound that leaves the window as wide as the data costs what an unbounded read does.
  assert.deepEqual(readPage(table, { ...FIRST, since: -1e12 }, limits), { kind: 'gateway-timeout', wouldScan: 50 });
  assert.deepEqual(readPage(table, { ...FIRST, until: 30 }, limits), { kind: 'gateway-timeout', wouldScan: 30 });
  // Every candidate counts, the tenant's or not; the limit does not change the cost.
  assert.deepEqual(readPage(table, { ...FIRST, since: 25, limit: 1 }, limits), { kind: 'gateway-timeout', wouldScan: 25 });
  assert.equal(readPage(table, { ...FIRST, since: 30 }, limits).kind, 'page');
  assert.equal(readPage(table, { ...FIRST, until: 20 }, limits).kind, 'page');
  assert.equal(readPage(table, { ...FIRST, after: { ts: 35, id: 35 } }, limits).kind, 'page');
  assert.equal(readPage(table, { ...FIRST, sort: 'desc', after: { ts: 25, id: 25 } }, limits).kind, 'gateway-timeout');
  assert.equal(readPage(table, { ...FIRST, sort: 'desc', after: { ts: 15, id: 15 } }, limits).kind, 'page');
  assert.equal(readPage(table, FIRST, { ...limits, scanBudget: null }).kind, 'page');
});

test('totals: exact, capped, window_required and timeout, independent of cursor and limit', () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({ ts: i, id: i, own: i % 3 !== 0 }));
  const table = tableOf(rows);
  const total = (req: Partial<PageRequest>, limits: PageLimits) => page(table, { ...req, includeTotal: true }, limits).total;
  assert.deepEqual(total({ limit: 1 }, DIRECT), { total: 40, totalExact: true });
  assert.deepEqual(total({ limit: 1, after: { ts: 50, id: 50 } }, DIRECT), { total: 40, totalExact: true });
  assert.deepEqual(total({ since: 30, until: 45 }, DIRECT), { total: 10, totalExact: true });
  assert.deepEqual(total({}, { ...DIRECT, totalCap: 25 }), { total: 25, totalExact: false, totalNote: 'capped' });
  assert.deepEqual(total({}, VIA), { total: null, totalExact: false, totalNote: 'window_required' });
  assert.deepEqual(total({ since: 0 }, VIA), { total: 40, totalExact: true });
  assert.deepEqual(total({ since: 0 }, { ...VIA, countBudget: 59 }), { total: null, totalExact: false, totalNote: 'timeout' });
  assert.deepEqual(total({ since: 30 }, { ...VIA, countBudget: 59 }), { total: 20, totalExact: true });
  const timedOut = page(table, { since: 0, limit: 5, includeTotal: true }, { ...VIA, countBudget: 1 });
  assert.equal(timedOut.rows.length, 3, 'rows are unaffected by a count timeout');
  assert.equal(page(table, { limit: 5 }).total, undefined);
});
