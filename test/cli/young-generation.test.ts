// The commands that move data start again with a smaller young generation where Node can replace
// its own process (process.execve): same pid, same stdio, the user's own semi-space size kept, and
// the first start kept where a descriptor beyond stdio is needed (bash's <(…) for a password file,
// which the command then reads once). Where they cannot start again, they hold the young
// generation at that size in their own process.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { DATA_COMMANDS } from '../../src/cli/main.ts';
import { planYoungGeneration, restartEnv, SEMI_SPACE_MB, type ProcessView } from '../../src/cli/young-generation.ts';
import { LENDER_BIN, spawnLender, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';

const FLAG = `--max-semi-space-size=${SEMI_SPACE_MB}`;

/** The decision for the commands the CLI has. */
const plan = (proc: ProcessView) => planYoungGeneration(proc, DATA_COMMANDS);

function view(args: string[], over: Partial<ProcessView> = {}): ProcessView {
  return {
    argv: ['/usr/bin/node', '/opt/lender/bin/lender.mjs', ...args],
    execArgv: [],
    env: {},
    execPath: '/usr/bin/node',
    platform: 'linux',
    execve: () => undefined,
    ...over,
  };
}

describe('planYoungGeneration', () => {
  it('starts a data command again with the flag first, then the Node options and the command line as they were', () => {
    for (const command of ['export', 'sync', 'push', 'flag', 'demo', 'sandbox']) {
      assert.deepEqual(plan(view([command, 'D07', '--limit', '5'], { execArgv: ['--import', 'tsx'] })),
        { restart: ['/usr/bin/node', FLAG, '--import', 'tsx', '/opt/lender/bin/lender.mjs', command, 'D07', '--limit', '5'] });
    }
  });

  it('runs as it is: quick commands, help, no command', () => {
    for (const args of [[], ['--version'], ['--help'], ['catalog'], ['repl'], ['export', '--help'], ['sync', '-h'], ['nonsense']]) {
      assert.equal(plan(view(args)), undefined, args.join(' '));
      assert.equal(plan(view(args, { execve: undefined })), undefined, `${args.join(' ')}, without execve`);
    }
  });

  it('keeps a semi-space size given on the command line or in NODE_OPTIONS, in either spelling, or a growth factor given, and never restarts twice', () => {
    for (const execArgv of [[FLAG], ['--max-semi-space-size=32'], ['--max_semi_space_size=2'], ['--max-semi-space-size', '16'], ['--semi-space-growth-factor=4']]) {
      assert.equal(plan(view(['sync'], { execArgv })), undefined, execArgv.join(' '));
      assert.equal(plan(view(['sync'], { execArgv, execve: undefined })), undefined, `${execArgv.join(' ')}, without execve`);
    }
    for (const options of ['--max-semi-space-size=16', '--enable-source-maps  --max_semi_space_size=4']) {
      assert.equal(plan(view(['sync'], { env: { NODE_OPTIONS: options } })), undefined, options);
    }
    assert.ok(typeof plan(view(['sync'], { env: { NODE_OPTIONS: '--max-old-space-size=512' } })) === 'object');
  });

  it('holds it in the process under a debugger (--inspect, --inspect-brk, also through NODE_OPTIONS)', () => {
    assert.equal(plan(view(['sync'], { execArgv: ['--inspect-brk'] })), 'hold');
    assert.equal(plan(view(['export'], { execArgv: ['--inspect=9230'] })), 'hold');
    assert.equal(plan(view(['push'], { env: { NODE_OPTIONS: '--inspect' } })), 'hold');
  });

  it('holds it in the process when the command may need a descriptor beyond stdio, which the second start may not have', () => {
    assert.equal(plan(view(['sync', '--password-file', '/dev/fd/63'])), 'hold');
    assert.equal(plan(view(['push', '/proc/self/fd/3'])), 'hold');
    assert.equal(plan(view(['export', 'D07'], { env: { LENDER_CA_FILE: '/proc/4242/fd/9' } })), 'hold');
    assert.equal(plan(view(['sync'], { env: { NODE_CHANNEL_FD: '3' } })), 'hold');
    // stdin, stdout and stderr stay open across the restart.
    assert.ok(typeof plan(view(['push', '/dev/fd/0', '--rejects', '/dev/fd/2'])) === 'object');
    assert.ok(typeof plan(view(['push', '/dev/stdin'])) === 'object');
  });

  it('holds it in the process where Node cannot replace its process: no execve (before Node 22.15), or Windows', () => {
    assert.equal(plan(view(['sync'], { execve: undefined })), 'hold');
    assert.equal(plan(view(['sync'], { platform: 'win32' })), 'hold');
  });
});

describe('holdYoungGeneration', () => {
  // A Node of its own, whose semi-spaces may grow to 32 MB (so the run without the hold shows the
  // growth on any machine), loads pages of objects that outlive a few collections, yielding
  // between pages as the commands do, and prints the largest semi-space it saw.
  const MODULE = new URL('../../src/cli/young-generation.ts', import.meta.url).href;
  function largestSemiSpace(hold: boolean): number {
    const script = [
      `import { holdYoungGeneration, semiSpaceCapacity } from ${JSON.stringify(MODULE)};`,
      `if (${hold}) holdYoungGeneration();`,
      'const kept = []; let largest = 0;',
      'for (let page = 0; page < 400; page++) {',
      '  await new Promise((resolve) => setImmediate(resolve));',
      "  kept.push(Array.from({ length: 3000 }, (_, i) => ({ id: `row-${page}-${i}`, amount: i, dates: [page, i] })));",
      '  if (kept.length > 6) kept.shift();',
      '  largest = Math.max(largest, semiSpaceCapacity());',
      '}',
      'console.log(largest);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    return Number(child.stdout.trim()) / (1024 * 1024);
  }

  it('keeps the semi-spaces near the size where they would grow four times larger', () => {
    const free = largestSemiSpace(false);
    const held = largestSemiSpace(true);
    assert.ok(free > 3 * SEMI_SPACE_MB, `without the hold: ${free.toFixed(1)} MB`);
    // Node 24 counts pages it pins during a collection as well, a few MB over the size.
    assert.ok(held < 2 * SEMI_SPACE_MB, `held: ${held.toFixed(1)} MB`);
    // Held at the size, not below it: the pages still fill a semi-space of 8 MB between collections.
    assert.ok(held > SEMI_SPACE_MB / 2, `held: ${held.toFixed(1)} MB`);
  });
});

describe('restartEnv', () => {
  it('is the environment as it was, with MALLOC_ARENA_MAX at 1 unless the user set it', () => {
    const env = { PATH: '/bin', LENDER_SUBDOMAIN: 'demo' };
    assert.deepEqual(restartEnv(env), { ...env, MALLOC_ARENA_MAX: '1' });
    assert.deepEqual(env, { PATH: '/bin', LENDER_SUBDOMAIN: 'demo' }, 'not changed in place');
    assert.deepEqual(restartEnv({ ...env, MALLOC_ARENA_MAX: '8' }), { ...env, MALLOC_ARENA_MAX: '8' });
    const empty = { ...env, MALLOC_ARENA_MAX: '' };
    assert.equal(restartEnv(empty), empty, 'an empty value is a value');
  });
});

describe('a data command of the bin', { timeout: 120_000 }, () => {
  let sandbox: SandboxChild;
  let dir: string;
  let preload: string;
  before(async () => {
    sandbox = await startSandboxChild(['--seed', '5', '--scale', '3000']);
    dir = await mkdtemp(join(tmpdir(), 'lender-young-'));
    // Loaded by every Node image of the process (NODE_OPTIONS survives the restart): one line each.
    // Node also runs it in the thread of module hooks, which the bin starts when it runs the
    // sources through tsx (dist/ older than them): that thread's run is not a start of Node.
    preload = join(dir, 'preload.mjs');
    await writeFile(preload, [
      "import { appendFileSync } from 'node:fs';",
      "import { isMainThread } from 'node:worker_threads';",
      'if (isMainThread) appendFileSync(process.env.YOUNG_LOG, JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX }) + "\\n");',
    ].join('\n'));
  });
  after(async () => {
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], log: string, nodeOptions = '') {
    const child = spawnLender(args, {
      env: { ...sandbox.env(), YOUNG_LOG: log, NODE_OPTIONS: `--import=${pathToFileURL(preload).href} ${nodeOptions}`.trim() },
    });
    child.stdin!.end();
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const [code] = (await once(child, 'close')) as [number | null];
    const images = (await readFile(log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { pid: number; execArgv: string[]; arenas?: string });
    return { pid: child.pid, code, stdout, stderr, images };
  }

  it('exports in the same process, its rows on the same stdout; started again with the flag where Node has execve', async () => {
    const { pid, code, stdout, stderr, images } = await run(['export', 'D07', '--limit', '5'], join(dir, 'export.log'));
    assert.equal(code, 0, stderr);
    const rows = stdout.trim().split('\n').map((line) => JSON.parse(line) as { public_id: string });
    assert.ok(rows.length > 0 && rows.every((row) => typeof row.public_id === 'string'));
    assert.ok(images.every((image) => image.pid === pid), 'one pid throughout');
    const restarts = typeof (process as { execve?: unknown }).execve === 'function' && process.platform !== 'win32';
    assert.equal(images.length, restarts ? 2 : 1);
    assert.equal(images[0]!.execArgv.includes(FLAG), false);
    assert.equal(images.at(-1)!.execArgv.includes(FLAG), restarts);
    assert.equal(images[0]!.arenas, undefined);
    assert.equal(images.at(-1)!.arenas, restarts ? '1' : undefined, 'glibc\'s arenas capped in the second start');
  });

  it('reads a password and a CA from bash\'s <(…) pipes (/dev/fd/63, …), each once: sync and export', async () => {
    const { password } = sandbox.info.lenders.find((l) => l.lender === 'demo')!;
    for (const [name, args] of [
      ['sync', ['sync', '--datasets', 'D26', '--to', `ndjson:${join(dir, 'pipes-sync')}`]],
      ['export', ['export', 'D07', '--limit', '3']],
    ] as const) {
      const log = join(dir, `pipes-${name}.log`);
      const env = {
        ...sandbox.env(), LENDER_PASSWORD: undefined, LENDER_CA_FILE: undefined, YOUNG_LOG: log, NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`,
        NODE: process.execPath, BIN: LENDER_BIN, PASSWORD_SOURCE: join(dir, 'password'), CA_SOURCE: sandbox.info.caFile,
      };
      await writeFile(env.PASSWORD_SOURCE, `${password}\n`, { mode: 0o600 });
      const script = 'exec "$NODE" "$BIN" "$@" --password-file <(cat "$PASSWORD_SOURCE") --ca-file <(cat "$CA_SOURCE")';
      const child = spawn('bash', ['-c', script, 'bash', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const [code] = (await once(child, 'close')) as [number | null];
      assert.equal(code, 0, `${name}: ${stderr}`);
      assert.ok(stdout.trim().length > 0, name);
      assert.doesNotMatch(stdout + stderr, new RegExp(password), name);
      // The descriptors would not survive a second start: the command keeps its first.
      const images = (await readFile(log, 'utf8')).trim();
      assert.equal(images.split('\n').length, 1, `${name}: ${images}`);
    }
  });

  it('is not started again when the user gave a semi-space size, or for its help', async () => {
    const given = await run(['export', 'D07', '--limit', '1'], join(dir, 'given.log'), '--max-semi-space-size=16');
    assert.equal(given.code, 0, given.stderr);
    assert.equal(given.images.length, 1);
    const help = await run(['sync', '--help'], join(dir, 'help.log'));
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: lender sync/);
    assert.equal(help.images.length, 1);
  });
});
