// Walking one window page by page to `nextCursor === null`, halving it on a 504 while it is
// longer than the minimum span. The only I/O is ServiceApi.fetchPage. A walk changes nothing
// outside itself: what it learns (the cursor field, the last rows delivered) travels with its
// pages and into the walks it hands a window's rest to.
import type { RefreshEvent, RequestOptions, RetryEvent, ServiceApi } from '../core/api.ts';
import { GatewayTimeoutError } from '../core/errors.ts';
import type { DatasetRef, ExportPageBody, ExportRow } from '../core/types.ts';
import { WindowTimeoutError } from './errors.ts';
import {
  advanceLast, applyFilters, boundaryFilter, cursorValueOf, rowKey, type DeliveredFilter, type RowKey, type ValueMark,
} from './highwater.ts';
import { LoopGuard } from './loop-guard.ts';
import { regridWindow, remainderOf, splitWindow, type SplitContext, type Window, type Windowing } from './windows.ts';

/** What every walk of a load shares; read only. */
export interface WalkContext {
  readonly api: ServiceApi;
  readonly ref: DatasetRef;
  /** For messages: the dataset code. */
  readonly dataset: string;
  readonly limit: number | undefined;
  readonly includeTotal: boolean;
  readonly split: SplitContext;
  /** The load's windowing: the unit a grown window is read in when it holds rows. */
  readonly windowing: Windowing;
  /** Filters of the whole load (inclusive-since boundary, lookback memory). */
  readonly loadFilters: readonly (DeliveredFilter | null)[];
  readonly signal: AbortSignal;
  /** The identity of a row at a cursor value (see highwater.ts identityFor). Default rowKey. */
  readonly rowKey?: RowKey;
  onSplit(event: SplitEvent): void;
  onTotal(event: TotalEvent): void;
  /** Given to every fetchPage of the walk: its retries and renewals are this load's alone. */
  onRetry?(event: RetryEvent): void;
  onRefresh?(event: RefreshEvent): void;
}

/** Payload of the stream's 'split' event: a window timed out (504) and is read as the smaller
 * windows `into` instead. */
export interface SplitEvent {
  dataset: string;
  window: Window;
  into: Window[];
  /** True when the 504 came after some pages of the window were already delivered. */
  midWindow: boolean;
}

/** Payload of the stream's 'total' event (with `includeTotal`): the service's row count for one
 * window. */
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
  /** The field the rows are ordered by: as the page's meta names it, else as known before. */
  cursorField: string;
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
  /** The cursor field as known when the walk starts; each page's meta may name it anew. */
  cursorField: string;
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
export async function* walkGrownWindow(ctx: WalkContext, window: Window, cursorField: string): AsyncGenerator<WalkedPage> {
  let body: ExportPageBody;
  try {
    body = await ctx.api.fetchPage(
      ctx.ref,
      { ...windowBounds(window), limit: 1, sort: ctx.split.sort },
      // The answer to a 504 here is smaller windows, not the same request again.
      callOptions(ctx, false),
    );
  } catch (error) {
    if (!(error instanceof GatewayTimeoutError)) throw error;
    const into = regridWindow(window, null, ctx.windowing, ctx.split);
    ctx.onSplit({ dataset: ctx.dataset, window, into, midWindow: false });
    for (const part of into) yield* walkWindow(ctx, part, { cursor: null, delivered: null, cursorField });
    return;
  }
  const field = body.meta?.cursorField || cursorField;
  if (body.rows.length === 0 && body.pagination.nextCursor === null) {
    // Nothing in the window, which is what a count of it would say (no count query is spent).
    if (ctx.includeTotal) ctx.onTotal({ dataset: ctx.dataset, window, total: 0, exact: true });
    yield { window, body, rows: [], last: null, cursorField: field };
    return;
  }
  // The probe's row is not delivered: the first one-unit window reads it again, in order.
  const first = body.rows.length > 0 ? cursorValueOf(body.rows[0]!, field) : null;
  for (const part of regridWindow(window, first, ctx.windowing, ctx.split)) {
    yield* walkWindow(ctx, part, { cursor: null, delivered: null, cursorField: field });
  }
}

export async function* walkWindow(ctx: WalkContext, window: Window, from: WindowStart): AsyncGenerator<WalkedPage> {
  const key = ctx.rowKey ?? rowKey;
  let { cursor, delivered, cursorField } = from;
  // A read from the window's inclusive start meets the delivered rows at its first value again,
  // and so does a run resumed part-way through such a read.
  const filters = [...ctx.loadFilters, boundaryFilter(delivered, key)];
  const guard = new LoopGuard(ctx.dataset, window, ctx.split.sort, key);
  let askTotal = ctx.includeTotal && cursor === null;
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
        yield* walkWindow(ctx, part, { cursor: null, delivered: i === 0 ? delivered : null, cursorField });
      }
      return;
    }
    cursorField = body.meta?.cursorField || cursorField;
    if (askTotal && body.pagination.total !== undefined) {
      ctx.onTotal({
        dataset: ctx.dataset, window,
        total: body.pagination.total ?? null,
        exact: body.pagination.totalExact ?? body.pagination.total !== null,
        ...(body.pagination.totalNote !== undefined && { note: body.pagination.totalNote }),
      });
    }
    askTotal = false;
    guard.check(cursor, body, cursorField);
    delivered = advanceLast(delivered, body.rows, cursorField, key);
    // The only end of a window: short and empty pages are followed.
    const next = body.pagination.nextCursor;
    // Nothing of the page is kept in a variable past the yield (`body` is declared afresh at the
    // loop's top): the generator waits for the next page with its variables reachable, and a page
    // kept there would outlive the young-generation collections that run during that wait.
    yield { window, body, rows: applyFilters(body.rows, filters, cursorField), last: delivered, cursorField };
    if (next === null) return;
    cursor = next;
  }
}
