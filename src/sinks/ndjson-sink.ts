// NDJSON files, exactly once: <dir>/<code>.ndjson per dataset and a state file beside them. A
// commit appends the page's lines, flushes them to disk, then saves the state together with the
// file's length after them. A crash between the two leaves lines the state does not count: the
// next open cuts the file back to the length its state recorded, so the page is written once.
// A file the state has no record of is refused, not emptied: it was not written by this state
// (another state's run, a file of the user's), unless the marker of a first page written under
// this state says it was. Each file is locked while a run writes it (`<code>.ndjson.lock`), so
// two runs under different states cannot append to it, or cut each other's lines, at once.
import { open, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { aboutFile } from '../core/file-errors.ts';
import { makeFolder } from '../core/make-folder.ts';
import { checkOptionNames } from '../core/option-names.ts';
import { readTextIfThere, unlinkIfThere } from '../core/optional-files.ts';
import { openPrivate } from '../core/private-files.ts';
import { ndjsonBytes } from '../exports/ndjson.ts';
import { checkDatasetState } from '../exports/state-check.ts';
import { acquireStateLock, type StateLock } from '../exports/state-lock.ts';
import { fileState, type DatasetState, type StateStore } from '../exports/state.ts';
import { SinkError } from './errors.ts';
import type { Sink, SinkDataset, SinkPage } from './sink.ts';

export const DEFAULT_STATE_FILE = '.lender-state.json';

export interface NdjsonSinkOptions {
  /** Folder of the files (created when the first dataset is opened). */
  dir: string;
  /** Default: a file state at <dir>/.lender-state.json, whose lock the sink takes for a run. */
  state?: StateStore;
}

/** The NDJSON file of a dataset in the folder. */
export function ndjsonFile(dir: string, code: string): string {
  return join(dir, `${code}.ndjson`);
}

/** One NDJSON file per dataset. Files are append-only: an incremental load appends the new
 * versions of changed rows, so the last line of a public_id is its latest version. */
export function ndjsonSink(opts: NdjsonSinkOptions): Sink {
  checkOptionNames(opts, { dir: true, state: true }, 'ndjsonSink()');
  return new NdjsonSink(opts.dir, opts.state ?? fileState(join(opts.dir, DEFAULT_STATE_FILE)));
}

/** What a first page's marker holds: which state it is written under (a state file by its path;
 * any other store has no name that outlives the process, so its markers hold ''). */
function storeName(store: StateStore): string {
  return 'path' in store && typeof store.path === 'string' ? resolve(store.path) : '';
}

class NdjsonSink implements Sink {
  readonly target: string;
  readonly #dir: string;
  readonly #store: StateStore;
  /** The file being written, locked at open() and opened at the first commit of its dataset.
   * `first`: no state yet. */
  #file: { code: string; lock: StateLock; handle: FileHandle | undefined; bytes: number; first: boolean } | undefined;

  constructor(dir: string, store: StateStore) {
    this.target = dir;
    this.#dir = dir;
    this.#store = store;
  }

  lock(): Promise<{ release(): Promise<void> }> {
    return this.#store.lock?.() ?? Promise.resolve({ release: async () => {} });
  }

  location(dataset: SinkDataset): string {
    return ndjsonFile(this.#dir, dataset.code);
  }

  async open(dataset: SinkDataset): Promise<DatasetState | undefined> {
    await this.#closeFile();
    await makeFolder(this.#dir);
    const path = this.location(dataset);
    const lock = await acquireStateLock(`${path}.lock`, `the file ${path}`);
    try {
      const { state, bytes, first } = await this.#prepare(dataset, path);
      this.#file = { code: dataset.code, lock, handle: undefined, bytes, first };
      return state;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Loads the dataset's state and brings its file back to what that state records. */
  async #prepare(dataset: SinkDataset, path: string): Promise<{ state: DatasetState | undefined; bytes: number; first: boolean }> {
    const saved = await this.#store.load(dataset.key);
    // Checked here too: its fileBytes decides what is cut from the file.
    const state = saved === undefined ? undefined : checkDatasetState(saved, dataset.code, dataset.key);
    const size = await sizeOf(path);
    const marker = firstPageMarker(path);
    if (state === undefined) {
      // Nothing was committed: the file's lines can only be a crashed first page's, and only when
      // its marker says so. Any other file is left as it is.
      if (size !== undefined && size > 0 && (await readTextIfThere(marker)) !== storeName(this.#store)) {
        throw new SinkError(
          `${path} holds ${size} bytes that the state has no record of: lender sync appends only to files it wrote ` +
            `under the same state. Move the file away, or sync with the state that wrote it.`,
        );
      }
    } else {
      // A first page whose state was saved just before a crash: its marker is stale.
      await unlinkIfThere(marker);
    }
    const committed = state === undefined ? 0 : state.fileBytes;
    if (committed === undefined) {
      // A state written before file lengths were recorded: keep whole lines, as that version did.
      return { state, bytes: size === undefined ? 0 : await cutTornLine(path, size), first: false };
    }
    if ((size ?? 0) < committed) {
      throw new SinkError(
        `${path} holds ${size ?? 0} bytes but its state records ${committed}: the file was changed outside lender sync. ` +
          `Restore it, or move it away and remove ${dataset.key} from the state for a fresh load.`,
      );
    }
    // Every commit ends with a whole line: a length that does not was edited, and cutting there
    // would leave a torn line whose rows are never fetched again.
    if (committed > 0 && (await byteAt(path, committed - 1)) !== NEWLINE) {
      throw new SinkError(
        `${path}: its state records ${committed} bytes, which do not end a line of the file: the state was changed outside lender sync. ` +
          `Restore it, or move the file away and remove ${dataset.key} from the state for a fresh load.`,
      );
    }
    if (size !== undefined && size > committed) {
      const handle = await openPrivate(path, 'r+');
      try {
        await handle.truncate(committed);
        await handle.datasync();
      } finally {
        await handle.close();
      }
    }
    return { state, bytes: committed, first: state === undefined };
  }

  async commit({ dataset, rows, state }: SinkPage): Promise<void> {
    const file = this.#file;
    if (file?.code !== dataset.code) throw new SinkError(`commit of ${dataset.code} without open()`);
    const path = this.location(dataset);
    // Created at the first commit: a dataset that fails before any page leaves no empty file.
    if (file.handle === undefined) {
      const store = storeName(this.#store);
      if (file.first) await aboutFile('write the marker of', path, () => markFirstPage(path, store));
      file.handle = await aboutFile('open', path, () => openPrivate(path, 'a'));
    }
    if (rows.length > 0) {
      const bytes = ndjsonBytes(rows);
      const { handle } = file;
      // appendFile writes until every byte is written: one write() may write fewer without an
      // error (a disk filling up, a file size limit), and the state would count bytes never written.
      await aboutFile('write', path, async () => {
        try {
          await handle.appendFile(bytes);
          await handle.datasync();
        } catch (error) {
          // What was written of the page goes, so a later commit does not append after it (the
          // next open would cut it anyway).
          await handle.truncate(file.bytes).catch(() => undefined);
          throw error;
        }
      });
      file.bytes += bytes.length;
    }
    await this.#store.save(dataset.key, { ...state, fileBytes: file.bytes });
    if (file.first) {
      file.first = false;
      await unlinkIfThere(firstPageMarker(path));
    }
  }

  async close(): Promise<void> {
    await this.#closeFile();
  }

  async #closeFile(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    try {
      await file?.handle?.close();
    } finally {
      await file?.lock.release();
    }
  }
}

/** Present from the first write of a dataset without state until that state is saved. */
function firstPageMarker(path: string): string {
  return `${path}.first-page`;
}

/** Creates the marker, naming the state, durably (its folder synced too), before the file's first
 * line is written. */
async function markFirstPage(path: string, store: string): Promise<void> {
  const handle = await openPrivate(firstPageMarker(path), 'w');
  try {
    await writeFile(handle, store);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const NEWLINE = 0x0a;

/** The byte at `offset` of the file (which holds at least that many bytes). */
async function byteAt(path: string, offset: number): Promise<number> {
  const handle = await open(path, 'r');
  try {
    const one = Buffer.alloc(1);
    await handle.read(one, 0, 1, offset);
    return one[0]!;
  } finally {
    await handle.close();
  }
}

/** Cuts a torn last line (a crash mid-write) and returns the length kept. */
async function cutTornLine(path: string, size: number): Promise<number> {
  if (size === 0) return 0;
  const handle = await openPrivate(path, 'r+');
  try {
    const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
    let end = size;
    let keep = -1;
    while (end > 0 && keep < 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const nl = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
      if (nl >= 0) keep = start + nl + 1;
      end = start;
    }
    if (keep < 0) keep = 0;
    if (keep < size) await handle.truncate(keep);
    return keep;
  } finally {
    await handle.close();
  }
}
