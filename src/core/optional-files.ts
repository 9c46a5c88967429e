// Files that may not be there: reading or removing one that is missing is not an error.
import { readFile, unlink } from 'node:fs/promises';

/** The file's text; undefined when it does not exist. */
export async function readTextIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes the file; one already gone is fine. */
export async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
