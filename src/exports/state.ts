// Load state of each dataset and the stores that keep it. A store maps a key (the dataset code,
// or "S1/D03" when addressed by section) to the JSON document below.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { nextTurn } from '../core/next-turn.ts';
import { ownField, withField } from '../core/own-fields.ts';
import type { ValueMark } from './highwater.ts';
import type { LoadProgress } from './progress.ts';
import { readStateFile, writeStateFile, type StateFile } from './state-file.ts';
import { acquireStateLock, lockPathOf, type StateLock } from './state-lock.ts';
import type { Window, Windowing } from './windows.ts';

/** Where a load stands: the last page delivered. `cursor: null` means that window is done. */
export interface LoadPosition {
  window: Window;
  cursor: string | null;
  /** Last value delivered inside `window` and the ids at it (to re-read the rest after a 504). */
  last: ValueMark | null;
}

/** An unfinished load, kept so a re-run resumes it with the options it started with. */
export interface LoadRecord {
  kind: 'initial' | 'incremental';
  /** The load's fixed end: windows are cut up to here. Also when the load started. */
  end: string;
  since: string | null;
  until: string | null;
  origin: string;
  windowing: Windowing;
  sort: 'asc' | 'desc';
  /** Rows at the inclusive since that the previous load delivered already. */
  skip: ValueMark | null;
  /** Written by older versions, which read windows one after another: the last page delivered.
   * Null in a record with `progress`. */
  position: LoadPosition | null;
  /** The spans completed and the windows read part-way (progress.ts); absent in older records. */
  progress?: LoadProgress;
}

/** What a state store keeps for one dataset: the high-water mark the next incremental load starts
 * from, and the unfinished load a re-run resumes. */
export interface DatasetState {
  /** 2 since loads keep their windows individually (`load.progress`); 1 before. Both resume. */
  version: 1 | 2;
  dataset: string;
  /** Greatest cursor value delivered by any load, and the ids delivered at exactly it. */
  highWater: ValueMark | null;
  /** Present while a load is unfinished. */
  load: LoadRecord | null;
  /** Set when the last load completed. */
  completedAt?: string;
  /** With `lookback`: id -> cursor value of rows delivered inside the lookback span. */
  seen?: Record<string, string>;
  /** The NDJSON sink's file length once the rows before this state were written: a resume cuts
   * the file back to it, so rows written after the last saved state are not written twice. */
  fileBytes?: number;
}

/** Where an export keeps each dataset's state between runs (`ExportOptions.state`): `fileState`,
 * `memoryState`, or your own implementation. */
export interface StateStore {
  load(key: string): Promise<DatasetState | undefined>;
  save(key: string, state: DatasetState): Promise<void>;
  /**
   * Optional: an exclusive hold on the state for one run at a time. sync() takes it for its run
   * and releases it at the end; a store without it is not locked.
   */
  lock?(): Promise<StateLock>;
}

/** The state store `fileState` returns: one JSON file for every dataset, and the lock that keeps
 * two runs off it. */
export interface FileStateStore extends StateStore {
  readonly path: string;
  /** `<path>.lock`, present while a run holds the state. */
  readonly lockPath: string;
  /**
   * Takes the state's lock (creating `lockPath`), or rejects with a StateLockedError naming the
   * run that holds it. Holds taken through one store nest (the store is one owner: a caller that
   * locked it can pass it to sync(), which takes a hold of its own), and the lock file goes once
   * every one was released. sync() takes a hold itself; load and save do not (reading a state
   * never waits for a running sync), so code that runs `exportRows(client, code, { state })`
   * takes one around that.
   */
  lock(): Promise<StateLock>;
}

/** A store in memory; for tests and for callers that persist checkpoints themselves. */
export function memoryState(initial: Record<string, DatasetState> = {}): StateStore & { snapshot(): Record<string, DatasetState> } {
  const map = new Map<string, string>(Object.entries(initial).map(([k, v]) => [k, JSON.stringify(v)]));
  return {
    async load(key) {
      const text = map.get(key);
      return text === undefined ? undefined : (JSON.parse(text) as DatasetState);
    },
    async save(key, state) {
      // Stored as text so later mutation of the caller's object cannot change what was saved.
      map.set(key, JSON.stringify(state));
    },
    snapshot() {
      return Object.fromEntries([...map].map(([k, v]) => [k, JSON.parse(v) as DatasetState]));
    },
  };
}

/** The file a symbolic link points to, or the path as given: a save renames a new file over the
 * path, which would replace the link instead of writing where it points, and a run given the
 * other name would take a lock of its own. */
function followLink(path: string): string {
  let target = path;
  let followed = false;
  // Link by link, the kernel reading each path (realpathSync.native: Node's own would first
  // collapse `..` in the text, which after a linked folder is not the real parent); a loop ends.
  for (let hops = 0; hops < 40; hops += 1) {
    let text: string;
    try {
      if (!lstatSync(target).isSymbolicLink()) break;
      text = readlinkSync(target);
    } catch {
      // Not there yet: the file is made where the links lead.
      break;
    }
    target = isAbsolute(text) ? text : `${realpathSync.native(dirname(target))}${sep}${text}`;
    followed = true;
  }
  if (!followed) return path;
  try {
    // A plain path for messages and for the lock's name, the same whichever name led here.
    return join(realpathSync.native(dirname(target)), basename(target));
  } catch {
    return target;
  }
}

// One counter for every store of this process: two stores of the same path (a second one opened
// to read the state back, say) must never pick the same temporary file name.
let tempFiles = 0;

/**
 * A JSON file holding the state of every dataset. Each save rewrites the whole file atomically:
 * a temporary file in the same folder is written and fsynced, then renamed over the old one, so
 * a crash leaves either the previous state or the new one, never a torn file.
 */
export function fileState(path: string): FileStateStore {
  const target = followLink(path);
  let cache: Promise<StateFile> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const lockPath = lockPathOf(target);
  let locked: Promise<StateLock> | undefined;
  let holds = 0;
  let unlocking: Promise<void> = Promise.resolve();

  const read = (): Promise<StateFile> => {
    cache ??= readStateFile(target);
    return cache;
  };

  const write = (file: StateFile): Promise<void> => {
    tempFiles += 1;
    return writeStateFile(target, file, tempFiles);
  };

  const release = (lock: StateLock): Promise<void> => {
    holds -= 1;
    if (holds > 0) return Promise.resolve();
    locked = undefined;
    unlocking = (async () => {
      // Saves asked for under the lock are written before it goes. An export stream asks for each
      // save once the one before is written, so wait until no new one follows.
      let pending: Promise<unknown>;
      do {
        pending = queue;
        await pending;
        await nextTurn();
      } while (pending !== queue);
      await lock.release();
    })();
    return unlocking;
  };

  return {
    path: target,
    lockPath,
    lock() {
      if (locked === undefined) {
        const attempt = unlocking.then(() => acquireStateLock(lockPath));
        locked = attempt;
        // A refused attempt is forgotten, so that a later call tries again.
        attempt.catch(() => {
          if (locked === attempt) locked = undefined;
        });
      }
      // Counted at once: a hold released meanwhile must not remove the file this call will share.
      holds += 1;
      return locked.then(
        (lock) => {
          let released = false;
          return {
            path: lock.path,
            holder: lock.holder,
            release: async () => {
              if (released) return;
              released = true;
              await release(lock);
            },
          };
        },
        (error: unknown) => {
          holds -= 1;
          throw error;
        },
      );
    },
    async load(key) {
      // A save already asked for is part of the state: a load started right after it sees it.
      await queue;
      const file = await read();
      const state = ownField(file.datasets, key);
      return state === undefined ? undefined : (structuredClone(state) as DatasetState);
    },
    save(key, state) {
      // Saves are serialised so that an older snapshot can never be renamed over a newer one.
      const next = queue.then(async () => {
        const file = await read();
        withField(file.datasets, key, structuredClone(state));
        await write(file);
      });
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
