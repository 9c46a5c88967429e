// Files holding personal data or state come out mode 0600 under the usual umask 022 (which would
// leave a plain file 0644), the folders made for them 0700, and files that existed with a looser
// mode are tightened: sync's data
// files (a new DuckDB database from its first moment), its state file and lock, `export --state`'s
// state file, rejects files, REPL history. What is not a regular file (a terminal, a pipe:
// `--rejects /dev/stderr`) keeps its mode.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import repl from 'node:repl';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.ts';
import { fileState } from '../../src/exports/state.ts';
import { openPrivate, privateWriteStream } from '../../src/core/private-files.ts';
import { attachHistory } from '../../repl/history.ts';
import { memoryIo } from '../helpers/memory-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

// Inherited by the CLI children below too.
process.umask(0o022);

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

let t: TestSandbox;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 5, scale: 20 });
  dir = await mkdtemp(join(tmpdir(), 'lender-private-'));
  env = { PATH: process.env.PATH, ...t.cliEnv(dir) };
});

after(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

function modes(folder: string): Record<string, string> {
  return Object.fromEntries(readdirSync(folder).sort().map((name) => [name, mode(join(folder, name))]));
}

async function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

test('lender sync: data files, state file and lock are 0600, the folders it makes 0700; a looser data file from before is tightened', async () => {
  const out = join(dir, 'sync', 'deeper');
  const first = await cli(['sync', '--out', out, '--datasets', 'D07']);
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(modes(out), { '.lender-state.json': '600', 'D07.ndjson': '600' });
  assert.deepEqual([mode(join(dir, 'sync')), mode(out)], ['700', '700']);

  // A data file left 0644 (by an older version, or copied in) is tightened when sync appends.
  chmodSync(join(out, 'D07.ndjson'), 0o644);
  const again = await cli(['sync', '--out', out, '--datasets', 'D07,D26']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(modes(out), { '.lender-state.json': '600', 'D07.ndjson': '600', 'D26.ndjson': '600' });

  // The lock exists only while a run holds it: taken the way sync takes it.
  const lock = await fileState(join(out, '.lender-state.json')).lock();
  try {
    assert.equal(mode(lock.path), '600');
  } finally {
    await lock.release();
  }
});

test('lender sync --to duckdb: a new database file is owner-only from the moment it appears', async () => {
  const folder = join(dir, 'duckdb');
  await mkdir(folder);
  const file = join(folder, 'new.duckdb');
  // Every change in the folder (the file's creation, its log, its temporary folder) is a moment to
  // look at the file's mode: DuckDB alone would create it with the umask's (0644 here).
  const seen = new Set<string>();
  const watcher = watch(folder, () => {
    if (existsSync(file)) seen.add(mode(file));
  });
  try {
    const run = await cli(['sync', '--to', `duckdb:${file}`, '--datasets', 'D07']);
    assert.equal(run.code, 0, run.stderr);
  } finally {
    watcher.close();
  }
  assert.deepEqual([...seen], ['600']);
  assert.equal(mode(file), '600');
  assert.deepEqual(readdirSync(folder).filter((name) => name.startsWith('.lender-new-')), [], 'the folder it was made in is gone');
});

test('lender export --state: the state file is 0600, also one that existed 0644', async () => {
  const statePath = join(dir, 'export', 'd07.state.json');
  const first = memoryIo(env);
  assert.equal(await main(['export', 'D07', '--state', statePath], first), 0, first.err());
  assert.deepEqual(modes(join(dir, 'export')), { 'd07.state.json': '600' });
  assert.equal(mode(join(dir, 'export')), '700', 'the folder it made');
  chmodSync(statePath, 0o644);
  const second = memoryIo(env);
  assert.equal(await main(['export', 'D07', '--state', statePath], second), 0, second.err());
  assert.deepEqual(modes(join(dir, 'export')), { 'd07.state.json': '600' }, 'rewritten through a private temp file');
});

test('lender push --rejects: the rejects file is 0600, also one that existed 0644; the folders it makes 0700', async () => {
  const input = join(dir, 'accounts.ndjson');
  await writeFile(input, '{"status": 1, "debtorCompanyId": \n{"status": 1}\n');
  for (const existing of [false, true]) {
    const rejects = join(dir, existing ? 'old-rejects.ndjson' : 'rejects.ndjson');
    if (existing) writeFileSync(rejects, 'old\n', { mode: 0o644 });
    if (existing) assert.equal(mode(rejects), '644');
    const run = await cli(['push', input, '--rejects', rejects]);
    assert.equal(run.code, 3, run.stderr);
    assert.equal(mode(rejects), '600');
  }
  // In folders not there yet, as sync's and export's files: made, owner-only.
  const nested = join(dir, 'rejects', 'by-day', 'today.ndjson');
  const run = await cli(['push', input, '--rejects', nested]);
  assert.equal(run.code, 3, run.stderr);
  assert.equal(readFileSync(nested, 'utf8').trim().split('\n').length, 2, 'both rejects written');
  assert.deepEqual([mode(join(dir, 'rejects')), mode(join(dir, 'rejects', 'by-day')), mode(nested)], ['700', '700', '600']);
});

test('REPL history, written as you go and rewritten when cleaned, is 0600', () => {
  const path = join(dir, 'history', 'repl_history');
  for (const secretLine of [false, true]) {
    // The second start finds a secret line in the file and rewrites it through a temp file.
    if (secretLine) writeFileSync(path, 'ok\nLENDER_PASSWORD=x\n', { mode: 0o644 });
    const server = repl.start({ input: new PassThrough(), output: new PassThrough(), terminal: false, prompt: '' });
    const history = attachHistory(server, { path, isSecret: (line) => line.includes('PASSWORD') });
    try {
      server.emit('line', '1 + 1');
      assert.equal(mode(path), '600');
    } finally {
      history.close();
      server.close();
    }
  }
});

/** A named pipe made mode 0644 (what a chmod to 0600 would change); undefined where there is no mkfifo. */
function fifo(name: string): string | undefined {
  const path = join(dir, name);
  if (spawnSync('mkfifo', ['-m', '644', path]).status !== 0) return undefined;
  chmodSync(path, 0o644);
  return path;
}

/** Reads a pipe through a `cat`, which waits for a writer and ends when it goes. `stop` ends a
 * `cat` whose writer never came, so that a failing test does not wait for it. */
function readPipe(path: string): { text: Promise<string>; stop(): void } {
  const cat = spawn('cat', [path], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  cat.stdout!.on('data', (d: Buffer) => (text += d));
  const closed = once(cat, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const result = closed.then(([code, signal]) => {
    if (code !== 0) throw new Error(`reading ${path} failed (exit ${code}, ${signal})`);
    return text;
  });
  result.catch(() => undefined); // a test that failed before reading it has its own error
  return {
    text: result,
    stop: () => {
      if (cat.exitCode === null && cat.signalCode === null) cat.kill('SIGKILL');
    },
  };
}

test('lender push --rejects to a pipe writes the rejects there and leaves its mode alone', async (t) => {
  const pipe = fifo('rejects.pipe');
  if (pipe === undefined) return t.skip('no mkfifo');
  const input = join(dir, 'accounts-to-pipe.ndjson');
  await writeFile(input, '{"status": 1, "debtorCompanyId": \n{"status": 1}\n');
  const read = readPipe(pipe);
  try {
    // Through a symlink too, as /dev/stderr is one.
    const link = join(dir, 'rejects-link');
    await symlink(pipe, link);
    const run = await cli(['push', input, '--rejects', link]);
    assert.equal(run.code, 3, run.stderr);
    const lines = (await read.text).split('\n').filter(Boolean);
    assert.equal(lines.length, 2, 'both rejects reached the pipe');
    assert.equal(mode(pipe), '644', 'not chmodded');
  } finally {
    read.stop();
  }
});

test('openPrivate and privateWriteStream chmod regular files only', async (t) => {
  const pipe = fifo('private.pipe');
  if (pipe === undefined) return t.skip('no mkfifo');
  // Read and write: opening a pipe so does not wait for the other end.
  const handle = await openPrivate(pipe, 'r+');
  await handle.close();
  assert.equal(mode(pipe), '644');

  const read = readPipe(pipe);
  try {
    const stream = privateWriteStream(pipe);
    stream.end('a line\n');
    await once(stream, 'close');
    assert.equal(await read.text, 'a line\n');
    assert.equal(mode(pipe), '644');
  } finally {
    read.stop();
  }

  // A regular file is still tightened by both.
  for (const open of ['handle', 'stream'] as const) {
    const file = join(dir, `plain-${open}`);
    writeFileSync(file, 'old\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    if (open === 'handle') await (await openPrivate(file, 'a+')).close();
    else await once(privateWriteStream(file, 'a').end('new\n'), 'close');
    assert.equal(mode(file), '600', open);
  }
  assert.equal(await readFile(join(dir, 'plain-stream'), 'utf8'), 'old\nnew\n');
});
