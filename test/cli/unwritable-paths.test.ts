// A path the commands cannot write is named in one line with the system's reason: the path the
// user gave (not a temporary file beside it) and the true cause. Node's recursive mkdir reports
// ENOENT on a read-only file system; the read-only folder here is a real one, a tmpfs mounted
// read-only in a mount namespace of the command's own (`unshare`, which needs no privilege where
// user namespaces are enabled, as on Debian).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { FileError } from '../../src/core/file-errors.ts';
import { makeFolder, makeFolderSync } from '../../src/core/make-folder.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

let t: TestSandbox;
let dir: string;
let readOnly: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 6, scale: 20 });
  dir = await mkdtemp(join(tmpdir(), 'lender-unwritable-'));
  readOnly = join(dir, 'read-only');
  env = { PATH: process.env.PATH, ...t.cliEnv(dir) };
});

after(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI; with `inReadOnly`, where `readOnly` is a read-only tmpfs. */
async function cli(args: string[], inReadOnly: boolean): Promise<{ code: number | null; stderr: string }> {
  const node = [process.execPath, '--import', 'tsx', MAIN, ...args];
  const child = inReadOnly
    ? spawn('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c',
      'mkdir -p "$0" && mount -t tmpfs -o ro tmpfs "$0" && exec "$@"', readOnly, ...node], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(node[0]!, node.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

test('a read-only folder: sync into NDJSON, sync into DuckDB and export --state name the path and EROFS', async () => {
  const cases: [string[], string][] = [
    [['sync', '--datasets', 'D07', '--to', `ndjson:${readOnly}/out`], `lender sync: cannot create the folder ${readOnly}/out: read-only file system (EROFS)`],
    [['sync', '--datasets', 'D07', '--to', `ndjson:${readOnly}`], `lender sync: cannot create the lock file ${readOnly}/.lender-state.json.lock: read-only file system (EROFS)`],
    [['sync', '--datasets', 'D07', '--to', `duckdb:${readOnly}/sub/lender.duckdb`], `lender sync: cannot create the folder ${readOnly}/sub: read-only file system (EROFS)`],
    [['sync', '--datasets', 'D07', '--to', `duckdb:${readOnly}/lender.duckdb`], `lender sync: cannot create the lock file ${readOnly}/lender.duckdb.lock: read-only file system (EROFS)`],
    [['export', 'D07', '--state', `${readOnly}/d07.json`], `lender export: cannot create the lock file ${readOnly}/d07.json.lock: read-only file system (EROFS)`],
  ];
  for (const [args, line] of cases) {
    const run = await cli(args, true);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, `${line}\n`, args.join(' '));
  }
  assert.equal(existsSync(join(readOnly, 'out')), false, 'the mount was the command\'s own');
});

test('a file where a folder should be: the folder named, and why', async () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a folder\n');
  const run = await cli(['export', 'D07', '--state', join(file, 'd07.json')], false);
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.stderr, `lender export: cannot create the folder ${file}: a file of that name is there (EEXIST)\n`);
  const deeper = await cli(['sync', '--datasets', 'D07', '--to', `ndjson:${join(file, 'sub', 'out')}`], false);
  assert.equal(deeper.code, 1, deeper.stderr);
  assert.match(deeper.stderr, new RegExp(`^lender sync: cannot create the folder ${file}/sub/out: not a directory \\(ENOTDIR\\)\\n$`));
});

test('a folder the system refuses with ENOENT though its parent exists (/proc): one line, where Node\'s recursive mkdir looped forever', async () => {
  // Node's mkdir -p takes ENOENT for a missing parent, makes /proc (EEXIST) and tries again, for ever.
  const folder = `/proc/lender-${process.pid}/out`;
  const cases: [string[], string][] = [
    [['sync', '--datasets', 'D07', '--to', `ndjson:${folder}`], `lender sync: cannot create the folder ${folder}: no such file or directory (ENOENT)`],
    [['export', 'D07', '--state', `${folder}/d07.json`], `lender export: cannot create the folder ${folder}: no such file or directory (ENOENT)`],
  ];
  for (const [args, line] of cases) {
    const run = await cli(args, false);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, `${line}\n`, args.join(' '));
  }
});

test('makeFolder and makeFolderSync: a dangling link, a file, a path through a file are refused; new levels are 0700', async () => {
  const base = await mkdtemp(join(dir, 'levels-'));
  symlinkSync(join(base, 'nowhere'), join(base, 'dangling'));
  writeFileSync(join(base, 'a-file'), 'x');
  const cases: [string, string][] = [['dangling', 'EEXIST'], ['dangling/sub', 'EEXIST'], ['a-file', 'EEXIST'], ['a-file/sub', 'ENOTDIR']];
  for (const [name, code] of cases) {
    const path = join(base, name);
    await assert.rejects(makeFolder(path), (e: unknown) => e instanceof FileError && e.code === code && e.message.startsWith(`cannot create the folder ${path}:`), name);
    assert.throws(() => makeFolderSync(path), (e: unknown) => e instanceof FileError && e.code === code, `${name}, sync`);
  }
  // Where a file is, both say so (mkdir's own words, "file already exists", read as if the folder were there).
  const file = join(base, 'a-file');
  await assert.rejects(makeFolder(file), { message: `cannot create the folder ${file}: a file of that name is there (EEXIST)` });
  assert.throws(() => makeFolderSync(file), { message: `cannot create the folder ${file}: a file of that name is there (EEXIST)` });
  const fifo = join(base, 'a-fifo');
  execFileSync('mkfifo', [fifo]);
  await assert.rejects(makeFolder(fifo), { message: `cannot create the folder ${fifo}: something of that name that is not a folder is there (EEXIST)` });
  await makeFolder(join(base, 'new', 'deeper'));
  makeFolderSync(join(base, 'new-sync', 'deeper'));
  for (const made of ['new', 'new/deeper', 'new-sync', 'new-sync/deeper']) assert.equal(statSync(join(base, made)).mode & 0o777, 0o700, made);
});
