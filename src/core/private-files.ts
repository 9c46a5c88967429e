// Files that hold personal data or load state (sync's data files, state files and their locks,
// rejects files) are readable by their owner only. The mode given at creation is cut by the umask
// and ignored for a file that already exists, so each file is also chmodded once it is open,
// before anything is written to it. Only a regular file: the path may name a terminal, a pipe or
// /dev/null (`--rejects /dev/stderr`), whose mode is the system's or the user's, not ours.
import { close, fchmod, fstat, open as openFd, write, writev, createWriteStream, type WriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeFolder } from './make-folder.ts';

export const PRIVATE_MODE = 0o600;

/** EPERM: the file belongs to another user (a shared folder); its owner decides its mode. */
function notOwner(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EPERM';
}

/** Opens (creating if the flags say so) a file that ends up mode 0600 whatever the umask. */
export async function openPrivate(path: string, flags: string): Promise<FileHandle> {
  const handle = await open(path, flags, PRIVATE_MODE);
  try {
    if ((await handle.stat()).isFile()) await handle.chmod(PRIVATE_MODE);
  } catch (error) {
    if (!notOwner(error)) {
      await handle.close();
      throw error;
    }
  }
  return handle;
}

/** fs.open as a write stream calls it, with the chmod of openPrivate before the first write. */
function openRestricted(path: string, flags: string, mode: number, callback: (error: Error | null, fd?: number) => void): void {
  openFd(path, flags, mode, (error, fd) => {
    if (error !== null) return callback(error);
    const fail = (failure: Error) => close(fd, () => callback(failure));
    fstat(fd, (statError, stats) => {
      if (statError !== null) return fail(statError);
      if (!stats.isFile()) return callback(null, fd);
      fchmod(fd, PRIVATE_MODE, (chmodError) => {
        if (chmodError === null || notOwner(chmodError)) return callback(null, fd);
        fail(chmodError);
      });
    });
  });
}

/** openRestricted, once the file's folder and any missing parent are made (owner-only). */
function openInFolder(path: string, flags: string, mode: number, callback: (error: Error | null, fd?: number) => void): void {
  makeFolder(dirname(path)).then(() => openRestricted(path, flags, mode, callback), callback);
}

/** A write stream on a file that is mode 0600 before anything reaches it, in a folder made if
 * missing, as every other file this package writes. Errors (a folder that cannot be made, say)
 * arrive as the stream's 'error' event, as with fs.createWriteStream. */
export function privateWriteStream(path: string, flags = 'w'): WriteStream {
  return createWriteStream(path, { flags, mode: PRIVATE_MODE, fs: { open: openInFolder, write, writev, close } });
}
