// The lock of a state file: names its holder, is private, refuses a second taker with one line,
// takes over a dead holder's lock on this host, never one from another host, and goes when its
// process ends (release, exit, a signal nothing handles). A pid is not trusted alone: a lock naming
// this process's pid that it does not hold, or a live pid whose start time or boot differs, is a
// dead holder's.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs, { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileState, type DatasetState } from '../../src/exports/state.ts';
import { processAlive, type LockHolder } from '../../src/exports/lock-holder.ts';
import { StateLockedError, acquireStateLock, lockPathOf } from '../../src/exports/state-lock.ts';

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

/** Starts a child that takes the lock through the library; resolves once it holds it, and fails
 * (instead of waiting forever) if the child ends first or says nothing for 30 s. */
async function holdInChild(statePath: string, then: 'wait' | 'exit') {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, statePath, then], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface({ input: child.stdout! });
  let timer: NodeJS.Timeout | undefined;
  try {
    const line = await Promise.race([
      once(lines, 'line').then(([l]) => l as string),
      once(lines, 'close').then(() => {
        throw new Error('the lock-holding child ended before it said it held the lock');
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the lock-holding child did not take the lock within 30 s')), 30_000);
      }),
    ]);
    assert.equal(line, `held ${child.pid}`);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { child, exited };
}

/** A file's mtime set back, as a lock file or temporary left long ago would have it. */
async function age(path: string, ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  await utimes(path, then, then);
}

const HAS_PROC = existsSync('/proc/self/stat') && existsSync('/proc/sys/kernel/random/boot_id');

/** Field 22 (start time, clock ticks after boot) of /proc/<pid>/stat. */
function procStart(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
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
  if (HAS_PROC) {
    assert.equal(holder.processStart, procStart(process.pid));
    assert.equal(holder.bootId, bootId());
  }
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

test('a lock whose process has ended but was not waited for (a zombie) is taken over', async (t) => {
  // bash starts a child that waits for a line, then becomes `sleep`, which never waits for a
  // child: once it has, the line ends the child, which stays a zombie. (A child ending before the
  // exec would be reaped by bash.)
  const parent = spawn('bash', ['-c', 'read line <&0 & echo $!; exec sleep 60'], { stdio: ['pipe', 'pipe', 'ignore'] });
  t.after(() => parent.kill('SIGKILL'));
  const [line] = (await once(createInterface({ input: parent.stdout! }), 'line')) as [string];
  const zombie = Number(line);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
  while (readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() !== 'sleep') await tick();
  parent.stdin!.write('go\n');
  while (readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]![0] !== 'Z') await tick();
  // kill(pid, 0) still answers for it.
  assert.doesNotThrow(() => process.kill(zombie, 0));
  assert.equal(processAlive(zombie), false);
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  await writeFile(lockPath, JSON.stringify({ pid: zombie, host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' }));
  const lock = await fileState(path).lock();
  assert.equal((await readHolder(lockPath)).pid, process.pid);
  await lock.release();
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
  // Not JSON, and a "holder" whose host would break the one-line message; written long ago.
  for (const text of ['not a lock', JSON.stringify({ pid: 1, host: 'a\nb', startedAt: '2024-01-02T03:04:05.000Z' })]) {
    await writeFile(lockPath, text);
    await age(lockPath, 60_000);
    await assert.rejects(fileState(path).lock(), (error: Error) => {
      isLocked(lockPath, undefined)(error);
      assert.match(error.message, /names no holder; if no other run is using the state, delete that file\.$/);
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

test('a lock file still empty or half written is being created by another run; only an old one names no holder', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  // What a run creating its lock in place (no hard links) leaves visible for a moment.
  for (const text of ['', '{"pid": 12']) {
    await writeFile(lockPath, text);
    await assert.rejects(fileState(path).lock(), (error: Error) => {
      isLocked(lockPath, undefined)(error);
      assert.equal((error as StateLockedError).creating, true);
      assert.equal(error.message, `the lock file ${lockPath} of the state is being created by another run; wait for that run to end.`);
      return true;
    });
    assert.equal(await readFile(lockPath, 'utf8'), text, 'not taken over');

    await age(lockPath, 60_000);
    await assert.rejects(fileState(path).lock(), (error: Error) => {
      isLocked(lockPath, undefined)(error);
      assert.equal((error as StateLockedError).creating, false);
      assert.match(error.message, /names no holder; if no other run is using the state, delete that file\.$/);
      return true;
    });
    assert.equal(await readFile(lockPath, 'utf8'), text);
  }

  // The same for the take-over guard over a dead holder's lock: a recent empty one is a taker at
  // work; an old one was left by a taker that died, and is cleared.
  const guard = `${lockPath}.takeover`;
  await writeFile(lockPath, JSON.stringify({ pid: await deadPid(), host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' }));
  await writeFile(guard, '');
  await assert.rejects(fileState(path).lock(), (error: Error) => {
    isLocked(lockPath, undefined)(error);
    assert.equal((error as StateLockedError).creating, true);
    return true;
  });
  await age(guard, 60_000);
  const lock = await fileState(path).lock();
  assert.equal((await readHolder(lockPath)).pid, process.pid);
  await lock.release();
  assert.deepEqual(await readdir(dir), []);
});

test('a lock naming the pid of this process, which this process does not hold, was left by an earlier one and is taken over', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  // A container's CLI runs as pid 1 every time: the run killed before this one had our pid.
  const earlier: LockHolder = { pid: process.pid, host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' };
  await writeFile(lockPath, JSON.stringify(earlier));
  // And it died taking over a lock itself.
  await writeFile(`${lockPath}.takeover`, JSON.stringify({ ...earlier, startedAt: '2024-01-02T03:04:06.000Z' }));
  const lock = await fileState(path).lock();
  const holder = await readHolder(lockPath);
  assert.deepEqual(holder, lock.holder);
  assert.notEqual(holder.startedAt, earlier.startedAt);

  // What this process does hold, it still refuses to itself.
  await assert.rejects(fileState(path).lock(), isLocked(lockPath, holder));
  await assert.rejects(acquireStateLock(lockPath), isLocked(lockPath, holder));
  assert.deepEqual(await readHolder(lockPath), holder);
  await lock.release();
  assert.deepEqual(await readdir(dir), []);
});

test('a live pid is the holder only if it started when the lock says and in the same boot', { skip: !HAS_PROC && 'no /proc' }, async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  // A live process other than this one: the test runner's parent.
  const pid = process.ppid;
  assert.equal(processAlive(pid), true);
  const base: LockHolder = { pid, host: hostname(), startedAt: '2024-01-02T03:04:05.000Z' };
  const itself: LockHolder = { ...base, processStart: procStart(pid), bootId: bootId() };

  // The pid now belongs to another process (reused, or in another pid namespace), or the lock is
  // from before a reboot: the holder is gone.
  for (const holder of [{ ...itself, processStart: itself.processStart! + 1 }, { ...itself, bootId: `not-${bootId()}` }]) {
    await writeFile(lockPath, JSON.stringify(holder));
    const lock = await fileState(path).lock();
    assert.equal((await readHolder(lockPath)).pid, process.pid);
    await lock.release();
    assert.deepEqual(await readdir(dir), []);
  }

  // That very process (or a lock from before these fields, which names the pid only): refused.
  for (const holder of [itself, base, { ...base, processStart: procStart(pid) }, { ...base, bootId: bootId() }]) {
    await writeFile(lockPath, JSON.stringify(holder));
    await assert.rejects(fileState(path).lock(), isLocked(lockPath, holder));
    assert.deepEqual(await readHolder(lockPath), holder, 'left as it was');
  }
});

test('a child holding the lock records its own start time', { skip: !HAS_PROC && 'no /proc' }, async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const { child, exited } = await holdInChild(path, 'wait');
  try {
    const holder = await readHolder(lockPathOf(path));
    assert.equal(holder.pid, child.pid);
    assert.equal(holder.processStart, procStart(child.pid!));
    assert.equal(holder.bootId, bootId());
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test('taking a lock removes the temporaries that runs killed between writing and linking left beside it', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const dead = await deadPid();
  const live = process.ppid;
  const text = (pid: number, host = hostname()) => `${JSON.stringify({ pid, host, startedAt: '2024-01-02T03:04:05.000Z' })}\n`;
  const files: Array<[name: string, text: string, ageMs: number, kept: boolean]> = [
    [`state.json.lock.${dead}.1.new`, text(dead), 0, false],
    [`state.json.lock.takeover.${dead}.2.new`, text(dead), 0, false],
    // This pid, but not a file this process is writing: an earlier process with the same pid.
    [`state.json.lock.${process.pid}.999.new`, text(process.pid), 0, false],
    // A live process may be about to link it.
    [`state.json.lock.${live}.3.new`, text(live), 0, true],
    // Another host's: its process cannot be checked from here.
    [`state.json.lock.${dead}.4.new`, text(dead, 'elsewhere.example'), 0, true],
    // Not written yet: whose it is cannot be told.
    [`state.json.lock.${dead}.5.new`, '', 0, true],
    // An hour old: an orphan whoever wrote it.
    [`state.json.lock.${live}.6.new`, text(live), 2 * 3600_000, false],
    [`state.json.lock.${dead}.7.new`, text(dead, 'elsewhere.example'), 2 * 3600_000, false],
    [`state.json.lock.${dead}.8.new`, '', 2 * 3600_000, false],
    // Not the lock's temporaries.
    [`other.json.lock.${dead}.1.new`, text(dead), 0, true],
    [`state.json.lock.notes`, 'x', 2 * 3600_000, true],
  ];
  for (const [name, content, ageMs] of files) {
    await writeFile(join(dir, name), content);
    if (ageMs > 0) await age(join(dir, name), ageMs);
  }
  const lock = await fileState(path).lock();
  assert.deepEqual(
    (await readdir(dir)).filter((name) => name !== 'state.json.lock').sort(),
    files.filter(([, , , kept]) => kept).map(([name]) => name).sort(),
  );
  await lock.release();
});

test('where hard links fail, the lock is created in place and behaves the same', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'state.json');
  const lockPath = lockPathOf(path);
  // As on FAT or some network shares; the library's named import sees the replacement once synced.
  const link = mock.method(fs.promises, 'link', async () => {
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  });
  syncBuiltinESMExports();
  t.after(() => {
    link.mock.restore();
    syncBuiltinESMExports();
  });
  const lock = await fileState(path).lock();
  assert.ok(link.mock.callCount() > 0, 'the link was tried');
  const holder = await readHolder(lockPath);
  assert.deepEqual(holder, lock.holder);
  assert.equal(statSync(lockPath).mode & 0o777, 0o600);
  await assert.rejects(fileState(path).lock(), isLocked(lockPath, holder));
  await lock.release();
  assert.deepEqual(await readdir(dir), [], 'no lock, no temporary left');
});
