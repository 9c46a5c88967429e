// connect(): the one way the CLI, the session, the demo and tests get a logged-in client, with an
// embedded sandbox or from the configuration.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MissingCredentialsError } from '../src/core/errors.ts';
import { connect, type Connection } from '../src/connect.ts';

describe('connect()', () => {
  let embedded: Connection;
  let dir: string;

  before(async () => {
    embedded = await connect({ sandbox: { seed: 9, scale: 20 } });
    dir = await mkdtemp(join(tmpdir(), 'lender-connect-'));
  });
  after(async () => {
    await embedded?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('with sandbox: starts one and logs in as its demo lender', async () => {
    assert.ok(embedded.sandbox);
    assert.deepEqual(embedded.identity, { authUrl: embedded.sandbox.authUrl, lender: 'demo', email: embedded.sandbox.credentials('demo').email, sandbox: true });
    assert.ok((await embedded.client.catalog()).sections.length > 0);
    // Every lender's password: a user of the sandbox may type any of them.
    assert.deepEqual(embedded.secrets().sort(), embedded.sandbox.lenders.map((l) => l.password).sort());
  });

  it('login() gives a new client with the same credentials', async () => {
    const again = await embedded.login();
    try {
      assert.notEqual(again, embedded.client);
      assert.equal(again.lenderPublicId, embedded.client.lenderPublicId);
    } finally {
      await again.close();
    }
  });

  it('without sandbox: from the options (else environment, else credentials file); close() closes the client only', async () => {
    const creds = embedded.sandbox!.credentials('demo');
    const configured = await connect({ ...creds, env: { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') } });
    assert.equal(configured.sandbox, undefined);
    assert.deepEqual(configured.identity, { authUrl: creds.authUrl, lender: 'demo', email: creds.email, sandbox: false });
    assert.deepEqual(configured.secrets(), [creds.password]);
    assert.equal(configured.client.lenderPublicId, embedded.client.lenderPublicId);
    await configured.close();
    assert.ok((await embedded.client.catalog()).sections.length > 0, 'the sandbox still serves');
  });

  it('without sandbox or credentials: MissingCredentialsError naming what is missing', async () => {
    await assert.rejects(connect({ env: { LENDER_CREDENTIALS_FILE: join(dir, 'absent.json') } }), (e: unknown) =>
      e instanceof MissingCredentialsError && e.missing.includes('LENDER_AUTH_URL'));
  });

  it('close() closes the client, then the embedded sandbox', async () => {
    const own = await connect({ sandbox: { scale: 20 } });
    const { authUrl } = own.sandbox!;
    await own.close();
    await assert.rejects(fetch(`${authUrl}/__sandbox/stats`));
  });
});
