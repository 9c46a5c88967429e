// The password, access token and refresh token of a real session never appear in inspect,
// JSON or error output (messages and causes), whatever goes wrong.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { LenderClient } from '../../src/client/client.ts';
import { resolveConfig } from '../../src/client/config.ts';
import { LenderError } from '../../src/core/errors.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

describe('secrets stay out of output', () => {
  let t: TestSandbox;
  let secrets: string[];
  let client: LenderClient;
  const clients: LenderClient[] = [];

  function assertClean(label: string, text: string): void {
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `${label} contains a secret`);
    }
  }

  /** Everything a user might print of an error: message, stack, inspect (with causes), JSON. */
  function renderError(error: unknown): string {
    const parts = [inspect(error, { depth: Infinity, showHidden: true }), JSON.stringify(error) ?? ''];
    for (let e: unknown = error; e instanceof Error; e = e.cause) parts.push(e.message, e.stack ?? '', String(e));
    return parts.join('\n');
  }

  before(async () => {
    t = await startTestSandbox();
    const raw = await t.loginAs('demo');
    const { password, email } = t.sandbox.credentials('demo');
    // Only the variable parts of the JWTs: their header segment is shared by every token.
    const tail = (jwt: string) => jwt.split('.').slice(1).join('.');
    secrets = [password, raw.token, raw.refreshToken, tail(raw.token), tail(raw.refreshToken), raw.token.split('.')[2]!];
    client = LenderClient.resume({ ...t.sandbox.credentials('demo'), session: raw, email, password, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    clients.push(client);
  });
  after(async () => {
    t.sandbox.setFaults({ faults: {} });
    await Promise.all(clients.map((c) => c.close()));
    await t.close();
  });

  it('the secrets are really in use by the client (the test can fail)', async () => {
    const before = (await t.request('GET', '/__sandbox/stats')).body;
    await client.catalog();
    const afterStats = (await t.request('GET', '/__sandbox/stats')).body;
    assert.equal(afterStats.logins - before.logins, 0);
    assert.equal(afterStats.refreshes - before.refreshes, 0);
    assert.throws(() => assertClean('probe', `x${secrets[1]}x`));
  });

  it('inspect, console-style formatting and JSON of the client show only lender, authUrl, lenderPublicId', () => {
    const outputs = [
      inspect(client), inspect(client, { showHidden: true, depth: Infinity, getters: true }), JSON.stringify(client),
      JSON.stringify({ nested: [client] }), `${String(client)}`, inspect({ ...client }, { depth: Infinity }),
    ];
    for (const [i, out] of outputs.entries()) assertClean(`output ${i}`, out);
    const json = JSON.parse(JSON.stringify(client));
    assert.deepEqual(Object.keys(json).sort(), ['authUrl', 'lender', 'lenderPublicId']);
    assert.match(inspect(client), /lenderPublicId/);
  });

  it('the resolved config hides the password', async () => {
    const creds = t.sandbox.credentials('demo');
    const config = await resolveConfig({ ...creds }, {});
    assert.equal(config.revealPassword(), creds.password);
    assertClean('config', `${inspect(config, { showHidden: true, depth: Infinity })}\n${JSON.stringify(config)}`);
  });

  it('errors of every kind carry no secret in message, cause, inspect or JSON', async () => {
    const otherId = t.sandbox.lenders.find((l) => l.lender === 'other')!.lenderPublicId;
    const mismatched = LenderClient.resume({
      ...t.sandbox.credentials('demo'), session: { token: secrets[1]!, refreshToken: secrets[2]!, lenderPublicId: otherId }, retry: { attempts: 1 },
    });
    clients.push(mismatched);
    const failures: unknown[] = [];
    const capture = (p: Promise<unknown>) => p.then(() => assert.fail('expected a failure'), (e: unknown) => failures.push(e));

    await capture(client.fetchPage({ section: 'S9', dataset: 'D07' }));
    await capture(client.fetchPage('D04'));
    await capture(client.upsertAccounts([{ status: 1, accountId: 'A-1' }]));
    await capture(client.fetchPage('D07', { cursor: 'garbage' }));
    await capture(mismatched.catalog());
    await capture(LenderClient.login({ ...t.sandbox.credentials('demo'), password: `${secrets[0]}-wrong` }));
    t.sandbox.setFaults({ faults: { reset: 1 } });
    await capture(client.catalog());
    t.sandbox.setFaults({ faults: { '503': 1 } });
    await capture(client.catalog());
    t.sandbox.setFaults({ faults: {} });
    // Refresh refused (an access token offered as refresh token) and re-login refused.
    const doomed = LenderClient.resume({
      ...t.sandbox.credentials('demo'), session: { token: 'bad', refreshToken: secrets[1]!, lenderPublicId: otherId },
      email: t.sandbox.credentials('demo').email, password: secrets[0]!.split('').reverse().join(''),
    });
    clients.push(doomed);
    await capture(doomed.catalog());

    assert.equal(failures.length, 9);
    const names = new Set(failures.map((e) => (e as Error).name));
    for (const name of ['UnknownSectionError', 'DatasetUnavailableError', 'ValidationError', 'ServerError', 'LenderMismatchError',
      'AuthenticationError', 'NetworkError', 'SessionExpiredError']) {
      assert.ok(names.has(name), `covered ${name}: ${[...names].join(', ')}`);
    }
    for (const error of failures) {
      assert.ok(error instanceof LenderError);
      assertClean(error.name, renderError(error));
    }
  });

  it('retry and refresh events carry no secret', async () => {
    const seen: unknown[] = [];
    client.on('retry', (e) => seen.push(e));
    client.on('refresh', (e) => seen.push(e));
    t.sandbox.setFaults({ faults: { '500': 1 } });
    await assert.rejects(client.catalog());
    t.sandbox.setFaults({ faults: {} });
    await client.refresh();
    assert.ok(seen.length >= 2);
    for (const event of seen) assertClean('event', `${inspect(event, { depth: Infinity, showHidden: true })}${JSON.stringify(event)}`);
  });
});
