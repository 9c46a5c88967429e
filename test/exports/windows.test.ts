import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/client/errors.ts';
import {
  planWindows, remainderOf, resolveWindowing, splitWindow, type PlanInput, type Window,
} from '../../src/exports/windows.ts';

const plan = (input: Partial<PlanInput>): Window[] => [...planWindows({
  since: '2025-01-15T00:00:00.000Z', until: null, end: '2025-04-10T12:00:00.000Z',
  windowing: { kind: 'calendar', unit: 'month' }, sort: 'asc', ...input,
})];

/** Windows must tile the span with no gap and no overlap, in delivery order. */
function assertTiles(windows: Window[], sort: 'asc' | 'desc'): void {
  const ordered = sort === 'asc' ? windows : [...windows].reverse();
  for (let i = 1; i < ordered.length; i += 1) assert.equal(ordered[i]!.since, ordered[i - 1]!.until, `gap at ${i}`);
}

test('auto: calendar months for via datasets, one window for direct ones', () => {
  assert.deepEqual(resolveWindowing('auto', 'via'), { kind: 'calendar', unit: 'month' });
  assert.deepEqual(resolveWindowing(undefined, 'direct'), { kind: 'single' });
  assert.deepEqual(resolveWindowing('week', 'direct'), { kind: 'calendar', unit: 'week' });
  assert.deepEqual(resolveWindowing('P10D', 'direct'), { kind: 'duration', iso: 'P10D' });
  assert.deepEqual(resolveWindowing({ days: 10 }, 'via'), { kind: 'duration', iso: 'P10D' });
  assert.throws(() => resolveWindowing('fortnight', 'via'), ConfigError);
  assert.throws(() => resolveWindowing({ days: 0 }, 'via'), ConfigError);
});

test('month windows align to UTC calendar months and the last one stays open without until', () => {
  const windows = plan({});
  assert.deepEqual(windows, [
    { since: '2025-01-15T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' },
    { since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' },
    { since: '2025-03-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z' },
    { since: '2025-04-01T00:00:00.000Z', until: null },
  ]);
});

test('an explicit until closes the last window; desc walks the same windows newest first', () => {
  const asc = plan({ until: '2025-03-10T00:00:00.000Z' });
  assert.equal(asc.at(-1)!.until, '2025-03-10T00:00:00.000Z');
  const desc = plan({ until: '2025-03-10T00:00:00.000Z', sort: 'desc' });
  assert.deepEqual(desc, [...asc].reverse());
  assertTiles(desc, 'desc');
  const openDesc = plan({ sort: 'desc' });
  assert.equal(openDesc[0]!.until, null);
  assert.equal(openDesc.at(-1)!.since, '2025-01-15T00:00:00.000Z');
  assertTiles(openDesc, 'desc');
});

test('weeks start on Monday, days at midnight UTC, durations step from the start', () => {
  const weeks = plan({ windowing: { kind: 'calendar', unit: 'week' }, until: '2025-02-01T00:00:00.000Z' });
  assert.equal(weeks[0]!.until, '2025-01-20T00:00:00.000Z'); // the Monday after Wed 15 Jan
  assertTiles(weeks, 'asc');
  const days = plan({ windowing: { kind: 'calendar', unit: 'day' }, until: '2025-01-18T06:00:00.000Z' });
  assert.equal(days.length, 4);
  assert.equal(days.at(-1)!.since, '2025-01-18T00:00:00.000Z');
  const tens = plan({ windowing: { kind: 'duration', iso: 'P10D' } });
  assert.equal(tens[1]!.since, '2025-01-25T00:00:00.000Z');
  assertTiles(tens, 'asc');
});

test('none sends only the bounds given; single is one window; an empty span keeps its open tail', () => {
  assert.deepEqual(plan({ windowing: { kind: 'none' }, since: null }), [{ since: null, until: null }]);
  assert.deepEqual(plan({ windowing: { kind: 'single' } }), [{ since: '2025-01-15T00:00:00.000Z', until: null }]);
  assert.deepEqual(plan({ since: '2025-05-01T00:00:00.000Z' }), [{ since: '2025-05-01T00:00:00.000Z', until: null }]);
  assert.deepEqual(plan({ since: '2025-05-01T00:00:00.000Z', until: '2025-05-01T00:00:00.000Z' }), []);
});

test('planning is lazy: a one-minute window over ten years is not materialised', () => {
  const gen = planWindows({ since: '2015-01-01T00:00:00Z', until: null, end: '2025-01-01T00:00:00Z', windowing: { kind: 'duration', iso: 'PT1M' }, sort: 'asc' });
  assert.deepEqual(gen.next().value, { since: '2015-01-01T00:00:00.000Z', until: '2015-01-01T00:01:00.000Z' });
});

test('splitting halves a window, keeps an open tail, and stops at the minimum span', () => {
  const ctx = { origin: '2015-01-01T00:00:00.000Z', end: '2025-01-03T00:00:00.000Z', minSpanMs: 3_600_000, sort: 'asc' as const };
  assert.deepEqual(splitWindow({ since: '2025-01-01T00:00:00.000Z', until: '2025-01-02T00:00:00.000Z' }, ctx), [
    { since: '2025-01-01T00:00:00.000Z', until: '2025-01-01T12:00:00.000Z' },
    { since: '2025-01-01T12:00:00.000Z', until: '2025-01-02T00:00:00.000Z' },
  ]);
  assert.deepEqual(splitWindow({ since: '2025-01-01T00:00:00.000Z', until: null }, ctx), [
    { since: '2025-01-01T00:00:00.000Z', until: '2025-01-02T00:00:00.000Z' },
    { since: '2025-01-02T00:00:00.000Z', until: '2025-01-03T00:00:00.000Z' },
    { since: '2025-01-03T00:00:00.000Z', until: null },
  ]);
  const unbounded = splitWindow({ since: null, until: null }, ctx)!;
  assert.equal(unbounded[0]!.since, ctx.origin);
  assertTiles(unbounded, 'asc');
  const desc = splitWindow({ since: '2025-01-01T00:00:00.000Z', until: '2025-01-02T00:00:00.000Z' }, { ...ctx, sort: 'desc' })!;
  assert.equal(desc[0]!.since, '2025-01-01T12:00:00.000Z');
  assert.equal(splitWindow({ since: '2025-01-01T00:00:00.000Z', until: '2025-01-01T01:00:00.000Z' }, ctx), null);
  assert.equal(splitWindow({ since: '2025-01-03T00:00:00.000Z', until: null }, ctx), null);
});

test('the remainder of a window starts at the last delivered value (asc) or ends just after it (desc)', () => {
  const w = { since: '2025-01-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' };
  assert.deepEqual(remainderOf(w, '2025-01-10T05:00:00.000Z', 'asc'), { since: '2025-01-10T05:00:00.000Z', until: w.until });
  assert.deepEqual(remainderOf(w, '2025-01-10T05:00:00.000Z', 'desc'), { since: w.since, until: '2025-01-10T05:00:00.001Z' });
});
