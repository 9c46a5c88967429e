// The temporary files a writer leaves beside the file it replaces (state files, lock files) are
// found by their names: the one listing both cleanups share.
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Files beside `path` named `prefix` + something `pattern` matches whole, with the match; none
 * when the folder cannot be read (the cleanups that use this never fail a load). */
export async function siblingsMatching(path: string, prefix: string, pattern: RegExp): Promise<{ path: string; match: RegExpExecArray }[]> {
  const dir = dirname(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const found: { path: string; match: RegExpExecArray }[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = pattern.exec(name.slice(prefix.length));
    if (match !== null) found.push({ path: join(dir, name), match });
  }
  return found;
}

