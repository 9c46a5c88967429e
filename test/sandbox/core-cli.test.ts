// `lender sandbox` as a real child process: the JSON line, HTTPS with the caFile, clean exit.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { main } from '../../src/cli/main.ts';
import { requestJson } from '../helpers/sandbox.ts';
import { memoryIo } from '../helpers/memory-io.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

function lender(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}


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
  });

  it('--help lists every flag', async () => {
    const { code, stdout } = await finish(lender(['sandbox', '--help']));
    assert.equal(code, 0);
    for (const flag of ['--port', '--host', '--seed', '--scale', '--latency', '--faults', '--token-ttl', '--total-cap', '--via-budget', '--churn']) {
      assert.ok(stdout.includes(flag), flag);
    }
  });
});
