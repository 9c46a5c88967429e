// The password file of libpq (~/.pgpass, or PGPASSFILE): lines of
// hostname:port:database:username:password, `*` matching anything, `\:` and `\\` escaping, the
// first matching line winning. Like libpq, a file that group or others can read is ignored.
// Read here rather than by node-postgres so the environment given to the sink is the one used.
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface PgpassTarget {
  host: string;
  port: number;
  database: string;
  user: string;
}

/** Splits a line on unescaped colons and unescapes the fields. */
function fields(line: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) {
      current += line[i + 1];
      i += 1;
    } else if (c === ':') {
      out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  out.push(current);
  return out;
}

/** The password the file's text gives the target, or undefined. */
export function pgpassLookup(text: string, target: PgpassTarget): string | undefined {
  // A socket directory is matched as 'localhost', as libpq does.
  const host = target.host.startsWith('/') ? 'localhost' : target.host;
  const wanted = [host, String(target.port), target.database, target.user];
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const f = fields(raw);
    if (f.length < 5) continue;
    if (wanted.every((w, i) => f[i] === '*' || f[i] === w)) return f.slice(4).join(':');
  }
  return undefined;
}

/** Where the password file is: PGPASSFILE, else .pgpass in HOME (of the given environment). */
export function pgpassPath(env: NodeJS.ProcessEnv): string {
  return env.PGPASSFILE ?? join(env.HOME ?? homedir(), '.pgpass');
}

export type PgpassResult =
  | { password: string }
  | { password: undefined; ignored?: string };

/** Reads the password file for the target; a missing file gives no password. */
export async function readPgpass(env: NodeJS.ProcessEnv, target: PgpassTarget): Promise<PgpassResult> {
  const path = pgpassPath(env);
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { password: undefined };
    if ((info.mode & 0o077) !== 0 && process.platform !== 'win32') {
      return { password: undefined, ignored: `${path} was ignored: group or others can read it (chmod 600 it)` };
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return { password: undefined };
    throw error;
  }
  const password = pgpassLookup(text, target);
  return password === undefined ? { password: undefined } : { password };
}
