// sync(): initial-then-incremental loads of datasets into <out>/<code>.ndjson. Per page the
// rows are appended and flushed to disk first, and only then is the state saved: a crash can
// make the re-run write the last unsaved page again, never skip one.
import { mkdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceApi } from '../core/api.ts';
import { LenderError } from '../core/errors.ts';
import type { DatasetRef } from '../core/types.ts';
import { openPrivate } from '../core/private-files.ts';
import { SyncError } from './errors.ts';
import { describeDataset, exportPages, type ExportOptions, type ExportStream } from './export-stream.ts';
import { ndjsonText } from './ndjson.ts';
import { fileState, type StateStore } from './state.ts';

/** Options of sync(): the export options except those it sets per dataset (state key, resume,
 * bounds, sort), plus the output folder. */
export interface SyncOptions extends Omit<ExportOptions, 'state' | 'resume' | 'stateKey' | 'since' | 'until' | 'sort'> {
  /** Folder of the NDJSON files. */
  out: string;
  /** Default: a file state at <out>/.lender-state.json. Its lock is held for the run (see
   * StateStore.lock): a second sync of the same state is refused with a StateLockedError. */
  state?: StateStore;
  /** Called with each dataset's stream before it is read, e.g. to show progress. */
  onStream?: (stream: ExportStream) => void;
}

/** What sync() reports for one dataset: the file its rows went to, the kind of load, and the
 * stream's counts. */
export interface DatasetSyncSummary {
  dataset: string;
  file: string;
  mode: 'initial' | 'incremental' | 'resumed';
  rows: number;
  pages: number;
  windows: number;
  splits: number;
  retries: number;
}

export const DEFAULT_STATE_FILE = '.lender-state.json';

/** The NDJSON file of a dataset in the sync folder. */
function datasetFile(out: string, code: string): string {
  return join(out, `${code}.ndjson`);
}

/** The summary of one dataset's stream once it has ended, as sync() returns it. */
export function datasetSummary(stream: ExportStream, out: string): DatasetSyncSummary {
  const code = stream.dataset.code;
  return { dataset: code, file: datasetFile(out, code), mode: stream.loadMode ?? 'initial', ...stream.stats };
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
 * Loads each dataset in turn. Without a list, the catalog's available datasets. Returns a summary
 * per dataset code. A dataset whose load fails with a service error (unavailable, retries
 * exhausted) does not stop the others: once all were tried, a SyncError carries the summary of
 * those loaded and the failures. An abort (signal) stops after the page being written, with its
 * state saved. Another run holding the state's lock: a StateLockedError before anything is written.
 *
 * @example
 * ```ts
 * const summary = await sync(client, ['D01', 'D07'], { out: 'data/' });   // state: data/.lender-state.json
 * ```
 */
export async function sync(
  api: ServiceApi,
  datasets: readonly DatasetRef[] | undefined,
  opts: SyncOptions,
): Promise<Record<string, DatasetSyncSummary>> {
  const store = opts.state ?? fileState(join(opts.out, DEFAULT_STATE_FILE));
  // Two runs on one state would both append every row: the second stops here.
  const lock = await store.lock?.();
  try {
    await mkdir(opts.out, { recursive: true });
    return await syncLocked(api, datasets, opts, store);
  } finally {
    await lock?.release();
  }
}

async function syncLocked(
  api: ServiceApi,
  datasets: readonly DatasetRef[] | undefined,
  opts: SyncOptions,
  store: StateStore,
): Promise<Record<string, DatasetSyncSummary>> {
  const refs = datasets ?? (await availableDatasets(api, opts.signal));
  const summary: Record<string, DatasetSyncSummary> = {};
  const failures: Record<string, LenderError> = {};
  for (const ref of refs) {
    const resolved = describeDataset(ref);
    // State is keyed by code whichever way the dataset was named, so the CLI and the catalog agree.
    const key = resolved.code;
    const file = datasetFile(opts.out, resolved.code);
    const stream = exportPages(api, ref, { ...opts, resume: (await store.load(key)) ?? null, stateKey: key });
    opts.onStream?.(stream);
    // Opened at the first page: a dataset that fails before any (not available, say) leaves no
    // empty file that looks like a load.
    let handle: FileHandle | undefined;
    try {
      for await (const page of stream) {
        handle ??= await openForAppend(file);
        if (page.rows.length > 0) {
          await handle.write(ndjsonText(page.rows));
          await handle.datasync();
        }
        await store.save(key, page.checkpoint.state);
      }
      handle ??= await openForAppend(file);
      if (stream.completedState !== null) await store.save(key, stream.completedState);
    } catch (error) {
      // Anything but a service error (a full disk, an abort, a bug) would fail every dataset alike.
      if (opts.signal?.aborted === true || !(error instanceof LenderError)) throw error;
      failures[resolved.code] = error;
      continue;
    } finally {
      await handle?.close();
    }
    summary[resolved.code] = datasetSummary(stream, opts.out);
  }
  if (Object.keys(failures).length > 0) throw new SyncError(summary, failures, refs.length);
  return summary;
}

/**
 * Opens the file for appending, first cutting a torn last line left by a crash mid-write: that
 * line belongs to a page whose state was never saved, so the re-run writes it again whole. The
 * rows are personal data: the file is owner-only.
 */
async function openForAppend(path: string): Promise<FileHandle> {
  const handle = await openPrivate(path, 'a+');
  try {
    const { size } = await handle.stat();
    if (size > 0) {
      const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
      let end = size;
      let keep = -1;
      while (end > 0 && keep < 0) {
        const start = Math.max(0, end - chunk.length);
        const { bytesRead } = await handle.read(chunk, 0, end - start, start);
        const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (nl >= 0) keep = start + nl + 1;
        end = start;
      }
      if (keep < 0) keep = 0;
      if (keep < size) await handle.truncate(keep);
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}
