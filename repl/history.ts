// Persistent REPL history that is written as you go, kept private (0600) and filtered: a line
// that holds a password or token never reaches the file (or the in-memory history). Node's own
// repl.setupHistory was not enough for this; see README.md beside this file for why.
import { chmodSync, closeSync, fchmodSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { REPLServer } from 'node:repl';
import { makeFolderSync } from '../src/core/make-folder.ts';

export const HISTORY_ENV = 'LENDER_REPL_HISTORY';
/** Lines kept; the file is trimmed to this at start when it has grown past twice as many. */
export const HISTORY_MAX_LINES = 1000;

/** `$LENDER_REPL_HISTORY` (empty: no history), else `$XDG_STATE_HOME/lender-streams/repl_history`,
 * else `~/.local/state/lender-streams/repl_history`. */
export function historyPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env[HISTORY_ENV];
  if (explicit !== undefined) return explicit.trim() === '' ? undefined : resolve(explicit);
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(stateHome, 'lender-streams', 'repl_history');
}

export interface HistoryOptions {
  path: string;
  /** True for a line that must not be kept. */
  isSecret: (line: string) => boolean;
  maxLines?: number;
  /** Tightens the file's folder to 0700 even if it existed: for the REPL's own default folder,
   * never for one the user named (a home folder, a shared folder). */
  privateFolder?: boolean;
}

export interface PersistentHistory {
  readonly path: string;
  /** Lines written during this run (for tests and diagnostics). */
  readonly written: number;
  /** Removes the lines `isSecret` now refuses, from the file and from memory: the session's own
   * secrets are known only once it has connected, after the file was first read. */
  forgetSecrets(): void;
  close(): void;
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Rewrites the file in place with `lines`. Not by rename: another REPL appending to the file
 * would go on writing to the replaced one, and a symbolic link would become a plain file. Emptied
 * first: a crash midway then loses history, never leaves behind a line being removed as secret. */
function rewrite(path: string, lines: string[]): void {
  const text = Buffer.from(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  const fd = openSync(path, 'r+');
  try {
    fchmodSync(fd, 0o600);
    ftruncateSync(fd, 0);
    writeSync(fd, text, 0, text.length, 0);
  } finally {
    closeSync(fd);
  }
}

/** The file's lines but those `isSecret` refuses, at most `max` (the last); the file is rewritten
 * with them when it held such lines, or more than twice `max`. */
function clean(path: string, isSecret: (line: string) => boolean, max: number): string[] {
  const existing = readLines(path);
  const kept = existing.filter((l) => !isSecret(l));
  if (kept.length !== existing.length || kept.length > 2 * max) rewrite(path, kept.slice(-max));
  return kept.slice(-max);
}

export function attachHistory(server: REPLServer, opts: HistoryOptions): PersistentHistory {
  const max = opts.maxLines ?? HISTORY_MAX_LINES;
  // Missing levels made 0700; folders that exist keep their mode (see privateFolder).
  makeFolderSync(dirname(opts.path));
  if (opts.privateFolder === true) {
    try {
      chmodSync(dirname(opts.path), 0o700);
    } catch (error) {
      // Someone else's folder: its owner decides.
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
    }
  }

  // A file from an older run may hold lines we now consider secret, or be too long.
  const kept = clean(opts.path, opts.isSecret, max);

  const fd = openSync(opts.path, 'a', 0o600);
  // `mode` applies only when the file is created; tighten a file that already existed.
  fchmodSync(fd, 0o600);

  // readline keeps history newest first; it is used for arrow keys in a terminal.
  const mutable = server as unknown as { history: string[] };
  mutable.history = kept.reverse();

  let written = 0;
  let closed = false;
  const onLine = (line: string): void => {
    if (closed) return;
    const text = line.replace(/\r?\n/g, ' ');
    if (text.trim() === '' || opts.isSecret(text)) return;
    // One write per accepted line: a crash or a kill -9 loses nothing typed before it.
    writeSync(fd, `${text}\n`);
    written += 1;
  };
  // In a terminal readline also keeps the line in memory (arrow-up); drop secret ones there too.
  const onHistory = (history: string[]): void => {
    for (let i = history.length - 1; i >= 0; i -= 1) if (opts.isSecret(history[i]!)) history.splice(i, 1);
  };
  server.on('line', onLine);
  server.on('history', onHistory);

  return {
    path: opts.path,
    get written() {
      return written;
    },
    forgetSecrets() {
      if (closed) return;
      onHistory(mutable.history);
      // Rewritten in place: appends go on at its new end.
      clean(opts.path, opts.isSecret, max);
    },
    close() {
      if (closed) return;
      closed = true;
      server.off('line', onLine);
      server.off('history', onHistory);
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
  };
}
