// The export Readable: pulls pages only on demand (at most `prefetch` ahead per open window),
// reads up to `concurrency` windows at once, delivers window by window in order, and records a
// checkpoint after every page.
import { Readable } from 'node:stream';
import type { DurationLikeObject } from 'luxon';
import { datasetInfo } from '../catalog/datasets.ts';
import { resolveDataset } from '../catalog/resolve.ts';
import type { RefreshEvent, RetryEvent, ServiceApi } from '../client/api.ts';
import { AbortError, ConfigError } from '../client/errors.ts';
import type { DatasetRef, ExportRow, PageMeta, Pagination } from '../client/types.ts';
import {
  HighWaterTracker, boundaryFilter, identityFor, pruneSeen, recordSeen, rowKeyOf, seenFilter,
  type RowIdentity, type RowKey, type ValueMark,
} from './highwater.ts';
import { lookbackMillis, remainingWindows, seenFloor, startLoad, type WindowTask } from './load-plan.ts';
import type { DatasetState, LoadRecord, StateStore } from './state.ts';
import {
  walkGrownWindow, walkWindow, type SplitEvent, type TotalEvent, type WalkContext, type WalkedPage,
} from './walk.ts';
import {
  DEFAULT_MIN_SPLIT_MS, DEFAULT_ORIGIN, nextSpanUnits, normalizeInstant, resolveWindowing, type Window, type WindowOption,
} from './windows.ts';
import { Duration } from 'luxon';

export interface ExportOptions {
  /** Inclusive lower bound of the first load (ignored once `state` holds a completed load). */
  since?: string;
  /** Exclusive upper bound. Without it the last window is open, reading up to the service's now. */
  until?: string;
  /** Page size, 1..1000. Default 1000 (the service's pageMax). */
  limit?: number;
  sort?: 'asc' | 'desc';
  /** 'auto' (default): calendar months for via datasets, one window for direct ones. */
  window?: WindowOption;
  /** Where windowed initial loads start. Default 2015-01-01T00:00:00Z, before any data. */
  origin?: string;
  /** Ask the service for totals: once per window (so once per load for one-window loads). */
  includeTotal?: boolean;
  /** Pages fetched ahead of the consumer, per open window. Default 1. */
  prefetch?: number;
  /** Windows read at once; delivery stays in window order. Default 1. */
  concurrency?: number;
  /** Resume and incremental bookkeeping; saved as the consumer takes each page. */
  state?: StateStore;
  /** Start from this state without saving it: the caller saves `page.checkpoint.state` itself. */
  resume?: DatasetState | null;
  /** Key of the dataset in the state store. Default: the dataset code (or "S1/D03"). */
  stateKey?: string;
  /** Incremental loads re-read this span below the high-water mark; rows already delivered in
   * the same version (same id and cursor value) are dropped, late or changed ones delivered. */
  lookback?: string | DurationLikeObject;
  /**
   * How rows at the same cursor value are told apart by the boundary and lookback dedupe:
   * 'key' (public_id, else id) or 'content' (that plus a digest of the row). Default: 'content'
   * for datasets whose public_id is not unique per row (D16), 'key' otherwise. Changing it
   * between runs of one state can deliver the boundary rows once more (never lose one).
   */
  rowIdentity?: RowIdentity;
  /** Windows this short are not split on a 504 (ms, ISO duration or object). Default 1 hour. */
  minSplitSpan?: number | string | DurationLikeObject;
  signal?: AbortSignal;
  /** The load's start time; for tests. Default: the clock. */
  now?: () => Date;
}

export interface Checkpoint {
  dataset: string;
  window: Window;
  /** The page's nextCursor; null when the window is done. */
  cursor: string | null;
  highWater: ValueMark | null;
  /** The complete state to save for this position. */
  state: DatasetState;
}

export interface ExportPage {
  dataset: string;
  section: string;
  window: Window;
  /** Rows of the page, less rows an earlier read already delivered (inclusive-since boundary). */
  rows: ExportRow[];
  pagination: Pagination;
  meta: PageMeta;
  checkpoint: Checkpoint;
}

export interface WindowEvent {
  dataset: string;
  phase: 'start' | 'end';
  window: Window;
  /** 0-based index among the windows of this run. */
  index: number;
}

export interface PageEvent {
  dataset: string;
  window: Window;
  rows: number;
  nextCursor: string | null;
}

export interface ExportStats {
  rows: number;
  pages: number;
  windows: number;
  splits: number;
  retries: number;
}

export interface ResolvedDataset {
  ref: DatasetRef;
  code: string;
  section: string;
  key: string;
  pathKind: 'direct' | 'via';
  cursorField: string;
  /** Identity of the boundary/lookback dedupe (see highwater.ts identityFor). */
  identity: RowIdentity;
}

/** The catalog's address of a dataset plus what the stream needs to plan windows. */
export function describeDataset(ref: DatasetRef): ResolvedDataset {
  const { section, dataset: code } = resolveDataset(ref);
  const info = datasetInfo(code);
  return {
    ref, code, section,
    key: typeof ref === 'string' ? code : `${section}/${code}`,
    pathKind: info?.pathKind ?? 'direct',
    cursorField: info?.cursorField ?? 'updated_at',
    identity: identityFor(code),
  };
}

function durationMs(value: number | string | DurationLikeObject): number {
  if (typeof value === 'number') return value;
  const d = typeof value === 'string' ? Duration.fromISO(value) : Duration.fromObject(value);
  if (!d.isValid) throw new ConfigError(`The duration ${JSON.stringify(value)} is not valid.`);
  return d.toMillis();
}

function positiveInt(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`The option ${name} must be an integer of at least ${min}.`);
  return value;
}

interface Slot {
  task: WindowTask;
  index: number;
  /** Span of the window in units of the windowing, as planned (1 unless grown). */
  units: number;
  /** Whether any page of the window had rows (before filters): decides the next window's span. */
  sawRows: boolean;
  gen: AsyncGenerator<WalkedPage>;
  buffer: WalkedPage[];
  fetching: boolean;
  done: boolean;
  failed: boolean;
  error: unknown;
  started: boolean;
}

type Mode = 'pages' | 'rows';

export class ExportStream extends Readable {
  readonly dataset: ResolvedDataset;
  readonly stats: ExportStats = { rows: 0, pages: 0, windows: 0, splits: 0, retries: 0 };
  /** Sum of the totals reported so far (with includeTotal), and whether every count was exact. */
  total: { value: number; exact: boolean; windows: number } | null = null;
  /** What kind of load this run is; set once the state was read. */
  loadMode: 'initial' | 'incremental' | 'resumed' | undefined;
  /** The state to save once every page was taken: set just before the stream ends. */
  completedState: DatasetState | null = null;

  readonly #api: ServiceApi;
  readonly #mode: Mode;
  readonly #opts: ExportOptions;
  readonly #prefetch: number;
  readonly #concurrency: number;
  readonly #limit: number;
  readonly #controller = new AbortController();
  #load!: LoadRecord;
  #tasks!: Iterator<WindowTask, void, number | undefined>;
  /** The window planned last, kept after it leaves #slots: the next span depends on it. */
  #lastSlot: Slot | undefined;
  #tasksDone = false;
  #walk!: WalkContext;
  #hw!: HighWaterTracker;
  #rowKey!: RowKey;
  #seen: Record<string, string> | null = null;
  #lookbackMs = 0;
  #pruneAt = 1000;
  readonly #slots: Slot[] = [];
  #windowIndex = 0;
  #demand = false;
  #driving = false;
  #wake: (() => void) | null = null;
  #finished = false;
  // Set up on the first read rather than in _construct: with highWaterMark 0, Node drops a read
  // requested while _construct is pending, and the pages stream would never start.
  #ready: Promise<void> | undefined;
  // Store saves wait until the consumer has taken the page's rows out of this stream.
  #pushed = 0;
  #pendingSaves: { through: number; state: DatasetState }[] = [];
  #saving: Promise<void> = Promise.resolve();
  // Handed to each of this stream's page requests (through the walk), so only its own count.
  readonly #onRetry = (event: RetryEvent): void => {
    this.stats.retries += 1;
    this.emit('retry', { ...event, dataset: this.dataset.code });
  };
  readonly #onRefresh = (event: RefreshEvent): void => {
    this.emit('refresh', event);
  };
  readonly #onAbort = (): void => {
    this.destroy(new AbortError(`The export of ${this.dataset.code} was aborted.`, { cause: this.#opts.signal?.reason }));
  };

  constructor(api: ServiceApi, ref: DatasetRef, opts: ExportOptions, mode: Mode) {
    // Pages: nothing buffered beyond what the consumer asked for (prefetch is the only lookahead).
    super({ objectMode: true, highWaterMark: mode === 'pages' ? 0 : 16 });
    this.#api = api;
    this.#mode = mode;
    this.#opts = opts;
    this.dataset = describeDataset(ref);
    this.#prefetch = positiveInt(opts.prefetch, 1, 'prefetch', 0);
    this.#concurrency = positiveInt(opts.concurrency, 1, 'concurrency', 1);
    this.#limit = positiveInt(opts.limit, 1000, 'limit', 1);
    if (opts.signal?.aborted) {
      queueMicrotask(this.#onAbort);
    } else {
      opts.signal?.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  async #init(): Promise<void> {
    const opts = this.#opts;
    const sort = opts.sort ?? 'asc';
    if (sort !== 'asc' && sort !== 'desc') throw new ConfigError(`The sort must be asc or desc.`);
    const windowing = resolveWindowing(opts.window, this.dataset.pathKind);
    const origin = normalizeInstant(opts.origin ?? DEFAULT_ORIGIN, 'origin');
    this.#lookbackMs = lookbackMillis(opts.lookback);
    const minSpanMs = durationMs(opts.minSplitSpan ?? DEFAULT_MIN_SPLIT_MS);
    const previous = opts.resume !== undefined ? opts.resume ?? undefined : await opts.state?.load(this.stateKey);
    const start = startLoad(previous, {
      ...(opts.since !== undefined && { since: opts.since }),
      ...(opts.until !== undefined && { until: opts.until }),
      origin, windowing, sort,
      ...(opts.lookback !== undefined && { lookback: opts.lookback }),
      now: (opts.now?.() ?? new Date()).toISOString(),
    });
    this.loadMode = start.mode;
    this.#load = structuredClone(start.load);
    const identity = opts.rowIdentity ?? this.dataset.identity;
    if (identity !== 'key' && identity !== 'content') throw new ConfigError(`The rowIdentity must be key or content.`);
    this.#rowKey = rowKeyOf(identity);
    this.#hw = new HighWaterTracker(previous?.highWater ?? null, this.#rowKey);
    if (this.#lookbackMs > 0) this.#seen = { ...(previous?.seen ?? {}) };
    this.#tasks = remainingWindows(this.#load);
    this.#walk = {
      api: this.#api,
      ref: this.dataset.ref,
      dataset: this.dataset.code,
      cursorField: this.dataset.cursorField,
      limit: this.#limit,
      includeTotal: opts.includeTotal === true,
      split: { origin: this.#load.origin, end: this.#load.end, minSpanMs, sort: this.#load.sort },
      windowing: this.#load.windowing,
      // The lookback memory is consulted only on incremental runs; the boundary set always.
      loadFilters: [
        boundaryFilter(this.#load.skip, this.#rowKey),
        this.#load.kind === 'incremental' ? seenFilter(this.#seen, this.#rowKey) : null,
      ],
      rowKey: this.#rowKey,
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
  }

  get stateKey(): string {
    return this.#opts.stateKey ?? this.dataset.key;
  }

  override _read(): void {
    this.#demand = true;
    this.#flushSaves();
    void this.#drive();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#controller.abort();
    this.#detach();
    this.#notify();
    for (const slot of this.#slots) void slot.gen.return(undefined).catch(() => undefined);
    callback(error);
  }

  #detach(): void {
    this.#opts.signal?.removeEventListener('abort', this.#onAbort);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async #drive(): Promise<void> {
    if (this.#driving || this.#finished) return;
    this.#driving = true;
    try {
      this.#ready ??= this.#init();
      await this.#ready;
      while (this.#demand && !this.destroyed) {
        this.#pumpAll();
        const head = this.#slots[0];
        if (head === undefined) {
          await this.#complete();
          return;
        }
        if (head.buffer.length > 0) {
          this.#startWindow(head);
          const page = head.buffer.shift()!;
          if (this.#prefetch > 0 && !head.fetching && !head.done) {
            // Room was made: ask for the next page before handing this one over, and let that
            // request go out (it is sent from microtasks) before the consumer's synchronous work
            // on this page's rows. Its wait for the service then overlaps that work instead of
            // following it; the pages held ahead are the same as before (prefetch).
            this.#pumpAll();
            if (head.fetching) await yieldToLoop();
            if (this.destroyed) return;
          }
          this.#deliver(page);
          // Keep the read-ahead topped up even if the consumer is now full.
          this.#pumpAll();
          continue;
        }
        if (head.failed) throw head.error;
        if (head.done) {
          this.#startWindow(head);
          this.#slots.shift();
          this.stats.windows += 1;
          this.emit('window', { dataset: this.dataset.code, phase: 'end', window: head.task.window, index: head.index } satisfies WindowEvent);
          continue;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } catch (error) {
      this.destroy(error as Error);
    } finally {
      this.#driving = false;
    }
  }

  /** Emits the window's start once, when its first page (or its end) reaches the head. */
  #startWindow(slot: Slot): void {
    if (slot.started) return;
    slot.started = true;
    this.emit('window', { dataset: this.dataset.code, phase: 'start', window: slot.task.window, index: slot.index } satisfies WindowEvent);
  }

  #pumpAll(): void {
    if (this.destroyed) return;
    while (this.#slots.length < this.#concurrency && !this.#tasksDone) {
      // The next window grows only when the one planned before it is known to be empty; with
      // several windows in flight that is often not known yet, and it stays one unit.
      const prev = this.#lastSlot;
      const units = nextSpanUnits(
        this.#load.windowing,
        prev !== undefined && prev.done ? { units: prev.units, empty: !prev.sawRows } : null,
      );
      const next = this.#tasks.next(units);
      if (next.done === true) {
        this.#tasksDone = true;
        break;
      }
      const task = next.value;
      // A window resumed part-way had rows before the crash; a fresh one planned wider than one
      // unit is probed first (walkGrownWindow).
      const grown = units > 1 && task.cursor === null && prev !== undefined;
      const slot: Slot = {
        task, index: this.#windowIndex++, units: grown ? units : 1, sawRows: task.cursor !== null,
        buffer: [], fetching: false, done: false, failed: false, error: undefined, started: false,
        gen: grown ? walkGrownWindow(this.#walk, task.window) : walkWindow(this.#walk, task.window, { cursor: task.cursor, delivered: task.last }),
      };
      this.#slots.push(slot);
      this.#lastSlot = slot;
    }
    this.#slots.forEach((slot, i) => this.#pump(slot, i === 0));
  }

  #pump(slot: Slot, isHead: boolean): void {
    if (slot.fetching || slot.done || slot.failed) return;
    const wanted = slot.buffer.length < this.#prefetch || (isHead && this.#demand && slot.buffer.length === 0);
    if (!wanted) return;
    slot.fetching = true;
    slot.gen.next().then(
      (result) => {
        slot.fetching = false;
        if (result.done) {
          slot.done = true;
        } else {
          if (result.value.body.rows.length > 0) slot.sawRows = true;
          slot.buffer.push(result.value);
        }
        this.#pumpAll();
        this.#notify();
      },
      (error: unknown) => {
        slot.fetching = false;
        slot.failed = true;
        slot.error = error;
        this.#notify();
      },
    );
  }

  #deliver(page: WalkedPage): void {
    const field = this.#walk.cursorField;
    this.#hw.observe(page.rows, field);
    const highWater = this.#hw.snapshot();
    if (this.#seen !== null && highWater !== null) {
      const floor = seenFloor(highWater.value, this.#lookbackMs);
      recordSeen(this.#seen, page.rows, field, floor, this.#rowKey);
      if (Object.keys(this.#seen).length > this.#pruneAt) {
        this.#seen = pruneSeen(this.#seen, floor);
        this.#pruneAt = Math.max(1000, 2 * Object.keys(this.#seen).length);
      }
    }
    const cursor = page.body.pagination.nextCursor;
    this.#load.position = { window: page.window, cursor, last: page.last };
    const state: DatasetState = {
      version: 1,
      dataset: this.stateKey,
      highWater,
      load: structuredClone(this.#load),
      ...(this.#seen !== null && { seen: { ...this.#seen } }),
    };
    const checkpoint: Checkpoint = { dataset: this.dataset.code, window: page.window, cursor, highWater, state };
    const out: ExportPage = {
      dataset: this.dataset.code,
      section: this.dataset.section,
      window: page.window,
      rows: page.rows,
      pagination: page.body.pagination,
      meta: page.body.meta,
      checkpoint,
    };
    this.stats.pages += 1;
    this.stats.rows += page.rows.length;
    if (this.#mode === 'pages') {
      this.#pushed += 1;
      this.#demand = this.push(out);
    } else {
      for (const row of page.rows) this.#demand = this.push(row);
      this.#pushed += page.rows.length;
    }
    if (this.#opts.state) this.#pendingSaves.push({ through: this.#pushed, state });
    this.emit('page', { dataset: this.dataset.code, window: page.window, rows: page.rows.length, nextCursor: cursor } satisfies PageEvent);
    this.emit('checkpoint', checkpoint);
  }

  /** Saves the newest state whose page the consumer has taken out of the buffer. */
  #flushSaves(): void {
    const store = this.#opts.state;
    if (store === undefined || this.#pendingSaves.length === 0) return;
    const taken = this.#pushed - this.readableLength;
    let latest: DatasetState | undefined;
    while (this.#pendingSaves.length > 0 && this.#pendingSaves[0]!.through <= taken) latest = this.#pendingSaves.shift()!.state;
    if (latest === undefined) return;
    const state = latest;
    this.#saving = this.#saving.then(() => store.save(this.stateKey, state));
    this.#saving.catch((error: Error) => this.destroy(error));
  }

  async #complete(): Promise<void> {
    this.#finished = true;
    const highWater = this.#hw.snapshot();
    let seen = this.#seen;
    if (seen !== null && highWater !== null) seen = pruneSeen(seen, seenFloor(highWater.value, this.#lookbackMs));
    this.completedState = {
      version: 1,
      dataset: this.stateKey,
      highWater,
      load: null,
      completedAt: new Date().toISOString(),
      ...(seen !== null && { seen }),
    };
    this.emit('complete', this.completedState);
    const store = this.#opts.state;
    if (store !== undefined) {
      this.#pendingSaves = [];
      const state = this.completedState;
      if (this.readableLength === 0) {
        this.#saving = this.#saving.then(() => store.save(this.stateKey, state));
        await this.#saving;
      } else {
        // Rows of the last page are still in this stream's buffer (a for-await loop takes them one
        // by one): the load is complete only once the consumer has had them all, which 'end'
        // tells. A consumer that stops first leaves the last page's checkpoint, so the next run
        // resumes there instead of starting after rows it never took. The save is called at once
        // (not after the pending ones) so that a load started right after the loop finds it in
        // the store; a failed save only means that resume, as the stream can no longer report it.
        this.once('end', () => {
          void new Promise<void>((resolve) => resolve(store.save(this.stateKey, state))).catch(() => undefined);
        });
      }
    }
    this.#detach();
    this.push(null);
  }
}

/** Resolves after the microtasks queued so far, and the I/O they start, have run. */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Pages of a dataset, each with its rows, pagination, meta, window and checkpoint. */
export function exportPages(api: ServiceApi, dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
  return new ExportStream(api, dataset, opts, 'pages');
}

/** Rows of a dataset, one object per row; checkpoints are still taken per page. */
export function exportRows(api: ServiceApi, dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
  return new ExportStream(api, dataset, opts, 'rows');
}
