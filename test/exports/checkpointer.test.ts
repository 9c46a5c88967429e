// The checkpointer's states page by page, and the save queue's timing, without a stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { ExportPageBody, ExportRow } from '../../src/core/types.ts';
import { LoadCheckpointer, type CheckpointerStart } from '../../src/exports/checkpointer.ts';
import { applyFilters, rowKey } from '../../src/exports/highwater.ts';
import { SaveQueue } from '../../src/exports/save-queue.ts';
import { memoryState, type DatasetState, type LoadRecord } from '../../src/exports/state.ts';
import type { WalkedPage } from '../../src/exports/walk.ts';

const W = { since: '2025-03-01T00:00:00.000Z', until: null };
const at = (h: number) => new Date(Date.parse('2025-03-01T00:00:00.000Z') + h * 3_600_000).toISOString();
const row = (id: string, h: number, field = 'updated_at'): ExportRow => ({ public_id: id, [field]: at(h) });

function load(kind: LoadRecord['kind'] = 'initial', skip: LoadRecord['skip'] = null): LoadRecord {
  return {
    kind, end: '2026-01-01T00:00:00.000Z', since: W.since, until: null, origin: W.since,
    windowing: { kind: 'single' }, sort: 'asc', skip, position: null,
  };
}

function page(rows: ExportRow[], nextCursor: string | null, cursorField = 'updated_at'): WalkedPage {
  const body = { rows, pagination: { limit: 10, returned: rows.length, nextCursor } } as unknown as ExportPageBody;
  const last = rows.length === 0 ? null : { value: rows.at(-1)![cursorField] as string, ids: [String(rows.at(-1)!.public_id)] };
  return { window: W, body, rows, last, cursorField };
}

function checkpointer(over: Partial<CheckpointerStart> = {}): LoadCheckpointer {
  return new LoadCheckpointer({ dataset: 'D07', stateKey: 'S2/D07', previous: undefined, load: load(), rowKey, lookbackMs: 0, ...over });
}

test('each delivered page moves the position and the high-water mark; each state is its own copy', () => {
  const c = checkpointer();
  const first = c.delivered(page([row('a', 1), row('b', 2), row('c', 2)], 'c1'), W);
  assert.deepEqual(first.highWater, { value: at(2), ids: ['b', 'c'] });
  assert.deepEqual(first.state.load!.progress, { done: [], open: [{ window: W, cursor: 'c1', last: { value: at(2), ids: ['c'] } }] });
  assert.equal(first.state.load!.position, null);
  assert.equal(first.state.version, 2);
  assert.equal(first.state.dataset, 'S2/D07');
  assert.equal(first.dataset, 'D07');
  assert.equal(first.cursor, 'c1');
  assert.equal(first.state.seen, undefined, 'no lookback, no memory');
  const second = c.delivered(page([], null), W);
  assert.equal(second.cursor, null);
  assert.deepEqual(second.highWater, first.highWater, 'an empty page leaves the mark');
  assert.deepEqual(second.state.load!.progress, { done: [W], open: [] }, 'a window read to its end is done');
  assert.equal(first.state.load!.progress!.open[0]!.cursor, 'c1', 'an earlier state is not changed by later pages');
  const done = c.completed();
  assert.equal(done.load, null);
  assert.deepEqual(done.highWater, { value: at(2), ids: ['b', 'c'] });
  assert.ok(Date.parse(done.completedAt!) > 0);
});

test('the mark is read in the field the page names, and starts from the previous state', () => {
  const previous: DatasetState = { version: 1, dataset: 'D23', highWater: { value: at(5), ids: ['x'] }, load: null };
  const c = checkpointer({ previous, load: load('incremental', previous.highWater) });
  const cp = c.delivered(page([row('y', 5, 'communicated_at'), row('z', 4, 'communicated_at')], null, 'communicated_at'), W);
  assert.deepEqual(cp.highWater, { value: at(5), ids: ['x', 'y'] });
  assert.deepEqual(c.completed().highWater, { value: at(5), ids: ['x', 'y'] });
});

test('filters: the boundary of the load\'s skip always, the lookback memory only on incremental loads', () => {
  const skip = { value: at(3), ids: ['a'] };
  const seen = { b: at(2) };
  const previous: DatasetState = { version: 1, dataset: 'D07', highWater: skip, load: null, seen };
  const rows = [row('a', 3), row('a2', 3), row('b', 2), row('b', 4)];
  const kept = (c: LoadCheckpointer) => applyFilters(rows, c.filters, 'updated_at').map((r) => `${r.public_id}@${r.updated_at === at(2) ? 2 : '-'}`);
  assert.deepEqual(kept(checkpointer({ previous, load: load('initial', skip), lookbackMs: 86_400_000 })), ['a2@-', 'b@2', 'b@-']);
  assert.deepEqual(kept(checkpointer({ previous, load: load('incremental', skip), lookbackMs: 86_400_000 })), ['a2@-', 'b@-']);
  assert.deepEqual(kept(checkpointer({ previous, load: load('incremental', null), lookbackMs: 0 })), ['a@-', 'a2@-', 'b@2', 'b@-']);
});

test('lookback memory: rows inside the span are remembered, older ones pruned once it grows, and at completion', () => {
  const c = checkpointer({ lookbackMs: 2 * 3_600_000, previous: { version: 1, dataset: 'D07', highWater: null, load: null, seen: { old: at(0) } } });
  const cp = c.delivered(page([row('a', 1), row('b', 3), row('c', 4)], 'n'), W);
  // Floor is 4h - 2h: 'a' (1h) is not recorded; 'old' stays until a prune.
  assert.deepEqual(cp.state.seen, { old: at(0), b: at(3), c: at(4) });
  const many = Array.from({ length: 1001 }, (_, i) => row(`r${i}`, 10));
  const big = c.delivered(page(many, 'm'), W);
  assert.equal(Object.keys(big.state.seen!).length, 1001, 'pruned past the threshold: only rows at or above 8h are kept');
  assert.equal(big.state.seen!.old, undefined);
  const done = c.completed();
  assert.equal(Object.keys(done.seen!).length, 1001);
  const later = checkpointer({ lookbackMs: 3_600_000, previous: { version: 1, dataset: 'D07', highWater: null, load: null, seen: { old: at(0) } } });
  later.delivered(page([row('a', 1), row('b', 3)], null), W);
  assert.deepEqual(later.completed().seen, { b: at(3) }, 'the completed state prunes below the floor');
});

test('save queue: a page\'s state is saved only once its items were taken, newest first, one after another', async () => {
  const store = memoryState();
  const saves: string[] = [];
  const recorded = { ...store, save: async (key: string, state: DatasetState) => {
    saves.push(state.load?.position?.cursor ?? 'done');
    await store.save(key, state);
  } };
  const state = (cursor: string | null): DatasetState => ({ version: 1, dataset: 'D07', highWater: null, load: { ...load(), position: { window: W, cursor, last: null } } });
  const q = new SaveQueue(recorded, 'D07', (e) => assert.fail(e));
  q.add(3, state('p1'));
  q.add(5, state('p2'));
  q.add(9, state('p3'));
  q.flush(2);
  q.flush(4);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(saves, ['p1']);
  q.flush(9);
  await q.complete({ version: 1, dataset: 'D07', highWater: null, load: null });
  assert.deepEqual(saves, ['p1', 'done'], 'p2 and p3 are skipped for the completed state, which comes last');
});

test('save queue: states taken while a save runs are coalesced, the next save writes the newest', async () => {
  const store = memoryState();
  const saves: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slow = { ...store, save: async (key: string, state: DatasetState) => {
    saves.push(state.load?.position?.cursor ?? 'done');
    if (saves.length === 1) await held;
    await store.save(key, state);
  } };
  const state = (cursor: string): DatasetState => ({ version: 1, dataset: 'D07', highWater: null, load: { ...load(), position: { window: W, cursor, last: null } } });
  const q = new SaveQueue(slow, 'D07', (e) => assert.fail(e));
  for (let page = 1; page <= 5; page += 1) {
    q.add(page, state(`p${page}`));
    q.flush(page);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(saves, ['p1'], 'the first save is still running');
  release();
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(saves, ['p1', 'p5']);
  assert.equal((await store.load('D07'))!.load!.position!.cursor, 'p5');
});

test('save queue: with rows still buffered the completed state is saved at end, pending page states dropped', async () => {
  const store = memoryState();
  const q = new SaveQueue(store, 'D07', (e) => assert.fail(e));
  q.add(1, { version: 1, dataset: 'D07', highWater: null, load: load() });
  const stream = new PassThrough({ objectMode: true });
  q.completeAtEnd({ version: 1, dataset: 'D07', highWater: null, load: null, completedAt: 'x' }, stream);
  q.flush(1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await store.load('D07'), undefined, 'nothing before end');
  stream.end({});
  stream.resume();
  await new Promise((resolve) => stream.once('end', resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal((await store.load('D07'))!.completedAt, 'x');
});

test('save queue: a failed save is reported', async () => {
  const errors: Error[] = [];
  const q = new SaveQueue({ load: async () => undefined, save: async () => { throw new Error('disk full'); } }, 'D07', (e) => errors.push(e));
  q.add(1, { version: 1, dataset: 'D07', highWater: null, load: load() });
  q.flush(1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(errors.map((e) => e.message), ['disk full']);
});
