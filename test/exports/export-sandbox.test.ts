// The export streams end to end: LenderClient over real HTTPS against an in-process sandbox.
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import assert from 'node:assert/strict';
import type { RetryEvent } from '../../src/core/api.ts';
import { DatasetUnavailableError, RateLimitError, UnknownDatasetError } from '../../src/core/errors.ts';
import type { DatasetRef, ExportRow } from '../../src/core/types.ts';
import { exportPages, exportRows, type ExportPage } from '../../src/exports/export-stream.ts';
import { rowKey } from '../../src/exports/highwater.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileState, memoryState, type StateStore } from '../../src/exports/state.ts';
import { availableDatasets, sync } from '../../src/sinks/sync.ts';
import { SyncError } from '../../src/exports/errors.ts';
import { existsSync, readFileSync } from 'node:fs';
import type { SplitEvent } from '../../src/exports/walk.ts';
import { drain, duplicateKeys, fixture, multiset, settle, type Fixture } from './helpers.ts';
import { EVERYTHING, monthlyWalk, plainWalk } from '../helpers/plain-walk.ts';

describe('full walks', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 11, scale: 250 }); });
  after(() => f.close());

  for (const sort of ['asc', 'desc'] as const) {
    test(`every available dataset, ${sort}: exactly the sandbox's rows, none twice`, async () => {
      const refs = await availableDatasets(f.client);
      assert.ok(refs.length >= 15, `${refs.length} available datasets`);
      const kinds = new Set<string>();
      for (const ref of refs) {
        const expected = await plainWalk(f.client, ref, { sort });
        const stream = exportRows(f.client, ref, { sort });
        const got = await drain<ExportRow>(stream);
        assert.ok(expected.length > 0, `${ref.dataset} has rows`);
        assert.deepEqual(multiset(got), multiset(expected), `${ref.dataset} ${sort}`);
        // D16's public_id is the case identifier and may repeat (docs/service-contract.md).
        if (ref.dataset !== 'D16') assert.deepEqual(duplicateKeys(got), [], `${ref.dataset} has no duplicate`);
        kinds.add(stream.stats.windows > 1 ? 'windowed' : 'single');
      }
      assert.deepEqual([...kinds].sort(), ['single', 'windowed'], 'direct and via datasets were both walked');
    });
  }

  test('via pages carry their window and are read with since/until; short pages are followed', async () => {
    const pages = await drain<{ window: { since: string | null; until: string | null }; rows: unknown[]; meta: { since: string | null; until: string | null; tenantPathKind: string } }>(
      exportPages(f.client, 'D23', { limit: 7 }),
    );
    assert.ok(pages.every((p) => p.meta.tenantPathKind === 'via'));
    assert.ok(pages.every((p) => p.meta.since === p.window.since && p.meta.until === p.window.until), 'the service echoes the window');
    assert.ok(pages.some((p) => p.rows.length < 7 && p.rows.length > 0), 'short pages occur and were not taken as the end');
    assert.equal(pages.at(-1)!.window.until, null, 'the last window is open at the top');
  });

  test('an unavailable dataset fails before any row with DatasetUnavailableError', async () => {
    const catalog = await f.client.catalog();
    const off = catalog.sections.flatMap((s) => s.datasets.filter((d) => !d.available).map((d) => d.code));
    assert.ok(off.length > 0);
    let rows = 0;
    await assert.rejects(async () => { for await (const _ of exportRows(f.client, off[0] as DatasetRef)) rows += 1; }, DatasetUnavailableError);
    assert.equal(rows, 0);
  });
});

describe('backpressure', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 12, scale: 3000 }); });
  after(() => f.close());

  for (const prefetch of [1, 3]) {
    test(`one row read, then a pause: at most prefetch+1 page requests (prefetch ${prefetch})`, async () => {
      const before = f.sandbox.stats().requests;
      const stream = exportRows(f.client, 'D07', { limit: 100, prefetch });
      await new Promise((resolve) => stream.once('readable', resolve));
      assert.ok(stream.read() !== null);
      await settle(20);
      const requests = f.sandbox.stats().requests - before;
      assert.ok(requests >= 1 && requests <= prefetch + 1, `${requests} requests`);
      stream.destroy();
      await settle(5);
      assert.equal(f.sandbox.stats().requests - before, requests, 'a destroyed stream sends nothing more');
    });
  }
});

describe('window splitting on 504', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 13, scale: 400, viaBudget: 120 }); });
  after(() => f.close());

  for (const code of ['D23', 'D03'] as const) {
    test(`${code}: an unbounded initial load 504s, is split, and completes`, async () => {
      // The reference is read month by month: even one wide bounded window is over the budget.
      const expected = await monthlyWalk(f.client, code);
      await assert.rejects(f.client.fetchPage(code, EVERYTHING, { retry: { retryGatewayTimeout: false } }), { status: 504 });
      await assert.rejects(f.client.fetchPage(code, {}, { retry: { retryGatewayTimeout: false } }), { status: 504 });
      const splits: SplitEvent[] = [];
      const stream = exportRows(f.client, code, { window: 'none', limit: 50 });
      stream.on('split', (e: SplitEvent) => splits.push(e));
      const got = await drain<ExportRow>(stream);
      assert.ok(splits.length >= 1, 'a split was reported');
      assert.deepEqual(splits[0]!.window, { since: null, until: null });
      assert.deepEqual(multiset(got), multiset(expected));
      // Month windows (the default for via datasets) are small enough: no month needs a split.
      // Only a window grown over empty history may meet the budget, when its probe reaches into
      // the data; it is then read month by month.
      const monthly = exportRows(f.client, code, { limit: 50 });
      const monthlySplits: SplitEvent[] = [];
      monthly.on('split', (e: SplitEvent) => monthlySplits.push(e));
      assert.deepEqual(multiset(await drain<ExportRow>(monthly)), multiset(expected));
      const MONTH_MS = 31 * 24 * 3600 * 1000;
      for (const split of monthlySplits) {
        assert.ok(Date.parse(split.window.until!) - Date.parse(split.window.since!) > MONTH_MS, JSON.stringify(split));
        assert.equal(split.midWindow, false);
      }
    });
  }
});

describe('where the rows of a large via dataset start', () => {
  let f: Fixture;
  // A budget the whole load is over, and any window of a year at most is within.
  before(async () => { f = await fixture({ seed: 13, scale: 400, viaBudget: 200 }); });
  after(() => f.close());

  test('D23 from the default origin: the first load skips the empty years without waiting on a 504', async () => {
    const expected = await monthlyWalk(f.client, 'D23');
    await assert.rejects(f.client.fetchPage('D23', { since: '2015-01-01T00:00:00Z', limit: 1 }, { retry: { retryGatewayTimeout: false } }), { status: 504 });
    const firstMonth = expected.map((r) => r.communicated_at as string).sort()[0]!.slice(0, 7);
    for (const concurrency of [1, 4]) {
      const before = f.sandbox.stats().gatewayTimeouts ?? 0;
      const pages = await drain<ExportPage>(exportPages(f.client, 'D23', { limit: 50, concurrency }));
      const timeouts = (f.sandbox.stats().gatewayTimeouts ?? 0) - before;
      // One at a time, no read times out. Four at a time, a probe of a later, dense year may, in
      // parallel; the answer never waits for it: the years skipped end where the rows start.
      if (concurrency === 1) assert.equal(timeouts, 0, 'no read timed out');
      assert.equal(pages[0]!.window.since, `${firstMonth}-01T00:00:00.000Z`, 'the first window read is the month of the first row');
      assert.equal(pages[0]!.checkpoint.state.load!.progress!.done[0]!.since, '2015-01-01T00:00:00.000Z');
      const got = pages.flatMap((p) => p.rows);
      assert.deepEqual(multiset(got), multiset(expected));
      assert.equal(duplicateKeys(got).length, 0);
    }
  });
});

describe('faults and token expiry', () => {
  const codes = ['D07', 'D23', 'D03', 'D01'] as const;
  let f: Fixture;
  before(async () => {
    f = await fixture({ seed: 14, scale: 300, tokenTtlSeconds: 1, latencyMs: 8 }, { retry: { attempts: 12, baseDelayMs: 5, maxDelayMs: 40 } });
  });
  after(() => f.close());

  test('with 429/500/504/reset faults and a 1 s token, every load equals the clean one', async (t) => {
    const clean = new Map<string, string[]>();
    for (const code of codes) clean.set(code, multiset(await drain<ExportRow>(exportRows(f.client, code, { limit: 40 }))));
    f.sandbox.setFaults({ faults: { 429: 0.03, 500: 0.05, 504: 0.04, reset: 0.04 } });
    const before = f.sandbox.stats();
    // However fast the loads run, the token in hand runs out first: a renewal is certain.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    let retries = 0;
    let splits = 0;
    for (const code of codes) {
      const stream = exportRows(f.client, code, { limit: 40, concurrency: 2 });
      stream.on('retry', () => { retries += 1; });
      stream.on('split', () => { splits += 1; });
      assert.deepEqual(multiset(await drain<ExportRow>(stream)), clean.get(code), code);
    }
    f.sandbox.setFaults({ faults: {} });
    const stats = f.sandbox.stats();
    assert.ok(stats.faultsInjected - before.faultsInjected > 5, 'faults were injected');
    assert.ok(stats.refreshes + stats.logins - before.refreshes - before.logins > 0, 'the token was renewed');
    assert.ok(retries > 0, 'retries were reported');
    // How many 504s landed on a window that could still be split is up to chance; reported, not asserted.
    t.diagnostic(`retries=${retries} splits=${splits}`);
  });

  test('a 429 is retried after its Retry-After (up to maxDelayMs), and the page comes', async () => {
    const events: RetryEvent[] = [];
    const onRetry = (event: RetryEvent) => {
      events.push(event);
      f.sandbox.setFaults({ faults: {} });
    };
    f.client.on('retry', onRetry);
    f.sandbox.setFaults({ faults: { 429: 1 } });
    try {
      const page = await f.client.fetchPage('D07', { limit: 5 });
      assert.equal(page.rows.length, 5);
    } finally {
      f.client.off('retry', onRetry);
      f.sandbox.setFaults({ faults: {} });
    }
    assert.equal(events.length, 1);
    assert.ok(events[0]!.error instanceof RateLimitError, String(events[0]!.error));
    assert.equal(events[0]!.error.retryAfterMs, 1000);
    // The sandbox's Retry-After (1 s), capped by the fixture's maxDelayMs: not a jittered delay.
    assert.equal(events[0]!.delayMs, 40);
  });
});

describe('incremental loads', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 15, scale: 400 }); });
  after(() => f.close());

  for (const code of ['D07', 'D23', 'D09'] as const) {
    test(`${code}: after advance() the next run delivers exactly the changed rows`, async () => {
      const state = memoryState();
      const first = await drain<ExportRow>(exportRows(f.client, code, { state, limit: 100 }));
      assert.deepEqual(multiset(first), multiset(await plainWalk(f.client, code)));
      assert.deepEqual(await drain(exportRows(f.client, code, { state })), [], 'nothing changed, nothing delivered');
      const beforeRows = new Set(multiset(await plainWalk(f.client, code)));
      const { updated, inserted } = f.sandbox.advance();
      assert.ok(updated + inserted > 0);
      const changed = multiset(await plainWalk(f.client, code)).filter((r) => !beforeRows.has(r));
      assert.ok(changed.length > 0, 'advance changed this dataset');
      const second = await drain<ExportRow>(exportRows(f.client, code, { state, limit: 100 }));
      assert.deepEqual(multiset(second), changed);
      assert.deepEqual(await drain(exportRows(f.client, code, { state })), []);
    });
  }
});

describe('writes during a walk', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 16, scale: 600, latencyMs: 15 }); });
  after(() => f.close());

  test('no row present for the whole walk is skipped; a row updated mid-walk arrives in its latest version', async () => {
    const code = 'D07';
    const startRows = await plainWalk(f.client, code);
    const churnOn = async (rate: number) => {
      const agent = new Agent({ connect: { ca: f.sandbox.ca } });
      const r = await request(`${f.sandbox.authUrl}/__sandbox/churn`, {
        method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rate }),
      });
      await r.body.text();
      await agent.close();
      assert.equal(r.statusCode, 200);
    };
    await churnOn(300);
    let got: ExportRow[];
    try {
      got = await drain<ExportRow>(exportRows(f.client, code, { limit: 20 }));
    } finally {
      await churnOn(0);
    }
    const endRows = await plainWalk(f.client, code);
    const delivered = new Map<string, ExportRow>();
    for (const row of got) delivered.set(rowKey(row), row);
    const startKeys = new Set(startRows.map(rowKey));
    const present = endRows.filter((r) => startKeys.has(rowKey(r)));
    assert.ok(present.length >= startRows.length * 0.9);
    for (const row of present) assert.ok(delivered.has(rowKey(row)), `row ${rowKey(row)} was skipped`);
    const maxDelivered = got.map((r) => String(r.updated_at)).sort().at(-1)!;
    const startByKey = new Map(startRows.map((r) => [rowKey(r), JSON.stringify(r)]));
    let updatedMidWalk = 0;
    for (const row of endRows) {
      if (String(row.updated_at) > maxDelivered) continue; // written after the walk had ended
      const before = startByKey.get(rowKey(row));
      if (before !== undefined && before !== JSON.stringify(row)) updatedMidWalk += 1;
      assert.deepEqual(delivered.get(rowKey(row)), row, `row ${rowKey(row)} arrives in its latest version`);
    }
    assert.ok(updatedMidWalk > 0, 'rows were updated during the walk');
  });
});

describe('a consumer that stops before the last rows', () => {
  let f: Fixture;
  before(async () => { f = await fixture({ seed: 17, scale: 300 }); });
  after(() => f.close());

  test('rows still buffered in the stream at its end are not recorded as delivered', async () => {
    // A for-await loop reads rows one by one from the stream's buffer; when the last page is in
    // that buffer the stream has nothing more to fetch, but the consumer has not had those rows.
    const expected = multiset(await plainWalk(f.client, 'D07'));
    const state = memoryState();
    const taken: ExportRow[] = [];
    for await (const row of exportRows(f.client, 'D07', { state, limit: 100 })) {
      taken.push(row as ExportRow);
      if (taken.length === expected.length - 5) break;
    }
    assert.notEqual((await state.load('D07'))?.load, null, 'the load is not recorded as complete');
    const rest = await drain<ExportRow>(exportRows(f.client, 'D07', { state, limit: 100 }));
    // Resuming may deliver rows of the last page again (at least once), but never skips one.
    assert.deepEqual([...new Set(multiset([...taken, ...rest]))], expected);
  });

  test('a stop in the middle of a page resumes at that page: only its rows read before the stop come again', async () => {
    // The next page arrives while the consumer is still in the page before, and fills the
    // stream's buffer; the page before is finished when the consumer asks for the row after it.
    const expected = multiset(await plainWalk(f.client, 'D07'));
    assert.ok(expected.length > 250, 'three pages of 100 at least');
    const all = await drain<ExportRow>(exportRows(f.client, 'D07', { limit: 100 }));
    for (const stop of ['break', 'abort'] as const) {
      const state = memoryState();
      const controller = new AbortController();
      const taken: ExportRow[] = [];
      try {
        for await (const row of exportRows(f.client, 'D07', { state, limit: 100, signal: controller.signal })) {
          taken.push(row as ExportRow);
          if (taken.length === 150 && stop === 'break') break;
          if (taken.length === 150) controller.abort();
        }
      } catch (error) {
        assert.equal((error as Error).name, 'AbortError', stop);
      }
      const resumed = exportRows(f.client, 'D07', { state, limit: 100 });
      const rest = await drain<ExportRow>(resumed);
      assert.equal(resumed.loadMode, 'resumed', stop);
      assert.deepEqual(multiset(rest), multiset(all.slice(100)), `${stop}: from the second page on`);
      assert.equal(taken.length + rest.length - expected.length, 50, `${stop}: the 50 rows of the page it stopped in, again`);
      assert.deepEqual([...new Set(multiset([...taken, ...rest]))], expected, `${stop}: none skipped`);
    }
  });

  test('pages: a page taken before a break comes again; the pages before it do not', async () => {
    const pages = await drain<ExportPage>(exportPages(f.client, 'D07', { limit: 100 }));
    const state = memoryState();
    let taken = 0;
    for await (const page of exportPages(f.client, 'D07', { state, limit: 100 })) {
      assert.equal(page.rows.length, pages[taken]!.rows.length);
      taken += 1;
      if (taken === 2) break;
    }
    const rest = await drain<ExportPage>(exportPages(f.client, 'D07', { state, limit: 100 }));
    // The stream cannot tell a break from a throw in the loop's body: the page handed out last is
    // not counted as handled.
    assert.deepEqual(multiset(rest.flatMap((p) => p.rows) as ExportRow[]), multiset(pages.slice(1).flatMap((p) => p.rows) as ExportRow[]));
  });
});

describe('a load right after a loop ends finds the saves the loop asked for', () => {
  let f: Fixture;
  let dir: string;
  before(async () => {
    f = await fixture({ seed: 18, scale: 300 });
    dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  });
  after(async () => {
    await f.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a load right after a break, from the file alone, resumes at the page the break was in', async () => {
    // However the loop ends, the saves it asked for are written before the loop goes on: a
    // process that exits right after it, or another one starting, finds them in the file.
    const all = await drain<ExportRow>(exportRows(f.client, 'D07', { limit: 50 }));
    assert.ok(all.length > 250, 'six pages of 50 at least');
    const path = join(dir, 'break.json');
    const taken: ExportRow[] = [];
    for await (const row of exportRows(f.client, 'D07', { state: fileState(path), limit: 50 })) {
      taken.push(row as ExportRow);
      if (taken.length === 220) break;
    }
    // Another store on the same file, as another process would have: it reads the file itself.
    const resumed = exportRows(f.client, 'D07', { state: fileState(path), limit: 50 });
    const rest = await drain<ExportRow>(resumed);
    assert.equal(resumed.loadMode, 'resumed');
    assert.deepEqual(multiset(rest), multiset(all.slice(200)), 'from the fifth page on');
  });

  test('a save that fails after the row the loop breaks at fails the loop: the break does not hide it', async () => {
    let saves = 0;
    let failSave: ((error: Error) => void) | undefined;
    const failing: StateStore = {
      load: () => Promise.resolve(undefined),
      // Fails when the loop says so: after it has taken its row, as it breaks.
      save: () => new Promise((_resolve, reject) => {
        saves += 1;
        failSave = reject;
      }),
    };
    let taken = 0;
    await assert.rejects((async () => {
      for await (const _row of exportRows(f.client, 'D07', { state: failing, limit: 50 })) {
        taken += 1;
        if (taken === 51) {
          // Asking for the 51st row finished the first page: its save has begun.
          await new Promise((resolve) => setImmediate(resolve));
          failSave!(new Error('the disk is full'));
          break;
        }
      }
    })(), /the disk is full/);
    assert.equal(taken, 51);
    assert.equal(saves, 1);
  });

  test('the completed state failing to save fails the loop after its last row', async () => {
    const all = await drain<ExportRow>(exportRows(f.client, 'D07', { limit: 50 }));
    let taken = 0;
    const failing: StateStore = {
      load: () => Promise.resolve(undefined),
      // Only the state of the completed load fails (no load in progress left in it).
      save: (_key, state) => (state.load === null ? Promise.reject(new Error('the disk is full')) : Promise.resolve()),
    };
    await assert.rejects((async () => {
      for await (const _row of exportRows(f.client, 'D07', { state: failing, limit: 50 })) taken += 1;
    })(), /the disk is full/);
    assert.equal(taken, all.length, 'every row was read first');
  });

  test('a stop by the signal does not wait for a save that never ends', async () => {
    const controller = new AbortController();
    const hanging: StateStore = { load: () => Promise.resolve(undefined), save: () => new Promise(() => undefined) };
    let taken = 0;
    await assert.rejects((async () => {
      for await (const _row of exportRows(f.client, 'D07', { state: hanging, limit: 50, signal: controller.signal })) {
        taken += 1;
        if (taken === 60) controller.abort(); // the first page's save hangs by then
      }
    })(), (error: unknown) => (error as Error).name === 'AbortError');
    assert.equal(taken, 60);
  });

  test('the next load right after a for-await loop ends is incremental and delivers nothing new', async () => {
    const state = fileState(join(dir, 'state.json'));
    const first = await drain<ExportRow>(exportRows(f.client, 'D07', { state, limit: 100 }));
    assert.deepEqual(multiset(first), multiset(await plainWalk(f.client, 'D07')));
    // From the file alone too (another store on it, as another process): the completed state was
    // written before the loop ended.
    const fromFile = exportRows(f.client, 'D07', { state: fileState(join(dir, 'state.json')), limit: 100 });
    assert.deepEqual(await drain(fromFile), []);
    assert.equal(fromFile.loadMode, 'incremental');
    const second = exportRows(f.client, 'D07', { state, limit: 100 });
    assert.deepEqual(await drain(second), []);
    assert.equal(second.loadMode, 'incremental');
  });
});

describe('sync of a dataset that is not available', () => {
  let f: Fixture;
  let dir: string;
  before(async () => {
    f = await fixture({ seed: 19, scale: 50 });
    dir = await mkdtemp(join(tmpdir(), 'lender-sync-off-'));
  });
  after(async () => {
    await f.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('fails with the typed error and leaves no empty file that looks like a load', async () => {
    await assert.rejects(sync(f.client, ['D04'], { out: dir }), (e: unknown) =>
      e instanceof SyncError && e.failures.D04 instanceof DatasetUnavailableError && Object.keys(e.failures).length === 1 &&
      // No "1 of 1", and no others said to be loaded.
      /^The dataset failed to sync: D04 \(Dataset D04 is listed .*\)\. Run the sync again once the cause is fixed\.$/.test(e.message));
    assert.equal(existsSync(join(dir, 'D04.ndjson')), false);
    await assert.rejects(sync(f.client, ['D04', 'bad name' as DatasetRef], { out: dir }),
      /^SyncError: All 2 datasets failed to sync: bad name \(.*\); D04 \(.*\)\. Run the sync again once the cause is fixed\.$/);
    const done = await sync(f.client, ['D07'], { out: dir });
    assert.equal(done.D07!.rows, (await plainWalk(f.client, 'D07')).length);
    assert.ok(existsSync(join(dir, 'D07.ndjson')));
  });

  test('does not stop the datasets after it: they load, and the error carries their summary', async () => {
    const out = join(dir, 'mixed');
    const error = await sync(f.client, ['D04', 'D26'], { out }).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof SyncError, `expected a SyncError, got ${String(error)}`);
    assert.ok(error.failures.D04 instanceof DatasetUnavailableError);
    assert.match(error.message, /^1 of 2 datasets failed to sync: D04 \(Dataset D04 is listed .*\)\. The others were loaded; run the sync again to retry the failed one\.$/);
    const summary = error.summary as Record<string, { rows: number }>;
    const expected = (await plainWalk(f.client, 'D26')).length;
    assert.equal(summary.D26!.rows, expected);
    assert.equal(readFileSync(join(out, 'D26.ndjson'), 'utf8').split('\n').filter(Boolean).length, expected);
    assert.equal(existsSync(join(out, 'D04.ndjson')), false);
  });

  test('a name that is no dataset fails on its own, under the name given; the datasets around it load', async () => {
    const out = join(dir, 'misnamed');
    // From JavaScript (the REPL, a list read from a file) any text can arrive.
    const names = ['bad name', 'D26', { section: 'S2', dataset: 'not a code' }] as DatasetRef[];
    const error = await sync(f.client, names, { out }).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof SyncError, `expected a SyncError, got ${String(error)}`);
    assert.deepEqual(Object.keys(error.failures).sort(), ['S2/not a code', 'bad name']);
    assert.ok(error.failures['bad name'] instanceof UnknownDatasetError);
    assert.match(error.message, /^2 of 3 datasets failed to sync: bad name \(Dataset 'bad name' is not in the catalog/);
    const summary = error.summary as Record<string, { rows: number }>;
    assert.equal(summary.D26!.rows, (await plainWalk(f.client, 'D26')).length);
  });
});
