// Stream mechanics against an in-memory ServiceApi (every query visible). The same behaviours are
// checked end to end over HTTPS in export-sandbox.test.ts.
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import assert from 'node:assert/strict';
import { DatasetUnavailableError } from '../../src/core/errors.ts';
import { exportPages, exportRows, type Checkpoint, type ExportOptions, type ExportPage } from '../../src/exports/export-stream.ts';
import { WindowTimeoutError } from '../../src/exports/errors.ts';
import { memoryState } from '../../src/exports/state.ts';
import type { SplitEvent } from '../../src/exports/walk.ts';
import { FakeApi, makeRows, type FakeRow } from './fake-api.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');

async function collect(api: FakeApi, dataset: 'D07' | 'D23', opts: ExportOptions = {}): Promise<FakeRow[]> {
  const out: FakeRow[] = [];
  for await (const row of exportRows(api, dataset, { now: NOW, ...opts })) out.push(row as FakeRow);
  return out;
}

const ids = (rows: readonly FakeRow[]) => rows.map((r) => r.public_id);
const sorted = (rows: readonly FakeRow[]) => ids(rows).sort();

test('a windowed walk of a via dataset follows short and empty pages to the end, in order, both sorts', async () => {
  const rows = makeRows(2000);
  for (const sort of ['asc', 'desc'] as const) {
    const api = new FakeApi({ rows, pathKind: 'via' });
    const got = await collect(api, 'D23', { sort, limit: 50 });
    // The fake keeps every other scanned row: exactly those must arrive, once, in cursor order.
    const expected = ids(api.rows.filter((_, i) => i % 2 === 0));
    assert.equal(got.length, new Set(ids(got)).size);
    assert.ok(got.length > 900 && got.length <= 1000, `got ${got.length}`);
    const times = got.map((r) => r.updated_at);
    assert.deepEqual(times, [...times].sort((a, b) => (sort === 'asc' ? a.localeCompare(b) : b.localeCompare(a))));
    assert.ok(api.queries.every((q) => q.since !== undefined), 'every via read is windowed');
    assert.ok(api.queries.some((q) => q.until !== undefined && q.since?.startsWith('2025-02-01')), 'month windows');
    assert.ok(expected.length > 0);
  }
});

test('a direct dataset is one window from origin; every row arrives once', async () => {
  const rows = makeRows(1234);
  const api = new FakeApi({ rows });
  const got = await collect(api, 'D07', { limit: 100 });
  assert.deepEqual(sorted(got), sorted(rows));
  assert.equal(api.queries[0]!.since, '2015-01-01T00:00:00.000Z');
  assert.equal(api.queries[0]!.until, undefined);
  assert.equal(api.queries.length, 13);
});

for (const prefetch of [0, 1, 3]) {
  test(`a consumer that reads one row and pauses causes at most prefetch+1 requests (prefetch ${prefetch})`, async () => {
    const api = new FakeApi({ rows: makeRows(5000) });
    const stream = exportRows(api, 'D07', { limit: 100, prefetch, now: NOW });
    const first = await new Promise((resolve) => stream.once('readable', () => resolve(stream.read())));
    assert.ok(first);
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(api.queries.length, prefetch + 1);
    stream.destroy();
  });
}

test('pages mode buffers nothing beyond prefetch while the consumer holds a page', async () => {
  const api = new FakeApi({ rows: makeRows(5000) });
  const stream = exportPages(api, 'D07', { limit: 100, prefetch: 2, now: NOW });
  const it = stream[Symbol.asyncIterator]();
  await it.next();
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(api.queries.length, 3);
  await it.return!();
  assert.equal(api.queries.length, 3);
});

test('a 504 on an unbounded read splits the window; the halves are read without 504 retries', async () => {
  const rows = makeRows(900);
  const api = new FakeApi({ rows, pathKind: 'direct', unboundedBudget: 100 });
  const splits: SplitEvent[] = [];
  const stream = exportRows(api, 'D23', { window: 'none', limit: 100, now: NOW });
  stream.on('split', (e: SplitEvent) => splits.push(e));
  const got: FakeRow[] = [];
  for await (const row of stream) got.push(row as FakeRow);
  assert.deepEqual(sorted(got), sorted(rows));
  assert.equal(splits.length, 1);
  assert.deepEqual(splits[0]!.window, { since: null, until: null });
  assert.equal(api.retrySettings[0], false, 'a splittable window asks the client not to retry 504');
  assert.equal(stream.stats.splits, 1);
});

test('windows too wide are halved until they pass; at the minimum span the error is clear', async () => {
  const rows = makeRows(300);
  const api = new FakeApi({ rows, maxWindowMs: 10 * 86400_000 });
  const got = await collect(api, 'D23', { window: 'month', limit: 100 });
  assert.deepEqual(sorted(got), sorted(rows));
  const strict = new FakeApi({ rows, maxWindowMs: 1000 });
  await assert.rejects(collect(strict, 'D23', { window: 'month', minSplitSpan: { hours: 6 } }), (e: Error) => {
    assert.ok(e instanceof WindowTimeoutError);
    assert.match(e.message, /D23.*minimum window span of 6 hours; retry later, or pass a smaller minSplitSpan \(--min-split in the CLI\)\.$/);
    return true;
  });
  assert.equal(strict.retrySettings.at(-1), true, 'at the minimum span the client retries 504 itself');
});

test('a 504 part-way through a window splits only the unread rest and delivers no row twice', async () => {
  const rows = makeRows(600);
  for (const sort of ['asc', 'desc'] as const) {
    const api = new FakeApi({ rows, timeoutAtRequest: 2 });
    const splits: SplitEvent[] = [];
    const stream = exportRows(api, 'D07', { window: 'none', limit: 100, sort, now: NOW });
    stream.on('split', (e: SplitEvent) => splits.push(e));
    const got: FakeRow[] = [];
    for await (const row of stream) got.push(row as FakeRow);
    assert.equal(splits.length, 1);
    assert.ok(splits[0]!.midWindow);
    assert.equal(got.length, rows.length, sort);
    assert.deepEqual(sorted(got), sorted(rows));
  }
});

test('resuming from any checkpoint delivers exactly the rows after it', async () => {
  const rows = makeRows(700);
  for (const sort of ['asc', 'desc'] as const) {
    const api = new FakeApi({ rows, pathKind: 'via' });
    const pages: ExportPage[] = [];
    for await (const page of exportPages(api, 'D23', { sort, limit: 40, window: { days: 20 }, now: NOW })) pages.push(page);
    assert.ok(pages.length > 10);
    for (const k of [0, 3, Math.floor(pages.length / 2), pages.length - 2]) {
      const before = pages.slice(0, k + 1).flatMap((p) => ids(p.rows as FakeRow[]));
      const rest = await collect(new FakeApi({ rows, pathKind: 'via' }), 'D23', { resume: pages[k]!.checkpoint.state, limit: 40, now: () => new Date('2027-01-01T00:00:00Z') });
      const all = [...before, ...ids(rest)];
      assert.equal(all.length, new Set(all).size, `no duplicate after resuming at ${k} (${sort})`);
      assert.deepEqual(all.sort(), pages.flatMap((p) => ids(p.rows as FakeRow[])).sort());
    }
  }
});

test('state: a completed load is followed by an incremental one that delivers exactly what changed', async () => {
  const rows = makeRows(501);
  const api = new FakeApi({ rows });
  const state = memoryState();
  assert.equal((await collect(api, 'D07', { state, limit: 60 })).length, 501);
  const saved = (await state.load('D07'))!;
  assert.equal(saved.load, null);
  const hw = saved.highWater!;
  assert.equal(hw.value, rows.at(-1)!.updated_at);
  assert.equal(hw.ids.length, 3, 'three rows share the last timestamp');
  // New rows, one at exactly the high-water value (not delivered before), and one update.
  api.rows = [...rows, { public_id: 'new-at-hw', updated_at: hw.value }, { public_id: 'new-later', updated_at: '2025-12-31T00:00:00.000Z' }];
  api.rows[10] = { ...api.rows[10]!, updated_at: '2025-12-30T00:00:00.000Z' };
  const second = await collect(api, 'D07', { state, limit: 60 });
  assert.deepEqual(sorted(second), ['new-at-hw', 'new-later', rows[10]!.public_id].sort());
  assert.equal(api.queries.at(-1)!.since, hw.value);
  assert.deepEqual(await collect(api, 'D07', { state }), [], 'nothing changed: nothing delivered');
});

test('lookback re-reads a recent span and delivers only late or changed rows', async () => {
  const rows = makeRows(300);
  const api = new FakeApi({ rows });
  const state = memoryState();
  await collect(api, 'D07', { state, lookback: { days: 2 } });
  assert.ok(Object.keys((await state.load('D07'))!.seen!).length > 3);
  assert.deepEqual(await collect(api, 'D07', { state, lookback: { days: 2 } }), []);
  const hw = (await state.load('D07'))!.highWater!.value;
  const late = { public_id: 'late', updated_at: new Date(Date.parse(hw) - 86400_000).toISOString() };
  api.rows = [...rows, late];
  assert.deepEqual(ids(await collect(api, 'D07', { state, lookback: { days: 2 } })), ['late']);
});

test('concurrency reads windows in parallel but delivers the same rows in the same order', async () => {
  const rows = makeRows(3000);
  const serial = await collect(new FakeApi({ rows, pathKind: 'via' }), 'D23', { limit: 50, window: 'week' });
  const api = new FakeApi({ rows, pathKind: 'via' });
  const checkpoints: Checkpoint[] = [];
  const stream = exportRows(api, 'D23', { limit: 50, window: 'week', concurrency: 4, now: NOW });
  stream.on('checkpoint', (c: Checkpoint) => checkpoints.push(c));
  const parallel: FakeRow[] = [];
  for await (const row of stream) parallel.push(row as FakeRow);
  assert.deepEqual(ids(parallel), ids(serial));
  // Checkpoints only ever move forward through the windows.
  for (let i = 1; i < checkpoints.length; i += 1) {
    assert.ok((checkpoints[i]!.window.since ?? '') >= (checkpoints[i - 1]!.window.since ?? ''));
  }
});

test('with concurrency and no read-ahead budget, a paused consumer holds at most concurrency x prefetch pages ahead', async () => {
  const api = new FakeApi({ rows: makeRows(3000), pathKind: 'direct' });
  const stream = exportRows(api, 'D23', { since: '2025-01-01T00:00:00Z', limit: 20, window: 'week', concurrency: 3, prefetch: 2, readAheadBytes: 0, now: NOW });
  await new Promise((resolve) => stream.once('readable', resolve));
  stream.read();
  for (let i = 0; i < 40; i += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(api.queries.length, 3 * 2 + 1, 'the page read, two ahead in its window, two in each of the next two windows');
  assert.equal(new Set(api.queries.map((q) => q.since)).size, 3);
  stream.destroy();
});

test('includeTotal is asked once per window and summed', async () => {
  const rows = makeRows(400);
  const api = new FakeApi({ rows });
  const stream = exportRows(api, 'D07', { includeTotal: true, limit: 50, now: NOW });
  const totals: unknown[] = [];
  stream.on('total', (t) => totals.push(t));
  for await (const _ of stream) { /* drain */ }
  assert.equal(api.queries.filter((q) => q.includeTotal).length, 1);
  assert.equal(totals.length, 1);
  assert.deepEqual(stream.total, { value: 400, exact: true, windows: 1 });
});

test('an unavailable dataset fails before any row with the typed error', async () => {
  const api = new FakeApi({ rows: makeRows(10), unavailable: true });
  let rows = 0;
  await assert.rejects(async () => { for await (const _ of exportRows(api, 'D07', { now: NOW })) rows += 1; }, DatasetUnavailableError);
  assert.equal(rows, 0);
});

test('an abort signal stops the stream and its requests', async () => {
  const api = new FakeApi({ rows: makeRows(5000) });
  const controller = new AbortController();
  const stream = exportRows(api, 'D07', { limit: 100, signal: controller.signal, now: NOW });
  let n = 0;
  await assert.rejects(async () => {
    for await (const _ of stream) if (++n === 150) controller.abort();
  }, { name: 'AbortError' });
  const count = api.queries.length;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(api.queries.length, count);
  assert.ok(count <= 4);
});

test('a pipe into a Writable that fails: no row it never wrote counts as delivered', async () => {
  // A pipe reads rows into the Writable's buffer (16 objects) ahead of its writes: a row read is
  // not a row handled, so only a for-await consumer's asking for the next row finishes a page.
  const rows = makeRows(300);
  for (const failAt of [99, 100, 101]) {
    const api = new FakeApi({ rows });
    const state = memoryState();
    const written: string[] = [];
    let seen = 0;
    const sink = new Writable({
      objectMode: true,
      write(row: FakeRow, _encoding, callback) {
        seen += 1;
        const fail = seen === failAt;
        setImmediate(() => {
          if (fail) return callback(new Error('sink failed'));
          written.push(row.public_id);
          callback();
        });
      },
    });
    await assert.rejects(pipeline(exportRows(api, 'D07', { limit: 100, state, now: NOW }), sink), /sink failed/);
    const rest = await collect(api, 'D07', { limit: 100, state, now: NOW });
    const delivered = new Set([...written, ...ids(rest)]);
    assert.deepEqual(ids(rows).filter((id) => !delivered.has(id)), [], `failing at row ${failAt}: none skipped`);
  }
});
