// Time windows of a load (pure, no I/O). A window is a half-open span [since, until) of the
// dataset's cursor field; `since: null` or `until: null` leave that side unbounded.
import { DateTime, Duration, type DurationLikeObject } from 'luxon';
import { ConfigError } from '../client/errors.ts';
import type { TenantPathKind } from '../catalog/datasets.ts';

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
  /** Calendar units in UTC; weeks start on Monday (ISO). */
  | { kind: 'calendar'; unit: 'month' | 'week' | 'day' }
  | { kind: 'duration'; iso: string };

/** Before any data the service can hold; the sandbox's data starts 2025-01-01. */
export const DEFAULT_ORIGIN = '2015-01-01T00:00:00.000Z';
/** A window this short is no longer split on a 504: the client retries it like any request. */
export const DEFAULT_MIN_SPLIT_MS = 60 * 60 * 1000;

export function resolveWindowing(option: WindowOption | undefined, pathKind: TenantPathKind): Windowing {
  if (option === undefined || option === 'auto') {
    return pathKind === 'via' ? { kind: 'calendar', unit: 'month' } : { kind: 'single' };
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

/** Parses an ISO-8601 instant; throws a ConfigError naming the option otherwise. */
export function toMillis(value: string, what = 'timestamp'): number {
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
 * When no `until` was given the last window is left open at the top instead of ending at `end`:
 * rows written during the load, or stamped by a server clock ahead of ours, are still read, and
 * an updated row is read in its latest version. `end` still fixes where the windows are cut, so
 * a resumed load plans the same windows.
 */
export function* planWindows(input: PlanInput): Generator<Window> {
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
  if (sort === 'asc') {
    for (let cur = a; cur < b; ) {
      const next = Math.min(forward.next(cur), b);
      yield { since: isoOf(cur), until: next >= b && openTop ? null : isoOf(next) };
      cur = next;
    }
  } else {
    let first = true;
    for (let cur = b; cur > a; ) {
      const prev = Math.max(forward.previous(cur), a);
      yield { since: isoOf(prev), until: first && openTop ? null : isoOf(cur) };
      first = false;
      cur = prev;
    }
  }
}

interface Stepper {
  /** The first window boundary strictly after t. */
  next(t: number): number;
  /** The last window boundary strictly before t. */
  previous(t: number): number;
}

function stepper(windowing: Extract<Windowing, { kind: 'calendar' | 'duration' }>): Stepper {
  if (windowing.kind === 'calendar') {
    const unit = windowing.unit;
    return {
      next: (t) => DateTime.fromMillis(t, { zone: 'utc' }).startOf(unit).plus({ [unit]: 1 }).toMillis(),
      previous: (t) => DateTime.fromMillis(t - 1, { zone: 'utc' }).startOf(unit).toMillis(),
    };
  }
  const duration = Duration.fromISO(windowing.iso);
  return {
    // Calendar-aware arithmetic (P1M is a month, not 30 days), always making progress.
    next: (t) => Math.max(t + 1, DateTime.fromMillis(t, { zone: 'utc' }).plus(duration).toMillis()),
    previous: (t) => Math.min(t - 1, DateTime.fromMillis(t, { zone: 'utc' }).minus(duration).toMillis()),
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
