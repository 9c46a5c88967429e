// The state file on disk: reading and checking it, rewriting it atomically, and clearing the
// temporaries that writers killed mid-save left beside it. The store around it is in state.ts.
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../core/errors.ts';
import { aboutFile, codeOf, FileError } from '../core/file-errors.ts';
import { makeFolder } from '../core/make-folder.ts';
import { openPrivate } from '../core/private-files.ts';
import { processAlive } from './lock-holder.ts';
import type { DatasetState } from './state.ts';
import { siblingsMatching } from './temp-siblings.ts';

export interface StateFile {
  version: 1;
  datasets: Record<string, DatasetState>;
}

/** The file's content, or an empty state when it does not exist yet or is an empty file (as
 * `mktemp` makes it: this module never writes one, see writeStateFile); a foreign or torn file,
 * or one that is not a file (`/dev/null`, which reads empty too), is a ConfigError. */
export async function readStateFile(path: string): Promise<StateFile> {
  await removeStaleTemps(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return { version: 1, datasets: {} };
    throw new FileError('read the state file', path, error);
  }
  if (text.trim() === '') {
    const regular = await stat(path).then((st) => st.isFile(), () => false);
    if (!regular) throw new ConfigError(`The state file ${path} is not a file; give the path of a file (it is created if missing).`);
    return { version: 1, datasets: {} };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`The state file ${path} is not valid JSON; move it away to start the loads afresh (with lender sync, move its NDJSON files away too).`);
  }
  const file = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Partial<StateFile>;
  if (typeof file.datasets !== 'object' || file.datasets === null || Array.isArray(file.datasets) || typeof file.version !== 'number') {
    throw new ConfigError(`The state file ${path} is not a lender-streams state file; give another path, or move it away to start the loads afresh.`);
  }
  if (file.version !== 1) {
    throw new ConfigError(`The state file ${path} is of version ${file.version}, which this lender-streams (version 1 state files) cannot read; use the version that wrote it.`);
  }
  return file as StateFile;
}

/**
 * Rewrites the whole file: a temporary file in the same folder (the store's `n`th) is written and
 * fsynced, then renamed over the old one, so a crash leaves the previous state or the new one.
 */
export async function writeStateFile(path: string, file: StateFile, n: number): Promise<void> {
  await makeFolder(dirname(path));
  await aboutFile('write the state file', path, () => replace(path, JSON.stringify(file, null, 1), n));
  // The rename itself is durable only once the folder's entry is flushed (where supported).
  const dir = await open(dirname(path), 'r').catch(() => undefined);
  if (dir !== undefined) {
    await dir.sync().catch(() => undefined);
    await dir.close();
  }
}

async function replace(path: string, text: string, n: number): Promise<void> {
  const tmp = join(dirname(path), tempName(basename(path), process.pid, n));
  // Renamed over the state, so its mode becomes the state file's: owner only.
  const handle = await openPrivate(tmp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await rename(tmp, path);
}

/** `.<name>.<pid>.<n>.tmp`: the pid says which process may still be writing it. */
function tempName(name: string, pid: number, n: number): string {
  return `.${name}.${pid}.${n}.tmp`;
}

/**
 * Removes the temporary files a process killed mid-save left next to the state file (the rename
 * never happened, so they hold nothing the state file lacks). Only files of this state file whose
 * writer is gone: a live process's file may be about to be renamed, and this process's own are
 * written by another store on the same path. Two live processes sharing one state file is a bug
 * of its own (each rewrites the other's datasets; the lock keeps sync and export from it); this
 * at least never deletes a file that one of them is writing. A dead writer's pid reused by a new
 * process keeps its file until that one ends, which only costs disk. Failures here never fail the load: the litter is harmless.
 */
async function removeStaleTemps(path: string): Promise<void> {
  for (const { path: temp, match } of await siblingsMatching(path, `.${basename(path)}.`, /^(\d+)\.(\d+)\.tmp$/)) {
    const pid = Number(match[1]);
    if (pid === process.pid || !Number.isSafeInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    try {
      await unlink(temp);
    } catch {
      // Gone already (another process cleaned it up) or not ours to remove: leave it.
    }
  }
}
