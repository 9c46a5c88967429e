// `lender catalog` and the connection helper, run in-process with captured output.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { memoryIo } from '../helpers/memory-io.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const io = memoryIo(env);
  const code = await main(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('lender catalog', () => {
  let t: TestSandbox;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    t = await startTestSandbox();
    dir = await mkdtemp(join(tmpdir(), 'lender-cli-'));
    const creds = t.sandbox.credentials('demo');
    env = {
      LENDER_AUTH_URL: creds.authUrl, LENDER_SUBDOMAIN: creds.lender, LENDER_EMAIL: creds.email,
      LENDER_PASSWORD: creds.password, LENDER_CA_FILE: t.sandbox.caFile, LENDER_CREDENTIALS_FILE: join(dir, 'absent.json'),
    };
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints a table of sections and datasets with availability from the environment credentials', async () => {
    const result = await run(['catalog'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^S1 {2}Customers & Accounts$/m);
    assert.match(result.stdout, /^ {2}D07 +Borrower Payments +updated_at +direct +available$/m);
    assert.match(result.stdout, /^ {2}D04 +Borrower Account Debt Logs +created_at +direct +not available$/m);
    assert.match(result.stdout, /^ {2}D23 +Manual Communication Logs +communicated_at +via +available$/m);
    assert.match(result.stdout, /of 25 datasets available \(schema v1\)/);
  });

  it('--json prints the catalog body', async () => {
    const result = await run(['catalog', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const body = JSON.parse(result.stdout);
    assert.equal(body.schemaVersion, 'v1');
    assert.deepEqual(body.sections.map((s: { code: string }) => s.code), ['S1', 'S2', 'S3', 'S4', 'S5']);
    assert.equal(body.sections.flatMap((s: { datasets: unknown[] }) => s.datasets).length, 25);
  });

  it('takes the connection from flags with the password from --password-file', async () => {
    const creds = t.sandbox.credentials('demo');
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, `${creds.password}\n`);
    await chmod(passwordFile, 0o600);
    const result = await run([
      'catalog', '--json', '--auth-url', creds.authUrl, '--lender', creds.lender, '--email', creds.email,
      '--password-file', passwordFile, '--ca-file', t.sandbox.caFile,
    ], { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).schemaVersion, 'v1');
  });

  it('--sandbox starts an embedded sandbox and uses its demo lender', async () => {
    const result = await run(['catalog', '--json', '--sandbox'], { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).sections.length, 5);
    assert.match(result.stderr, /embedded sandbox/);
  });

  it('without credentials or --sandbox: exit 2 with a sentence naming both', async () => {
    const result = await run(['catalog'], { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--sandbox/);
    assert.match(result.stderr, /--auth-url/);
    assert.match(result.stderr, /LENDER_AUTH_URL/);
    assert.equal(result.stdout, '');
  });

  it('an http:// URL is a configuration mistake: exit 2 and the reason', async () => {
    const result = await run(['catalog'], { ...env, LENDER_AUTH_URL: t.sandbox.authUrl.replace('https:', 'http:') });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /requires HTTPS/);
  });

  it('without the CA the sandbox certificate is refused, exit 1, pointing at --ca-file', async () => {
    const { LENDER_CA_FILE: _ca, ...withoutCa } = env;
    const result = await run(['catalog'], withoutCa);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /certificate/);
    assert.match(result.stderr, /--ca-file/);
  });

  it('--sandbox with connection flags and unknown flags are usage errors', async () => {
    assert.equal((await run(['catalog', '--sandbox', '--auth-url', 'https://x'])).code, 2);
    assert.equal((await run(['catalog', '--bogus'])).code, 2);
  });

  it('--help describes the command and the connection options', async () => {
    const result = await run(['catalog', '--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /--json/);
    assert.match(result.stdout, /--password-file/);
    assert.match(result.stdout, /--sandbox/);
  });
});
