// One run at a time per state file: two syncs of one state (a cron overlap) would both append
// every row, so the second is refused instead. The lock is a file beside the state,
// `<state>.lock`, naming its holder as JSON: {"pid", "host", "startedAt"}. A lock whose process
// is gone on this host is taken over; one from another host (a shared folder) never is, since
// its process cannot be checked from here.
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { LenderError } from '../client/errors.ts';
import { openPrivate } from '../private-files.ts';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO instant the holder took the lock. */
  startedAt: string;
}

/** A held lock; `release()` removes its file (and never throws). */
export interface StateLock {
  readonly path: string;
  readonly holder: LockHolder;
  release(): Promise<void>;
}

/** Another run holds the lock of this state. */
export class StateLockedError extends LenderError {
  override name = 'StateLockedError';
  readonly lockPath: string;
  /** Undefined when the lock file names no holder (not written by this library, or torn). */
  readonly holder: LockHolder | undefined;
  constructor(lockPath: string, holder: LockHolder | undefined) {
    super(lockedMessage(lockPath, holder));
    this.lockPath = lockPath;
    this.holder = holder;
  }
}

/** One line: the CLI prints it as is. */
function lockedMessage(lockPath: string, holder: LockHolder | undefined): string {
  if (holder === undefined) {
    return `the state is locked by ${lockPath}, which names no holder; if no other sync or export of this state is running, delete that file.`;
  }
  const who = `pid ${holder.pid} on host ${holder.host}, started ${holder.startedAt}; lock file ${lockPath}`;
  if (holder.host === hostname()) return `the state is in use by another run (${who}); wait for it to end.`;
  return `the state is in use by a run on another host (${who}); such a lock is never taken over automatically: ` +
    `if that process has ended, delete the lock file.`;
}

/** The lock file of a state file. */
export function lockPathOf(statePath: string): string {
  return `${statePath}.lock`;
}

/** Whether a process with this id exists. EPERM means it does, under another user. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A text field of a holder: a line break in it would break the one-line message. */
function isPlain(value: unknown): value is string {
  return typeof value === 'string' && !/[\u0000-\u001f\u007f]/.test(value);
}

function parseHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as Partial<LockHolder> | null;
    if (Number.isSafeInteger(v?.pid) && v!.pid! > 0 && isPlain(v!.host) && isPlain(v!.startedAt)) {
      return { pid: v!.pid!, host: v!.host, startedAt: v!.startedAt };
    }
  } catch {
    // Not JSON: names no holder.
  }
  return undefined;
}

function isStale(holder: LockHolder): boolean {
  return holder.host === hostname() && holder.pid !== process.pid && !processAlive(holder.pid);
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes the file if it still holds `text`: another run's lock is never removed by mistake. */
async function unlinkIfSame(path: string, text: string): Promise<void> {
  if ((await readText(path)) !== text) return;
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

let temps = 0;

/**
 * Creates `path` holding `text`, or answers false when it exists. The text goes to a private
 * temporary file that is then hard-linked into place, which is as atomic as open(path, 'wx') and
 * also means no reader ever sees a lock file that does not yet name its holder.
 */
async function createExclusive(path: string, text: string): Promise<boolean> {
  temps += 1;
  // Not ".tmp": that suffix is the state file's own temporaries.
  const temp = `${path}.${process.pid}.${temps}.new`;
  const handle = await openPrivate(temp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links (FAT, some network shares): created in place instead.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return createInPlace(path, text);
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

async function createInPlace(path: string, text: string): Promise<boolean> {
  let handle;
  try {
    handle = await openPrivate(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

/**
 * Removes a dead holder's lock file if it is still that one. Two runs may find the same dead lock;
 * without a guard one could delete the lock the other has just created in its place. The guard,
 * `<lock>.takeover`, is created exclusively too; a live process holding it is taking the lock over
 * right now, and is the holder this run reports.
 */
async function removeStale(lockPath: string, staleText: string, ownText: string): Promise<void> {
  const guard = `${lockPath}.takeover`;
  if (!(await createExclusive(guard, ownText))) {
    const guardText = await readText(guard);
    if (guardText === undefined) return;
    const taker = parseHolder(guardText);
    if (taker !== undefined && isStale(taker)) await unlinkIfSame(guard, guardText);
    else throw new StateLockedError(lockPath, taker);
    return;
  }
  try {
    await unlinkIfSame(lockPath, staleText);
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

/** Takes the lock at `lockPath`, taking over a dead holder's; rejects with StateLockedError. */
export async function acquireStateLock(lockPath: string): Promise<StateLock> {
  await mkdir(dirname(lockPath), { recursive: true });
  const holder: LockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  const text = `${JSON.stringify(holder)}\n`;
  // Each turn takes the lock, refuses, or saw a lock go away; only constant churn needs more.
  for (let turn = 0; turn < 5; turn += 1) {
    if (await createExclusive(lockPath, text)) return hold(lockPath, holder, text);
    const existing = await readText(lockPath);
    if (existing === undefined) continue;
    const other = parseHolder(existing);
    if (other === undefined || !isStale(other)) throw new StateLockedError(lockPath, other);
    await removeStale(lockPath, existing, text);
  }
  throw new StateLockedError(lockPath, parseHolder(await readText(lockPath)));
}

// ---- release at exit: locks this process holds, by path, with their text.

const held = new Map<string, string>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let watching = false;

function releaseAllNow(): void {
  for (const [path, text] of held) {
    try {
      if (readFileSync(path, 'utf8') === text) unlinkSync(path);
    } catch {
      // Gone already, or unreadable: after this process ends the next run takes it over.
    }
  }
  held.clear();
}

/** A signal nothing else listens to ends the process without 'exit': remove the locks, then let
 * it do what it would have done. A program that handles the signal (the CLI stops cleanly)
 * releases them itself, or exits and 'exit' does. */
function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  releaseAllNow();
  unwatch();
  process.kill(process.pid, signal);
}

function watch(): void {
  if (watching) return;
  watching = true;
  process.on('exit', releaseAllNow);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function unwatch(): void {
  if (!watching) return;
  watching = false;
  process.off('exit', releaseAllNow);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

function hold(path: string, holder: LockHolder, text: string): StateLock {
  held.set(path, text);
  watch();
  let released = false;
  return {
    path,
    holder,
    async release() {
      if (released) return;
      released = true;
      try {
        await unlinkIfSame(path, text);
      } catch {
        // Left in place: once this process has ended, the next run on this host takes it over.
      }
      if (held.get(path) === text) held.delete(path);
      if (held.size === 0) unwatch();
    },
  };
}
