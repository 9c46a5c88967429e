import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remainingWindows, startLoad, type LoadRequest } from '../../src/exports/load-plan.ts';
import type { DatasetState, LoadRecord } from '../../src/exports/state.ts';

const req: LoadRequest = {
  origin: '2015-01-01T00:00:00.000Z', windowing: { kind: 'calendar', unit: 'month' }, sort: 'asc', now: '2025-03-10T00:00:00.000Z',
};

test('a first load starts at origin (or since) and ends at the load start', () => {
  const { load, mode } = startLoad(undefined, req);
  assert.equal(mode, 'initial');
  assert.equal(load.since, '2015-01-01T00:00:00.000Z');
  assert.equal(load.end, '2025-03-10T00:00:00.000Z');
  assert.equal(load.until, null);
  assert.equal(startLoad(undefined, { ...req, since: '2024-06-01T00:00:00Z' }).load.since, '2024-06-01T00:00:00.000Z');
  assert.equal(startLoad(undefined, { ...req, windowing: { kind: 'none' } }).load.since, null);
  assert.equal(startLoad(undefined, { ...req, until: '2025-01-01T00:00:00Z' }).load.end, '2025-01-01T00:00:00.000Z');
});

test('after a completed load the next one is incremental from the high-water mark, skipping its ids', () => {
  const prev: DatasetState = { version: 1, dataset: 'D07', highWater: { value: '2025-02-01T00:00:00.000Z', ids: ['x'] }, load: null };
  const { load, mode } = startLoad(prev, { ...req, since: '2020-01-01T00:00:00Z' });
  assert.equal(mode, 'incremental');
  assert.equal(load.since, '2025-02-01T00:00:00.000Z');
  assert.deepEqual(load.skip, prev.highWater);
  const back = startLoad(prev, { ...req, lookback: 'P1D' }).load;
  assert.equal(back.since, '2025-01-31T00:00:00.000Z');
  assert.equal(back.skip, null);
});

test('an unfinished load is resumed as it was started', () => {
  const { load } = startLoad(undefined, req);
  load.position = { window: { since: '2025-01-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' }, cursor: 'c1', last: null };
  const prev: DatasetState = { version: 1, dataset: 'D23', highWater: null, load };
  const resumed = startLoad(prev, { ...req, sort: 'desc', now: '2030-01-01T00:00:00.000Z' });
  assert.equal(resumed.mode, 'resumed');
  assert.equal(resumed.load, load);
});

function record(overrides: Partial<LoadRecord>): LoadRecord {
  return {
    kind: 'initial', end: '2025-03-10T00:00:00.000Z', since: '2025-01-01T00:00:00.000Z', until: null, origin: req.origin,
    windowing: { kind: 'calendar', unit: 'month' }, sort: 'asc', skip: null, position: null, ...overrides,
  };
}

test('remaining windows: all of them, or the current one from its cursor and the ones after', () => {
  const all = [...remainingWindows(record({}))].map((t) => t.window.since);
  assert.deepEqual(all, ['2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
  const mid = [...remainingWindows(record({ position: { window: { since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' }, cursor: 'c', last: null } }))];
  assert.deepEqual(mid.map((t) => [t.window.since, t.cursor]), [['2025-02-01T00:00:00.000Z', 'c'], ['2025-03-01T00:00:00.000Z', null]]);
  const done = [...remainingWindows(record({ position: { window: { since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' }, cursor: null, last: null } }))];
  assert.deepEqual(done.map((t) => t.window), [{ since: '2025-03-01T00:00:00.000Z', until: null }]);
  const last = [...remainingWindows(record({ position: { window: { since: '2025-03-01T00:00:00.000Z', until: null }, cursor: null, last: null } }))];
  assert.deepEqual(last, []);
});

test('remaining windows after a split sub-window continue from its end; desc goes back to since', () => {
  const split = [...remainingWindows(record({ position: { window: { since: '2025-01-01T00:00:00.000Z', until: '2025-01-16T12:00:00.000Z' }, cursor: null, last: null } }))];
  assert.deepEqual(split.map((t) => t.window.since), ['2025-01-16T12:00:00.000Z', '2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
  const desc = [...remainingWindows(record({ sort: 'desc', position: { window: { since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' }, cursor: null, last: null } }))];
  assert.deepEqual(desc.map((t) => t.window), [{ since: '2025-01-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' }]);
  const none = [...remainingWindows(record({ windowing: { kind: 'none' }, since: null, position: { window: { since: '2015-01-01T00:00:00.000Z', until: '2020-01-01T00:00:00.000Z' }, cursor: null, last: null } }))];
  assert.deepEqual(none.map((t) => t.window), [{ since: '2020-01-01T00:00:00.000Z', until: null }]);
});
