// Where a dataset's rows start, found before an initial load from the default origin plans its
// windows: the years before the data are then skipped, and the windows over the data can be read
// several at a time from the start instead of growing over empty history one after another.
//
// A via read costs the gateway every row of its window, whatever the limit, so one request over
// the whole load would time out (504, after the gateway's timeout) on a large dataset. The probe
// therefore asks the first rows of each of the windows the load would grow through anyway (1, 2, 4, 8
// months, then a year at a time): cheap while they are empty, and a year at most where the data
// starts. They are asked `concurrency` at a time, in order, and the answers still pending are
// dropped as soon as the earlier ones tell where the rows start.
import { DateTime } from 'luxon';
import { GatewayTimeoutError } from '../core/errors.ts';
import { cursorValueOf } from './highwater.ts';
import type { LoadRecord } from './state.ts';
import type { WalkContext } from './walk.ts';
import { isoOf, MAX_GROWN_MONTHS, toMillis, type Window } from './windows.ts';

/** Pages followed in one window at most, and the rows each asks for. A via page holds only the
 * tenant's share of the rows it scanned, so a page of one row is often empty while the window is
 * not; its cost to the gateway is the window's whatever the limit, and the first row is all that
 * is kept. */
const PROBE_PAGES = 4;
export const PROBE_LIMIT = 25;

/** What the probe needs of a load's walk: whom to ask, and whom to tell of retries. */
export type ProbeContext = Pick<WalkContext, 'api' | 'ref' | 'signal' | 'onRetry' | 'onRefresh'>;

/** What one probe window told: no row, its first row's value, or nothing usable (a 504, or only empty pages). */
type Outcome = { kind: 'empty' } | { kind: 'row'; value: string } | { kind: 'unknown' };

/** The windows of [since, end) the probe asks in order: 1, 2, 4, 8 months, then MAX_GROWN_MONTHS each. */
export function probeWindows(since: string, end: string): Window[] {
  const stop = toMillis(end, 'end');
  const out: Window[] = [];
  let at = DateTime.fromISO(since, { zone: 'utc' });
  for (let months = 1; at.toMillis() < stop; months = Math.min(months * 2, MAX_GROWN_MONTHS)) {
    const next = at.plus({ months });
    out.push({ since: isoOf(at.toMillis()), until: isoOf(Math.min(next.toMillis(), stop)) });
    at = next;
  }
  return out;
}

/**
 * The span of the load before its first row, cut at the start of that row's month (a
 * month-windowed load reads whole months): known to hold nothing. The row found is not
 * delivered. Null when nothing can be skipped. A probe window that timed out (504) or answered
 * only empty pages with a cursor ends what is known: the lead stops at its start, and the load
 * grows its windows from there as before. No row anywhere: the lead runs to the start of the
 * load's last month, which is still read (rows written meanwhile).
 */
export async function emptyLead(ctx: ProbeContext, load: LoadRecord, cursorField: string, concurrency: number): Promise<Window | null> {
  if (load.since === null) return null;
  const windows = probeWindows(load.since, load.until ?? load.end);
  const outcomes: (Outcome | undefined)[] = new Array(windows.length);
  const done = new AbortController();
  const signal = AbortSignal.any([ctx.signal, done.signal]);
  let decided: Window | null | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (decided === undefined && next < windows.length) {
      const i = next;
      next += 1;
      try {
        outcomes[i] = await probe(ctx, windows[i]!, cursorField, signal);
      } catch (error) {
        if (done.signal.aborted && !ctx.signal.aborted) return; // dropped: the answer is known
        throw error;
      }
      decided = leadFrom(load, windows, outcomes);
      if (decided !== undefined) done.abort();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, windows.length)) }, worker));
  } finally {
    done.abort();
  }
  return decided ?? null;
}

/** The lead once the outcomes in order tell it; undefined while an earlier window is pending. */
function leadFrom(load: LoadRecord, windows: readonly Window[], outcomes: readonly (Outcome | undefined)[]): Window | null | undefined {
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome === undefined) return undefined;
    if (outcome.kind === 'empty') continue;
    return leadUntil(load, outcome.kind === 'row' ? outcome.value : windows[i]!.since!);
  }
  return leadUntil(load, load.end); // every window answered empty
}

/** [since, the start of `value`'s month), within the load; null when that is empty. */
function leadUntil(load: LoadRecord, value: string): Window | null {
  const at = DateTime.fromISO(value, { zone: 'utc' });
  if (!at.isValid) return null;
  const since = toMillis(load.since!, 'since');
  const until = load.until === null ? Infinity : toMillis(load.until, 'until');
  const to = Math.min(at.startOf('month').toMillis(), until);
  return to > since ? { since: load.since, until: isoOf(to) } : null;
}

/** Pages of one window, ascending, until one holds a row or the window ends. */
async function probe(ctx: ProbeContext, window: Window, cursorField: string, signal: AbortSignal): Promise<Outcome> {
  const options = {
    signal,
    // A timeout is answered by reading in windows, not by asking again.
    retry: { retryGatewayTimeout: false },
    ...(ctx.onRetry !== undefined && { onRetry: ctx.onRetry }),
    ...(ctx.onRefresh !== undefined && { onRefresh: ctx.onRefresh }),
  };
  let cursor: string | null = null;
  for (let page = 0; page < PROBE_PAGES; page += 1) {
    let body;
    try {
      body = await ctx.api.fetchPage(
        ctx.ref,
        { since: window.since!, until: window.until!, ...(cursor !== null && { cursor }), limit: PROBE_LIMIT, sort: 'asc' },
        options,
      );
    } catch (error) {
      if (error instanceof GatewayTimeoutError) return { kind: 'unknown' };
      throw error;
    }
    if (body.rows.length > 0) {
      const value = cursorValueOf(body.rows[0]!, body.meta?.cursorField || cursorField);
      return value === null ? { kind: 'unknown' } : { kind: 'row', value };
    }
    cursor = body.pagination.nextCursor;
    if (cursor === null) return { kind: 'empty' };
  }
  return { kind: 'unknown' };
}
