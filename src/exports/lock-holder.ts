// Who holds a state lock: the JSON record a lock file names, this process's own identity, and
// whether the holder a file names is gone (so its file may be taken over).
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isOwned } from './lock-registry.ts';

/** The run that holds a state's lock, as its lock file names it; a StateLockedError reports it. */
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

/** Whether a process with this id exists. EPERM means it does, under another user. An id that
 * is not a positive whole number (kill would signal a process group) cannot be checked: alive.
 * A process that ended but was not yet waited for by its parent (a zombie: a killed run whose
 * parent is slow, or a container's first process that never waits) still answers kill: it has
 * ended, and what it held is free. */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  const state = statFields(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** The fields of /proc/<pid>/stat from the third (the state) on, or undefined where there is no
 * such file to read. */
function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2, the command name, is in parentheses and may hold spaces and ')': count after the last.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (when the process started, in clock ticks after boot). */
function processStartOf(pid: number | 'self'): number | undefined {
  const ticks = Number(statFields(pid)?.[22 - 3]);
  return Number.isSafeInteger(ticks) && ticks >= 0 ? ticks : undefined;
}

let self: { processStart?: number; bootId?: string } | undefined;

/** This process's start time and boot id, where the OS gives them. */
export function selfIdentity(): { processStart?: number; bootId?: string } {
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

export function parseHolder(text: string | undefined): LockHolder | undefined {
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

/**
 * Whether the process `pid` of this host, which recorded its start time and boot id (where the OS
 * gave them), still runs: a live process with that pid that started at another time, or in
 * another boot, is another process.
 */
export function stillRunning(pid: number, identity: { processStart?: number; bootId?: string }): boolean {
  if (!processAlive(pid)) return false;
  const here = selfIdentity();
  if (identity.bootId !== undefined && here.bootId !== undefined && identity.bootId !== here.bootId) return false;
  if (identity.processStart !== undefined) {
    const now = processStartOf(pid);
    if (now !== undefined && now !== identity.processStart) return false;
  }
  return true;
}

/** Whether the holder that wrote `text` into `path` is gone, so the file can be taken over. */
export function isStale(path: string, text: string, holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  if (isOwned(path, text)) return false;
  // Our pid on a file this process did not make: an earlier process with the same pid left it.
  if (holder.pid === process.pid) return true;
  return !stillRunning(holder.pid, holder);
}
