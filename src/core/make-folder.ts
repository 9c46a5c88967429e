// mkdir -p whose failure names the folder and its true cause: Node's recursive mkdir says ENOENT
// where a folder could not be made for another reason (a read-only file system: EROFS).
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { codeOf, FileError } from './file-errors.ts';

/** Makes the folder and any missing parent; rejects with a FileError naming `path`. */
export async function makeFolder(path: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode });
  } catch (error) {
    const cause = codeOf(error) === 'ENOENT' ? await trueCause(path, mode) : error;
    if (cause !== undefined) throw new FileError('create the folder', path, cause);
  }
}

/** The first missing folder made alone fails with the true code; if it is made (it could be all
 * along, or something removed a parent meanwhile), undefined once the rest is made too. */
async function trueCause(path: string, mode: number | undefined): Promise<unknown> {
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
