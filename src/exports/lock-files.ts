// The file operations a state lock is made of: creating a file exclusively with its text already
// in it, reading one with its age, removing one only while it still holds the text it was read
// with, and clearing the temporaries that a process killed mid-create left beside a lock.
import { link, open, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { readTextIfThere, unlinkIfThere } from '../core/optional-files.ts';
import { openPrivate } from '../core/private-files.ts';
import { isStale, parseHolder } from './lock-holder.ts';
import { disown, own, type Owned } from './lock-registry.ts';
import { siblingsMatching } from './temp-siblings.ts';

export interface Found {
  text: string;
  mtimeMs: number;
}

/** A file's text and when it was last written; undefined when it does not exist. */
export async function readFound(path: string): Promise<Found | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { mtimeMs } = await handle.stat();
    return { text: await handle.readFile('utf8'), mtimeMs };
  } finally {
    await handle.close();
  }
}

/** Where hard links fail, a lock file exists empty until its creator writes it, which takes
 * moments (longer on a slow share). An unreadable one younger than this is being created. */
const CREATING_MS = 10_000;

export function isBeingCreated(found: Found): boolean {
  // Both ways: a file server's clock may be ahead of this host's.
  return Math.abs(Date.now() - found.mtimeMs) < CREATING_MS;
}

/** Removes the file if it still holds `text`: another run's lock is never removed by mistake. */
export async function unlinkIfSame(path: string, text: string): Promise<void> {
  if ((await readTextIfThere(path)) !== text) return;
  await unlinkIfThere(path);
}

let temps = 0;

/**
 * Creates `path` holding `text`, or answers undefined when it exists. The text goes to a private
 * temporary file that is then hard-linked into place, which is as atomic as open(path, 'wx') and
 * also means no reader sees a lock file that does not yet name its holder (except where the file
 * system has no hard links).
 */
export async function createExclusive(path: string, text: string): Promise<Owned | undefined> {
  temps += 1;
  // Not ".tmp": that suffix is the state file's own temporaries.
  const temp = `${path}.${process.pid}.${temps}.new`;
  const tempEntry = own(temp, text);
  try {
    const handle = await openPrivate(temp, 'w');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const entry = own(path, text);
    try {
      await link(temp, path);
      return entry;
    } catch (error) {
      disown(entry);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return undefined;
      // A file system without hard links (FAT, some network shares): created in place instead.
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return await createInPlace(path, text);
      throw error;
    }
  } finally {
    await unlink(temp).catch(() => undefined);
    disown(tempEntry);
  }
}

async function createInPlace(path: string, text: string): Promise<Owned | undefined> {
  const entry = own(path, text);
  let handle;
  try {
    handle = await openPrivate(path, 'wx');
  } catch (error) {
    disown(entry);
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    // Created by this call, so no one else's: not left to look like a lock being created.
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    disown(entry);
    throw error;
  }
  await handle.close();
  return entry;
}

/** Past this, a temporary file is an orphan whoever wrote it: creating a lock takes moments. */
const TEMP_ORPHAN_MS = 60 * 60 * 1000;

/**
 * Removes the `<lock>.<pid>.<n>.new` temporaries (and the take-over guard's) that a process killed
 * between writing and linking left beside the lock. The text says who wrote one; a file from
 * another host, or not yet written, is kept until it is an hour old.
 */
export async function removeOrphanTemps(lockPath: string): Promise<void> {
  for (const { path, match } of await siblingsMatching(lockPath, `${basename(lockPath)}.`, /^(?:takeover\.)?(\d+)\.\d+\.new$/)) {
    try {
      const found = await readFound(path);
      if (found === undefined) continue;
      const writer = parseHolder(found.text);
      const orphan = Date.now() - found.mtimeMs > TEMP_ORPHAN_MS ||
        (writer !== undefined && writer.pid === Number(match[1]) && isStale(path, found.text, writer));
      if (orphan) await unlinkIfSame(path, found.text);
    } catch {
      // Unreadable, or gone meanwhile: left as it is.
    }
  }
}
