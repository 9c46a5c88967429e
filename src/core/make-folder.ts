// mkdir -p whose failure names the folder and its true cause: Node's recursive mkdir says ENOENT
// where a folder could not be made for another reason (a read-only file system: EROFS).
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
    await mkdir(path, { recursive: true, mode });
  } catch (error) {
    const cause = codeOf(error) === 'ENOENT' ? await trueCause(path, mode) : error;
    if (cause !== undefined) throw new FileError('create the folder', path, cause);
  }
}

/** The first missing folder made alone fails with the true code; if it is made (it could be all
 * along, or something removed a parent meanwhile), undefined once the rest is made too. */
async function trueCause(path: string, mode: number): Promise<unknown> {
  let missing = resolve(path);
  while (dirname(missing) !== missing && !(await exists(dirname(missing)))) missing = dirname(missing);
  try {
    await mkdir(missing, { mode });
    await mkdir(path, { recursive: true, mode });
    return undefined;
  } catch (error) {
    return error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    // Any other failure (EACCES): the mkdir below says what it is.
    return codeOf(error) !== 'ENOENT';
  }
}
