// One run at a time per state file: two syncs of one state (a cron overlap) would both append
// every row, so the second is refused instead. The lock is a file beside the state,
// `<state>.lock`, naming its holder as JSON: {"pid", "host", "startedAt", "processStart"?,
// "bootId"?}. A lock whose process is gone on this host is taken over; one from another host (a
// shared folder) never is, since its process cannot be checked from here. Who holds a lock is in
// lock-holder.ts, its file operations in lock-files.ts, its removal at exit in lock-registry.ts.
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { LenderError } from '../core/errors.ts';
import { aboutFile } from '../core/file-errors.ts';
import { makeFolder } from '../core/make-folder.ts';
import { createExclusive, isBeingCreated, readFound, removeOrphanTemps, unlinkIfSame, type Found } from './lock-files.ts';
import { isStale, parseHolder, selfIdentity, type LockHolder } from './lock-holder.ts';
import { disown, type Owned } from './lock-registry.ts';

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
  /** `subject`: what the lock guards, as the message names it ("the state" by default). */
  constructor(lockPath: string, holder: LockHolder | undefined, creating = false, subject = 'the state') {
    super(lockedMessage(lockPath, holder, creating, subject));
    this.lockPath = lockPath;
    this.holder = holder;
    this.creating = holder === undefined && creating;
  }
}

/** One line: the CLI prints it as is. */
function lockedMessage(lockPath: string, holder: LockHolder | undefined, creating: boolean, subject: string): string {
  if (holder === undefined && creating) {
    return `the lock file ${lockPath} of ${subject} is being created by another run; wait for that run to end.`;
  }
  if (holder === undefined) {
    return `${subject} is locked by ${lockPath}, which names no holder; if no other run is using ${subject}, delete that file.`;
  }
  const who = `pid ${holder.pid} on host ${holder.host}, started ${holder.startedAt}; lock file ${lockPath}`;
  if (holder.host === hostname()) return `${subject} is in use by another run (${who}); wait for it to end.`;
  return `${subject} is in use by a run on another host (${who}); such a lock is never taken over automatically: ` +
    `if that process has ended, delete the lock file.`;
}

/** The lock file of a state file. */
export function lockPathOf(statePath: string): string {
  return `${statePath}.lock`;
}

/** The refusal for a lock file found holding `found` (undefined: gone meanwhile). */
function lockedBy(lockPath: string, found: Found | undefined, subject: string): StateLockedError {
  const holder = parseHolder(found?.text);
  return new StateLockedError(lockPath, holder, holder === undefined && found !== undefined && isBeingCreated(found), subject);
}

/**
 * Removes a dead holder's lock file if it is still that one. Two runs may find the same dead lock;
 * without a guard one could delete the lock the other has just created in its place. The guard,
 * `<lock>.takeover`, is created exclusively too; a live process holding it is taking the lock over
 * right now, and is the holder this run reports.
 */
async function removeStale(lockPath: string, staleText: string, ownText: string, subject: string): Promise<void> {
  const guard = `${lockPath}.takeover`;
  const entry = await aboutFile('create the lock file', guard, () => createExclusive(guard, ownText));
  if (entry === undefined) {
    const found = await readFound(guard);
    if (found === undefined) return;
    const taker = parseHolder(found.text);
    if (taker === undefined) {
      if (isBeingCreated(found)) throw new StateLockedError(lockPath, undefined, true, subject);
      // A guard left unwritten by a taker that died creating it in place.
      await unlinkIfSame(guard, found.text);
    } else if (isStale(guard, found.text, taker)) {
      await unlinkIfSame(guard, found.text);
    } else {
      throw new StateLockedError(lockPath, taker, false, subject);
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

/** Takes the lock at `lockPath`, taking over a dead holder's; rejects with StateLockedError, whose
 * message names what the lock guards as `subject`. */
export async function acquireStateLock(lockPath: string, subject = 'the state'): Promise<StateLock> {
  await makeFolder(dirname(lockPath));
  await removeOrphanTemps(lockPath);
  const holder: LockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ...selfIdentity() };
  const text = `${JSON.stringify(holder)}\n`;
  // Each turn takes the lock, refuses, or saw a lock go away; only constant churn needs more.
  for (let turn = 0; turn < 5; turn += 1) {
    const entry = await aboutFile('create the lock file', lockPath, () => createExclusive(lockPath, text));
    if (entry !== undefined) return hold(entry, holder);
    const found = await readFound(lockPath);
    if (found === undefined) continue;
    const other = parseHolder(found.text);
    if (other === undefined || !isStale(lockPath, found.text, other)) throw lockedBy(lockPath, found, subject);
    await removeStale(lockPath, found.text, text, subject);
  }
  throw lockedBy(lockPath, await readFound(lockPath), subject);
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
