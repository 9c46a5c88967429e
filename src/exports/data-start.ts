// Where a dataset's rows start, found with one bounded probe (a one-row request over the whole
// load, following at most a few empty pages) before an initial load from the default origin plans
// its windows: the years before the data are then skipped at once, instead of being
// crossed by windows that grow one after another, and the windows over the data can be read
// several at a time from the start.
import { DateTime } from 'luxon';
import { GatewayTimeoutError } from '../core/errors.ts';
import { cursorValueOf } from './highwater.ts';
import type { LoadRecord } from './state.ts';
import type { WalkContext } from './walk.ts';
import { isoOf, toMillis, type Window } from './windows.ts';

/** One-row pages the probe follows at most: a via dataset may answer with an empty page and a cursor. */
const PROBE_PAGES = 4;

/**
 * The span of the load before its first row, cut at the start of that row's month (a
 * month-windowed load reads whole months): known to hold nothing. One-row pages over the whole
 * load, in ascending order, until one holds a row (at most PROBE_PAGES); that row is not
 * delivered. Null when nothing can be skipped, when no row turned up in those pages, or when a
 * request timed out (504): the windows then grow over empty history as before.
 */
export async function emptyLead(ctx: WalkContext, load: LoadRecord, cursorField: string): Promise<Window | null> {
  if (load.since === null) return null;
  const options = {
    signal: ctx.signal,
    // A timeout is answered by reading in windows, not by asking again.
    retry: { retryGatewayTimeout: false },
    ...(ctx.onRetry !== undefined && { onRetry: ctx.onRetry }),
    ...(ctx.onRefresh !== undefined && { onRefresh: ctx.onRefresh }),
  };
  let first: string | null = null;
  let cursor: string | null = null;
  for (let page = 0; page < PROBE_PAGES; page += 1) {
    let body;
    try {
      body = await ctx.api.fetchPage(
        ctx.ref,
        { since: load.since, ...(load.until !== null && { until: load.until }), ...(cursor !== null && { cursor }), limit: 1, sort: 'asc' },
        options,
      );
    } catch (error) {
      if (error instanceof GatewayTimeoutError) return null;
      throw error;
    }
    const field = body.meta?.cursorField || cursorField;
    cursor = body.pagination.nextCursor;
    if (body.rows.length > 0) {
      first = cursorValueOf(body.rows[0]!, field);
      break;
    }
    // No row at all: the load's last month is still read (rows written meanwhile).
    if (cursor === null) {
      first = load.end;
      break;
    }
  }
  if (first === null) return null;
  const at = DateTime.fromISO(first, { zone: 'utc' });
  if (!at.isValid) return null;
  const since = toMillis(load.since, 'since');
  const until = load.until === null ? Infinity : toMillis(load.until, 'until');
  const to = Math.min(at.startOf('month').toMillis(), until);
  return to > since ? { since: load.since, until: isoOf(to) } : null;
}
