// Token renewal against the sandbox over HTTPS: single-flight refresh under load, proactive
// refresh, logging in again when the refresh token is refused, and a clear "session expired".
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RefreshEvent } from '../../src/core/api.ts';
import { LenderClient } from '../../src/client/client.ts';
import { AuthenticationError, SessionExpiredError } from '../../src/core/errors.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

async function stats(t: TestSandbox): Promise<{ logins: number; refreshes: number; refreshFailures?: number; requests: number }> {
  const res = await t.request('GET', '/__sandbox/stats');
  assert.equal(res.status, 200);
  return res.body;
}

describe('token session renewal', () => {
  let t: TestSandbox;
  const clients: LenderClient[] = [];
  const track = (c: LenderClient) => (clients.push(c), c);

  before(async () => {
    t = await startTestSandbox({ tokenTtlSeconds: 1 });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t.close();
  });

  it('100 concurrent calls with an expired token cause exactly one refresh, and all succeed', async () => {
    t.sandbox.setFaults({ tokenTtlSeconds: 1 });
    const client = track(await LenderClient.login({ ...t.sandbox.credentials('demo'), proactiveRefresh: false }));
    const events: RefreshEvent[] = [];
    client.on('refresh', (e) => events.push(e));
    await sleep(1100); // the 1 s token is now expired (exp is whole seconds after iat)
    // Tokens minted from here on last long enough that the renewed one cannot lapse mid-test.
    t.sandbox.setFaults({ tokenTtlSeconds: 900 });
    const before = await stats(t);

    const results = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0 ? client.catalog().then((c) => c.schemaVersion) : client.fetchPage('D07', { limit: 2 }).then((p) => p.meta.schemaVersion)));

    const afterStats = await stats(t);
    assert.equal(results.length, 100);
    assert.ok(results.every((v) => v === 'v1'));
    assert.equal(afterStats.refreshes - before.refreshes, 1);
    assert.equal(afterStats.logins - before.logins, 0);
    assert.deepEqual(events, [{ reason: 'expired' }]);
    assert.equal(client.stats.refreshes, 1);
  });

  it('renews proactively before exp, without a 401 round trip', async () => {
    t.sandbox.setFaults({ tokenTtlSeconds: 1 });
    const client = track(await LenderClient.login(t.sandbox.credentials('demo')));
    const events: RefreshEvent[] = [];
    client.on('refresh', (e) => events.push(e));
    await sleep(1100);
    t.sandbox.setFaults({ tokenTtlSeconds: 900 });
    const sentBefore = client.stats.requests;
    const before = await stats(t);
    await client.catalog();
    // One refresh and one catalog call: no rejected request went out first.
    assert.equal(client.stats.requests - sentBefore, 2);
    assert.deepEqual(events, [{ reason: 'proactive' }]);
    assert.equal((await stats(t)).refreshes - before.refreshes, 1);
  });

  it('logs in again when the refresh token is refused and the password is at hand', async () => {
    t.sandbox.setFaults({ tokenTtlSeconds: 900 });
    const raw = await t.loginAs('demo');
    const { email, password } = t.sandbox.credentials('demo');
    // An access token where the refresh token belongs: the service answers 401 "Token Type is
    // not refresh" (the token refresh endpoint), just as it refuses any refresh token it no longer takes.
    const client = track(LenderClient.resume({
      ...t.sandbox.credentials('demo'),
      session: { token: 'expired-or-revoked', refreshToken: raw.token, lenderPublicId: raw.lenderPublicId },
      email, password,
    }));
    const events: RefreshEvent[] = [];
    client.on('refresh', (e) => events.push(e));
    const before = await stats(t);
    const catalog = await client.catalog();
    assert.equal(catalog.schemaVersion, 'v1');
    assert.deepEqual(events, [{ reason: 'relogin' }]);
    const afterStats = await stats(t);
    // One refused refresh, then one login; no successful refresh.
    assert.equal((afterStats.refreshFailures ?? 0) - (before.refreshFailures ?? 0), 1);
    assert.equal(afterStats.refreshes - before.refreshes, 0);
    assert.equal(afterStats.logins - before.logins, 1);
    // The new session keeps working without further renewals.
    await client.fetchPage('D07', { limit: 1 });
    assert.equal(client.stats.refreshes, 1);
  });

  it('without a password, a refused refresh token is a clear SessionExpiredError', async () => {
    const raw = await t.loginAs('demo');
    const { authUrl, lender, ca } = t.sandbox.credentials('demo');
    const client = track(LenderClient.resume({
      authUrl, lender, ca,
      session: { token: 'expired-or-revoked', refreshToken: raw.token, lenderPublicId: raw.lenderPublicId },
    }));
    await assert.rejects(client.catalog(), (error: unknown) => {
      assert.ok(error instanceof SessionExpiredError);
      assert.match(error.message, /session has expired/);
      assert.match(error.message, /log in again/);
      assert.equal(error.serverMessage, 'Token Type is not refresh');
      return true;
    });
  });

  it('a password that no longer works turns into SessionExpiredError naming the credentials', async () => {
    const raw = await t.loginAs('demo');
    const client = track(LenderClient.resume({
      ...t.sandbox.credentials('demo'),
      session: { token: 'expired-or-revoked', refreshToken: raw.token, lenderPublicId: raw.lenderPublicId },
      password: 'changed-since',
    }));
    await assert.rejects(client.catalog(), (error: unknown) => {
      assert.ok(error instanceof SessionExpiredError);
      assert.match(error.message, /email and password/);
      assert.equal(error.serverMessage, 'Incorrect username or password.');
      return true;
    });
  });

  it('client.refresh() renews through the refresh endpoint', async () => {
    const client = track(await LenderClient.login(t.sandbox.credentials('demo')));
    const before = await stats(t);
    await client.refresh();
    assert.equal((await stats(t)).refreshes - before.refreshes, 1);
    assert.equal(client.stats.refreshes, 1);
    await client.catalog();
  });

  it('a wrong password at login is an AuthenticationError with the server message', async () => {
    await assert.rejects(
      LenderClient.login({ ...t.sandbox.credentials('demo'), password: 'wrong' }),
      (error: unknown) => {
        assert.ok(error instanceof AuthenticationError);
        assert.ok(!(error instanceof SessionExpiredError));
        assert.equal(error.status, 401);
        assert.equal(error.serverMessage, 'Incorrect username or password.');
        return true;
      },
    );
  });
});
