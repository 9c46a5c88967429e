// Walking one window page by page to `nextCursor === null`, halving it on a 504 while it is
// longer than the minimum span. The only I/O is ServiceApi.fetchPage.
import type { RefreshEvent, RequestOptions, RetryEvent, ServiceApi } from '../client/api.ts';
import { GatewayTimeoutError, ProtocolError } from '../client/errors.ts';
import type { DatasetRef, ExportPageBody, ExportRow } from '../client/types.ts';
import { WindowTimeoutError } from './errors.ts';
import {
  advanceLast, applyFilters, boundaryFilter, compareCursorValues, cursorValueOf, rowKey,
  type DeliveredFilter, type RowKey, type ValueMark,
} from './highwater.ts';
import {
  describeWindow, regridWindow, remainderOf, splitWindow, type SplitContext, type Window, type Windowing,
} from './windows.ts';

/**
 * Safety bound against a server whose cursor never ends: this many pages in a row that
 * carry rows but none beyond the last delivered (cursor value, id) position fail the walk. A
 * correct server never sends such a page (rows are strictly ordered, none repeated), so any
 * bound is safe; 50 is generous for a server that repeats a page now and then. Empty pages
 * neither count nor reset it: via datasets legitimately send long runs of them.
 */
export const MAX_STALLED_PAGES = 50;
/** The cursors seen since the walk last advanced are kept to spot a cycle (A -> B -> A), up to
 * this many; a run of fresh empty-page cursors longer than this starts the memory afresh, so a
 * cycle that long goes unnoticed (the caller's signal still stops it) but memory stays bounded. */
export const MAX_REMEMBERED_CURSORS = 10_000;

export interface WalkContext {
  api: ServiceApi;
  ref: DatasetRef;
  /** For messages: the dataset code. */
  dataset: string;
  /** Catalog value until the first page's meta says otherwise. */
  cursorField: string;
  limit: number | undefined;
  includeTotal: boolean;
  split: SplitContext;
  /** The load's windowing: the unit a grown window is read in when it holds rows. */
  windowing: Windowing;
  /** Filters of the whole load (inclusive-since boundary, lookback memory). */
  loadFilters: readonly (DeliveredFilter | null)[];
  signal: AbortSignal;
  /** The identity of a row at a cursor value (see highwater.ts identityFor). Default rowKey. */
  rowKey?: RowKey;
  onSplit(event: SplitEvent): void;
  onTotal(event: TotalEvent): void;
  /** Given to every fetchPage of the walk: its retries and renewals are this load's alone. */
  onRetry?(event: RetryEvent): void;
  onRefresh?(event: RefreshEvent): void;
}

export interface SplitEvent {
  dataset: string;
  window: Window;
  into: Window[];
  /** True when the 504 came after some pages of the window were already delivered. */
  midWindow: boolean;
}

export interface TotalEvent {
  dataset: string;
  /** The window the count covers; the load's total is the sum over its windows. */
  window: Window;
  total: number | null;
  exact: boolean;
  note?: string;
}

/** One page as read, with the rows left after the boundary filters. */
export interface WalkedPage {
  window: Window;
  body: ExportPageBody;
  rows: ExportRow[];
  /** Last value delivered in `window` after this page (for resuming after a 504 or a crash). */
  last: ValueMark | null;
}

/** The per-call options every page request of the walk carries. */
function callOptions(ctx: WalkContext, retryGatewayTimeout: boolean): RequestOptions {
  return {
    signal: ctx.signal,
    retry: { retryGatewayTimeout },
    ...(ctx.onRetry !== undefined && { onRetry: (event: RetryEvent) => ctx.onRetry!(event) }),
    ...(ctx.onRefresh !== undefined && { onRefresh: (event: RefreshEvent) => ctx.onRefresh!(event) }),
  };
}

/** The query bounds of a window: an open side is left out, not sent as null. */
function windowBounds(window: Window): { since?: string; until?: string } {
  return {
    ...(window.since !== null && { since: window.since }),
    ...(window.until !== null && { until: window.until }),
  };
}

/**
 * A window that 'auto' grew over empty history (windows.ts nextSpanUnits). It is probed with a
 * one-row page first, so a year that does hold rows is never walked (or timed out) as one
 * window: empty (no row, nextCursor null), that page is the whole window; otherwise the window
 * is read as one-unit windows from the probe row's month (regridWindow). A 504 on the probe
 * reads it as one-unit windows too, each then split on a 504 as usual.
 */
export async function* walkGrownWindow(ctx: WalkContext, window: Window): AsyncGenerator<WalkedPage> {
  let body: ExportPageBody;
  try {
    body = await ctx.api.fetchPage(
      ctx.ref,
      {
        ...windowBounds(window),
        limit: 1,
        sort: ctx.split.sort,
      },
      // The answer to a 504 here is smaller windows, not the same request again.
      callOptions(ctx, false),
    );
  } catch (error) {
    if (!(error instanceof GatewayTimeoutError)) throw error;
    const into = regridWindow(window, null, ctx.windowing, ctx.split);
    ctx.onSplit({ dataset: ctx.dataset, window, into, midWindow: false });
    for (const part of into) yield* walkWindow(ctx, part, { cursor: null, delivered: null });
    return;
  }
  if (body.meta?.cursorField) ctx.cursorField = body.meta.cursorField;
  if (body.rows.length === 0 && body.pagination.nextCursor === null) {
    // Nothing in the window, which is what a count of it would say (no count query is spent).
    if (ctx.includeTotal) ctx.onTotal({ dataset: ctx.dataset, window, total: 0, exact: true });
    yield { window, body, rows: [], last: null };
    return;
  }
  // The probe's row is not delivered: the first one-unit window reads it again, in order.
  const first = body.rows.length > 0 ? cursorValueOf(body.rows[0]!, ctx.cursorField) : null;
  for (const part of regridWindow(window, first, ctx.windowing, ctx.split)) yield* walkWindow(ctx, part, { cursor: null, delivered: null });
}

/**
 * Where a window walk starts: the page after `cursor` (null: the window's first page), and the
 * last rows of this window delivered so far, by any read of it (an earlier, wider read cut short
 * by a 504, or a run before a crash). One mark for both, so a walk that is itself cut short
 * hands on everything delivered, however many times a window is split.
 */
export interface WindowStart {
  cursor: string | null;
  delivered: ValueMark | null;
}

export async function* walkWindow(ctx: WalkContext, window: Window, from: WindowStart): AsyncGenerator<WalkedPage> {
  const key = ctx.rowKey ?? rowKey;
  let cursor = from.cursor;
  let delivered = from.delivered;
  // A read from the window's inclusive start meets the delivered rows at its first value again,
  // and so does a run resumed part-way through such a read.
  const filters = [...ctx.loadFilters, boundaryFilter(delivered, key)];
  // What this walk itself has read, for the loop guard: re-reading delivered rows is progress.
  let read: ValueMark | null = null;
  let askTotal = ctx.includeTotal && cursor === null;
  // Loop guard state: cursors answered since the walk last moved forward, and how many pages
  // with rows in a row did not move it.
  let cursorsSinceAdvance = new Set<string>();
  let stalled = 0;
  // The halves this window would be split into on a 504 (null at the minimum span).
  const parts = splitWindow(window, ctx.split);
  for (;;) {
    let body: ExportPageBody;
    try {
      body = await ctx.api.fetchPage(
        ctx.ref,
        {
          ...windowBounds(window),
          ...(cursor !== null && { cursor }),
          ...(ctx.limit !== undefined && { limit: ctx.limit }),
          sort: ctx.split.sort,
          ...(askTotal && { includeTotal: true }),
        },
        // While the window can still be halved a 504 means "ask for less", not "ask again".
        callOptions(ctx, parts === null),
      );
    } catch (error) {
      if (!(error instanceof GatewayTimeoutError) || error instanceof WindowTimeoutError) throw error;
      if (parts === null) {
        throw new WindowTimeoutError(ctx.dataset, window, ctx.split.minSpanMs, {
          status: error.status, serverMessage: error.serverMessage, requestId: error.requestId, cause: error,
        });
      }
      // Once rows were delivered only the rest is split, from the last delivered value on; the
      // first part starts with the same mark, so its inclusive bound drops them again.
      const midWindow = delivered !== null;
      const rest = delivered !== null ? remainderOf(window, delivered.value, ctx.split.sort) : window;
      const into = midWindow ? splitWindow(rest, ctx.split) ?? [rest] : parts;
      ctx.onSplit({ dataset: ctx.dataset, window, into, midWindow });
      for (const [i, part] of into.entries()) {
        yield* walkWindow(ctx, part, { cursor: null, delivered: i === 0 ? delivered : null });
      }
      return;
    }
    if (body.meta?.cursorField) ctx.cursorField = body.meta.cursorField;
    if (askTotal && body.pagination.total !== undefined) {
      ctx.onTotal({
        dataset: ctx.dataset, window,
        total: body.pagination.total ?? null,
        exact: body.pagination.totalExact ?? body.pagination.total !== null,
        ...(body.pagination.totalNote !== undefined && { note: body.pagination.totalNote }),
      });
    }
    askTotal = false;
    const next = body.pagination.nextCursor;
    const advanced = movesPast(read, body.rows, ctx.cursorField, ctx.split.sort, key);
    if (advanced) {
      stalled = 0;
      cursorsSinceAdvance = new Set();
    } else if (body.rows.length > 0) {
      stalled += 1;
    }
    if (next !== null) {
      // Passing the same cursor returns the same page (the service's pagination contract,
      // docs/service-contract.md): a cursor equal to the one just sent, or one already
      // answered since the last new row, can only loop.
      if (next === cursor || cursorsSinceAdvance.has(next)) {
        throw new ProtocolError(
          `The service sent ${ctx.dataset} in the window ${describeWindow(window)} a nextCursor it had already sent, so the walk would never end; stopped.`,
        );
      }
      if (stalled >= MAX_STALLED_PAGES) {
        throw new ProtocolError(
          `The service sent ${ctx.dataset} in the window ${describeWindow(window)} ${stalled} pages in a row with no row past the last one delivered, so the walk would never end; stopped.`,
        );
      }
      if (cursorsSinceAdvance.size >= MAX_REMEMBERED_CURSORS) cursorsSinceAdvance = new Set();
      cursorsSinceAdvance.add(next);
    }
    const rows = applyFilters(body.rows, filters, ctx.cursorField);
    read = advanceLast(read, body.rows, ctx.cursorField, key);
    delivered = advanceLast(delivered, body.rows, ctx.cursorField, key);
    yield { window, body, rows, last: delivered };
    // The only end of a window: short and empty pages are followed.
    if (next === null) return;
    cursor = next;
  }
}

/**
 * Whether a page carries a row beyond `last` in delivery order: a later cursor value, or the same
 * value with an id not delivered at it yet. Rows without a cursor value cannot be placed, so they
 * do not count as progress (the service orders and windows by that value; it is never null).
 */
export function movesPast(
  last: ValueMark | null, rows: readonly ExportRow[], field: string, sort: 'asc' | 'desc', key: RowKey = rowKey,
): boolean {
  let ids: Set<string> | undefined;
  for (const row of rows) {
    const v = cursorValueOf(row, field);
    if (v === null) continue;
    if (last === null) return true;
    const cmp = compareCursorValues(v, last.value);
    if (sort === 'asc' ? cmp > 0 : cmp < 0) return true;
    if (cmp === 0) {
      ids ??= new Set(last.ids);
      if (!ids.has(key(row))) return true;
    }
  }
  return false;
}
