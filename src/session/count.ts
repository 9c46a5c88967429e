// count(): totals via includeTotal. A via dataset gives no total for an unbounded request
// (totalNote 'window_required'), and a large window may hit the count's time budget, so via
// datasets (or any dataset given a `window`) are counted window by window and summed.
import type { ServiceApi } from '../core/api.ts';
import type { DatasetRef, Pagination } from '../core/types.ts';
import { datasetInfo } from '../core/catalog.ts';
import { resolveDataset } from '../core/resolve-dataset.ts';
import { DEFAULT_ORIGIN, normalizeInstant, planWindows, resolveWindowing, type Window, type WindowOption } from '../exports/windows.ts';
import { parseInteger } from '../core/options.ts';
import { checkOptionNames } from '../core/option-names.ts';
import { Count } from './results.ts';

/** Options of `session.count()`: time bounds, the window per count request, and how many are asked at once. */
export interface CountOptions {
  since?: string;
  until?: string;
  /** Window per count request. Default: one request for direct datasets, months for via ones. */
  window?: WindowOption;
  /** Window counts asked at once. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
}

export function codeOf(ref: DatasetRef): string {
  return resolveDataset(ref).dataset;
}

export async function countRows(api: ServiceApi, ref: DatasetRef, opts: CountOptions = {}): Promise<Count> {
  checkOptionNames(opts, { since: true, until: true, window: true, concurrency: true, signal: true }, 'count()');
  const code = codeOf(ref);
  const pathKind = datasetInfo(code)?.pathKind ?? 'direct';
  const windowing = resolveWindowing(opts.window ?? 'auto', pathKind);
  // Checked here for every dataset, as exports check them: a direct dataset's one request would
  // otherwise carry 'garbage' to the service, whose 500 says nothing of the argument.
  const since = opts.since === undefined ? undefined : normalizeInstant(opts.since, 'since');
  const until = opts.until === undefined ? undefined : normalizeInstant(opts.until, 'until');
  const concurrency = parseInteger(opts.concurrency ?? 4, 'concurrency', { min: 1 });
  const windows: Window[] = windowing.kind === 'single' || windowing.kind === 'none'
    ? [{ since: since ?? null, until: until ?? null }]
    : [...planWindows({
      since: since ?? DEFAULT_ORIGIN,
      until: until ?? null,
      end: new Date().toISOString(),
      windowing,
      sort: 'asc',
    })];

  const results: Pagination[] = new Array(windows.length);
  // The first failure settles the count: stop asking, and abort the windows still in flight.
  const failed = new AbortController();
  const signal = opts.signal === undefined ? failed.signal : AbortSignal.any([opts.signal, failed.signal]);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < windows.length && !failed.signal.aborted) {
      const i = next++;
      const w = windows[i]!;
      const page = await api.fetchPage(ref, {
        limit: 1,
        includeTotal: true,
        ...(w.since !== null ? { since: w.since } : {}),
        ...(w.until !== null ? { until: w.until } : {}),
      }, { signal });
      results[i] = page.pagination;
    }
  };
  const workers = Math.min(concurrency, windows.length);
  await Promise.all(Array.from({ length: workers }, () => worker().catch((error: unknown) => {
    if (!failed.signal.aborted) failed.abort(error);
    throw error;
  })));

  let total: number | null = 0;
  let exact = true;
  const notes = new Set<string>();
  for (const p of results) {
    if (p.totalNote !== undefined) notes.add(p.totalNote);
    if (typeof p.total !== 'number') {
      total = null;
      continue;
    }
    if (total !== null) total += p.total;
    if (p.totalExact === false) exact = false;
  }
  return new Count(code, total, total !== null && exact, windows.length, [...notes]);
}
