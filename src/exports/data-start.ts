// Where a dataset's rows start, found with one request before an initial load from the default
// origin plans its windows: the years before the data are then skipped at once, instead of being
// crossed by windows that grow one after another, and the windows over the data can be read
// several at a time from the start.
import { DateTime } from 'luxon';
import { GatewayTimeoutError } from '../core/errors.ts';
import { cursorValueOf } from './highwater.ts';
import type { LoadRecord } from './state.ts';
import type { WalkContext } from './walk.ts';
import { isoOf, toMillis, type Window } from './windows.ts';

/**
 * The span of the load before its first row, cut at the start of that row's month (a
 * month-windowed load reads whole months): known to hold nothing. One request of one row over the
 * whole load, in ascending order; its row is not delivered. Null when nothing can be skipped, or
 * when that request timed out (504): the windows then grow over empty history as before.
 */
export async function emptyLead(ctx: WalkContext, load: LoadRecord, cursorField: string): Promise<Window | null> {
  if (load.since === null) return null;
  let body;
  try {
    body = await ctx.api.fetchPage(
      ctx.ref,
      { since: load.since, ...(load.until !== null && { until: load.until }), limit: 1, sort: 'asc' },
      // A timeout is answered by reading in windows, not by asking again.
      { signal: ctx.signal, retry: { retryGatewayTimeout: false }, ...(ctx.onRetry !== undefined && { onRetry: ctx.onRetry }), ...(ctx.onRefresh !== undefined && { onRefresh: ctx.onRefresh }) },
    );
  } catch (error) {
    if (error instanceof GatewayTimeoutError) return null;
    throw error;
  }
  const field = body.meta?.cursorField || cursorField;
  const since = toMillis(load.since, 'since');
  // No row at all: the load's last month is still read (rows written meanwhile).
  const first = body.rows.length > 0 ? cursorValueOf(body.rows[0]!, field) : body.pagination.nextCursor === null ? load.end : null;
  if (first === null) return null;
  const at = DateTime.fromISO(first, { zone: 'utc' });
  if (!at.isValid) return null;
  const start = at.startOf('month').toMillis();
  const until = load.until === null ? Infinity : toMillis(load.until, 'until');
  const to = Math.min(start, until);
  return to > since ? { since: load.since, until: isoOf(to) } : null;
}
