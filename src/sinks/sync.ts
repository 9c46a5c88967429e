// sync(): initial-then-incremental loads of datasets into a sink (NDJSON files, DuckDB,
// PostgreSQL or your own). Each page's rows are committed together with the state that follows
// them, so a crash at any instant resumes with nothing lost and nothing written twice.
import type { ServiceApi } from '../core/api.ts';
import { ConfigError, LenderError } from '../core/errors.ts';
import { checkOptionNames, type OptionNames } from '../core/option-names.ts';
import type { DatasetRef } from '../core/types.ts';
import { SyncError } from '../exports/errors.ts';
import { describeDataset, exportPages, type ExportOptions, type ExportStream, type ResolvedDataset } from '../exports/export-stream.ts';
import { EXPORT_OPTION_NAMES, exportSettings } from '../exports/export-options.ts';
import type { StateStore } from '../exports/state.ts';
import { ndjsonSink } from './ndjson-sink.ts';
import { commitInGroups, rowsOf } from './group-commit.ts';
import { syncShared } from './shared-load.ts';
import type { Sink, SinkDataset } from './sink.ts';

/**
 * Pages a sync reads ahead of its sink (the `prefetch` default of a sync). A sink's commit works
 * on the event loop (a COPY's encoding; DuckDB's appends, though in slices) and then waits for the
 * database; with one page ahead the service idled until the commit ended, and a sync into DuckDB
 * took 1.5x as long for it. Four keep the service busy through a commit, for a few MB.
 */
const SYNC_PREFETCH = 4;

/**
 * Windows a sync reads at once (the `concurrency` default of a sync; exports read one). Within a
 * window each page waits for the one before it, so with one window the service idles while the
 * sink's commit holds the event loop; a second window keeps it serving. Into DuckDB, 1,000,000 rows
 * took 1.11 to 1.17x NDJSON's time against 1.26 to 1.30x with one (Node 24, two runs of 3 rounds
 * each, alternating on one evening; another morning gave 1.19 to 1.39x, the machine's spread),
 * for 2 MB more; the NDJSON sync's own time did not change.
 */
export const SYNC_CONCURRENCY = 2;

/** Options of sync(): the export options except those it sets per dataset (state key, resume,
 * bounds, sort), plus where the rows go. */
export interface SyncOptions extends Omit<ExportOptions, 'state' | 'resume' | 'stateKey' | 'since' | 'until' | 'sort'> {
  /** The sink the rows and their state go to: `ndjsonSink`, `duckdbSink`, `postgresSink` or your own.
   * sync() does not close it. */
  to?: Sink;
  /** Shorthand for `to: ndjsonSink({ dir: out, state })`: NDJSON files in this folder. */
  out?: string;
  /** With `out`: the state store (default <out>/.lender-state.json). */
  state?: StateStore;
  /** Called with each dataset's stream before it is read, e.g. to show progress. */
  onStream?: (stream: ExportStream) => void;
  /** Called after each commit with the dataset's code and how many rows it stored: what a run
   * stopped midway (its abort signal) has stored, where a stream counts what it read. */
  onCommit?: (dataset: string, rows: number) => void;
}

// The export options, less those sync() sets per dataset (as SyncOptions says; `state` is its own), and its own.
const { state: _state, resume: _resume, stateKey: _stateKey, since: _since, until: _until, sort: _sort, ...SHARED_OPTION_NAMES } = EXPORT_OPTION_NAMES;
const SYNC_OPTION_NAMES: OptionNames<SyncOptions> = { ...SHARED_OPTION_NAMES, to: true, out: true, state: true, onStream: true, onCommit: true };

/** What sync() reports for one dataset: where its rows are, the kind of load, and the stream's counts. */
export interface DatasetSyncSummary {
  dataset: string;
  /** The dataset's file or table. */
  location: string;
  mode: 'initial' | 'incremental' | 'resumed';
  rows: number;
  pages: number;
  windows: number;
  splits: number;
  retries: number;
}

/** The summary of one dataset's stream once it has ended, as sync() returns it. */
export function datasetSummary(stream: ExportStream, location: string): DatasetSyncSummary {
  return { dataset: stream.dataset.code, location, mode: stream.loadMode ?? 'initial', ...stream.stats };
}

/** What a sink is told of a dataset. State is keyed by code whichever way the dataset was
 * named, so the CLI and the catalog agree. */
export function sinkDataset(resolved: ResolvedDataset): SinkDataset {
  return {
    code: resolved.code, section: resolved.section, key: resolved.code, cursorField: resolved.cursorField, identity: resolved.identity,
  };
}

/** The available datasets of the live catalog, in catalog order. */
export async function availableDatasets(api: ServiceApi, signal?: AbortSignal): Promise<{ section: string; dataset: string }[]> {
  const catalog = await api.catalog(signal === undefined ? {} : { signal });
  const refs: { section: string; dataset: string }[] = [];
  for (const section of catalog.sections) {
    for (const d of section.datasets) if (d.available) refs.push({ section: section.code, dataset: d.code });
  }
  return refs;
}

/**
 * Loads each dataset in turn into the sink. Without a list, the catalog's available datasets; a
 * dataset named twice is loaded once. Returns a summary per dataset code. A dataset whose load fails with a service error
 * (unavailable, retries exhausted) does not stop the others: once all were tried, a SyncError
 * carries the summary of those loaded and the failures. An abort (signal) stops after the page
 * being committed. Another run holding the sink's lock (NDJSON: StateLockedError, DuckDB:
 * DuckDbLockedError): refused before anything is written.
 *
 * @example
 * ```ts
 * await sync(client, ['D01', 'D07'], { to: duckdbSink({ path: 'lender.duckdb' }) });
 * await sync(client, ['D07'], { out: 'data/' });   // NDJSON files, state in data/.lender-state.json
 * ```
 */
export async function sync(
  api: ServiceApi,
  datasets: readonly DatasetRef[] | undefined,
  opts: SyncOptions,
): Promise<Record<string, DatasetSyncSummary>> {
  checkOptionNames(opts, SYNC_OPTION_NAMES, 'sync()');
  if (opts.to === undefined && opts.out === undefined) throw new ConfigError('sync() needs `to` (a sink) or `out` (a folder of NDJSON files)');
  if (opts.to !== undefined && opts.out !== undefined) throw new ConfigError('sync() takes `to` (a sink) or `out` (a folder), not both');
  if (opts.to !== undefined && opts.state !== undefined) throw new ConfigError('sync(): `state` goes with `out`; a sink keeps its own state');
  const sink = opts.to ?? ndjsonSink({ dir: opts.out!, ...(opts.state !== undefined && { state: opts.state }) });
  try {
    // Two runs on one sink would both load every row: the second stops here.
    const lock = await sink.lock?.();
    try {
      return await syncInto(api, datasets, sink, opts);
    } finally {
      await lock?.release();
    }
  } finally {
    if (opts.to === undefined) await sink.close();
  }
}

/** A dataset to load, named as the caller named it and as the sink sees it. */
interface Target {
  ref: DatasetRef;
  resolved: ResolvedDataset;
  dataset: SinkDataset;
}

/** How a failure is keyed when the name given cannot be resolved to a dataset code. */
function refText(ref: DatasetRef): string {
  return typeof ref === 'string' ? ref : `${ref.section}/${ref.dataset}`;
}

async function syncInto(
  api: ServiceApi,
  datasets: readonly DatasetRef[] | undefined,
  sink: Sink,
  opts: SyncOptions,
): Promise<Record<string, DatasetSyncSummary>> {
  const refs = datasets ?? (await availableDatasets(api, opts.signal));
  const { to: _to, out: _out, state: _state, onStream, onCommit, ...given } = opts;
  const exportOptions = { ...given, prefetch: given.prefetch ?? SYNC_PREFETCH, concurrency: given.concurrency ?? SYNC_CONCURRENCY };
  const summary: Record<string, DatasetSyncSummary> = {};
  const failures: Record<string, LenderError> = {};
  // A name that is no dataset fails on its own, under the name given; the others still load.
  const targets: Target[] = [];
  for (const ref of refs) {
    let resolved: ResolvedDataset;
    try {
      resolved = describeDataset(ref);
    } catch (error) {
      if (!(error instanceof LenderError)) throw error;
      failures[refText(ref)] = error;
      continue;
    }
    // A bad option is the caller's mistake, the same for every dataset: a ConfigError before any
    // dataset is read, not a failure of each.
    exportSettings(exportOptions, resolved);
    // Named twice (by code and by section, say): one table, one state, so one load.
    if (targets.some((t) => t.dataset.code === resolved.code)) continue;
    targets.push({ ref, resolved, dataset: sinkDataset(resolved) });
  }
  const attempted = targets.length + Object.keys(failures).length;
  const board = targets.length === 0 ? undefined : await sink.leases?.();
  if (board !== undefined) {
    const shared = await syncShared(api, targets, board, {
      ...exportOptions, ...(onStream !== undefined && { onStream }), ...(onCommit !== undefined && { onCommit }),
    });
    for (const { dataset } of targets) {
      const done = shared.loaded.get(dataset.code);
      if (done !== undefined) summary[dataset.code] = { dataset: dataset.code, location: sink.location(dataset), mode: done.mode, ...done.stats };
      const failure = shared.failed.get(dataset.code);
      if (failure !== undefined) failures[dataset.code] = failure;
    }
  }
  for (const { ref, dataset } of board === undefined ? targets : []) {
    try {
      const previous = await sink.open(dataset);
      const stream = exportPages(api, ref, { ...exportOptions, resume: previous ?? null, stateKey: dataset.key });
      onStream?.(stream);
      await commitInGroups(stream, (page) => page.rows.length, async (group) => {
        const rows = rowsOf(group);
        await sink.commit({ dataset, rows, state: group.at(-1)!.checkpoint.state });
        onCommit?.(dataset.code, rows.length);
      });
      if (stream.completedState !== null) await sink.commit({ dataset, rows: [], state: stream.completedState });
      summary[dataset.code] = datasetSummary(stream, sink.location(dataset));
    } catch (error) {
      // Anything but a service or sink error (a full disk, an abort, a bug) would fail every dataset alike.
      if (opts.signal?.aborted === true || !(error instanceof LenderError)) throw error;
      failures[dataset.code] = error;
    }
  }
  if (Object.keys(failures).length > 0) throw new SyncError(summary, failures, attempted);
  return summary;
}
