// window 'auto' on a via dataset from the default origin (2015) grows its windows over the empty
// years before the data instead of asking ~120 empty months, probes a grown window with one row
// before reading it, reads data in months, and stays resumable from every checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportPages, exportRows, type ExportOptions, type ExportPage } from '../../src/exports/export-stream.ts';
import type { SplitEvent } from '../../src/exports/walk.ts';
import { PROBE_LIMIT } from '../../src/exports/data-start.ts';
import { FakeApi, makeRows, type FakeRow } from './fake-api.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');
const DAY = 86400_000;

async function collect(api: FakeApi, opts: ExportOptions = {}): Promise<FakeRow[]> {
  const out: FakeRow[] = [];
  for await (const row of exportRows(api, 'D23', { now: NOW, ...opts })) out.push(row as FakeRow);
  return out;
}

const ids = (rows: readonly FakeRow[]) => rows.map((r) => r.public_id);
/** Width of a read; an open top reaches the load's end (NOW). */
const span = (q: { since?: string; until?: string }) => Date.parse(q.until ?? NOW().toISOString()) - Date.parse(q.since!);

for (const sort of ['asc', 'desc'] as const) {
  test(`auto (${sort}): ten empty years take a handful of requests; every row arrives once, read in month windows`, async () => {
    const rows = makeRows(2000);
    const api = new FakeApi({ rows, pathKind: 'via' });
    const got = await collect(api, { sort, limit: 50 });
    // Months from an explicit origin: every month of the empty years is read.
    const monthly = new FakeApi({ rows, pathKind: 'via' });
    assert.deepEqual(ids(got), ids(await collect(monthly, { sort, limit: 50, window: 'month', origin: '2015-01-01T00:00:00Z' })));
    assert.equal(got.length, 1000);
    const wide = api.queries.filter((q) => span(q) > 31 * DAY);
    // The rows span 2025-01-01..2025-03-25. Before them, 2015-01..2025-01 in windows of 1, 2, 4, 8
    // and 12 months is about a dozen requests, not 120; after them (to NOW) a few more.
    const dataStart = Date.parse('2025-01-01T00:00:00Z');
    const dataEnd = Date.parse('2025-04-01T00:00:00Z');
    const empty = api.queries.filter((q) => (q.until !== undefined && Date.parse(q.until) <= dataStart) || Date.parse(q.since!) >= dataEnd);
    assert.ok(empty.length < 20, `${empty.length} requests for the empty years`);
    assert.ok(api.queries.length < monthly.queries.length / 2, `${api.queries.length} requests in all, ${monthly.queries.length} in months`);
    // Wide windows are only probed: where the rows start (PROBE_LIMIT), a grown window (one row).
    assert.ok(wide.every((q) => q.limit === PROBE_LIMIT || (q.limit === 1 && q.cursor === undefined)), 'a wide window is only ever probed');
    // The data itself (2025-01..2025-03) is read in month windows, as before.
    for (const m of ['2025-01-01', '2025-02-01', '2025-03-01']) {
      assert.ok(api.queries.some((q) => q.since?.startsWith(m) && span(q) <= 31 * DAY && q.limit === 50), `month ${m}`);
    }
  });
}

test('auto: resuming from any checkpoint delivers exactly the rows after it, both sorts', async () => {
  const rows = makeRows(700);
  for (const sort of ['asc', 'desc'] as const) {
    const pages: ExportPage[] = [];
    // An explicit origin: the windows grow over the empty years instead of skipping them at once.
    for await (const page of exportPages(new FakeApi({ rows, pathKind: 'via' }), 'D23', { sort, limit: 40, now: NOW, origin: '2015-01-01T00:00:00Z' })) pages.push(page);
    const grownPages = pages.filter((p) => p.window.until !== null && Date.parse(p.window.until) - Date.parse(p.window.since!) > 31 * DAY);
    assert.ok(grownPages.length >= 3, `${sort}: checkpoints in grown windows (${grownPages.length})`);
    const all = pages.flatMap((p) => ids(p.rows as FakeRow[]));
    for (let k = 0; k < pages.length; k += Math.max(1, Math.floor(pages.length / 25))) {
      const before = pages.slice(0, k + 1).flatMap((p) => ids(p.rows as FakeRow[]));
      const rest = await collect(new FakeApi({ rows, pathKind: 'via' }), { resume: pages[k]!.checkpoint.state, limit: 40, now: () => new Date('2027-01-01T00:00:00Z') });
      const joined = [...before, ...ids(rest)];
      assert.equal(joined.length, new Set(joined).size, `no duplicate after resuming at ${k} (${sort})`);
      assert.deepEqual(joined.sort(), [...all].sort(), `nothing lost after resuming at ${k} (${sort})`);
    }
  }
});

test('auto: a 504 on a grown window\'s probe reads it in month windows, each split as usual', async () => {
  const rows = makeRows(300);
  // Every page of the fake is whole here (direct), so the exact rows and their order are known.
  const api = new FakeApi({ rows, pathKind: 'direct', maxWindowMs: 20 * DAY });
  const splits: SplitEvent[] = [];
  const stream = exportRows(api, 'D23', { limit: 100, now: NOW });
  stream.on('split', (e: SplitEvent) => splits.push(e));
  const got: FakeRow[] = [];
  for await (const row of stream) got.push(row as FakeRow);
  assert.deepEqual(ids(got), ids(rows));
  const grownSplit = splits.find((s) => s.into.length > 2);
  assert.ok(grownSplit, 'a grown window was re-planned in months after its 504');
  assert.ok(grownSplit.into.every((w) => span({ since: w.since!, ...(w.until !== null && { until: w.until }) }) <= 31 * DAY));
  assert.ok(splits.some((s) => s.into.length === 2), 'month windows still halve on a 504');
});

test('auto with concurrency: the same rows in the same order', async () => {
  const rows = makeRows(1500);
  const serial = await collect(new FakeApi({ rows, pathKind: 'via' }), { limit: 50 });
  const parallel = await collect(new FakeApi({ rows, pathKind: 'via' }), { limit: 50, concurrency: 4 });
  assert.deepEqual(ids(parallel), ids(serial));
});

test('auto with includeTotal: an empty grown window counts 0 without a count query, and nothing is counted twice', async () => {
  const rows = makeRows(600);
  const api = new FakeApi({ rows, pathKind: 'via' });
  const stream = exportRows(api, 'D23', { includeTotal: true, limit: 100, now: NOW });
  for await (const _ of stream) { /* drain */ }
  // The fake counts every row of a window (also those its via pages leave out).
  assert.equal(stream.total!.value, rows.length);
  assert.ok(api.queries.filter((q) => q.limit === 1).every((q) => q.includeTotal === undefined), 'probes ask no count');
});

test('an explicit window never grows; from the default origin it skips the empty years as auto does', async () => {
  const rows = makeRows(30);
  const all = ids(await collect(new FakeApi({ rows, pathKind: 'via' })));
  for (const [window, longest] of [['month', 31 * DAY], ['week', 7 * DAY], ['day', DAY], ['P10D', 10 * DAY]] as const) {
    const api = new FakeApi({ rows, pathKind: 'via' });
    assert.deepEqual(ids(await collect(api, { window })), all, window);
    // Only the probe (PROBE_LIMIT rows) reads wider; the ten empty years before the rows (which
    // start in 2025) take a handful of requests, not a window each.
    assert.ok(api.queries.every((q) => q.limit === PROBE_LIMIT || span(q) <= longest), window);
    const beforeData = api.queries.filter((q) => q.until !== undefined && Date.parse(q.until) <= Date.parse('2025-01-01T00:00:00Z'));
    assert.ok(beforeData.length < 20, `${window}: ${beforeData.length} requests before the data`);
  }
  // From an explicit origin, every window of the empty years is read.
  const fromOrigin = new FakeApi({ rows, pathKind: 'via' });
  await collect(fromOrigin, { window: 'month', origin: '2015-01-01T00:00:00Z' });
  assert.ok(fromOrigin.queries.every((q) => span(q) <= 31 * DAY));
  assert.ok(fromOrigin.queries.length > 120);
});
