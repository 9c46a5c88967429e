// Cursor codec and query-string rules of the export endpoint (pure).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CursorError, decodeCursor, encodeCursor } from '../../src/sandbox/exports/cursor.ts';
import { DEFAULT_LIMIT, parseFlag, parseInstant, parseLimit, parsePageQuery, parseSort, QueryError } from '../../src/sandbox/exports/query.ts';

test('a cursor round-trips its boundary key and is base64url', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 0, max: 2 ** 41 }), fc.constantFrom('asc' as const, 'desc' as const), (ts, id, sort) => {
      const cursor = encodeCursor({ dataset: 'D07', sort, ts, id });
      assert.match(cursor, /^[A-Za-z0-9_-]+$/);
      assert.deepEqual(decodeCursor(cursor, 'D07', sort), { dataset: 'D07', sort, ts, id });
    }),
  );
});

test('a cursor is refused on another dataset, with the other sort, or when tampered with', () => {
  const cursor = encodeCursor({ dataset: 'D07', sort: 'asc', ts: 1_750_000_000_000, id: 42 });
  assert.throws(() => decodeCursor(cursor, 'D08', 'asc'), CursorError);
  assert.throws(() => decodeCursor(cursor, 'D07', 'desc'), CursorError);
  const edited = Buffer.from(Buffer.from(cursor, 'base64url').toString('utf8').replace('.42.', '.43.')).toString('base64url');
  assert.throws(() => decodeCursor(edited, 'D07', 'asc'), CursorError);
  for (const junk of ['abc', 'not a cursor', '!!!!', cursor + '=', Buffer.from('c1.D07.a.1.1').toString('base64url'), 'x'.repeat(300)]) {
    assert.throws(() => decodeCursor(junk, 'D07', 'asc'), CursorError, junk);
  }
});

test('limit defaults to 500 and clamps to 1..1000', () => {
  assert.equal(parseLimit(null), DEFAULT_LIMIT);
  assert.equal(parseLimit('0'), 1);
  assert.equal(parseLimit('-7'), 1);
  assert.equal(parseLimit('5000'), 1000);
  assert.equal(parseLimit('1000'), 1000);
  assert.equal(parseLimit('37'), 37);
  for (const odd of ['', 'abc', '10.5', '1e3', 'NaN']) assert.equal(parseLimit(odd), DEFAULT_LIMIT, odd);
});

test('sort and includeTotal readings', () => {
  assert.equal(parseSort(null), 'asc');
  assert.equal(parseSort('DESC'), 'desc');
  assert.equal(parseSort('sideways'), 'asc');
  assert.equal(parseFlag('true'), true);
  assert.equal(parseFlag('1'), true);
  assert.equal(parseFlag('false'), false);
  assert.equal(parseFlag(null), false);
});

test('since/until accept ISO dates and date-times, offsets included, and refuse the rest', () => {
  assert.equal(parseInstant('2026-01-01'), Date.UTC(2026, 0, 1));
  assert.equal(parseInstant('2026-01-01T00:00:00Z'), Date.UTC(2026, 0, 1));
  assert.equal(parseInstant('2026-01-01T04:00:00+04:00'), Date.UTC(2026, 0, 1));
  assert.equal(parseInstant('2026-01-01T04:00:00 04:00'), Date.UTC(2026, 0, 1), "a '+' decoded as a space");
  assert.equal(parseInstant('2026-01-01T00:00:00.123'), Date.UTC(2026, 0, 1) + 123, 'no offset reads as UTC');
  for (const bad of ['yesterday', '10:00', '2026-13-01', '01/02/2026', '']) assert.equal(parseInstant(bad), null, bad);
  assert.throws(() => parsePageQuery(new URLSearchParams('since=soon')), QueryError);
  assert.throws(() => parsePageQuery(new URLSearchParams('until=2026-02-30')), QueryError);
  const q = parsePageQuery(new URLSearchParams('since=2026-01-01&limit=0&sort=desc&includeTotal=true&cursor='));
  assert.deepEqual(q, { since: Date.UTC(2026, 0, 1), until: null, cursor: null, limit: 1, sort: 'desc', includeTotal: true });
});
