import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/client/errors.ts';
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

test('a torn or foreign state file is refused with a sentence naming it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'bad.json'), '{"version":1,"datas');
  await assert.rejects(fileState(join(dir, 'bad.json')).load('D07'), (e: Error) => e instanceof ConfigError && e.message.includes('bad.json'));
  await writeFile(join(dir, 'other.json'), '{"hello":1}');
  await assert.rejects(fileState(join(dir, 'other.json')).load('D07'), ConfigError);
});

test('the memory store keeps a copy, not the caller object', async () => {
  const store = memoryState();
  const s = state('1');
  await store.save('D07', s);
  s.highWater!.value = 'changed';
  assert.equal((await store.load('D07'))!.highWater!.value, '1');
});
