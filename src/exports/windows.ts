// Time windows of a load (pure, no I/O). A window is a half-open span [since, until) of the
// dataset's cursor field; `since: null` or `until: null` leave that side unbounded.
import { DateTime, Duration, type DurationLikeObject } from 'luxon';
import { ConfigError } from '../core/errors.ts';
import type { TenantPathKind } from '../core/catalog.ts';

/** A half-open span [since, until) of a dataset's cursor field, read as one walk to a null cursor;
 * null leaves that side unbounded. */
export interface Window {
  since: string | null;
  until: string | null;
}

/** What the caller may pass as `window`. */
export type WindowOption = 'auto' | 'none' | 'month' | 'week' | 'day' | string | DurationLikeObject;

/** The resolved, JSON-serialisable form kept in the load state so a resumed load plans alike. */
export type Windowing =
  /** No bounds are sent unless the caller gave since/until: the plain cursor walk. */
  | { kind: 'none' }
  /** One window from the load's start: what 'auto' means for direct datasets. */
  | { kind: 'single' }
  /**
   * Calendar units in UTC; weeks start on Monday (ISO). With `grow` (what 'auto' means for via
   * datasets) a window after an entirely empty one spans twice as many months, up to
   * MAX_GROWN_MONTHS, and one month again after a window with rows (see nextSpanUnits).
   */
  | { kind: 'calendar'; unit: 'month' | 'week' | 'day'; grow?: boolean }
  | { kind: 'duration'; iso: string };

/** Whether a load is read in windows cut from a time span (a via dataset's auto, or explicit
 * months, weeks, days, durations): a first load from the default origin then looks for where the
 * data starts, since each window over the empty years would be a read; not a load read in one
 * window or a plain walk. */
export function isWindowed(windowing: Windowing): boolean {
  return windowing.kind === 'calendar' || windowing.kind === 'duration';
}

/** Before any data the service can hold; the sandbox's data starts 2025-01-01. */
export const DEFAULT_ORIGIN = '2015-01-01T00:00:00.000Z';
/** A window this short is no longer split on a 504: the client retries it like any request. */
export const DEFAULT_MIN_SPLIT_MS = 60 * 60 * 1000;

export function resolveWindowing(option: WindowOption | undefined, pathKind: TenantPathKind): Windowing {
  if (option === undefined || option === 'auto') {
    return pathKind === 'via' ? { kind: 'calendar', unit: 'month', grow: true } : { kind: 'single' };
  }
  if (option === 'none') return { kind: 'none' };
  if (option === 'month' || option === 'week' || option === 'day') return { kind: 'calendar', unit: option };
  const duration = typeof option === 'string' ? Duration.fromISO(option) : Duration.fromObject(option);
  if (!duration.isValid || duration.toMillis() <= 0) {
    throw new ConfigError(
      `The window ${JSON.stringify(option)} is not valid; use auto, none, month, week, day, an ISO duration such as P10D, or an object such as {days: 10}.`,
    );
  }
  return { kind: 'duration', iso: duration.toISO() ?? '' };
}

/** The form the planner emits and the service sends: UTC with milliseconds. */
const CANONICAL_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Parses an ISO-8601 instant; throws a ConfigError naming the option otherwise. */
export function toMillis(value: string, what = 'timestamp'): number {
  // The canonical form is read without luxon, whose first DateTime reads the system locale
  // through Intl (~12 ms of a CLI start). Date.parse rolls a day past the month's end over
  // (Feb 30 -> Mar 2) where luxon refuses it, so only a value that prints back as itself is
  // taken: the same instant luxon gives.
  if (CANONICAL_INSTANT.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && isoOf(ms) === value) return ms;
  }
  const dt = DateTime.fromISO(value, { zone: 'utc' });
  if (!dt.isValid) throw new ConfigError(`The ${what} ${JSON.stringify(value)} is not an ISO-8601 timestamp.`);
  return dt.toMillis();
}

export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/** Normalises an instant to the form the planner emits (UTC with milliseconds). */
export function normalizeInstant(value: string, what?: string): string {
  return isoOf(toMillis(value, what));
}

export interface PlanInput {
  /** Lower bound of the load; null only for windowing 'none'. */
  since: string | null;
  /** Explicit upper bound of the load, or null: then the last window stays open at the top. */
  until: string | null;
  /** Load end fixed at load start: where windows stop being planned when `until` is null. */
  end: string;
  windowing: Windowing;
  sort: 'asc' | 'desc';
}

/**
 * Windows covering the load in delivery order (newest first for desc). Lazy, because a small
 * duration over years of history would otherwise allocate millions of windows up front.
 *
 * The value passed to the generator's next() is the span of the next window in units of the
 * windowing (1 when omitted, as for a plain for...of): a window of n months is the next n calendar
 * months, so grown windows stay aligned and the windows still tile the span in any case.
 *
 * When no `until` was given the last window is left open at the top instead of ending at `end`:
 * rows written during the load, or stamped by a server clock ahead of ours, are still read, and
 * an updated row is read in its latest version. `end` still fixes where the windows are cut, so
 * a resumed load plans the same windows.
 */
export function* planWindows(input: PlanInput): Generator<Window, void, number | undefined> {
  const { windowing, sort } = input;
  if (windowing.kind === 'none') {
    yield { since: input.since, until: input.until };
    return;
  }
  if (input.since === null) throw new ConfigError('A windowed load needs a start (since or origin).');
  const a = toMillis(input.since, 'since');
  const openTop = input.until === null;
  const b = openTop ? toMillis(input.end, 'end') : toMillis(input.until as string, 'until');
  if (a >= b) {
    if (openTop) yield { since: isoOf(a), until: null };
    return;
  }
  if (windowing.kind === 'single') {
    yield { since: isoOf(a), until: openTop ? null : isoOf(b) };
    return;
  }
  const forward = stepper(windowing);
  let units = 1;
  if (sort === 'asc') {
    for (let cur = a; cur < b; ) {
      const next = Math.min(forward.next(cur, units), b);
      units = spanUnits(yield { since: isoOf(cur), until: next >= b && openTop ? null : isoOf(next) });
      cur = next;
    }
  } else {
    let first = true;
    for (let cur = b; cur > a; ) {
      const prev = Math.max(forward.previous(cur, units), a);
      units = spanUnits(yield { since: isoOf(prev), until: first && openTop ? null : isoOf(cur) });
      first = false;
      cur = prev;
    }
  }
}

function spanUnits(value: number | undefined): number {
  return value !== undefined && Number.isSafeInteger(value) && value > 1 ? value : 1;
}

/** The longest window 'auto' grows to over empty history: a year of months. */
export const MAX_GROWN_MONTHS = 12;

/**
 * Span (in units) of the window after `previous` (pure). Only growing month windows change: after
 * a window that held no row at all the next one doubles, capped at a year; after a window with
 * rows, or when the previous outcome is not known yet (windows read in parallel), one month.
 */
export function nextSpanUnits(windowing: Windowing, previous: { units: number; empty: boolean } | null): number {
  if (windowing.kind !== 'calendar' || windowing.unit !== 'month' || windowing.grow !== true) return 1;
  if (previous === null || !previous.empty) return 1;
  return Math.min(Math.max(1, previous.units) * 2, MAX_GROWN_MONTHS);
}

/**
 * The one-unit windows that read a grown window found to hold rows, in delivery order. A grown
 * window is probed with one row first (walk.ts) so a year of data is never read as one window;
 * `firstValue` is the probe row's cursor value: nothing lies before it (asc) or after it (desc)
 * inside the window, so the windows start at its month. Without a usable value (no row, or one
 * outside the window) the whole window is re-planned.
 */
export function regridWindow(w: Window, firstValue: string | null, windowing: Windowing, ctx: SplitContext): Window[] {
  const unit: Windowing = windowing.kind === 'calendar' ? { kind: 'calendar', unit: windowing.unit } : windowing;
  let since = w.since ?? ctx.origin;
  let until = w.until;
  const v = firstValue === null ? Number.NaN : DateTime.fromISO(firstValue, { zone: 'utc' }).toMillis();
  const a = toMillis(since, 'since');
  const b = until === null ? Infinity : toMillis(until, 'until');
  if (Number.isFinite(v) && v >= a && v < b && unit.kind === 'calendar') {
    const start = DateTime.fromMillis(v, { zone: 'utc' }).startOf(unit.unit);
    if (ctx.sort === 'asc') since = isoOf(Math.max(a, start.toMillis()));
    else until = isoOf(Math.min(b, start.plus({ [unit.unit]: 1 }).toMillis()));
  }
  return [...planWindows({ since, until, end: ctx.end, windowing: unit, sort: ctx.sort })];
}

interface Stepper {
  /** The n-th window boundary after t (n >= 1). */
  next(t: number, n: number): number;
  /** The n-th window boundary before t (n >= 1). */
  previous(t: number, n: number): number;
}

function stepper(windowing: Extract<Windowing, { kind: 'calendar' | 'duration' }>): Stepper {
  if (windowing.kind === 'calendar') {
    const unit = windowing.unit;
    return {
      next: (t, n) => DateTime.fromMillis(t, { zone: 'utc' }).startOf(unit).plus({ [unit]: n }).toMillis(),
      previous: (t, n) => DateTime.fromMillis(t - 1, { zone: 'utc' }).startOf(unit).minus({ [unit]: n - 1 }).toMillis(),
    };
  }
  const duration = Duration.fromISO(windowing.iso);
  const times = (n: number) => (n === 1 ? duration : duration.mapUnits((x) => x * n));
  return {
    // Calendar-aware arithmetic (P1M is a month, not 30 days), always making progress.
    next: (t, n) => Math.max(t + 1, DateTime.fromMillis(t, { zone: 'utc' }).plus(times(n)).toMillis()),
    previous: (t, n) => Math.min(t - 1, DateTime.fromMillis(t, { zone: 'utc' }).minus(times(n)).toMillis()),
  };
}

export interface SplitContext {
  /** Stands in for a missing `since` when a window has to be halved. */
  origin: string;
  /** Stands in for a missing `until`: the load's fixed end. */
  end: string;
  minSpanMs: number;
  sort: 'asc' | 'desc';
}

/**
 * Halves a window that timed out, in delivery order, or returns null when it is already at the
 * minimum span. An open-topped window keeps an open tail [end, null) so nothing written after
 * the load started is dropped by splitting.
 */
export function splitWindow(w: Window, ctx: SplitContext): Window[] | null {
  const a = toMillis(w.since ?? ctx.origin, 'since');
  const b = toMillis(w.until ?? ctx.end, 'until');
  if (b - a <= ctx.minSpanMs) return null;
  const mid = a + Math.floor((b - a) / 2);
  const parts: Window[] = [
    { since: isoOf(a), until: isoOf(mid) },
    { since: isoOf(mid), until: isoOf(b) },
  ];
  if (w.until === null) parts.push({ since: isoOf(b), until: null });
  return ctx.sort === 'asc' ? parts : parts.reverse();
}

/**
 * What is left of a window after rows up to `lastValue` (in delivery order) were delivered. The
 * bound is inclusive on the delivered value, so the caller must drop the rows already delivered
 * at exactly that value. Desc uses lastValue + 1 ms as the exclusive upper bound (the service's
 * timestamps carry milliseconds).
 */
export function remainderOf(w: Window, lastValue: string, sort: 'asc' | 'desc'): Window {
  if (sort === 'asc') return { since: normalizeInstant(lastValue, 'cursor value'), until: w.until };
  return { since: w.since, until: isoOf(toMillis(lastValue, 'cursor value') + 1) };
}

/** Plain text of a window for messages and progress lines. */
export function describeWindow(w: Window): string {
  return `[${w.since ?? '-∞'}, ${w.until ?? 'now'})`;
}
