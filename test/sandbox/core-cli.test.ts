// `lender sandbox` as a real child process: the JSON line, HTTPS with the caFile, clean exit.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { main } from '../../src/cli/main.ts';
import { parseSandboxArgs } from '../../src/cli/commands/sandbox.ts';
import { requestJson } from '../helpers/sandbox.ts';
import { memoryIo } from '../helpers/memory-io.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

function lender(args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
}

/** A shell command line running the `lender` of this checkout. */
const LENDER_SH = [process.execPath, '--import', 'tsx', MAIN].map((w) => `'${w}'`).join(' ');


async function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('lender sandbox', () => {
  it('prints the JSON line first, serves login over HTTPS, exits 0 on SIGTERM', async () => {
    const child = lender(['sandbox', '--port', '0', '--scale', '20', '--token-ttl', '120']);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const lines = createInterface({ input: child.stdout! });
    const [first] = (await once(lines, 'line')) as [string];
    const info = JSON.parse(first);
    try {
      assert.deepEqual(Object.keys(info), ['authUrl', 'baseUrl', 'caFile', 'lenders']);
      assert.match(info.authUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.baseUrl, `${info.authUrl}/admin/v3`);
      assert.deepEqual(info.lenders.map((l: { lender: string }) => l.lender), ['demo', 'other']);
      for (const l of info.lenders) assert.deepEqual(Object.keys(l), ['lender', 'email', 'password', 'lenderPublicId']);
      const demo = info.lenders[0];

      const agent = new Agent({ connect: { ca: await readFile(info.caFile, 'utf8') } });
      try {
        const res = await requestJson(agent, info.authUrl, 'POST', '/admin/auth/demo/login', { body: { email: demo.email, password: demo.password } });
        assert.equal(res.status, 200);
        assert.equal(res.body.lenderPublicId, demo.lenderPublicId);
        const claims = JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString());
        assert.equal(claims.exp - claims.iat, 120, '--token-ttl is applied');
      } finally {
        await agent.close();
      }
      assert.doesNotMatch(stderr, new RegExp(demo.password), 'the password is not in the human notes');
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, stderr);
    assert.equal(existsSync(info.caFile), false, 'the CA file is removed on close');
    assert.match(stderr, /stopped/);
    // Started without --env, `lender sandbox --env` in another shell cannot find it: it says how.
    assert.match(stderr, /started with --env instead, it lets `eval "\$\(lender sandbox --env\)"` in another shell set them/);
  });

  it('a process that ends without closing its sandboxes (process.exit) leaves no CA folder', async () => {
    const launch = new URL('../../src/sandbox/index.ts', import.meta.url).href;
    const script = `import { startSandbox } from ${JSON.stringify(launch)};
      const sandboxes = [await startSandbox({ scale: 20 }), await startSandbox({ scale: 20 })];
      await sandboxes[1].close();
      console.log(JSON.stringify(sandboxes.map((s) => s.caFile)));
      process.exit(0);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const { code, stdout, stderr } = await finish(child);
    assert.equal(code, 0, stderr);
    const files = JSON.parse(stdout) as string[];
    assert.equal(files.length, 2);
    for (const file of files) assert.equal(existsSync(join(file, '..')), false, `${file}'s folder is gone`);
  });

  it('refuses bad flags with exit code 2 and a pointer to --help', async () => {
    const { code, stdout, stderr } = await finish(lender(['sandbox', '--port', 'abc']));
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(stderr, /--port must be a whole number.*\n.*lender sandbox --help/);
    // The other cases in-process: same main(), no process start per case.
    for (const args of [['--faults', '502=0.1'], ['--faults', '500=2'], ['--latency', '-5'], ['--bogus'], ['--churn', 'x'], ['extra'], ['--port', '70000']]) {
      const io = memoryIo();
      assert.equal(await main(['sandbox', ...args], io), 2, args.join(' '));
      assert.equal(io.out(), '');
      assert.match(io.err(), /Run 'lender sandbox --help' for usage/);
    }
    // A value out of its range: the refusal names the flag, not the library's option.
    for (const [args, said] of [
      [['--port', '99999'], '--port must be an integer from 0 to 65535, got 99999'],
      [['--latency', '700000'], '--latency must be an integer from 0 to 600000, got 700000'],
      [['--token-ttl', '9999999'], '--token-ttl must be an integer from 0 to 2592000, got 9999999'],
      [['--churn', '2000000'], '--churn must be a number from 0 to 1000000, got 2000000'],
      [['--replica-lag', '700000'], '--replica-lag must be an integer from 0 to 600000, got 700000'],
      [['--host', ' '], '--host must be a non-empty address such as 127.0.0.1, got " "'],
      [['--max-buffered-bytes', '1000'], '--max-buffered-bytes must be an integer from 10485760 (the largest request body) to 17179869184, got 1000'],
    ] as const) {
      const io = memoryIo();
      assert.equal(await main(['sandbox', ...args], io), 2, args.join(' '));
      assert.equal(io.err().split('\n')[0], `lender sandbox: ${said}`);
    }
  });

  it('--env prints export lines; in another shell eval "$(lender sandbox --env)" connects to the running one', async () => {
    const home = await mkdtemp(join(tmpdir(), 'lender-env-'));
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: home };
    for (const name of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_CA_FILE', 'LENDER_CREDENTIALS_FILE']) delete env[name];
    const child = lender(['sandbox', '--env', '--port', '0', '--scale', '20'], env);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const lines = createInterface({ input: child.stdout! });
    const printed: string[] = [];
    for await (const line of lines) {
      printed.push(line);
      if (printed.length === 5) break;
    }
    const envFile = join(home, 'lender-streams', 'sandbox.env');
    try {
      assert.deepEqual(printed.map((l) => /^export (LENDER_[A-Z_]+)='[^']*'$/.exec(l)?.[1]),
        ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_CA_FILE']);
      assert.equal(printed[1], "export LENDER_SUBDOMAIN='demo'");
      assert.equal((await stat(envFile)).mode & 0o777, 0o600, 'the file holding the password is its owner\'s only');
      // Another shell: the second `lender sandbox --env` prints the running one's lines and exits.
      const second = await finish(spawn('sh', ['-c', `eval "$(${LENDER_SH} sandbox --env)" && ${LENDER_SH} catalog`], { stdio: ['ignore', 'pipe', 'pipe'], env }));
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /D07\s+Borrower Payments/);
      const password = /^export LENDER_PASSWORD='([^']*)'$/.exec(printed[3]!)![1]!;
      assert.ok(!stderr.includes(password) && !second.stderr.includes(password), 'the password is on stdout only');
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, stderr);
    assert.equal(existsSync(envFile), false, 'the file is removed when the sandbox stops');
    await rm(home, { recursive: true, force: true });
  });

  it('a port in use or an address not on this machine: one line saying so, exit 1', async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    try {
      const { port } = busy.address() as AddressInfo;
      const io = memoryIo();
      assert.equal(await main(['sandbox', '--port', String(port)], io), 1);
      assert.equal(io.out(), '');
      assert.equal(io.err(), `lender sandbox: 127.0.0.1:${port} is in use (another sandbox?): choose another --port, or --port 0 for a free one\n`);
      // 192.0.2.0/24 is reserved for documentation: never an address of this machine.
      const nowhere = memoryIo();
      assert.equal(await main(['sandbox', '--host', '192.0.2.1', '--port', '0'], nowhere), 1);
      assert.equal(nowhere.err(), 'lender sandbox: cannot listen on 192.0.2.1:0: no such address on this machine (--host)\n');
    } finally {
      busy.close();
    }
  });

  it('with no --env sandbox running, eval "$(lender sandbox --env)" is warned on stderr, and once stopped leaves nothing set', async () => {
    const home = await mkdtemp(join(tmpdir(), 'lender-env-none-'));
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: home };
    for (const name of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_CA_FILE']) delete env[name];
    const envFile = join(home, 'lender-streams', 'sandbox.env');
    try {
      const shell = spawn('sh', ['-c', `X="$(${LENDER_SH} sandbox --env --port 0 --scale 20)"; ` +
        'printf "exports %s\\n" "$(printf "%s\\n" "$X" | grep -c "^export ")"; eval "$X"; echo "auth=${LENDER_AUTH_URL-none}"'],
      { stdio: ['ignore', 'pipe', 'pipe'], env });
      let ended = false;
      const done = finish(shell).finally(() => (ended = true));
      // The sandbox inside the substitution serves; its env file names its pid. Stop it as Ctrl-C would.
      let pid: number | undefined;
      while (pid === undefined && !ended) {
        pid = existsSync(envFile) ? Number(/pid (\d+)/.exec(await readFile(envFile, 'utf8'))?.[1]) || undefined : undefined;
        if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      if (pid !== undefined) process.kill(pid, 'SIGINT');
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^lender sandbox: no sandbox started with --env was running, so this one starts and serves until stopped\. If this is eval/m);
      assert.equal(r.stdout, 'exports 5\nauth=none\n', 'the eval set the variables, then unset them');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('--available, --gateway-timeout, --replica-lag and --strict reach the options', () => {
    assert.deepEqual(parseSandboxArgs(['--available', 'D04,d06,D12=false', '--gateway-timeout', '0', '--replica-lag', '250', '--strict']), {
      available: { D04: true, D06: true, D12: false }, gatewayTimeoutMs: 0, replicaLagMs: 250, strict: true,
    });
    assert.throws(() => parseSandboxArgs(['--available', 'D25']), /--available: 'D25' is not a dataset code/);
    assert.throws(() => parseSandboxArgs(['--available', 'D04=maybe']), /--available/);
    assert.throws(() => parseSandboxArgs(['--gateway-timeout', '-1']), /--gateway-timeout/);
    assert.throws(() => parseSandboxArgs(['--replica-lag', '700000']), /^UsageError: --replica-lag must be an integer from 0 to 600000, got 700000$/);
  });

  it('--help lists every flag', async () => {
    const { code, stdout } = await finish(lender(['sandbox', '--help']));
    assert.equal(code, 0);
    for (const flag of ['--port', '--host', '--seed', '--scale', '--latency', '--faults', '--token-ttl', '--total-cap', '--via-budget', '--churn',
      '--gateway-timeout', '--replica-lag', '--strict', '--available', '--env']) {
      assert.ok(stdout.includes(flag), flag);
    }
  });
});
