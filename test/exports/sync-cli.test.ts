// `lender sync` as a real process against `lender sandbox` in another process: killed with
// SIGKILL at several points, stopped with SIGINT, re-run; then incremental runs after advance.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { LenderClient } from '../../src/client/client.ts';
import { plainWalk } from '../helpers/plain-walk.ts';
import { main } from '../../src/cli/main.ts';
import { memoryIo } from '../helpers/memory-io.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';
import { startSandbox } from '../../src/sandbox/index.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const CODES = ['D07', 'D23', 'D03'] as const;

interface Served {
  authUrl: string;
  caFile: string;
  lenders: { lender: string; email: string; password: string }[];
}

let sandboxProc: ChildProcess;
let served: Served;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lender-sync-'));
  sandboxProc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'sandbox', '--seed', '21', '--scale', '1200', '--latency', '4'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const lines = createInterface({ input: sandboxProc.stdout! });
  const [first] = (await once(lines, 'line')) as [string];
  served = JSON.parse(first) as Served;
  const demo = served.lenders.find((l) => l.lender === 'demo')!;
  env = {
    PATH: process.env.PATH,
    LENDER_AUTH_URL: served.authUrl,
    LENDER_SUBDOMAIN: 'demo',
    LENDER_EMAIL: demo.email,
    LENDER_PASSWORD: demo.password,
    LENDER_CA_FILE: served.caFile,
    LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json'),
  };
});

after(async () => {
  sandboxProc.kill('SIGTERM');
  await once(sandboxProc, 'exit');
  await rm(dir, { recursive: true, force: true });
});

function startSync(out: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, 'sync', '--out', out, '--datasets', CODES.join(','), '--limit', '40'], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function run(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => { stdout += d; });
  child.stderr!.on('data', (d: Buffer) => { stderr += d; });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}

async function fileLines(out: string): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  for (const code of CODES) {
    const path = join(out, `${code}.ndjson`);
    const text = existsSync(path) ? await readFile(path, 'utf8') : '';
    result.set(code, text.split('\n').filter((l) => l !== ''));
  }
  return result;
}

async function totalLines(out: string): Promise<number> {
  let n = 0;
  for (const lines of (await fileLines(out)).values()) n += lines.length;
  return n;
}

/** Starts a sync and sends `signal` once the files hold at least `lines` rows. */
async function interruptAt(out: string, lines: number, signal: NodeJS.Signals) {
  const child = startSync(out);
  const result = run(child);
  let exited = false;
  void result.then(() => { exited = true; });
  while (!exited && (await totalLines(out)) < lines) await new Promise((r) => setTimeout(r, 15));
  const interrupted = !exited;
  if (interrupted) child.kill(signal);
  return { ...(await result), interrupted };
}

async function expectedRows(): Promise<Map<string, string[]>> {
  const demo = served.lenders.find((l) => l.lender === 'demo')!;
  const client = await LenderClient.login({ authUrl: served.authUrl, lender: 'demo', email: demo.email, password: demo.password, ca: await readFile(served.caFile) });
  try {
    const map = new Map<string, string[]>();
    for (const code of CODES) map.set(code, (await plainWalk(client, code, { since: '2000-01-01T00:00:00Z' })).map((r) => JSON.stringify(r)));
    return map;
  } finally {
    await client.close();
  }
}

async function advance(): Promise<void> {
  const agent = new Agent({ connect: { ca: await readFile(served.caFile) } });
  const res = await request(`${served.authUrl}/__sandbox/advance`, { method: 'POST', dispatcher: agent });
  await res.body.text();
  await agent.close();
  assert.equal(res.statusCode, 200);
}

test('SIGKILL at several points, then re-runs: every row is on disk, nothing foreign; then incremental runs', async () => {
  const out = join(dir, 'kill');
  const expected = await expectedRows();
  const total = [...expected.values()].reduce((n, rows) => n + rows.length, 0);
  let interrupted = 0;
  for (const fraction of [0.1, 0.35, 0.6, 0.85]) {
    const r = await interruptAt(out, Math.floor(total * fraction), 'SIGKILL');
    if (r.interrupted) {
      interrupted += 1;
      assert.equal(r.signal, 'SIGKILL');
    }
  }
  assert.ok(interrupted >= 3, `${interrupted} runs were killed mid-way`);
  const final = await run(startSync(out));
  assert.equal(final.code, 0, final.stderr);
  const summary = JSON.parse(final.stdout) as { datasets: Record<string, { mode: string }> };
  assert.ok(Object.values(summary.datasets).some((d) => d.mode === 'resumed' || d.mode === 'incremental'));

  const files = await fileLines(out);
  for (const code of CODES) {
    const lines = files.get(code)!;
    const want = new Set(expected.get(code));
    const have = new Set(lines);
    const missing = [...want].filter((l) => !have.has(l));
    assert.equal(missing.length, 0, `${code}: ${missing.length} rows lost`);
    assert.equal([...have].filter((l) => !want.has(l)).length, 0, `${code}: no foreign or torn line`);
    // Only pages written but not yet checkpointed can repeat: at most one page per kill.
    assert.ok(lines.length - want.size <= interrupted * 40, `${code}: ${lines.length - want.size} repeated rows`);
  }

  // Incremental: after advance(), exactly the changed rows are appended; then nothing.
  const beforeRows = await expectedRows();
  await advance();
  const afterRows = await expectedRows();
  const sizes = new Map([...files].map(([code, lines]) => [code, lines.length]));
  const second = await run(startSync(out));
  assert.equal(second.code, 0, second.stderr);
  const grown = await fileLines(out);
  let changedTotal = 0;
  for (const code of CODES) {
    const old = new Set(beforeRows.get(code));
    const changed = afterRows.get(code)!.filter((l) => !old.has(l)).sort();
    changedTotal += changed.length;
    assert.deepEqual(grown.get(code)!.slice(sizes.get(code)).sort(), changed, `${code} incremental`);
  }
  assert.ok(changedTotal > 0, 'advance changed something');
  const third = await run(startSync(out));
  assert.equal(third.code, 0, third.stderr);
  assert.equal(await totalLines(out), [...grown.values()].reduce((n, l) => n + l.length, 0), 'an idle re-run appends nothing');
});

test('Ctrl-C (SIGINT) stops cleanly with the state saved; the re-run completes', async () => {
  const out = join(dir, 'sigint');
  const expected = await expectedRows();
  const total = [...expected.values()].reduce((n, rows) => n + rows.length, 0);
  const r = await interruptAt(out, Math.floor(total * 0.4), 'SIGINT');
  assert.ok(r.interrupted, 'the run was still going when interrupted');
  assert.equal(r.code, 130, 'interrupted');
  assert.match(r.stderr, /stopped; progress is saved in .*\.lender-state\.json/);
  const state = JSON.parse(await readFile(join(out, '.lender-state.json'), 'utf8')) as { datasets: Record<string, { load: unknown }> };
  assert.ok(Object.values(state.datasets).some((d) => d.load !== null), 'an unfinished load was saved');
  const linesAtStop = await totalLines(out);
  // The summary names every dataset read, the one stopped midway included, with the rows it stored.
  const stopped = JSON.parse(r.stdout.trim()) as { stopped: boolean; datasets: Record<string, { rows: number }> };
  assert.equal(stopped.stopped, true);
  const atStop = await fileLines(out);
  for (const code of CODES) assert.equal(stopped.datasets[code]?.rows ?? 0, atStop.get(code)!.length, `${code} in ${r.stdout}`);
  const final = await run(startSync(out));
  assert.equal(final.code, 0, final.stderr);
  const files = await fileLines(out);
  for (const code of CODES) assert.deepEqual([...new Set(files.get(code))].sort(), [...new Set(expected.get(code))].sort(), code);
  // A clean stop saves the page it wrote, so the re-run repeats nothing.
  assert.equal(await totalLines(out), total, `stopped at ${linesAtStop} lines`);
});

test('a disk that fills up mid-page (here a file size limit): the sync fails naming the file, the re-run cuts the part written and completes', async () => {
  const out = join(dir, 'full');
  const expected = await expectedRows();
  const total = [...expected.values()].reduce((n, rows) => n + rows.length, 0);
  // `ulimit -f`: a write across the limit writes what fits without an error (a short write), the
  // next one fails with EFBIG, as a disk filling up gives a short write then ENOSPC.
  const limitKb = 200;
  const args = ['--import', 'tsx', MAIN, 'sync', '--out', out, '--datasets', CODES.join(','), '--limit', '40'];
  const limited = await run(spawn('bash', ['-c', `ulimit -f ${limitKb} && exec "$0" "$@"`, process.execPath, ...args], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  }));
  assert.equal(limited.code, 1, limited.stderr);
  const full = /cannot write (\S+\.ndjson): file too large \(EFBIG\)/.exec(limited.stderr);
  assert.ok(full !== null, limited.stderr);
  // The state counts only bytes that are in the file: a short write is written out, or fails.
  const state = JSON.parse(await readFile(join(out, '.lender-state.json'), 'utf8')) as { datasets: Record<string, { fileBytes?: number }> };
  const recorded = state.datasets[basename(full[1]!, '.ndjson')]?.fileBytes;
  assert.ok(recorded !== undefined && recorded > 0, 'pages were committed before the file was full');
  assert.ok(recorded < limitKb * 1024, `${recorded} bytes recorded`);
  // The part of the page that fitted was cut at once: the file holds what its state records.
  assert.equal(statSync(full[1]!).size, recorded);
  const final = await run(startSync(out));
  assert.equal(final.code, 0, final.stderr);
  const files = await fileLines(out);
  for (const code of CODES) assert.deepEqual([...files.get(code)!].sort(), [...expected.get(code)!].sort(), code);
  assert.equal(await totalLines(out), total);
});

test('Ctrl-C while logging in: the summary still comes, nothing read, "stopped": true (exit 130)', async () => {
  // The login is held by the sandbox's latency until the stop.
  const held = await startSandbox({ ...TEST_SANDBOX_DEFAULTS, scale: 10, latencyMs: 60_000 });
  const out = await mkdtemp(join(tmpdir(), 'lender-sync-login-stop-'));
  try {
    const { email, password } = held.credentials('demo');
    const controller = new AbortController();
    const io = memoryIo({
      LENDER_AUTH_URL: held.authUrl, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: email, LENDER_PASSWORD: password,
      LENDER_CA_FILE: held.caFile, LENDER_CREDENTIALS_FILE: join(out, 'none.json'),
    }, controller.signal);
    const running = main(['sync', '--out', out, '--datasets', 'D26'], io);
    while (held.stats().requests === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    assert.equal(await running, 130, io.err());
    const summary = JSON.parse(io.out()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(summary), ['to', 'state', 'datasets', 'stopped']);
    assert.deepEqual([summary.datasets, summary.stopped], [{}, true]);
    assert.match(io.err(), /^lender sync: stopped before any dataset was read; run the same command again\.$/m);
  } finally {
    await held.close();
    await rm(out, { recursive: true, force: true });
  }
});

test('a dataset that fails does not stop the others: named on stderr and under "failed", exit 1', async () => {
  const out = await mkdtemp(join(tmpdir(), 'lender-sync-failed-'));
  try {
    const io = memoryIo({ LENDER_CREDENTIALS_FILE: join(out, 'none.json') });
    const code = await main(['sync', '--sandbox', '--out', out, '--datasets', 'D04,D26'], io);
    assert.equal(code, 1, io.err());
    const summary = JSON.parse(io.out().trim()) as { datasets: Record<string, { rows: number }>; failed: Record<string, string> };
    assert.deepEqual(Object.keys(summary.failed), ['D04']);
    assert.match(summary.failed.D04!, /D04 is listed in the catalog but not available/);
    assert.match(io.err(), /lender sync: D04 failed: /);
    const lines = (await readFile(join(out, 'D26.ndjson'), 'utf8')).split('\n').filter(Boolean);
    assert.ok(lines.length > 0);
    assert.equal(summary.datasets.D26!.rows, lines.length);
    assert.equal(existsSync(join(out, 'D04.ndjson')), false);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
