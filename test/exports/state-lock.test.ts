// The lock of a state file: names its holder, is private, refuses a second taker with one line,
// takes over a dead holder's lock on this host, never one from another host, and goes when its
// process ends (release, exit, a signal nothing handles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileState, type DatasetState } from '../../src/exports/state.ts';
import { StateLockedError, acquireStateLock, lockPathOf, processAlive, type LockHolder } from '../../src/exports/state-lock.ts';

// Files must come out 0600 whatever the umask; 022 is the usual one that would leave them 0644.
process.umask(0o022);

const HOLDER = new URL('../helpers/hold-state-lock.ts', import.meta.url).pathname;
const state = (value: string): DatasetState => ({ version: 1, dataset: 'D07', highWater: { value, ids: ['a'] }, load: null });

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lender-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The pid of a process that has ended (a child that exited), so certainly not running now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

async function readHolder(lockPath: string): Promise<LockHolder> {
  return JSON.parse(await readFile(lockPath, 'utf8')) as LockHolder;
}

function isLocked(lockPath: string, holder: LockHolder | undefined) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof StateLockedError, String(error));
    assert.equal(error.lockPath, lockPath);
    assert.deepEqual(error.holder, holder);
    assert.ok(!error.message.includes('\n'), 'one line');
    return true;
  };
}

/** Starts a child that takes the lock through the library; resolves once it holds it. */
async function holdInChild(statePath: string, then: 'wait' | 'exit') {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, statePath, then], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  assert.equal(line, `held ${child.pid}`);
  return { child, exited };
}

test('a lock names its holder, is private, refuses a second taker in one line, and goes on release', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const store = fileState(path);
  assert.equal(store.lockPath, `${path}.lock`);
  assert.equal(lockPathOf(path), store.lockPath);

  const lock = await store.lock();
  const holder = await readHolder(store.lockPath);
  assert.deepEqual(holder, lock.holder);
  assert.equal(holder.pid, process.pid);
  assert.equal(holder.host, hostname());
  assert.ok(!Number.isNaN(Date.parse(holder.startedAt)));
  assert.equal(statSync(store.lockPath).mode & 0o777, 0o600);

  // Another store on the same file, in this very process, is refused like another process.
  await assert.rejects(fileState(path).lock(), isLocked(store.lockPath, holder));
  await assert.rejects(acquireStateLock(store.lockPath), (error: Error) => {
    assert.equal(error.message,
      `the state is in use by another run (pid ${process.pid} on host ${hostname()}, started ${holder.startedAt}; ` +
      `lock file ${store.lockPath}); wait for it to end.`);
    return true;
  });

  await lock.release();
  await lock.release(); // a second release is harmless
  assert.equal(existsSync(store.lockPath), false);
  assert.deepEqual(await readdir(dir), [], 'no lock, no temporary or take-over file left');
  const again = await fileState(path).lock();
  await again.release();
});

test('holds through one store nest; the lock goes with the last, after the saves asked for', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const store = fileState(path);
  const [a, b] = await Promise.all([store.lock(), store.lock()]);
  await a.release();
  assert.equal(existsSync(store.lockPath), true, 'one hold is left');
  void store.save('D07', state('7'));
  await b.release();
  assert.equal(existsSync(store.lockPath), false);
  assert.deepEqual(await fileState(path).load('D07'), state('7'));
  assert.equal(statSync(path).mode & 0o777, 0o600, 'the state file is private too');
  // The store can be locked again after.
  const c = await store.lock();
  assert.equal(existsSync(store.lockPath), true);
  await c.release();
});

test('a lock whose process has ended on this host is taken over', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  const dead = await deadPid();
  assert.equal(processAlive(dead), false);
  await writeFile(lockPath, JSON.stringify({ pid: dead, host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' }));
  const lock = await fileState(path).lock();
  assert.equal((await readHolder(lockPath)).pid, process.pid);
  await lock.release();
  assert.deepEqual(await readdir(dir), []);
});

test('a lock from another host is never taken over, even when its pid is not running here', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  const holder: LockHolder = { pid: await deadPid(), host: 'elsewhere.example', startedAt: '2024-01-02T03:04:05.000Z' };
  const text = JSON.stringify(holder);
  await writeFile(lockPath, text);
  await assert.rejects(fileState(path).lock(), (error: Error) => {
    isLocked(lockPath, holder)(error);
    assert.equal(error.message,
      `the state is in use by a run on another host (pid ${holder.pid} on host elsewhere.example, started 2024-01-02T03:04:05.000Z; ` +
      `lock file ${lockPath}); such a lock is never taken over automatically: if that process has ended, delete the lock file.`);
    return true;
  });
  assert.equal(await readFile(lockPath, 'utf8'), text, 'left as it was');
});

test('a lock file that names no holder is refused and left alone', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  // Not JSON, and a "holder" whose host would break the one-line message.
  for (const text of ['not a lock', JSON.stringify({ pid: 1, host: 'a\nb', startedAt: '2024-01-02T03:04:05.000Z' })]) {
    await writeFile(lockPath, text);
    await assert.rejects(fileState(path).lock(), (error: Error) => {
      isLocked(lockPath, undefined)(error);
      assert.match(error.message, /names no holder; if no other sync or export of this state is running, delete that file\.$/);
      return true;
    });
    assert.equal(await readFile(lockPath, 'utf8'), text);
  }
});

test('a take-over under way in a live process is respected; one a dead process left is cleared', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  const guard = `${lockPath}.takeover`;
  await writeFile(lockPath, JSON.stringify({ pid: await deadPid(), host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' }));
  // A live process other than this one: the test runner's parent.
  assert.equal(processAlive(process.ppid), true);
  const taker: LockHolder = { pid: process.ppid, host: hostname(), startedAt: '2024-01-02T03:04:06.000Z' };
  await writeFile(guard, JSON.stringify(taker));
  await assert.rejects(fileState(path).lock(), isLocked(lockPath, taker));

  await writeFile(guard, JSON.stringify({ ...taker, pid: await deadPid() }));
  const lock = await fileState(path).lock();
  assert.equal((await readHolder(lockPath)).pid, process.pid);
  await lock.release();
  assert.deepEqual(await readdir(dir), []);
});

test('a lock taken through the library goes when its process exits or gets a signal it does not handle', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);

  const exiting = await holdInChild(path, 'exit');
  assert.deepEqual(await exiting.exited, [0, null]);
  assert.equal(existsSync(lockPath), false, 'removed at process.exit()');

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const { child, exited } = await holdInChild(path, 'wait');
    assert.equal((await readHolder(lockPath)).pid, child.pid);
    child.kill(signal);
    assert.deepEqual(await exited, [null, signal], 'the signal still ends the process');
    assert.equal(existsSync(lockPath), false, `removed on ${signal}`);
  }

  // SIGKILL leaves it behind; the next taker on this host takes it over.
  const { child, exited } = await holdInChild(path, 'wait');
  child.kill('SIGKILL');
  await exited;
  assert.equal((await readHolder(lockPath)).pid, child.pid);
  const lock = await fileState(path).lock();
  assert.equal((await readHolder(lockPath)).pid, process.pid);
  await lock.release();
  assert.deepEqual(await readdir(dir), []);
});
