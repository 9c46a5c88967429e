// Windows read in parallel: the load's state records each window done, so pages are handed over
// in order (`ordered`, with look-ahead bounded in bytes) or as they come, a resume reads only what
// is unfinished, a state written before (a position, version 1) still resumes, and a first load
// from the default origin finds where the rows start with one-row probes asked in parallel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestOptions } from '../../src/core/api.ts';
import type { DatasetRef, ExportPageBody, PageQuery } from '../../src/core/types.ts';
import { exportPages, exportRows, pageBytes, type ExportOptions, type ExportPage } from '../../src/exports/export-stream.ts';
import { fileState, type DatasetState } from '../../src/exports/state.ts';
import type { Window } from '../../src/exports/windows.ts';
import { PROBE_LIMIT, probeWindows } from '../../src/exports/data-start.ts';
import { GatewayTimeoutError } from '../../src/core/errors.ts';
import { FakeApi, makeRows, type FakeRow } from './fake-api.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');
const LATER = () => new Date('2026-06-01T00:00:00Z');
const ORIGIN = '2015-01-01T00:00:00.000Z';
const ids = (rows: readonly unknown[]) => rows.map((r) => (r as FakeRow).public_id);

async function pagesOf(api: FakeApi, opts: ExportOptions): Promise<ExportPage[]> {
  const out: ExportPage[] = [];
  for await (const page of exportPages(api, 'D23', { now: NOW, ...opts })) out.push(page as ExportPage);
  return out;
}

async function rowsOf(api: FakeApi, opts: ExportOptions): Promise<FakeRow[]> {
  const out: FakeRow[] = [];
  for await (const row of exportRows(api, 'D23', { now: LATER, ...opts })) out.push(row as FakeRow);
  return out;
}

/** Whether a query's span [since, until) overlaps a window. */
function overlaps(q: PageQuery, w: Window): boolean {
  const a = q.since === undefined ? -Infinity : Date.parse(q.since);
  const b = q.until === undefined ? Infinity : Date.parse(q.until);
  const c = w.since === null ? -Infinity : Date.parse(w.since);
  const d = w.until === null ? Infinity : Date.parse(w.until);
  return a < d && c < b;
}

/** A fake whose reads of one month wait until `release()`. */
class HeldMonthApi extends FakeApi {
  #release: () => void = () => undefined;
  readonly #held = new Promise<void>((resolve) => {
    this.#release = resolve;
  });

  constructor(rows: FakeRow[], readonly month: string) {
    super({ rows, pathKind: 'via' });
  }

  release(): void {
    this.#release();
  }

  override async fetchPage(ref: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody> {
    if (query.since?.startsWith(this.month) === true && query.limit !== 1) await this.#held;
    return super.fetchPage(ref, query, opts);
  }
}

test('a first load from the default origin asks one row of each window it would grow through, then reads only the months with data', async () => {
  const rows = makeRows(900);
  for (const sort of ['asc', 'desc'] as const) {
    const api = new FakeApi({ rows, pathKind: 'via' });
    const got = await pagesOf(api, { sort, limit: 50, concurrency: 3 });
    const monthly = await pagesOf(new FakeApi({ rows, pathKind: 'via' }), { sort, limit: 50, window: 'month', since: '2025-01-01T00:00:00Z' });
    assert.deepEqual(got.flatMap((p) => ids(p.rows)), monthly.flatMap((p) => ids(p.rows)), `${sort}: the same rows in the same order`);
    const beforeData = api.queries.filter((q) => Date.parse(q.since!) < Date.parse('2025-01-01T00:00:00Z'));
    // 1, 2, 4, 8 months, then a year at a time, up to the one holding the first row.
    const probes = probeWindows(ORIGIN, NOW().toISOString()).map((w) => ({ since: w.since!, until: w.until!, limit: PROBE_LIMIT, sort: 'asc' }));
    const upToData = probes.findIndex((p) => Date.parse(p.until) > Date.parse('2025-01-01T00:00:00Z')) + 1;
    assert.deepEqual(beforeData, probes.slice(0, upToData), `${sort}: only probes reach before the data`);
    // The empty years are recorded done with the first page, so a resume does not cross them either.
    assert.deepEqual(got[0]!.checkpoint.state.load!.progress!.done[0], { since: '2015-01-01T00:00:00.000Z', until: '2025-01-01T00:00:00.000Z' });
  }
});

test('a large via dataset: where its rows start is found without a 504, where one read of the whole load times out', async () => {
  // 2,000 rows from 2025-03-15: over the gateway's budget of 1,000 as a whole, within it month by month.
  const rows = makeRows(2000, Date.parse('2025-03-15T00:00:00Z'));
  await assert.rejects(new FakeApi({ rows, pathKind: 'via', windowBudget: 1000 }).fetchPage('D23', { since: ORIGIN, limit: 1 }), GatewayTimeoutError);
  const expected = ids((await pagesOf(new FakeApi({ rows, pathKind: 'via' }), { limit: 50, window: 'month', since: '2025-03-01T00:00:00Z' })).flatMap((p) => p.rows));
  for (const concurrency of [1, 4]) {
    const api = new FakeApi({ rows, pathKind: 'via', windowBudget: 1000 });
    const got = await pagesOf(api, { limit: 50, concurrency });
    assert.deepEqual(api.timeouts, [], `concurrency ${concurrency}: no 504`);
    assert.deepEqual(got.flatMap((p) => ids(p.rows)), expected, `concurrency ${concurrency}: every row once, in order`);
    assert.deepEqual(got[0]!.checkpoint.state.load!.progress!.done[0], { since: ORIGIN, until: '2025-03-01T00:00:00.000Z' });
  }
});

test('a probe window that times out ends what the probe knows: the load grows its windows from its start', async () => {
  // All 2,000 rows fall in the probe window 2024-04..2025-04, over the budget of 1,000.
  const rows = makeRows(2000);
  const api = new FakeApi({ rows, pathKind: 'via', windowBudget: 1000 });
  const got = await pagesOf(api, { limit: 50 });
  assert.deepEqual(api.timeouts[0], { since: '2024-04-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z', limit: PROBE_LIMIT, sort: 'asc' });
  // Before that window only the probes of the empty ones were asked; the load's windows start there.
  const probes = probeWindows(ORIGIN, NOW().toISOString()).slice(0, 12).map((w) => ({ since: w.since!, until: w.until!, limit: PROBE_LIMIT, sort: 'asc' }));
  assert.deepEqual(api.queries.filter((q) => Date.parse(q.since!) < Date.parse('2024-04-01T00:00:00Z')), probes);
  assert.ok(api.queries.some((q) => q.since === '2024-04-01T00:00:00.000Z' && q.until === '2024-05-01T00:00:00.000Z'), 'the load reads on from there');
  const expected = ids((await pagesOf(new FakeApi({ rows, pathKind: 'via' }), { limit: 50, window: 'month', since: '2025-01-01T00:00:00Z' })).flatMap((p) => p.rows));
  assert.deepEqual(got.flatMap((p) => ids(p.rows)), expected, 'every row once, in order');
});

/** A via fake whose probes of windows after `from` answer only by being aborted. */
class SilentLaterProbesApi extends FakeApi {
  aborted = 0;

  constructor(rows: FakeRow[], readonly from: string) {
    super({ rows, pathKind: 'via' });
  }

  override async fetchPage(ref: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody> {
    if (query.limit === PROBE_LIMIT && Date.parse(query.since!) >= Date.parse(this.from)) {
      await new Promise((_, reject) => opts!.signal!.addEventListener('abort', () => {
        this.aborted += 1;
        reject(opts!.signal!.reason as Error);
      }, { once: true }));
    }
    return super.fetchPage(ref, query, opts);
  }
}

// A timeout: without the drop, the silent probe would hold the load forever.
test('probes still pending when an earlier window has told where the rows start are dropped', { timeout: 30_000 }, async () => {
  const rows = makeRows(600);
  // Eight at a time: the probe of 2025-04..2026-01 is asked while the one holding the rows runs.
  const api = new SilentLaterProbesApi(rows, '2025-04-01T00:00:00Z');
  const got = await pagesOf(api, { limit: 50, concurrency: 8 });
  assert.ok(api.aborted >= 1, 'a later probe was asked, then dropped');
  const expected = ids((await pagesOf(new FakeApi({ rows, pathKind: 'via' }), { limit: 50, window: 'month', since: '2025-01-01T00:00:00Z' })).flatMap((p) => p.rows));
  assert.deepEqual(got.flatMap((p) => ids(p.rows)), expected);
});

/** A via fake whose first probe answer is an empty page with a cursor. */
class EmptyFirstProbeApi extends FakeApi {
  override async fetchPage(ref: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody> {
    if (query.limit === PROBE_LIMIT && query.cursor === undefined && query.since === ORIGIN) {
      const page = await super.fetchPage(ref, { ...query, until: query.since! }, opts);
      return { ...page, rows: [], pagination: { ...page.pagination, nextCursor: Buffer.from(JSON.stringify([0, ''])).toString('base64url') } };
    }
    return super.fetchPage(ref, query, opts);
  }
}

test('the probe for where the rows start follows an empty page with a cursor; an empty dataset reads only from the month of the load\'s end', async () => {
  const rows = makeRows(300);
  const api = new EmptyFirstProbeApi({ rows, pathKind: 'via' });
  const got = await pagesOf(api, { limit: 50 });
  const probes = api.queries.filter((q) => q.limit === PROBE_LIMIT && q.since === ORIGIN);
  assert.equal(probes.length, 2, 'the empty page and the one after it');
  assert.ok(probes[1]!.cursor !== undefined, 'the second follows the cursor');
  assert.equal(api.queries.filter((q) => Date.parse(q.since!) < Date.parse('2025-01-01T00:00:00Z') && q.limit !== PROBE_LIMIT).length, 0);
  assert.equal(got.flatMap((p) => p.rows).length, new FakeApi({ rows, pathKind: 'via' }).rows.length / 2, 'every row the via pages hold');

  const empty = new FakeApi({ rows: [], pathKind: 'via' });
  const none = await pagesOf(empty, {});
  assert.deepEqual(none.flatMap((p) => p.rows), []);
  // The load ends at 2026-01-01T00:00 (NOW): after the probes, only the open window from the
  // start of that month, for rows written meanwhile.
  assert.deepEqual(empty.queries.filter((q) => q.limit !== PROBE_LIMIT).map((q) => [q.since, q.until]), [['2026-01-01T00:00:00.000Z', undefined]]);
});

test('ordered: false hands over pages as they come: a window that waits does not hold back the others', async () => {
  const rows = makeRows(1200);
  const api = new HeldMonthApi(rows, '2025-01');
  const stream = exportPages(api, 'D23', { limit: 40, concurrency: 3, ordered: false, now: NOW, since: '2025-01-01T00:00:00Z', window: 'month' });
  const pages = stream[Symbol.asyncIterator]();
  const early: ExportPage[] = [];
  for (let i = 0; i < 6; i += 1) early.push((await pages.next()).value as ExportPage);
  assert.ok(early.every((p) => !p.window.since!.startsWith('2025-01')), 'pages of later months arrive while January waits');
  // Nothing of January is recorded done; every page's state keeps the later months it finished.
  const state = early.at(-1)!.checkpoint.state.load!.progress!;
  assert.ok(state.done.every((w) => Date.parse(w.since!) >= Date.parse('2025-02-01T00:00:00Z')));
  api.release();
  const rest: ExportPage[] = [];
  for (let next = await pages.next(); next.done !== true; next = await pages.next()) rest.push(next.value as ExportPage);
  const all = [...early, ...rest].flatMap((p) => ids(p.rows));
  const expected = ids((await pagesOf(new FakeApi({ rows, pathKind: 'via' }), { limit: 40, since: '2025-01-01T00:00:00Z', window: 'month' })).flatMap((p) => p.rows));
  assert.deepEqual([...all].sort(), [...expected].sort(), 'every row once');
  assert.deepEqual(rest.at(-1)!.checkpoint.state.load!.progress!.open, [], 'no window left open at the end');
});

for (const ordered of [true, false]) {
  test(`resuming from any checkpoint (ordered: ${ordered}, concurrency 4) delivers exactly the rows after it and reads no finished window again`, async () => {
    const rows = makeRows(2400);
    const opts: ExportOptions = { limit: 30, concurrency: 4, ordered, window: 'month', since: '2025-01-01T00:00:00Z' };
    const pages = await pagesOf(new FakeApi({ rows, pathKind: 'via' }), opts);
    const all = pages.flatMap((p) => ids(p.rows));
    assert.equal(new Set(all).size, all.length);
    const step = Math.max(1, Math.floor(pages.length / 30));
    for (let k = 0; k < pages.length; k += step) {
      const state = pages[k]!.checkpoint.state;
      const before = pages.slice(0, k + 1).flatMap((p) => ids(p.rows));
      const api = new FakeApi({ rows, pathKind: 'via' });
      const rest = await rowsOf(api, { ...opts, resume: state });
      const joined = [...before, ...ids(rest)];
      assert.equal(joined.length, new Set(joined).size, `no duplicate after resuming at ${k}`);
      assert.deepEqual([...joined].sort(), [...all].sort(), `nothing lost after resuming at ${k}`);
      const done = state.load!.progress!.done;
      const again = api.queries.filter((q) => done.some((w) => overlaps(q, w)));
      assert.deepEqual(again, [], `no finished window read again after resuming at ${k}`);
    }
  });
}

/** The state an older version saved at this page: windows read one after another, the last
 * page delivered as the load's position (and no `progress`). */
function olderState(page: ExportPage): DatasetState {
  const { progress: _progress, ...load } = page.checkpoint.state.load!;
  const open = page.checkpoint.state.load!.progress!.open.find((p) => p.cursor === page.checkpoint.cursor);
  return {
    ...page.checkpoint.state,
    version: 1,
    load: { ...load, position: { window: page.window, cursor: page.checkpoint.cursor, last: open?.last ?? null } },
  };
}

test('a state saved by an older version (version 1, a position) resumes with exactly the rows after it', async (t) => {
  const rows = makeRows(1500);
  for (const sort of ['asc', 'desc'] as const) {
    const opts: ExportOptions = { limit: 25, sort, window: 'month', since: '2025-01-01T00:00:00Z' };
    const pages = await pagesOf(new FakeApi({ rows, pathKind: 'via' }), opts);
    const all = pages.flatMap((p) => ids(p.rows));
    for (let k = 0; k < pages.length; k += Math.max(1, Math.floor(pages.length / 20))) {
      const before = pages.slice(0, k + 1).flatMap((p) => ids(p.rows));
      const rest = await rowsOf(new FakeApi({ rows, pathKind: 'via' }), { ...opts, resume: olderState(pages[k]!), concurrency: 3 });
      assert.deepEqual([...before, ...ids(rest)], all, `${sort}: resumed at ${k}, in order, each row once`);
    }
  }
  // The same through a state file written as older versions wrote it.
  const dir = await mkdtemp(join(tmpdir(), 'lender-older-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts: ExportOptions = { limit: 25, window: 'month', since: '2025-01-01T00:00:00Z' };
  const pages = await pagesOf(new FakeApi({ rows, pathKind: 'via' }), opts);
  const k = Math.floor(pages.length / 2);
  const path = join(dir, 'state.json');
  await writeFile(path, JSON.stringify({ version: 1, datasets: { D23: olderState(pages[k]!) } }), { mode: 0o600 });
  const state = fileState(path);
  const rest = await rowsOf(new FakeApi({ rows, pathKind: 'via' }), { ...opts, state, concurrency: 2 });
  assert.deepEqual([...pages.slice(0, k + 1).flatMap((p) => ids(p.rows)), ...ids(rest)], pages.flatMap((p) => ids(p.rows)));
  const saved = await state.load('D23');
  assert.equal(saved!.load, null, 'the resumed load completed');
  assert.equal(saved!.version, 2);
});

test('with a read-ahead budget, a paused consumer holds about that many bytes of pages, from windows behind the head too', async () => {
  const rows = makeRows(6000);
  const api = new FakeApi({ rows, pathKind: 'direct' });
  const sample = (await pagesOf(new FakeApi({ rows, pathKind: 'direct' }), { limit: 20, since: '2025-01-01T00:00:00Z', until: '2025-01-08T00:00:00Z' }))[0]!;
  const pageSize = pageBytes({ window: sample.window, body: { rows: sample.rows } as ExportPageBody, rows: sample.rows, last: null, cursorField: 'updated_at' });
  const budget = 6 * pageSize;
  const stream = exportPages(api, 'D23', { since: '2025-01-01T00:00:00Z', limit: 20, window: 'week', concurrency: 3, prefetch: 1, readAheadBytes: budget, now: NOW });
  const first = (await stream[Symbol.asyncIterator]().next()).value as ExportPage;
  assert.ok(first.rows.length > 0);
  for (let i = 0; i < 60; i += 1) await new Promise((resolve) => setImmediate(resolve));
  const read = api.queries.length;
  // The page taken, pages up to the budget, and at most one read per window that was in flight
  // when the budget filled.
  assert.ok(read <= 1 + 6 + 3, `${read} pages read for a budget of 6`);
  assert.ok(read > 1 + 3, `${read} pages read: windows read beyond one page each`);
  assert.ok(new Set(api.queries.map((q) => q.since)).size >= 2, 'windows behind the head read ahead too');
  stream.destroy();
});
