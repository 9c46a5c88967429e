// The export Readable. The windows of the load (window-tasks.ts) are walked (walk.ts) by a
// parallel reader (parallel-reader.ts): up to `concurrency` windows at once, each `prefetch`
// pages ahead and more within `readAheadBytes`, delivered window by window in order or page by
// page as they come (`ordered: false`). Each page delivered gets its checkpoint (checkpointer.ts),
// which records every window done, saved once the consumer has taken it (save-queue.ts).
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import type { RefreshEvent, RetryEvent, ServiceApi } from '../core/api.ts';
import { raceAbort } from '../core/abort.ts';
import { AbortError } from '../core/errors.ts';
import type { DatasetRef } from '../core/types.ts';
import { LoadCheckpointer, type Checkpointer } from './checkpointer.ts';
import { describeDataset, exportSettings, type ExportOptions, type ExportSettings, type ResolvedDataset } from './export-options.ts';
import { rowKeyOf } from './highwater.ts';
import { startLoad } from './load-plan.ts';
import { emptyLead } from './data-start.ts';
import { ParallelReader } from './parallel-reader.ts';
import { remainingTasks } from './progress.ts';
import { SaveQueue } from './save-queue.ts';
import { checkDatasetState } from './state-check.ts';
import type { DatasetState } from './state.ts';
import type { SplitEvent, TotalEvent, WalkContext, WalkedPage } from './walk.ts';
import type { ExportPage, ExportStats, PageEvent, WindowEvent } from './stream-types.ts';
import { windowTasks, type WindowTask } from './window-tasks.ts';
import { isWindowed, type Window } from './windows.ts';

export { describeDataset, type ExportOptions, type ResolvedDataset } from './export-options.ts';
export type { Checkpoint } from './checkpointer.ts';
export type { ExportPage, ExportStats, PageEvent, WindowEvent } from './stream-types.ts';

type Mode = 'pages' | 'rows';

/** The object-mode Readable that `exportRows` and `exportPages` return: one dataset's rows or
 * pages, read as the consumer asks, with events ('window', 'page', 'split', 'total', 'checkpoint',
 * 'retry', 'refresh', 'complete') and `stats` to follow the load. */
export class ExportStream extends Readable {
  readonly dataset: ResolvedDataset;
  readonly stats: ExportStats = { rows: 0, pages: 0, windows: 0, splits: 0, retries: 0 };
  /** Sum of the totals reported so far (with includeTotal), and whether every count was exact. */
  total: { value: number; exact: boolean; windows: number } | null = null;
  /** What kind of load this run is; set once the state was read. */
  loadMode: 'initial' | 'incremental' | 'resumed' | undefined;
  /** The time span this run reads in windows, in epoch ms (after the empty years skipped), and how
   * much of it an interrupted run had read already; set once the state was read, for progress.
   * Undefined for a load that is not read in windows. */
  timeSpan: { fromMs: number; toMs: number; doneMs: number } | undefined;
  /** The state to save once every page was taken: set just before the stream ends. */
  completedState: DatasetState | null = null;

  readonly #api: ServiceApi;
  readonly #mode: Mode;
  readonly #settings: ExportSettings;
  // Stops this stream's requests and closes its walks when it is destroyed.
  readonly #controller = new AbortController();
  // Set up on the first read rather than in _construct: with highWaterMark 0, Node drops a read
  // requested while _construct is pending, and the pages stream would never start.
  #ready: Promise<void> | undefined;
  #reader: ParallelReader<WindowTask, WalkedPage> | undefined;
  #checkpointer: Checkpointer | undefined;
  #saves: SaveQueue | undefined;
  /** As the page delivered last named it: the field the walk of a window started next begins with. */
  #cursorField: string;
  /** Windows whose start was emitted and whose end was not yet. */
  readonly #started = new Set<WindowTask>();
  /** Items pushed so far: a page's save waits until the consumer has taken its last one. */
  #pushed = 0;
  #demand = false;
  #driving = false;
  #finished = false;
  // Handed to each of this stream's page requests (through the walk), so only its own count.
  readonly #onRetry = (event: RetryEvent): void => {
    this.stats.retries += 1;
    this.emit('retry', { ...event, dataset: this.dataset.code });
  };
  // Several calls of this one can wait on the same renewal: each is told, 'refresh' is emitted once.
  readonly #renewals = new WeakSet<RefreshEvent>();
  readonly #onRefresh = (event: RefreshEvent): void => {
    if (this.#renewals.has(event)) return;
    this.#renewals.add(event);
    this.emit('refresh', event);
  };
  readonly #onAbort = (): void => {
    this.destroy(new AbortError(`The export of ${this.dataset.code} was aborted.`, { cause: this.#settings.signal?.reason }));
  };

  constructor(api: ServiceApi, ref: DatasetRef, opts: ExportOptions, mode: Mode) {
    // Pages: nothing buffered beyond what the consumer asked for (the reader does the look-ahead).
    super({ objectMode: true, highWaterMark: mode === 'pages' ? 0 : 16 });
    this.#api = api;
    this.#mode = mode;
    this.dataset = describeDataset(ref);
    this.#settings = exportSettings(opts, this.dataset);
    this.#cursorField = this.dataset.cursorField;
    const signal = this.#settings.signal;
    if (signal?.aborted) queueMicrotask(this.#onAbort);
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get stateKey(): string {
    return this.#settings.stateKey;
  }

  /** Printed (REPL, console.log) as one line, not a Readable's internals. */
  [inspect.custom](): string {
    const { rows, pages } = this.stats;
    return `ExportStream <${this.dataset.code}: ${rows} rows in ${pages} pages read${this.readableEnded ? ', ended' : ''}>`;
  }

  async #init(): Promise<void> {
    const s = this.#settings;
    const saved = s.resume !== undefined ? s.resume ?? undefined : await s.state?.load(this.stateKey);
    const previous = saved === undefined ? undefined : checkDatasetState(saved, this.dataset.code, this.stateKey);
    const start = startLoad(previous, {
      ...(s.since !== undefined && { since: s.since }),
      ...(s.until !== undefined && { until: s.until }),
      origin: s.origin, windowing: s.windowing, sort: s.sort,
      ...(s.lookbackMs > 0 && { lookback: s.lookbackMs }),
      now: s.now().toISOString(),
    });
    this.loadMode = start.mode;
    const { load } = start;
    const rowKey = rowKeyOf(s.identity);
    const checkpointer = new LoadCheckpointer({
      dataset: this.dataset.code, stateKey: this.stateKey, previous, load, rowKey, lookbackMs: s.lookbackMs,
    });
    this.#checkpointer = checkpointer;
    if (s.state !== undefined) this.#saves = new SaveQueue(s.state, this.stateKey, (error) => this.destroy(error));
    const walk: WalkContext = {
      api: this.#api,
      ref: this.dataset.ref,
      dataset: this.dataset.code,
      limit: s.limit,
      includeTotal: s.includeTotal,
      split: { origin: load.origin, end: load.end, minSpanMs: s.minSpanMs, sort: load.sort },
      windowing: load.windowing,
      loadFilters: checkpointer.filters,
      rowKey,
      signal: this.#controller.signal,
      onSplit: (event: SplitEvent) => {
        this.stats.splits += 1;
        this.emit('split', event);
      },
      onTotal: (event: TotalEvent) => {
        const t = this.total ?? { value: 0, exact: true, windows: 0 };
        this.total = { value: t.value + (event.total ?? 0), exact: t.exact && event.exact && event.total !== null, windows: t.windows + 1 };
        this.emit('total', { ...event, sum: this.total });
      },
      onRetry: this.#onRetry,
      onRefresh: this.#onRefresh,
    };
    // A first load from the default origin skips the years before the data (data-start.ts).
    const lead = start.mode === 'initial' && s.findStart && isWindowed(load.windowing)
      ? await emptyLead(walk, load, this.#cursorField, s.concurrency)
      : null;
    if (lead !== null) checkpointer.skipped(lead);
    const progress = lead === null ? checkpointer.progress : { ...checkpointer.progress, done: [...checkpointer.progress.done, lead] };
    const from = lead?.until ?? load.since;
    if (isWindowed(load.windowing) && from !== null) {
      const fromMs = Date.parse(from);
      const toMs = Date.parse(load.until ?? load.end);
      const doneMs = progress.done.reduce((sum, w) => sum + overlapMs(w, fromMs, toMs), 0);
      this.timeSpan = { fromMs, toMs, doneMs };
    }
    this.#reader = new ParallelReader({
      nextTask: windowTasks(load, remainingTasks(load, progress), walk, () => this.#cursorField),
      concurrency: s.concurrency,
      prefetch: s.prefetch,
      ordered: s.ordered,
      budgetBytes: s.readAheadBytes,
      sizeOf: pageBytes,
      signal: this.#controller.signal,
    });
  }

  /**
   * A for-await consumer asking for the next item is done with every item handed out before: the
   * pages those end are saved then. _read alone (below) comes only when the buffer runs low, which
   * a page of 1,000 rows keeps full for most of the next page, so a stop there would lose that
   * save. Not in read(): a pipe reads an item into its destination's buffer, not yet written. A
   * stop (break, abort) saves nothing more: a break and a throw from the loop's body both just
   * destroy the stream, so the item taken last may not have been handled.
   *
   * However the loop ends (the last row, a break, an error), the saves asked for are written
   * first, so that a load started right after it, or the process's exit, finds them. A save that
   * failed then fails the loop, a break included, rather than go unnoticed. The signal's stop
   * waits for none: a store that hangs must not hold a stop back.
   */
  override [Symbol.asyncIterator](): AsyncIterableIterator<any> {
    const items = super[Symbol.asyncIterator]();
    const stop = this.#settings.signal;
    const saved = async <R>(result: R): Promise<R> => {
      if (this.#saves !== undefined) await raceAbort(this.#saves.settled(), stop);
      return result;
    };
    const next = (): Promise<IteratorResult<any>> => {
      this.#saves?.flush(this.#pushed - this.readableLength);
      return items.next().then(
        (result): IteratorResult<any> | Promise<IteratorResult<any>> => (result.done === true ? saved(result) : result),
        async (error: unknown) => {
          // The loop's own error wins over a save's, which it may well be (a save failing destroys the stream).
          if (stop?.aborted !== true) await saved(undefined).catch(() => undefined);
          throw error;
        },
      );
    };
    return {
      next,
      return: (value?: unknown) => (items.return?.(value) ?? Promise.resolve({ done: true, value: undefined })).then(saved),
      throw: (error?: unknown) => items.throw?.(error) ?? Promise.reject(error),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  override _read(): void {
    this.#demand = true;
    this.#saves?.flush(this.#pushed - this.readableLength);
    void this.#drive();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Aborting also closes the reader, and with it every open walk.
    this.#controller.abort();
    this.#detach();
    callback(error);
  }

  #detach(): void {
    this.#settings.signal?.removeEventListener('abort', this.#onAbort);
  }

  async #drive(): Promise<void> {
    if (this.#driving || this.#finished) return;
    this.#driving = true;
    try {
      this.#ready ??= this.#init();
      await this.#ready;
      while (this.#demand && !this.destroyed) {
        if (await this.#readOne()) return;
      }
    } catch (error) {
      this.destroy(error as Error);
    } finally {
      this.#driving = false;
    }
  }

  /**
   * Reads and hands on one item of the reader; true once the stream is done. A call of its own so
   * that #drive, waiting for the next page, does not keep the last one reachable (a suspended
   * function keeps its variables).
   */
  async #readOne(): Promise<boolean> {
    const next = await this.#reader!.next();
    if (this.destroyed) return true;
    if (next.done === true) {
      await this.#complete();
      return true;
    }
    const { task } = next.value;
    // A window starts when its first page (or its end) reaches the consumer.
    if (!this.#started.has(task)) {
      this.#started.add(task);
      this.#emitWindow('start', task);
    }
    if (next.value.end === true) {
      this.#started.delete(task);
      this.#checkpointer!.ended(task.window);
      this.stats.windows += 1;
      this.#emitWindow('end', task);
    } else {
      this.#deliver(next.value.item, task);
    }
    return false;
  }

  #emitWindow(phase: 'start' | 'end', task: WindowTask): void {
    this.emit('window', { dataset: this.dataset.code, phase, window: task.window, index: task.index } satisfies WindowEvent);
  }

  #deliver(page: WalkedPage, task: WindowTask): void {
    this.#cursorField = page.cursorField;
    const checkpoint = this.#checkpointer!.delivered(page, task.window);
    this.stats.pages += 1;
    this.stats.rows += page.rows.length;
    if (this.#mode === 'pages') {
      const out: ExportPage = {
        dataset: this.dataset.code,
        section: this.dataset.section,
        window: page.window,
        rows: page.rows,
        pagination: page.body.pagination,
        meta: page.body.meta,
        checkpoint,
      };
      this.#pushed += 1;
      this.#demand = this.push(out);
    } else {
      for (const row of page.rows) this.#demand = this.push(row);
      this.#pushed += page.rows.length;
    }
    this.#saves?.add(this.#pushed, checkpoint.state);
    this.emit('page', { dataset: this.dataset.code, window: page.window, rows: page.rows.length, nextCursor: checkpoint.cursor } satisfies PageEvent);
    this.emit('checkpoint', checkpoint);
  }

  async #complete(): Promise<void> {
    this.#finished = true;
    const state = this.#checkpointer!.completed();
    this.completedState = state;
    this.emit('complete', state);
    if (this.#saves !== undefined) {
      if (this.readableLength === 0) await this.#saves.complete(state);
      else this.#saves.completeAtEnd(state, this);
    }
    this.#detach();
    this.push(null);
  }
}

/**
 * A page's size for the read-ahead budget: its rows as JSON text, estimated from a few of them
 * (serialising every row would cost about as much as parsing it did).
 */
export function pageBytes(page: WalkedPage): number {
  const rows = page.body.rows;
  if (rows.length === 0) return 256;
  const sample = [rows[0], rows[rows.length >> 1], rows[rows.length - 1]];
  const bytes = sample.reduce((sum, row) => sum + (JSON.stringify(row)?.length ?? 4), 0);
  return 256 + Math.ceil((bytes / sample.length) * rows.length);
}

/** Pages of a dataset, each with its rows, pagination, meta, window and checkpoint. */
export function exportPages(api: ServiceApi, dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
  return new ExportStream(api, dataset, opts, 'pages');
}

/**
 * Rows of a dataset, one object per row; checkpoints are still taken per page.
 *
 * @example
 * ```ts
 * await pipeline(exportRows(client, 'D07', { since: '2026-01-01T00:00:00Z' }), toNdjson(), createWriteStream('d07.ndjson', { mode: 0o600 }));
 *
 * const state = fileState('.lender-state.json');
 * for await (const row of exportRows(client, 'D03', { state })) upsert(row);   // re-run: resumes, then incremental
 * ```
 */
export function exportRows(api: ServiceApi, dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
  return new ExportStream(api, dataset, opts, 'rows');
}

/** How many ms of [fromMs, toMs) the window covers (an open side reaches that end). */
export function overlapMs(window: Window, fromMs: number, toMs: number): number {
  const since = window.since === null ? fromMs : Math.max(fromMs, Date.parse(window.since));
  const until = window.until === null ? toMs : Math.min(toMs, Date.parse(window.until));
  return Math.max(0, until - since);
}
