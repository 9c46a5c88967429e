// The export stream's wiring: options checked when it is made, the cursor field read from each
// page delivered, and the window events in delivery order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestOptions } from '../../src/core/api.ts';
import { ConfigError } from '../../src/core/errors.ts';
import type { DatasetRef, ExportPageBody, PageMeta, PageQuery } from '../../src/core/types.ts';
import { exportPages, exportRows, type Checkpoint, type ExportOptions, type ExportPage, type WindowEvent } from '../../src/exports/export-stream.ts';
import { FakeApi, makeRows, type FakeRow } from './fake-api.ts';
import { LenderClient } from '../../src/client/client.ts';
import { inMemoryService } from '../../src/core/transport.ts';
import { MODEL_AUTH_URL, MODEL_LOGIN, ModelService, type ModelRow } from '../helpers/model-service.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');

test('a bad option is a ConfigError naming it when the stream is made, before any request', () => {
  const bad: [ExportOptions, RegExp][] = [
    [{ prefetch: -1 }, /^prefetch must be/], [{ concurrency: 0 }, /^concurrency must be/], [{ limit: 0 }, /^limit must be/],
    [{ limit: 2.5 }, /^limit must be/], [{ limit: 1001 }, /^limit must be a whole number from 1 to 1000, not 1001/],
    [{ sort: 'up' as 'asc' }, /^sort must be asc or desc/],
    [{ rowIdentity: 'id' as 'key' }, /^rowIdentity must be key or content/], [{ window: 'fortnight' }, /window/],
    [{ minSplitSpan: 'soon' }, /^minSplitSpan must be/], [{ minSplitSpan: 0 }, /^minSplitSpan must be/],
    [{ lookback: 'later' }, /^lookback must be/], [{ since: 'yesterday' }, /since/], [{ until: 'x' }, /until/], [{ origin: 'x' }, /origin/],
    // An empty span: the two swapped, or equal (in any of the forms an instant takes).
    [{ since: '2026-01-01T00:00:00Z', until: '2025-01-01T00:00:00Z' }, /^since \(2026-01-01T00:00:00\.000Z\) must be before until \(2025-01-01T00:00:00\.000Z\)$/],
    [{ since: '2026-01-01T01:00:00+01:00', until: '2026-01-01T00:00:00Z' }, /^since .* must be before until/],
    // From JavaScript: a truthy word is not true, and an empty state key would share the store's root.
    [{ includeTotal: 'yes' as unknown as boolean }, /^includeTotal must be true or false, not 'yes'$/],
    [{ ordered: 1 as unknown as boolean }, /^ordered must be true or false, not 1$/],
    [{ stateKey: '' }, /^stateKey must be a non-empty string, not ""$/], [{ stateKey: 7 as unknown as string }, /^stateKey must be a non-empty string/],
  ];
  for (const [opts, message] of bad) {
    const api = new FakeApi({ rows: makeRows(10) });
    for (const open of [exportRows, exportPages]) {
      assert.throws(() => open(api, 'D07', opts), (e: unknown) => e instanceof ConfigError && message.test(e.message), JSON.stringify(opts));
    }
    assert.equal(api.queries.length, 0);
  }
});

test('the defaults: pages of 1000, ascending, the dataset code as the state key', async () => {
  const api = new FakeApi({ rows: makeRows(1500) });
  const stream = exportRows(api, 'D07', { now: NOW });
  assert.equal(stream.stateKey, 'D07');
  assert.equal(exportRows(api, { section: 'S2', dataset: 'D07' }).stateKey, 'S2/D07');
  let n = 0;
  for await (const _ of stream) n += 1;
  assert.equal(n, 1500);
  assert.deepEqual(api.queries.map((q) => [q.limit, q.sort]), [[1000, 'asc'], [1000, 'asc']]);
  assert.equal(stream.loadMode, 'initial');
});

/** The fake's rows under another cursor field, as the service's meta announces it. */
class RenamedFieldApi extends FakeApi {
  override async fetchPage(ref: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody> {
    const body = await super.fetchPage(ref, query, opts);
    return {
      ...body,
      // The catalog's field is left on the rows with one old value: reading it would be wrong.
      rows: body.rows.map((r) => ({ ...r, posted_at: r.updated_at, updated_at: '2000-01-01T00:00:00.000Z' })),
      meta: { ...body.meta, cursorField: 'posted_at' as PageMeta['cursorField'] },
    };
  }
}

test('the cursor field the service names travels with each page, also across windows read at once', async () => {
  const rows = makeRows(900);
  for (const concurrency of [1, 3]) {
    const stream = exportPages(new RenamedFieldApi({ rows }), 'D07', { window: 'week', limit: 40, concurrency, now: NOW });
    const marks: string[] = [];
    const got: string[] = [];
    for await (const page of stream as AsyncIterable<ExportPage>) {
      got.push(...page.rows.map((r) => String(r.public_id)));
      if (page.checkpoint.highWater !== null) marks.push(page.checkpoint.highWater.value);
    }
    assert.deepEqual(got, rows.map((r) => r.public_id), `every row once, in order (concurrency ${concurrency})`);
    assert.deepEqual(marks, [...marks].sort(), 'the mark only rises');
    assert.equal(stream.completedState!.highWater!.value, rows.at(-1)!.updated_at);
    assert.equal(stream.completedState!.highWater!.ids.length, 3);
  }
});

test('window events pair up in delivery order around their pages, with checkpoints per page', async () => {
  const rows = makeRows(300);
  const stream = exportRows(new FakeApi({ rows, pathKind: 'via' }), 'D23', { window: 'month', limit: 30, concurrency: 3, prefetch: 2, now: NOW });
  const log: string[] = [];
  let checkpoints = 0;
  stream.on('window', (e: WindowEvent) => log.push(`${e.phase}:${e.index}`));
  stream.on('page', () => log.push('page'));
  stream.on('checkpoint', (c: Checkpoint) => {
    checkpoints += 1;
    assert.equal(c.dataset, 'D23');
  });
  let n = 0;
  for await (const _ of stream as AsyncIterable<FakeRow>) n += 1;
  assert.ok(n > 0);
  const windows = log.filter((l) => l !== 'page');
  assert.equal(windows.length, 2 * stream.stats.windows);
  for (let i = 0; i < stream.stats.windows; i += 1) assert.deepEqual(windows.slice(2 * i, 2 * i + 2), [`start:${i}`, `end:${i}`]);
  // Every page falls between its window's start and end.
  let open = false;
  for (const l of log) {
    if (l.startsWith('start')) open = true;
    else if (l.startsWith('end')) open = false;
    else assert.ok(open, 'a page outside its window');
  }
  assert.equal(checkpoints, stream.stats.pages);
  assert.equal(log.filter((l) => l === 'page').length, stream.stats.pages);
});

test("several windows waiting on one token renewal: each call is told, the stream emits 'refresh' once per renewal", async () => {
  // Three month windows read at once, each first page answered 401: the calls share renewals.
  const rows: ModelRow[] = Array.from({ length: 30 }, (_, i) => ({
    uid: i + 1, t: Date.parse('2025-02-01T00:00:00Z') + (i % 3) * 31 * 86_400_000 + i * 60_000, publicId: `P-${i + 1}`, own: true,
  }));
  const service = new ModelService({ section: 'S4', dataset: 'D23', cursorField: 'communicated_at', pathKind: 'via', rows, faults: ['ok', 401, 401, 401] });
  const client = await LenderClient.login({ authUrl: MODEL_AUTH_URL, ...MODEL_LOGIN, [inMemoryService]: service.dispatcher, proactiveRefresh: false });
  try {
    const stream = exportRows(client, { section: 'S4', dataset: 'D23' }, { concurrency: 3, origin: '2025-02-01T00:00:00Z', window: 'month', limit: 5 });
    let refreshEvents = 0;
    stream.on('refresh', () => (refreshEvents += 1));
    let n = 0;
    for await (const _ of stream) n += 1;
    assert.equal(n, 30);
    assert.ok(client.stats.refreshes >= 1);
    assert.equal(refreshEvents, client.stats.refreshes);
  } finally {
    await client.close();
  }
});
