// The walk's safety bound against a cursor that never ends, and the proof that
// it does not trip on what real via datasets do: long runs of empty pages with fresh cursors,
// and many pages of rows that share one cursor value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '../../src/core/errors.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { exportPages, type ExportOptions } from '../../src/exports/export-stream.ts';
import { MAX_STALLED_PAGES, movesPast } from '../../src/exports/loop-guard.ts';
import { ScriptedApi, type Script } from './fake-api.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');
const T = '2025-03-01T10:00:00.000Z';
const row = (id: string, t = T): ExportRow => ({ public_id: id, updated_at: t });

async function run(script: Script, opts: ExportOptions = {}): Promise<{ api: ScriptedApi; rows: ExportRow[]; error: unknown }> {
  const api = new ScriptedApi(script);
  const rows: ExportRow[] = [];
  let error: unknown;
  try {
    // Pages, not rows: a failing rows stream drops the rows still in its buffer, and these tests
    // count what was delivered before the failure.
    for await (const page of exportPages(api, 'D07', { window: 'none', now: NOW, ...opts })) rows.push(...page.rows);
  } catch (e) {
    error = e;
  }
  return { api, rows, error };
}

function assertLoopError(error: unknown, what: RegExp): void {
  assert.ok(error instanceof ProtocolError, `expected a ProtocolError, got ${String(error)}`);
  assert.match(error.message, /D07/);
  assert.match(error.message, /window \[-∞, now\)/);
  assert.match(error.message, what);
  assert.doesNotMatch(error.message, /\n/);
}

test('a nextCursor equal to the cursor just sent fails at once with a ProtocolError naming dataset and window', async () => {
  const { api, rows, error } = await run(() => ({ rows: [row('a')], nextCursor: 'same' }));
  assertLoopError(error, /already sent/);
  assert.equal(api.queries.length, 2, 'the second answer repeats the cursor it was sent');
  assert.deepEqual(rows, [row('a')], 'the repeated page is not delivered');
});

test('a cycle of empty pages (A -> B -> A) fails even though no page has rows', async () => {
  const { api, error } = await run((i) => (i === 0 ? { rows: [row('a')], nextCursor: 'A' } : { rows: [], nextCursor: i % 2 === 1 ? 'B' : 'A' }));
  assertLoopError(error, /already sent/);
  assert.equal(api.queries.length, 3);
});

test('pages that repeat delivered rows under fresh cursors fail after the documented bound', async () => {
  const { api, rows, error } = await run((i) => ({ rows: [row('a'), row('b')], nextCursor: `n${i}` }));
  assertLoopError(error, new RegExp(`${MAX_STALLED_PAGES} pages in a row`));
  assert.equal(api.queries.length, MAX_STALLED_PAGES + 1);
  assert.equal(rows.length, 2 * MAX_STALLED_PAGES, 'only the pages before the bound were delivered');
});

test('empty pages between stalled pages do not reset the bound', async () => {
  const { api, error } = await run((i) => ({ rows: i % 2 === 0 ? [row('a')] : [], nextCursor: `n${i}` }));
  assertLoopError(error, /pages in a row/);
  assert.equal(api.queries.length, 2 * MAX_STALLED_PAGES + 1);
});

test('a via-like walk with hundreds of empty pages with fresh cursors completes', async () => {
  // 30 rows, each followed by 20 empty pages: 630 pages, far more empty ones than the bound.
  const script: Script = (i) => {
    const n = Math.floor(i / 21);
    const rows = i % 21 === 0 ? [row(`r${n}`, new Date(Date.parse(T) + n * 1000).toISOString())] : [];
    return { rows, nextCursor: i === 30 * 21 - 1 ? null : `c${i}` };
  };
  const { api, rows, error } = await run(script);
  assert.equal(error, undefined);
  assert.equal(api.queries.length, 630);
  assert.equal(rows.length, 30);
});

test('many more pages than the bound at one cursor value complete: new ids at the value are progress', async () => {
  const pages = 3 * MAX_STALLED_PAGES;
  const { rows, error } = await run((i) => ({ rows: [row(`p${i}a`), row(`p${i}b`)], nextCursor: i === pages - 1 ? null : `c${i}` }));
  assert.equal(error, undefined);
  assert.equal(rows.length, 2 * pages);
});

test('progress is judged in delivery order: later value, or the same value with a new id', () => {
  const last = { value: T, ids: ['a'] };
  const later = '2025-03-02T00:00:00.000Z';
  const earlier = '2025-02-01T00:00:00.000Z';
  assert.equal(movesPast(null, [row('a')], 'updated_at', 'asc'), true);
  assert.equal(movesPast(null, [], 'updated_at', 'asc'), false);
  assert.equal(movesPast(last, [row('a')], 'updated_at', 'asc'), false);
  assert.equal(movesPast(last, [row('b')], 'updated_at', 'asc'), true);
  assert.equal(movesPast(last, [row('x', later)], 'updated_at', 'asc'), true);
  assert.equal(movesPast(last, [row('x', earlier)], 'updated_at', 'asc'), false);
  assert.equal(movesPast(last, [row('x', earlier)], 'updated_at', 'desc'), true);
  assert.equal(movesPast(last, [row('x', later)], 'updated_at', 'desc'), false);
  assert.equal(movesPast(last, [{ public_id: 'y' }], 'updated_at', 'asc'), false, 'a row without a cursor value is not progress');
});
