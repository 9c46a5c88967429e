import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, realpathSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/core/errors.ts';
import { processAlive } from '../../src/exports/lock-holder.ts';
import { StateLockedError } from '../../src/exports/state-lock.ts';
import { fileState, memoryState, type DatasetState } from '../../src/exports/state.ts';

const state = (value: string): DatasetState => ({ version: 1, dataset: 'D07', highWater: { value, ids: ['a'] }, load: null });

test('the file store round-trips, keeps every key, and leaves no temporary file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'sub', 'state.json');
  const store = fileState(path);
  assert.equal(await store.load('D07'), undefined);
  await Promise.all([store.save('D07', state('1')), store.save('D01', state('2')), store.save('D07', state('3'))]);
  const reopened = fileState(path);
  assert.deepEqual(await reopened.load('D07'), state('3'));
  assert.deepEqual(await reopened.load('D01'), state('2'));
  assert.deepEqual(await readdir(join(dir, 'sub')), ['state.json']);
  assert.equal(JSON.parse(await readFile(path, 'utf8')).version, 1);
});

test('two stores of one path in one process save at once without sharing a temporary file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.json');
  const [a, b] = [fileState(path), fileState(path)];
  await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).save(`D${i}`, state(String(i)))));
  // Each store writes the whole file from what it knows; the last rename wins, and nothing fails.
  const saved = JSON.parse(await readFile(path, 'utf8')) as { version: number };
  assert.equal(saved.version, 1);
  assert.deepEqual(await readdir(dir), ['state.json']);
});

test('a torn or foreign state file is refused with a sentence naming it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'bad.json'), '{"version":1,"datas');
  await assert.rejects(fileState(join(dir, 'bad.json')).load('D07'), (e: Error) => e instanceof ConfigError && e.message.includes('bad.json'));
  await writeFile(join(dir, 'other.json'), '{"hello":1}');
  await assert.rejects(fileState(join(dir, 'other.json')).load('D07'), ConfigError);
});

test('an empty state file (as mktemp makes one) is no state yet: nothing to load, and the first save fills it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of [['empty.json', ''], ['blank.json', ' \n']]) {
    const path = join(dir, name!);
    await writeFile(path, text!);
    const store = fileState(path);
    assert.equal(await store.load('D07'), undefined);
    await store.save('D07', state('1'));
    assert.deepEqual(await fileState(path).load('D07'), state('1'));
  }
  // A device reads empty too, but is no state file: saving would replace it (as root, /dev/null).
  await assert.rejects(fileState('/dev/null').load('D07'), (e: Error) =>
    e instanceof ConfigError && e.message === 'The state file /dev/null is not a file; give the path of a file (it is created if missing).');
});

test('a state file holding null, a number or an array is refused like any foreign file; one of another version says so', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of [['null.json', 'null'], ['five.json', '5'], ['list.json', '[]'], ['text.json', '"x"'],
    ['other.json', '{"version":1,"datasets":[]}'], ['unversioned.json', '{"datasets":{}}']]) {
    await writeFile(join(dir, name!), text!);
    await assert.rejects(fileState(join(dir, name!)).load('D07'), (e: Error) => e instanceof ConfigError &&
      e.message === `The state file ${join(dir, name!)} is not a lender-streams state file; give another path, or move it away to start the loads afresh.`);
  }
  // One of ours from another version: said so, not "not a state file".
  await writeFile(join(dir, 'newer.json'), '{"version":2,"datasets":{}}');
  await assert.rejects(fileState(join(dir, 'newer.json')).load('D07'), (e: Error) => e instanceof ConfigError &&
    e.message === `The state file ${join(dir, 'newer.json')} is of version 2, which this lender-streams (version 1 state files) cannot read; use the version that wrote it.`);
});

test('a state file given through a symbolic link: saved where the link points, the link kept, one lock for both names', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const real = join(dir, 'real.json');
  const link = join(dir, 'link.json');
  await fileState(real).save('D07', state('1'));
  await symlink(real, link);
  const viaLink = fileState(link);
  assert.equal(viaLink.path, realpathSync(real));
  await viaLink.save('D07', state('2'));
  assert.ok((await lstat(link)).isSymbolicLink(), 'the link is still a link');
  assert.deepEqual(await fileState(real).load('D07'), state('2'));
  const lock = await viaLink.lock();
  try {
    await assert.rejects(fileState(real).lock(), StateLockedError);
  } finally {
    await lock.release();
  }
  // A link, through another link, to a file not made yet: made where the links lead.
  await symlink(join(dir, 'later.json'), join(dir, 'hop.json'));
  await symlink('hop.json', join(dir, 'first.json'));
  await fileState(join(dir, 'first.json')).save('D07', state('3'));
  assert.ok((await lstat(join(dir, 'first.json'))).isSymbolicLink());
  assert.deepEqual(await fileState(join(dir, 'later.json')).load('D07'), state('3'));
  // A relative link with `..`, reached through a linked folder: `..` is the real folder's parent.
  await mkdir(join(dir, 'real', 'sub'), { recursive: true });
  await mkdir(join(dir, 'real', 'other'));
  await symlink(join(dir, 'real', 'sub'), join(dir, 'folder'));
  await symlink('../other/state.json', join(dir, 'real', 'sub', 'state.json'));
  await fileState(join(dir, 'folder', 'state.json')).save('D07', state('4'));
  assert.deepEqual(await fileState(join(dir, 'real', 'other', 'state.json')).load('D07'), state('4'));
  // `..` inside the link's own text, after a linked folder: also the real folder's parent.
  await symlink('folder/../other/state.json', join(dir, 'via.json'));
  await fileState(join(dir, 'via.json')).save('D07', state('5'));
  assert.deepEqual(await fileState(join(dir, 'real', 'other', 'state.json')).load('D07'), state('5'));
  assert.equal(fileState(join(dir, 'via.json')).path, join(realpathSync(join(dir, 'real', 'other')), 'state.json'));
  assert.equal(existsSync(join(dir, 'other')), false, 'no folder made where the path, read as text, would lead');
});

test('the memory store keeps a copy, not the caller object', async () => {
  const store = memoryState();
  const s = state('1');
  await store.save('D07', s);
  s.highWater!.value = 'changed';
  assert.equal((await store.load('D07'))!.highWater!.value, '1');
});

/** The pid of a process that has ended (a child that exited), so certainly not running now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

test('the first load removes temporary files that killed writers left, and only those', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'state.json');
  await writeFile(path, JSON.stringify({ version: 1, datasets: { D07: state('1') } }));
  const dead = await deadPid();
  assert.equal(processAlive(dead), false);
  // A live writer other than this process: the test runner's parent.
  assert.equal(processAlive(process.ppid), true);
  const stale = [`.state.json.${dead}.1.tmp`, `.state.json.${dead}.17.tmp`];
  const kept = [
    `.state.json.${process.ppid}.3.tmp`, // a live process may be about to rename it
    `.state.json.${process.pid}.4.tmp`, // this process: another store on the same path
    `.other.json.${dead}.1.tmp`, // another state file's
    `.state.json.5.${dead}.1.tmp`, // the state file "state.json.5"'s
    `.state.json.x.1.tmp`,
    'notes.txt',
  ];
  for (const name of [...stale, ...kept]) await writeFile(join(dir, name), '{"version":1,"datas');
  const store = fileState(path);
  assert.deepEqual(await store.load('D07'), state('1'));
  assert.deepEqual((await readdir(dir)).sort(), ['state.json', ...kept].sort());
  // Saves still work and add no litter of their own.
  await store.save('D07', state('2'));
  assert.deepEqual((await readdir(dir)).sort(), ['state.json', ...kept].sort());
  assert.deepEqual(await fileState(path).load('D07'), state('2'));
});

test('cleaning up does not need the folder to exist yet', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal(await fileState(join(dir, 'missing', 'state.json')).load('D07'), undefined);
});
