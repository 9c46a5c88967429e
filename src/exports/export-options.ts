// The options of an export and the dataset it reads: every option, its default and its check in
// one place. A bad option is a ConfigError when the stream is made, before any request.
import { datasetInfo, PAGE_MAX } from '../core/catalog.ts';
import { resolveDataset } from '../core/resolve-dataset.ts';
import { ConfigError } from '../core/errors.ts';
import type { DatasetRef } from '../core/types.ts';
import { parseBoolean, parseDuration, parseInteger, type DurationValue } from '../core/options.ts';
import { checkOptionNames, type OptionNames } from '../core/option-names.ts';
import { identityFor, type RowIdentity } from './highwater.ts';
import { lookbackMillis } from './load-plan.ts';
import type { DatasetState, StateStore } from './state.ts';
import {
  DEFAULT_MIN_SPLIT_MS, DEFAULT_ORIGIN, normalizeInstant, resolveWindowing, type WindowOption, type Windowing,
} from './windows.ts';

/** Options of `exportRows` and `exportPages` (and, less those it sets itself, of sync()); each is
 * checked when the stream is made. */
export interface ExportOptions {
  /** Inclusive lower bound of the first load (ignored once `state` holds a completed load). */
  since?: string;
  /** Exclusive upper bound. Without it the last window is open, reading up to the service's now. */
  until?: string;
  /** Page size, 1..1000. Default 1000 (the service's pageMax). */
  limit?: number;
  /** Order on the cursor field. Default 'asc', which is what makes writes during a walk safe. */
  sort?: 'asc' | 'desc';
  /** 'auto' (default): calendar months for via datasets, one window for direct ones. */
  window?: WindowOption;
  /** Where windowed initial loads start. Default 2015-01-01T00:00:00Z, before any data; a via
   * dataset's first load from it asks once where the rows start and skips the years before. */
  origin?: string;
  /** Ask the service for totals: once per window (so once per load for one-window loads). */
  includeTotal?: boolean;
  /** Pages fetched ahead of the consumer, per open window. Default 1. */
  prefetch?: number;
  /** Windows read at once. Default 1. */
  concurrency?: number;
  /**
   * true (default): pages are delivered window by window, in the order of the cursor field.
   * false: each page as soon as it is read, whichever window it is from. Either way each page's
   * checkpoint records the windows done, so a resume reads only what is unfinished.
   */
  ordered?: boolean;
  /**
   * With `concurrency` above 1, windows keep reading beyond `prefetch` pages while the pages held
   * for the consumer add up to less than this many bytes (of JSON, estimated). Default 2 MiB.
   */
  readAheadBytes?: number;
  /** Resume and incremental bookkeeping; saved as the consumer takes each page. */
  state?: StateStore;
  /** Start from this state without saving it: the caller saves `page.checkpoint.state` itself. */
  resume?: DatasetState | null;
  /** Key of the dataset in the state store. Default: the dataset code (or "S1/D03"). */
  stateKey?: string;
  /** Incremental loads re-read this span below the high-water mark; rows already delivered in
   * the same version (same id and cursor value) are dropped, late or changed ones delivered. */
  lookback?: DurationValue;
  /**
   * How rows at the same cursor value are told apart by the boundary and lookback dedupe:
   * 'key' (public_id, else id) or 'content' (that plus a digest of the row). Default: 'content'
   * for datasets whose public_id is not unique per row (D16), 'key' otherwise. Changing it
   * between runs of one state can deliver the boundary rows once more (never lose one).
   */
  rowIdentity?: RowIdentity;
  /** Windows this short are not split on a 504 (ms, ISO duration or object). Default 1 hour. */
  minSplitSpan?: DurationValue;
  /** Aborts the load (an AbortError); with `state`, progress up to the last page taken is kept. */
  signal?: AbortSignal;
  /** The load's start time; for tests. Default: the clock. */
  now?: () => Date;
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

/** Every option checked, with its default in place. */
export interface ExportSettings {
  since: string | undefined;
  until: string | undefined;
  limit: number;
  sort: 'asc' | 'desc';
  windowing: Windowing;
  origin: string;
  includeTotal: boolean;
  prefetch: number;
  concurrency: number;
  ordered: boolean;
  /** 0 with concurrency 1: one window is read `prefetch` pages ahead, as the consumer asks. */
  readAheadBytes: number;
  /** Whether a first load may look for where the data starts (no `since`, no `origin`). */
  findStart: boolean;
  state: StateStore | undefined;
  /** undefined: read the start from `state`; null: start afresh. */
  resume: DatasetState | null | undefined;
  stateKey: string;
  lookbackMs: number;
  identity: RowIdentity;
  minSpanMs: number;
  signal: AbortSignal | undefined;
  now: () => Date;
}

/** What windows read ahead of the consumer together, beyond `prefetch` pages each. */
export const DEFAULT_READ_AHEAD_BYTES = 2 * 1024 * 1024;

export const EXPORT_OPTION_NAMES: OptionNames<ExportOptions> = {
  since: true, until: true, limit: true, sort: true, window: true, origin: true, includeTotal: true, prefetch: true,
  concurrency: true, ordered: true, readAheadBytes: true, state: true, resume: true, stateKey: true, lookback: true,
  rowIdentity: true, minSplitSpan: true, signal: true, now: true,
};

export function exportSettings(opts: ExportOptions, dataset: ResolvedDataset): ExportSettings {
  checkOptionNames(opts, EXPORT_OPTION_NAMES, 'an export');
  const concurrency = parseInteger(opts.concurrency ?? 1, 'concurrency', { min: 1 });
  const since = opts.since === undefined ? undefined : normalizeInstant(opts.since, 'since');
  const until = opts.until === undefined ? undefined : normalizeInstant(opts.until, 'until');
  // An empty span is a mistake (the two swapped, say), not a request for nothing.
  if (since !== undefined && until !== undefined && Date.parse(since) >= Date.parse(until)) {
    throw new ConfigError(`since (${since}) must be before until (${until})`);
  }
  return {
    since,
    until,
    limit: parseInteger(opts.limit ?? PAGE_MAX, 'limit', { min: 1, max: PAGE_MAX }),
    sort: oneOf(opts.sort ?? 'asc', ['asc', 'desc'], 'sort'),
    windowing: resolveWindowing(opts.window, dataset.pathKind),
    origin: normalizeInstant(opts.origin ?? DEFAULT_ORIGIN, 'origin'),
    includeTotal: parseBoolean(opts.includeTotal, 'includeTotal', false),
    prefetch: parseInteger(opts.prefetch ?? 1, 'prefetch'),
    concurrency,
    ordered: parseBoolean(opts.ordered, 'ordered', true),
    readAheadBytes: concurrency === 1 ? 0 : parseInteger(opts.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES, 'readAheadBytes'),
    findStart: opts.since === undefined && opts.origin === undefined,
    state: opts.state,
    resume: opts.resume,
    stateKey: opts.stateKey === undefined || (typeof opts.stateKey === 'string' && opts.stateKey.trim() !== '')
      ? opts.stateKey ?? dataset.key
      : badOption('stateKey', 'a non-empty string', opts.stateKey),
    lookbackMs: lookbackMillis(opts.lookback),
    identity: oneOf(opts.rowIdentity ?? dataset.identity, ['key', 'content'], 'rowIdentity'),
    // At least a millisecond: a window is never halved into an empty one.
    minSpanMs: parseDuration(opts.minSplitSpan ?? DEFAULT_MIN_SPLIT_MS, 'minSplitSpan', { min: 1 }),
    signal: opts.signal,
    now: opts.now ?? (() => new Date()),
  };
}

function badOption(name: string, allowed: string, value: unknown): never {
  throw new ConfigError(`${name} must be ${allowed}, not ${JSON.stringify(value)}`);
}

function oneOf<V extends string>(value: V, allowed: readonly V[], name: string): V {
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be ${allowed.join(' or ')}, not '${String(value)}'`);
  return value;
}
