// mkdir -p whose failure names the folder and its true cause. The missing levels are made one by
// one rather than with Node's recursive mkdir, which says ENOENT where a folder could not be made
// for another reason (a read-only file system: EROFS) and loops forever where mkdir itself says
// ENOENT (under /proc). makeFolderSync takes the same steps for a caller that cannot wait.
import { mkdirSync, statSync, type Stats } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { codeOf, FileError } from './file-errors.ts';

// Owner-only, as the files in them: under a loose umask (000) a folder of 0777 would let any
// local user replace the state or data files it holds, or plant lock files. The umask may
// narrow it further; an existing folder is left as it is.
const PRIVATE_FOLDER_MODE = 0o700;

/** Makes the folder and any missing parent (owner-only); rejects with a FileError naming `path`. */
export async function makeFolder(path: string, mode = PRIVATE_FOLDER_MODE): Promise<void> {
  const folder = resolve(path);
  try {
    const levels: string[] = [];
    for (let level = folder; !(await exists(level)); level = dirname(level)) {
      levels.unshift(level);
      if (dirname(level) === level) break;
    }
    for (const level of levels) {
      await mkdir(level, { mode }).catch(async (error: unknown) => {
        // Made meanwhile by another process; a dangling link there is no folder.
        if (codeOf(error) !== 'EEXIST' || !(await isFolder(level))) throw error;
      });
    }
    // A file there, or a path through one: mkdir says which (EEXIST, ENOTDIR).
    if (!(await isFolder(folder))) await mkdir(folder, { mode });
  } catch (error) {
    throw new FileError('create the folder', path, await plainer(error, folder));
  }
}

/** makeFolder, synchronous (the REPL's history, set up before its first prompt). */
export function makeFolderSync(path: string, mode = PRIVATE_FOLDER_MODE): void {
  const folder = resolve(path);
  try {
    const levels: string[] = [];
    for (let level = folder; !existsSync(level); level = dirname(level)) {
      levels.unshift(level);
      if (dirname(level) === level) break;
    }
    for (const level of levels) {
      try {
        mkdirSync(level, { mode });
      } catch (error) {
        if (codeOf(error) !== 'EEXIST' || !isFolderSync(level)) throw error;
      }
    }
    if (!isFolderSync(folder)) mkdirSync(folder, { mode });
  } catch (error) {
    throw new FileError('create the folder', path, plainerSync(error, folder));
  }
}

/** mkdir's EEXIST where something else is: "file already exists" reads as if the folder were there. */
async function plainer(error: unknown, folder: string): Promise<unknown> {
  if (codeOf(error) !== 'EEXIST') return error;
  return inTheWay(error, await stat(folder).catch(() => undefined));
}

function plainerSync(error: unknown, folder: string): unknown {
  if (codeOf(error) !== 'EEXIST') return error;
  try {
    return inTheWay(error, statSync(folder));
  } catch {
    return error;
  }
}

/** A dangling link (no stat) keeps Node's words. */
function inTheWay(error: unknown, found: Stats | undefined): unknown {
  if (found === undefined || found.isDirectory()) return error;
  const what = found.isFile() ? 'a file of that name is there' : 'something of that name that is not a folder is there';
  return Object.assign(new Error(`EEXIST: ${what}`, { cause: error }), { code: 'EEXIST' });
}

/** Whether something is there; any failure but ENOENT (EACCES, ENOTDIR) counts as there, and the
 * step after says what it is. */
async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, (error: unknown) => codeOf(error) !== 'ENOENT');
}

function existsSync(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (error) {
    return codeOf(error) !== 'ENOENT';
  }
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

function isFolderSync(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
