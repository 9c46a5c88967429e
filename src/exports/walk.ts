// Walking one window page by page to `nextCursor === null`, halving it on a 504 while it is
// longer than the minimum span. The only I/O is ServiceApi.fetchPage.
import type { ServiceApi } from '../client/api.ts';
import { GatewayTimeoutError } from '../client/errors.ts';
import type { DatasetRef, ExportPageBody, ExportRow } from '../client/types.ts';
import { WindowTimeoutError } from './errors.ts';
import { advanceLast, applyFilters, boundaryFilter, type DeliveredFilter, type ValueMark } from './highwater.ts';
import { remainderOf, splitWindow, type SplitContext, type Window } from './windows.ts';

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
  /** Filters of the whole load (inclusive-since boundary, lookback memory). */
  loadFilters: readonly (DeliveredFilter | null)[];
  signal: AbortSignal;
  onSplit(event: SplitEvent): void;
  onTotal(event: TotalEvent): void;
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

export async function* walkWindow(
  ctx: WalkContext,
  window: Window,
  cursor: string | null,
  last: ValueMark | null,
  /** Rows of this window that an earlier, wider read delivered already. */
  skip: ValueMark | null = null,
): AsyncGenerator<WalkedPage> {
  const filters = [...ctx.loadFilters, boundaryFilter(skip)];
  let askTotal = ctx.includeTotal && cursor === null;
  for (;;) {
    const parts = splitWindow(window, ctx.split);
    let body: ExportPageBody;
    try {
      body = await ctx.api.fetchPage(
        ctx.ref,
        {
          ...(window.since !== null && { since: window.since }),
          ...(window.until !== null && { until: window.until }),
          ...(cursor !== null && { cursor }),
          ...(ctx.limit !== undefined && { limit: ctx.limit }),
          sort: ctx.split.sort,
          ...(askTotal && { includeTotal: true }),
        },
        // While the window can still be halved a 504 means "ask for less", not "ask again".
        { signal: ctx.signal, retry: { retryGatewayTimeout: parts === null } },
      );
    } catch (error) {
      if (!(error instanceof GatewayTimeoutError) || error instanceof WindowTimeoutError) throw error;
      if (parts === null) {
        throw new WindowTimeoutError(ctx.dataset, window, ctx.split.minSpanMs, {
          status: error.status, serverMessage: error.serverMessage, requestId: error.requestId, cause: error,
        });
      }
      // Part-way through, only the unread rest is split; rows delivered at its boundary value
      // are re-read by the inclusive bound and dropped by id.
      const delivered = cursor !== null ? last : null;
      const midWindow = delivered !== null;
      const rest = delivered !== null ? remainderOf(window, delivered.value, ctx.split.sort) : window;
      const into = midWindow ? splitWindow(rest, ctx.split) ?? [rest] : parts;
      ctx.onSplit({ dataset: ctx.dataset, window, into, midWindow });
      let first = true;
      for (const part of into) {
        yield* walkWindow(ctx, part, null, null, first ? delivered : null);
        first = false;
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
    const rows = applyFilters(body.rows, filters, ctx.cursorField);
    last = advanceLast(last, body.rows, ctx.cursorField);
    yield { window, body, rows, last };
    // The only end of a window: short and empty pages are followed.
    if (body.pagination.nextCursor === null) return;
    cursor = body.pagination.nextCursor;
  }
}
