// One run at a time per state file: two syncs of one state (a cron overlap) would both append
// every row, so the second is refused instead. The lock is a file beside the state,
// `<state>.lock`, naming its holder as JSON: {"pid", "host", "startedAt", "processStart"?,
// "bootId"?}. A lock whose process is gone on this host is taken over; one from another host (a
// shared folder) never is, since its process cannot be checked from here.
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { LenderError } from '../core/errors.ts';
import { openPrivate } from '../core/private-files.ts';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO instant the holder took the lock. */
  startedAt: string;
  // A pid alone is ambiguous: after a reboot, or once another process has the pid (a container
  // restarted after a kill runs its CLI as the same pid again), kill(pid, 0) finds a live process
  // that is not the holder. These two tell them apart. Optional, because locks written before
  // them must still work, and where the OS does not give them the pid alone decides.
  /** When the holder process started, in clock ticks after boot (Linux: /proc/<pid>/stat field 22). */
  processStart?: number;
  /** The boot the holder ran in (Linux: /proc/sys/kernel/random/boot_id). */
  bootId?: string;
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
  /** Undefined when the lock file names no holder (being written, not written by this library, or torn). */
  readonly holder: LockHolder | undefined;
  /** The lock file names no holder yet but is recent: a run is writing it right now. */
  readonly creating: boolean;
  constructor(lockPath: string, holder: LockHolder | undefined, creating = false) {
    super(lockedMessage(lockPath, holder, creating));
    this.lockPath = lockPath;
    this.holder = holder;
    this.creating = holder === undefined && creating;
  }
}

/** One line: the CLI prints it as is. */
function lockedMessage(lockPath: string, holder: LockHolder | undefined, creating: boolean): string {
  if (holder === undefined && creating) {
    return `the state's lock file ${lockPath} is being created by another run; wait for that run to end.`;
  }
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

/** Field 22 of /proc/<pid>/stat, or undefined where there is no such file to read. */
function processStartOf(pid: number | 'self'): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2, the command name, is in parentheses and may hold spaces and ')': count after the last.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[22 - 3]);
    return Number.isSafeInteger(ticks) && ticks >= 0 ? ticks : undefined;
  } catch {
    return undefined;
  }
}

let self: { processStart?: number; bootId?: string } | undefined;

/** This process's start time and boot id, where the OS gives them. */
function selfIdentity(): { processStart?: number; bootId?: string } {
  if (self === undefined) {
    self = {};
    const processStart = processStartOf('self');
    if (processStart !== undefined) self.processStart = processStart;
    try {
      const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      if (isPlain(bootId) && bootId !== '') self.bootId = bootId;
    } catch {
      // No /proc: the pid alone decides.
    }
  }
  return self;
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
      const holder: LockHolder = { pid: v!.pid!, host: v!.host, startedAt: v!.startedAt };
      if (Number.isSafeInteger(v!.processStart) && v!.processStart! >= 0) holder.processStart = v!.processStart!;
      if (isPlain(v!.bootId) && v!.bootId !== '') holder.bootId = v!.bootId;
      return holder;
    }
  } catch {
    // Not JSON: names no holder.
  }
  return undefined;
}

// ---- files this process has made or is making (locks, take-over guards, their temporaries).

interface Owned {
  readonly path: string;
  readonly text: string;
}

/** Registered before a file is created, so that no moment exists where this process has a file
 * that it would itself take for another's. Removed at exit if still holding their text. */
const owned = new Set<Owned>();

function own(path: string, text: string): Owned {
  const entry = { path, text };
  owned.add(entry);
  watch();
  return entry;
}

function disown(entry: Owned): void {
  owned.delete(entry);
  if (owned.size === 0) unwatch();
}

function isOwned(path: string, text: string): boolean {
  for (const entry of owned) if (entry.path === path && entry.text === text) return true;
  return false;
}

/** Whether the holder that wrote `text` into `path` is gone, so the file can be taken over. */
function isStale(path: string, text: string, holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  if (isOwned(path, text)) return false;
  // Our pid on a file this process did not make: an earlier process with the same pid left it.
  if (holder.pid === process.pid) return true;
  if (!processAlive(holder.pid)) return true;
  const here = selfIdentity();
  if (holder.bootId !== undefined && here.bootId !== undefined && holder.bootId !== here.bootId) return true;
  if (holder.processStart !== undefined) {
    const now = processStartOf(holder.pid);
    if (now !== undefined && now !== holder.processStart) return true;
  }
  return false;
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

interface Found {
  text: string;
  mtimeMs: number;
}

/** A file's text and when it was last written; undefined when it does not exist. */
async function readFound(path: string): Promise<Found | undefined> {
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

function isBeingCreated(found: Found): boolean {
  // Both ways: a file server's clock may be ahead of this host's.
  return Math.abs(Date.now() - found.mtimeMs) < CREATING_MS;
}

/** The refusal for a lock file found holding `found` (undefined: gone meanwhile). */
function lockedBy(lockPath: string, found: Found | undefined): StateLockedError {
  const holder = parseHolder(found?.text);
  return new StateLockedError(lockPath, holder, holder === undefined && found !== undefined && isBeingCreated(found));
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
 * Creates `path` holding `text`, or answers undefined when it exists. The text goes to a private
 * temporary file that is then hard-linked into place, which is as atomic as open(path, 'wx') and
 * also means no reader sees a lock file that does not yet name its holder (except where the file
 * system has no hard links).
 */
async function createExclusive(path: string, text: string): Promise<Owned | undefined> {
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
async function removeOrphanTemps(lockPath: string): Promise<void> {
  const dir = dirname(lockPath);
  const prefix = `${basename(lockPath)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(?:takeover\.)?(\d+)\.\d+\.new$/.exec(name.slice(prefix.length));
    if (match === null) continue;
    const path = join(dir, name);
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

/**
 * Removes a dead holder's lock file if it is still that one. Two runs may find the same dead lock;
 * without a guard one could delete the lock the other has just created in its place. The guard,
 * `<lock>.takeover`, is created exclusively too; a live process holding it is taking the lock over
 * right now, and is the holder this run reports.
 */
async function removeStale(lockPath: string, staleText: string, ownText: string): Promise<void> {
  const guard = `${lockPath}.takeover`;
  const entry = await createExclusive(guard, ownText);
  if (entry === undefined) {
    const found = await readFound(guard);
    if (found === undefined) return;
    const taker = parseHolder(found.text);
    if (taker === undefined) {
      if (isBeingCreated(found)) throw new StateLockedError(lockPath, undefined, true);
      // A guard left unwritten by a taker that died creating it in place.
      await unlinkIfSame(guard, found.text);
    } else if (isStale(guard, found.text, taker)) {
      await unlinkIfSame(guard, found.text);
    } else {
      throw new StateLockedError(lockPath, taker);
    }
    return;
  }
  try {
    await unlinkIfSame(lockPath, staleText);
  } finally {
    await unlinkIfSame(guard, ownText).catch(() => undefined);
    disown(entry);
  }
}

/** Takes the lock at `lockPath`, taking over a dead holder's; rejects with StateLockedError. */
export async function acquireStateLock(lockPath: string): Promise<StateLock> {
  await mkdir(dirname(lockPath), { recursive: true });
  await removeOrphanTemps(lockPath);
  const holder: LockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ...selfIdentity() };
  const text = `${JSON.stringify(holder)}\n`;
  // Each turn takes the lock, refuses, or saw a lock go away; only constant churn needs more.
  for (let turn = 0; turn < 5; turn += 1) {
    const entry = await createExclusive(lockPath, text);
    if (entry !== undefined) return hold(entry, holder);
    const found = await readFound(lockPath);
    if (found === undefined) continue;
    const other = parseHolder(found.text);
    if (other === undefined || !isStale(lockPath, found.text, other)) throw lockedBy(lockPath, found);
    await removeStale(lockPath, found.text, text);
  }
  throw lockedBy(lockPath, await readFound(lockPath));
}

// ---- release at exit: the files this process has made and not yet removed.

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let watching = false;

function releaseAllNow(): void {
  for (const { path, text } of owned) {
    try {
      if (readFileSync(path, 'utf8') === text) unlinkSync(path);
    } catch {
      // Gone already, or unreadable: after this process ends the next run takes it over.
    }
  }
  owned.clear();
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

function hold(entry: Owned, holder: LockHolder): StateLock {
  let released = false;
  return {
    path: entry.path,
    holder,
    async release() {
      if (released) return;
      released = true;
      try {
        await unlinkIfSame(entry.path, entry.text);
      } catch {
        // Left in place: once this process has ended, the next run on this host takes it over.
      }
      disown(entry);
    },
  };
}
