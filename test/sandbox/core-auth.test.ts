// The login and token refresh endpoints and the token check on account and export routes, over HTTPS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BAD_LOGIN = { error: 'Incorrect username or password.' };
const NOT_REFRESH = { code: 401, message: 'Token Type is not refresh', body: null };
const INVALID_REFRESH = { code: 401, message: 'Refresh token is invalid or expired', body: null };

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

function problem(lender: string) {
  return {
    type: 'about:blank', title: 'Bad Request', status: 400, detail: 'Failed to read request',
    instance: `/admin/auth/${lender}/refresh-token`, properties: null,
  };
}

/** The same token with one flipped signature character: well-formed, wrongly signed. */
function forge(token: string): string {
  const last = token.at(-2) === 'A' ? 'B' : 'A';
  return token.slice(0, -2) + last + token.slice(-1);
}

let t: TestSandbox;
before(async () => {
  t = await startTestSandbox();
});
after(() => t.close());

const accountsPath = (id: string) => `/admin/v3/lenders/${id}/accounts`;
const statusPath = (id: string) => `/admin/v3/lenders/${id}/accounts/update-status`;
const catalogPath = (id: string) => `/admin/v3/lenders/${id}/exports/catalog`;

describe('login', () => {
  it('answers 200 with token, refreshToken and lenderPublicId', async () => {
    const { email, password } = t.sandbox.credentials('demo');
    const res = await t.request('POST', '/admin/auth/demo/login', { body: { email, password } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(Object.keys(res.body).sort(), ['lenderPublicId', 'refreshToken', 'token']);
    const demo = t.sandbox.lenders.find((l) => l.lender === 'demo')!;
    assert.equal(res.body.lenderPublicId, demo.lenderPublicId);
    assert.match(res.body.lenderPublicId, UUID);
    const access = claims(res.body.token);
    assert.equal(access.lenderId, demo.lenderPublicId);
    assert.equal(access.typ, 'access');
    assert.equal(Number(access.exp) - Number(access.iat), 900);
    assert.equal(claims(res.body.refreshToken).typ, 'refresh');
  });

  it('answers 401 with the documented message for every kind of bad credential', async () => {
    const { email, password } = t.sandbox.credentials('demo');
    const other = t.sandbox.credentials('other');
    const cases = [
      { lender: 'demo', body: { email, password: `${password}x` } },
      { lender: 'demo', body: { email: 'nobody@example.com', password } },
      { lender: 'demo', body: { email: other.email, password: other.password } },
      { lender: 'nosuchlender', body: { email, password } },
      { lender: 'demo', body: { email } },
      { lender: 'demo', body: {} },
      { lender: 'demo', body: [email, password] },
      { lender: 'demo', body: { email, password: 12345 } },
    ];
    for (const c of cases) {
      const res = await t.request('POST', `/admin/auth/${c.lender}/login`, { body: c.body });
      assert.equal(res.status, 401, JSON.stringify(c));
      assert.deepEqual(res.body, BAD_LOGIN);
    }
  });

  it('answers a non-JSON login body with 400 { error }', async () => {
    const res = await t.request('POST', '/admin/auth/demo/login', { rawBody: '{"email":' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'Request body must be valid JSON.' });
  });
});

describe('refresh', () => {
  it('exchanges a refresh token for a new working access token', async () => {
    const session = await t.loginAs('demo');
    const res = await t.request('POST', '/admin/auth/demo/refresh-token', { body: { refreshToken: session.refreshToken } });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['token']);
    assert.notEqual(res.body.token, session.token);
    assert.equal(claims(res.body.token).typ, 'access');
    const catalog = await t.request('POST', statusPath(session.lenderPublicId), { token: res.body.token, body: { accounts: [] } });
    assert.notEqual(catalog.status, 401);
  });

  it('answers an access token with 401 Token Type is not refresh', async () => {
    const session = await t.loginAs('demo');
    const res = await t.request('POST', '/admin/auth/demo/refresh-token', { body: { refreshToken: session.token } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, NOT_REFRESH);
  });

  it('answers malformed or missing refreshToken with 400 problem details', async () => {
    const bodies = [
      { rawBody: 'not json' },
      { rawBody: '{"refreshToken": ' },
      { body: {} },
      { body: { refreshToken: 42 } },
      { body: { refreshToken: '' } },
      { body: ['x'] },
      {},
    ];
    for (const b of bodies) {
      const res = await t.request('POST', '/admin/auth/demo/refresh-token', b);
      assert.equal(res.status, 400, JSON.stringify(b));
      assert.deepEqual(res.body, problem('demo'));
    }
  });

  it('answers forged, foreign-lender and garbage refresh tokens with 401', async () => {
    const session = await t.loginAs('demo');
    for (const [lender, refreshToken] of [
      ['demo', forge(session.refreshToken)],
      ['other', session.refreshToken],
      ['demo', 'a.b.c'],
    ] as const) {
      const res = await t.request('POST', `/admin/auth/${lender}/refresh-token`, { body: { refreshToken } });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, INVALID_REFRESH);
    }
  });
});

describe('token check on account routes', () => {
  it('answers 401 { error: Unauthorized } to missing, garbage, forged and refresh tokens', async () => {
    const session = await t.loginAs('demo');
    const id = session.lenderPublicId;
    const tries: { token?: string; headers?: Record<string, string> }[] = [
      {},
      { token: 'garbage' },
      { token: forge(session.token) },
      { token: session.refreshToken },
      { headers: { authorization: session.token } },
    ];
    for (const path of [accountsPath(id), statusPath(id)]) {
      for (const tr of tries) {
        const res = await t.request('POST', path, { ...tr, body: { accounts: [] } });
        assert.equal(res.status, 401, `${path} ${JSON.stringify(Object.keys(tr))}`);
        assert.deepEqual(res.body, { error: 'Unauthorized' });
      }
    }
  });

  it("rejects another lender's lenderPublicId in the path with 401, never serving it", async () => {
    const demo = await t.loginAs('demo');
    const other = await t.loginAs('other');
    const res = await t.request('POST', statusPath(other.lenderPublicId), {
      token: demo.token,
      body: { accounts: [{ status: 5, debtorCompanyId: 'C-1', accountId: 'A-1' }] },
    });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'Unauthorized' });
  });
});

describe('token check on export routes', () => {
  it('answers 401 with the export shape and a requestId', async () => {
    const session = await t.loginAs('demo');
    for (const token of [undefined, 'garbage', session.refreshToken, forge(session.token)]) {
      const res = await t.request('GET', catalogPath(session.lenderPublicId), token === undefined ? {} : { token });
      assert.equal(res.status, 401);
      assert.equal(res.body.success, false);
      assert.equal(res.body.message, 'Access denied. Invalid token.');
      assert.equal(typeof res.body.requestId, 'string');
      assert.equal(res.body.requestId, res.headers['x-request-id']);
    }
  });

  it('answers 403 Lender ID mismatch for another lender in the path, 200 for the own one', async () => {
    const demo = await t.loginAs('demo');
    const other = await t.loginAs('other');
    const res = await t.request('GET', catalogPath(other.lenderPublicId), { token: demo.token });
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'Lender ID mismatch');
    assert.equal(res.body.success, false);
    const own = await t.request('GET', catalogPath(demo.lenderPublicId), { token: demo.token });
    assert.equal(own.status, 200);
  });
});

describe('expiry', () => {
  it('refuses expired access tokens and lets the refresh token renew them', async () => {
    const fresh = await startTestSandbox({ tokenTtlSeconds: 900 });
    try {
      const session = await fresh.loginAs('demo');
      assert.notEqual((await fresh.request('GET', catalogPath(session.lenderPublicId), { token: session.token })).status, 401);
      // A one-second token, from a refresh (the ttl applies to tokens issued after it is set). Its
      // acceptance is not asserted: on a busy machine a second can pass before the next request.
      fresh.sandbox.setFaults({ tokenTtlSeconds: 1 });
      const short = await fresh.request('POST', '/admin/auth/demo/refresh-token', { body: { refreshToken: session.refreshToken } });
      assert.equal(short.status, 200);
      const token = short.body.token as string;
      assert.equal(Number(claims(token).exp) - Number(claims(token).iat), 1);
      // Wait until just past the token's own exp (whole seconds), under 1.1s.
      await sleep(Math.max(0, Number(claims(token).exp) * 1000 - Date.now()) + 50);
      const accounts = await fresh.request('POST', statusPath(session.lenderPublicId), { token, body: { accounts: [] } });
      assert.equal(accounts.status, 401);
      assert.deepEqual(accounts.body, { error: 'Unauthorized' });
      const exported = await fresh.request('GET', catalogPath(session.lenderPublicId), { token });
      assert.equal(exported.status, 401);
      assert.equal(exported.body.message, 'Access denied. Invalid token.');

      const renewed = await fresh.request('POST', '/admin/auth/demo/refresh-token', { body: { refreshToken: session.refreshToken } });
      assert.equal(renewed.status, 200);
      fresh.sandbox.setFaults({ tokenTtlSeconds: 900 });
      const again = await fresh.request('POST', '/admin/auth/demo/refresh-token', { body: { refreshToken: session.refreshToken } });
      assert.equal(Number(claims(again.body.token).exp) - Number(claims(again.body.token).iat), 900, 'ttl changes live');
      const ok = await fresh.request('GET', catalogPath(session.lenderPublicId), { token: again.body.token });
      assert.equal(ok.status, 200);
    } finally {
      await fresh.close();
    }
  });

  it('with tokenTtlSeconds 0 every access token is born expired', async () => {
    t.sandbox.setFaults({ tokenTtlSeconds: 0 });
    try {
      const session = await t.loginAs('demo');
      const res = await t.request('POST', accountsPath(session.lenderPublicId), { token: session.token, body: { accounts: [] } });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: 'Unauthorized' });
    } finally {
      t.sandbox.setFaults({ tokenTtlSeconds: 900 });
    }
  });

  it('counts logins and refreshes in stats', async () => {
    const before = t.sandbox.stats();
    const session = await t.loginAs('other');
    await t.request('POST', '/admin/auth/other/refresh-token', { body: { refreshToken: session.refreshToken } });
    const after = t.sandbox.stats();
    assert.equal(after.logins, before.logins + 1);
    assert.equal(after.refreshes, before.refreshes + 1);
  });
});
