// mkdir -p whose failure names the folder and its true cause. The missing levels are made one by
// one rather than with Node's recursive mkdir, which says ENOENT where a folder could not be made
// for another reason (a read-only file system: EROFS) and loops forever where mkdir itself says
// ENOENT (under /proc).
import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { codeOf, FileError } from './file-errors.ts';

// Owner-only, as the files in them: under a loose umask (000) a folder of 0777 would let any
// local user replace the state or data files it holds, or plant lock files. The umask may
// narrow it further; an existing folder is left as it is.
const PRIVATE_FOLDER_MODE = 0o700;

/** Makes the folder and any missing parent (owner-only); rejects with a FileError naming `path`. */
export async function makeFolder(path: string, mode = PRIVATE_FOLDER_MODE): Promise<void> {
  try {
    const levels = await missingLevels(resolve(path));
    // Nothing missing: a folder already, or a file (mkdir then says EEXIST), or a path through a
    // file (stat says ENOTDIR).
    if (levels.length === 0 && !(await stat(path)).isDirectory()) await mkdir(path, { mode });
    for (const level of levels) {
      await mkdir(level, { mode }).catch((error: unknown) => {
        // Made meanwhile by another process: what follows still fails if it is not a folder.
        if (codeOf(error) !== 'EEXIST') throw error;
      });
    }
  } catch (error) {
    throw new FileError('create the folder', path, error);
  }
}

/** The levels of `path` that do not exist, the outermost first. */
async function missingLevels(path: string): Promise<string[]> {
  const levels: string[] = [];
  for (let level = path; !(await exists(level)); level = dirname(level)) {
    levels.unshift(level);
    if (dirname(level) === level) break;
  }
  return levels;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    // Any other failure (EACCES, ENOTDIR): the step after says what it is.
    return codeOf(error) !== 'ENOENT';
  }
}

/** makeFolder for a caller that cannot wait (the REPL's history, set up before its first
 * prompt): the same steps, synchronous. */
export function makeFolderSync(path: string, mode = PRIVATE_FOLDER_MODE): void {
  try {
    const levels: string[] = [];
    for (let level = resolve(path); !existsSync(level); level = dirname(level)) {
      levels.unshift(level);
      if (dirname(level) === level) break;
    }
    if (levels.length === 0 && !statSync(path).isDirectory()) mkdirSync(path, { mode });
    for (const level of levels) {
      try {
        mkdirSync(level, { mode });
      } catch (error) {
        if (codeOf(error) !== 'EEXIST') throw error;
      }
    }
  } catch (error) {
    throw new FileError('create the folder', path, error);
  }
}

function existsSync(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (error) {
    return codeOf(error) !== 'ENOENT';
  }
}
