import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { ConfigError } from '../../src/core/errors.ts';
import {
  MAX_GROWN_MONTHS, nextSpanUnits, planWindows, regridWindow, remainderOf, resolveWindowing, splitWindow, toMillis,
  type PlanInput, type Window, type Windowing,
} from '../../src/exports/windows.ts';
import { prng, runSeed } from '../helpers/resilience.ts';

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
  assert.deepEqual(resolveWindowing('auto', 'via'), { kind: 'calendar', unit: 'month', grow: true });
  assert.deepEqual(resolveWindowing('month', 'via'), { kind: 'calendar', unit: 'month' }, 'an explicit month never grows');
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

/** Drives planWindows like the stream does: the span of each next window is passed to next(). */
function planWithSpans(input: Partial<PlanInput>, spans: number[]): Window[] {
  const gen = planWindows({
    since: '2015-01-01T00:00:00.000Z', until: null, end: '2025-04-10T12:00:00.000Z',
    windowing: { kind: 'calendar', unit: 'month', grow: true }, sort: 'asc', ...input,
  });
  const out: Window[] = [];
  let next = gen.next();
  for (let i = 0; next.done !== true; i += 1) {
    out.push(next.value);
    next = gen.next(spans[i]);
  }
  return out;
}

test('growth policy: doubles after an empty window up to a year, one month after rows or when unknown', () => {
  const grow: Windowing = { kind: 'calendar', unit: 'month', grow: true };
  let units = 1;
  const seq: number[] = [];
  for (let i = 0; i < 7; i += 1) seq.push((units = nextSpanUnits(grow, { units, empty: true })));
  assert.deepEqual(seq, [2, 4, 8, 12, 12, 12, 12]);
  assert.equal(MAX_GROWN_MONTHS, 12);
  assert.equal(nextSpanUnits(grow, { units: 8, empty: false }), 1);
  assert.equal(nextSpanUnits(grow, null), 1);
  assert.equal(nextSpanUnits({ kind: 'calendar', unit: 'month' }, { units: 1, empty: true }), 1, 'explicit months never grow');
  assert.equal(nextSpanUnits({ kind: 'duration', iso: 'P10D' }, { units: 1, empty: true }), 1);
});

test('grown spans stay month-aligned and still tile the load, both sorts, open top kept', () => {
  const spans = [2, 4, 8, ...Array<number>(20).fill(12)];
  const asc = planWithSpans({}, spans);
  assert.deepEqual(asc.slice(0, 4), [
    { since: '2015-01-01T00:00:00.000Z', until: '2015-02-01T00:00:00.000Z' },
    { since: '2015-02-01T00:00:00.000Z', until: '2015-04-01T00:00:00.000Z' },
    { since: '2015-04-01T00:00:00.000Z', until: '2015-08-01T00:00:00.000Z' },
    { since: '2015-08-01T00:00:00.000Z', until: '2016-04-01T00:00:00.000Z' },
  ]);
  assertTiles(asc, 'asc');
  assert.equal(asc[0]!.since, '2015-01-01T00:00:00.000Z');
  assert.equal(asc.at(-1)!.until, null);
  // Ten years and a quarter: 1 + 2 + 4 + 8 months, nine years, the open rest; not 124 months.
  assert.equal(asc.length, 14);
  for (const w of asc) assert.match(w.since!, /-01T00:00:00\.000Z$/);
  const desc = planWithSpans({ sort: 'desc', since: '2024-01-01T00:00:00.000Z' }, [2, 4, 12]);
  assert.deepEqual(desc.slice(0, 4), [
    { since: '2025-04-01T00:00:00.000Z', until: null },
    { since: '2025-02-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z' },
    { since: '2024-10-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' },
    { since: '2024-01-01T00:00:00.000Z', until: '2024-10-01T00:00:00.000Z' },
  ]);
  assertTiles(desc, 'desc');
  // Without spans (for...of) the plan is the plain month plan.
  assert.deepEqual(planWithSpans({ since: '2025-01-15T00:00:00.000Z' }, []), plan({}));
});

test('a grown window with rows is re-read as months from the first row\'s month (asc) or to the last row\'s (desc)', () => {
  const grow: Windowing = { kind: 'calendar', unit: 'month', grow: true };
  const ctx = { origin: '2015-01-01T00:00:00.000Z', end: '2025-06-01T00:00:00.000Z', minSpanMs: 3_600_000, sort: 'asc' as const };
  const w = { since: '2024-04-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z' };
  assert.deepEqual(regridWindow(w, '2025-01-20T10:00:00.000Z', grow, ctx), [
    { since: '2025-01-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z' },
    { since: '2025-02-01T00:00:00.000Z', until: '2025-03-01T00:00:00.000Z' },
    { since: '2025-03-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z' },
  ]);
  const desc = regridWindow(w, '2024-06-03T00:00:00.000Z', grow, { ...ctx, sort: 'desc' });
  assert.deepEqual(desc, [
    { since: '2024-06-01T00:00:00.000Z', until: '2024-07-01T00:00:00.000Z' },
    { since: '2024-05-01T00:00:00.000Z', until: '2024-06-01T00:00:00.000Z' },
    { since: '2024-04-01T00:00:00.000Z', until: '2024-05-01T00:00:00.000Z' },
  ]);
  // No usable value (an inconclusive probe, a 504, a value outside the window): the whole window.
  for (const v of [null, '2030-01-01T00:00:00.000Z', 'not a date']) {
    const all = regridWindow(w, v, grow, ctx);
    assert.equal(all.length, 12);
    assert.equal(all[0]!.since, w.since);
    assert.equal(all.at(-1)!.until, w.until);
    assertTiles(all, 'asc');
  }
  // An open-topped grown window keeps its open tail.
  const open = regridWindow({ since: '2025-01-01T00:00:00.000Z', until: null }, '2025-03-05T00:00:00.000Z', grow, ctx);
  assert.deepEqual(open, [
    { since: '2025-03-01T00:00:00.000Z', until: '2025-04-01T00:00:00.000Z' },
    { since: '2025-04-01T00:00:00.000Z', until: '2025-05-01T00:00:00.000Z' },
    { since: '2025-05-01T00:00:00.000Z', until: null },
  ]);
});

test('toMillis reads the canonical form (UTC, milliseconds) as luxon does, impossible dates refused alike', (t) => {
  const seed = runSeed();
  t.diagnostic(`seed=${seed} (LENDER_SEED=${seed} replays it)`);
  const random = prng(seed);
  const pick = (from: number, to: number) => from + Math.floor(random() * (to - from + 1));
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const fixed = ['2024-02-29T12:00:00.000Z', '2023-02-29T12:00:00.000Z', '2025-04-31T00:00:00.000Z', '2025-12-31T23:59:59.999Z',
    '0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2025-01-01T24:00:00.000Z', '2025-01-01T23:60:00.000Z', '2025-01-01T23:59:60.000Z'];
  const drawn = Array.from({ length: 20_000 }, () =>
    `${pad(pick(0, 9999), 4)}-${pad(pick(0, 13), 2)}-${pad(pick(0, 32), 2)}T${pad(pick(0, 24), 2)}:${pad(pick(0, 60), 2)}:${pad(pick(0, 60), 2)}.${pad(pick(0, 999), 3)}Z`);
  for (const value of [...fixed, ...drawn]) {
    const luxon = DateTime.fromISO(value, { zone: 'utc' });
    if (luxon.isValid) assert.equal(toMillis(value), luxon.toMillis(), value);
    else assert.throws(() => toMillis(value), ConfigError, value);
  }
});
