// One run per state at a time, end to end against a sandbox over HTTPS: two overlapping
// `lender sync` processes (a cron overlap), the library sync(), `lender export --state`, a lock a
// killed run left behind and one from another host.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { main } from '../../src/cli/main.ts';
import { LenderClient } from '../../src/client/client.ts';
import type { LockHolder } from '../../src/exports/lock-holder.ts';
import { StateLockedError, lockPathOf } from '../../src/exports/state-lock.ts';
import { sync } from '../../src/sinks/sync.ts';
import { startGateProxy, type Gate, type GateProxy } from '../helpers/gate-proxy.ts';
import { memoryIo } from '../helpers/memory-io.ts';
import { plainWalk } from '../helpers/plain-walk.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const HOLDER = new URL('../helpers/hold-state-lock.ts', import.meta.url).pathname;
const CODES = ['D07', 'D23'] as const;
const STATE = '.lender-state.json';

let t: TestSandbox;
let proxy: GateProxy;
let client: LenderClient;
let dir: string;
/** The CLI's environment against the sandbox; `proxied` goes through the gate proxy. */
let direct: NodeJS.ProcessEnv;
let proxied: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 31, scale: 100 });
  dir = await mkdtemp(join(tmpdir(), 'lender-sync-lock-'));
  direct = { PATH: process.env.PATH, ...t.cliEnv(dir) };
  proxy = await startGateProxy({ authUrl: t.sandbox.authUrl, ca: t.sandbox.ca });
  await writeFile(join(dir, 'proxy-ca.pem'), proxy.ca);
  proxied = { ...direct, LENDER_AUTH_URL: proxy.authUrl, LENDER_CA_FILE: join(dir, 'proxy-ca.pem') };
  client = await LenderClient.login({ ...t.sandbox.credentials('demo') });
});

after(async () => {
  await client?.close();
  await proxy?.close();
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

function syncArgs(out: string): string[] {
  return ['sync', '--out', out, '--datasets', CODES.join(','), '--limit', '10'];
}

function startCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** No wait in these tests is unbounded: a run that hangs fails its test with `what` instead. */
const WAIT_MS = 30_000;

async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${WAIT_MS / 1000} s waiting for ${what}`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` until it holds, failing after WAIT_MS. */
async function waitUntil(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up after ${WAIT_MS / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d));
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  // 'close', not 'exit': by then all of its output has been read.
  const closed = once(child, 'close') as Promise<[number | null]>;
  try {
    const [code] = await within(`lender ${child.spawnargs.slice(4).join(' ')} to end`, closed);
    return { code, stdout, stderr };
  } catch (error) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    throw error;
  }
}

/** Whether every thread of a process is stopped. Where there is no /proc to tell, assumed so. */
function allStopped(pid: number): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return threads.every((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The state follows the command name, which is in parentheses.
      return /^[Tt] /.test(stat.slice(stat.lastIndexOf(')') + 2));
    } catch {
      return true; // the thread ended
    }
  });
}

/** Every file of a folder with its content: what a refused run must leave exactly as it was. */
function snapshot(folder: string): Record<string, string> {
  return Object.fromEntries(readdirSync(folder).sort().map((name) => [name, readFileSync(join(folder, name), 'utf8')]));
}

function dataLines(out: string): string[] {
  return CODES.flatMap((code) => {
    const path = join(out, `${code}.ndjson`);
    return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l !== '') : [];
  });
}

async function expectedLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const code of CODES) lines.push(...(await plainWalk(client, code, { since: '2000-01-01T00:00:00Z' })).map((r) => JSON.stringify(r)));
  return lines.sort();
}

/** A child that holds the lock of `statePath` through the library until it is signalled. */
async function holdInChild(statePath: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, statePath, 'wait'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  try {
    await within('the lock-holding child to take the lock', Promise.race([
      once(lines, 'line'),
      once(lines, 'close').then(() => {
        throw new Error('the lock-holding child ended before it said it held the lock');
      }),
    ]));
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, stop: async () => { child.kill('SIGTERM'); await within('the lock-holding child to end', exited); } };
}

/** Waits until the gate holds the run; fails (instead of waiting forever) if the run ends first. */
async function untilHeld(gate: Gate, done: Promise<{ code: number | null; stderr: string }>): Promise<void> {
  const ended = done.then((r) => {
    throw new Error(`the run ended (exit ${r.code}) before the gate held it: ${r.stderr}`);
  });
  ended.catch(() => undefined);
  await within('the gate to hold the run', Promise.race([gate.holding, ended]));
}

function lockedLine(command: string, holder: LockHolder, lockPath: string): string {
  return `lender ${command}: the state is in use by another run (pid ${holder.pid} on host ${holder.host}, ` +
    `started ${holder.startedAt}; lock file ${lockPath}); wait for it to end.\n`;
}

test('two overlapping lender sync runs: the second stops at once with one line and writes nothing; the first writes each row once', async () => {
  const out = join(dir, 'overlap');
  const lockPath = join(out, `${STATE}.lock`);
  // Page requests are held once 15 rows were answered: the first run stops part-way, rows on disk.
  const gate = proxy.arm(15);
  const first = startCli(syncArgs(out), proxied);
  const firstDone = finish(first);
  let stopped = false;
  try {
    await untilHeld(gate, firstDone);
    // Held, it cannot end: the rows of the pages it was given reach the disk.
    await waitUntil('the first run to write rows', () => dataLines(out).length > 0);
    // Frozen, so that whatever changes in the folder from here on is the second run's doing. The
    // signal is only sent by kill(): a write under way may still land until every thread stopped.
    first.kill('SIGSTOP');
    stopped = true;
    await waitUntil('the first run to stop on SIGSTOP', () => allStopped(first.pid!));
    const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as LockHolder;
    assert.equal(holder.pid, first.pid);
    const before = snapshot(out);

    const second = await finish(startCli(syncArgs(out), direct));
    assert.equal(second.code, 1);
    assert.equal(second.stderr, lockedLine('sync', holder, lockPath));
    assert.equal(second.stdout, '');
    assert.deepEqual(snapshot(out), before, 'the refused run created, appended or changed nothing');

    first.kill('SIGCONT');
    stopped = false;
  } catch (error) {
    // Not left running into the next tests, whose gate it would trip.
    first.kill('SIGKILL');
    throw error;
  } finally {
    if (stopped) first.kill('SIGCONT');
    gate.release();
  }
  const done = await firstDone;
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(dataLines(out).sort(), await expectedLines(), 'exactly one copy of each row');
  assert.equal(existsSync(lockPath), false, 'released at the end');

  // The lock is gone: a following run works (incremental, nothing new to append).
  const files = snapshot(out);
  const third = await finish(startCli(syncArgs(out), direct));
  assert.equal(third.code, 0, third.stderr);
  const summary = JSON.parse(third.stdout) as { datasets: Record<string, { mode: string; rows: number }> };
  assert.deepEqual(Object.values(summary.datasets).map((d) => [d.mode, d.rows]), CODES.map(() => ['incremental', 0]));
  for (const code of CODES) assert.equal(readFileSync(join(out, `${code}.ndjson`), 'utf8'), files[`${code}.ndjson`]);
  assert.equal(existsSync(lockPath), false);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`lender sync and lender export --state stopped by ${signal} remove their lock as they end`, async () => {
    const out = join(dir, `stopped-${signal}`);
    const runs = [
      { args: syncArgs(out), lockPath: join(out, `${STATE}.lock`), said: /^lender sync: stopped; progress is saved in / },
      { args: ['export', 'D07', '--limit', '10', '--state', join(out, 'd07.json')], lockPath: join(out, 'd07.json.lock'), said: new RegExp(`^lender export: stopped; ${join(out, 'd07.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} records the pages ` +
        'written to stdout: run the same command again, appending \\(>>\\) to the same output, to go on after them\\.\\n$') },
    ];
    for (const run of runs) {
      const gate = proxy.arm(15);
      const child = startCli(run.args, proxied);
      const done = finish(child);
      try {
        await untilHeld(gate, done);
        assert.equal((JSON.parse(readFileSync(run.lockPath, 'utf8')) as LockHolder).pid, child.pid);
        child.kill(signal);
        const stopped = await done;
        assert.equal(stopped.code, 130, 'interrupted');
        assert.match(stopped.stderr, run.said);
      } finally {
        gate.release();
      }
      // Gone, not merely left for the next run to take over.
      assert.equal(existsSync(run.lockPath), false, run.args[0]);
    }
  });
}

test('a run that fails removes its lock', async () => {
  const out = join(dir, 'failed');
  const io = memoryIo({ ...direct, LENDER_PASSWORD: 'not-the-password' });
  assert.equal(await main(syncArgs(out), io), 1);
  assert.match(io.err(), /^lender sync: /);
  assert.deepEqual(readdirSync(out), [], 'no lock left behind');
});

test('the library sync() refuses a state another process holds, writes nothing, and works once it is free', async () => {
  const out = join(dir, 'library');
  const statePath = join(out, STATE);
  const holder = await holdInChild(statePath);
  try {
    await assert.rejects(sync(client, ['D07'], { out }), (error: unknown) =>
      error instanceof StateLockedError && error.holder?.pid === holder.child.pid && error.lockPath === lockPathOf(statePath));
    assert.deepEqual(readdirSync(out), [`${STATE}.lock`], 'no data file, no state file');
  } finally {
    await holder.stop();
  }
  const summary = await sync(client, ['D07'], { out });
  assert.equal(summary.D07!.mode, 'initial');
  assert.ok(summary.D07!.rows > 0);
  assert.deepEqual(readdirSync(out).sort(), [STATE, 'D07.ndjson'].sort(), 'the lock went with the run');
});

test('lender export --state refuses a state another process holds, with one line and no output', async () => {
  const statePath = join(dir, 'export', 'd07.state.json');
  const holder = await holdInChild(statePath);
  const holding = JSON.parse(await readFile(lockPathOf(statePath), 'utf8')) as LockHolder;
  try {
    const io = memoryIo(direct);
    assert.equal(await main(['export', 'D07', '--state', statePath], io), 1);
    assert.equal(io.err(), lockedLine('export', holding, lockPathOf(statePath)));
    assert.equal(io.out(), '');
    assert.equal(existsSync(statePath), false);
  } finally {
    await holder.stop();
  }
  const io = memoryIo(direct);
  assert.equal(await main(['export', 'D07', '--state', statePath], io), 0, io.err());
  assert.ok(io.out().split('\n').filter(Boolean).length > 0);
  assert.equal(existsSync(statePath), true);
  assert.equal(existsSync(lockPathOf(statePath)), false);
});

test('lender sync takes over the lock of a run that was killed, and refuses one from another host', async () => {
  const out = join(dir, 'stale');
  const lockPath = join(out, `${STATE}.lock`);
  const killed = await holdInChild(join(out, STATE));
  killed.child.kill('SIGKILL');
  await once(killed.child, 'exit');
  assert.equal((JSON.parse(await readFile(lockPath, 'utf8')) as LockHolder).pid, killed.child.pid, 'left behind');
  const taken = memoryIo(direct);
  assert.equal(await main(syncArgs(out), taken), 0, taken.err());
  assert.deepEqual(dataLines(out).sort(), await expectedLines());
  assert.equal(existsSync(lockPath), false);

  const elsewhere = join(dir, 'elsewhere');
  const foreign: LockHolder = { pid: killed.child.pid!, host: `not-${hostname()}`, startedAt: '2024-01-02T03:04:05.000Z' };
  const foreignLock = join(elsewhere, `${STATE}.lock`);
  await mkdir(elsewhere);
  await writeFile(foreignLock, JSON.stringify(foreign));
  const refused = memoryIo(direct);
  assert.equal(await main(syncArgs(elsewhere), refused), 1);
  assert.equal(refused.err(),
    `lender sync: the state is in use by a run on another host (pid ${foreign.pid} on host ${foreign.host}, started ${foreign.startedAt}; ` +
    `lock file ${foreignLock}); such a lock is never taken over automatically: if that process has ended, delete the lock file.\n`);
  assert.equal(refused.out(), '');
  assert.deepEqual(readdirSync(elsewhere), [`${STATE}.lock`]);
  assert.deepEqual(JSON.parse(await readFile(foreignLock, 'utf8')), foreign);
});
