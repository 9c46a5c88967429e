// Certificate checks cannot be turned off from the environment: with NODE_TLS_REJECT_UNAUTHORIZED=0
// (which turns Node's default verification off for the whole process) the CLI and the library
// still refuse a server whose certificate they cannot verify. Each runs in a child process,
// because the variable is read by Node per process and must not weaken this test runner.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runProcess } from '../helpers/run-process.ts';
import { isolatedEnv, runLender } from '../helpers/resilience.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const INSECURE = { NODE_TLS_REJECT_UNAUTHORIZED: '0' };
const CERTIFICATE_FAILURE = /TLS certificate of 127\.0\.0\.1:\d+ could not be verified \((?:DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/;
const CLIENT_MODULE = new URL('../../src/client/client.ts', import.meta.url).href;

/** A child that logs in with the library; prints LOGGED-IN or the error's name and code as JSON. */
const LOGIN_CHILD = `
import { LenderClient } from ${JSON.stringify(CLIENT_MODULE)};
const options = JSON.parse(process.env.LOGIN_OPTIONS);
try {
  const client = await LenderClient.login({ ...options, retry: { attempts: 1 } });
  const catalog = await client.catalog();
  await client.close();
  console.log('LOGGED-IN ' + catalog.sections.length);
} catch (error) {
  console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message }));
  process.exitCode = 3;
}
`;

describe('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn certificate checks off', () => {
  let t: TestSandbox;

  before(async () => {
    t = await startTestSandbox();
  });
  after(async () => {
    await t?.close();
  });

  const cliEnv = (extra: NodeJS.ProcessEnv) => {
    const c = t.sandbox.credentials('demo');
    return isolatedEnv({ LENDER_AUTH_URL: c.authUrl, LENDER_SUBDOMAIN: c.lender, LENDER_EMAIL: c.email, LENDER_PASSWORD: c.password, ...extra });
  };

  const runLoginChild = (withCa: boolean) => {
    const { authUrl, lender, email, password, ca } = t.sandbox.credentials('demo');
    const options = { authUrl, lender, email, password, ...(withCa && { ca }) };
    return runProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', LOGIN_CHILD], {
      env: isolatedEnv({ ...INSECURE, LOGIN_OPTIONS: JSON.stringify(options) }), timeoutMs: 60_000,
    });
  };

  it('the variable really turns verification off for an ordinary request in that process (so the test can fail)', async () => {
    const probe = `require('node:https').get(process.argv[1], (res) => { console.log('STATUS ' + res.statusCode); res.resume(); })
      .on('error', (e) => { console.log('ERROR ' + e.code); });`;
    const run = await runProcess(process.execPath, ['-e', probe, `${t.sandbox.authUrl}/admin/v3/lenders/x/exports/catalog`], {
      env: isolatedEnv(INSECURE), timeoutMs: 60_000,
    });
    assert.match(run.stdout, /^STATUS \d{3}$/m, `stdout: ${run.stdout} stderr: ${run.stderr}`);
    // Node warns about the variable; the warning is expected in every child of this file.
    assert.match(run.stderr, /NODE_TLS_REJECT_UNAUTHORIZED/);
  });

  it('lender catalog without the CA fails on the certificate, exits non-zero and prints nothing of the catalog', async () => {
    const logins = t.sandbox.stats().logins;
    const run = await runLender(['catalog'], { env: cliEnv({ ...INSECURE, LENDER_CA_FILE: '' }), timeoutMs: 60_000 });
    assert.equal(run.timedOut, false);
    assert.equal(run.code, 1, `exit ${run.code}; stderr: ${run.stderr}`);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, CERTIFICATE_FAILURE);
    assert.doesNotMatch(run.stderr, /Customers & Accounts|datasets available/);
    assert.equal(t.sandbox.stats().logins, logins, 'a login reached the sandbox');
  });

  it('lender catalog with the CA still works with the variable set (control)', async () => {
    const run = await runLender(['catalog'], { env: cliEnv({ ...INSECURE, LENDER_CA_FILE: t.sandbox.caFile }), timeoutMs: 60_000 });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /datasets available \(schema v1\)/);
  });

  it('LenderClient.login without the CA refuses with a CertificateError', async () => {
    const logins = t.sandbox.stats().logins;
    const run = await runLoginChild(false);
    assert.equal(run.code, 3, `exit ${run.code}; stdout: ${run.stdout} stderr: ${run.stderr}`);
    const result = JSON.parse(run.stdout.trim()) as { name: string; code: string; message: string };
    assert.equal(result.name, 'CertificateError');
    assert.match(result.message, CERTIFICATE_FAILURE);
    assert.equal(t.sandbox.stats().logins, logins, 'a login reached the sandbox');
  });

  it('LenderClient.login with the CA logs in with the variable set (control)', async () => {
    const run = await runLoginChild(true);
    assert.equal(run.code, 0, `stdout: ${run.stdout} stderr: ${run.stderr}`);
    assert.match(run.stdout, /^LOGGED-IN 5$/m);
  });
});
