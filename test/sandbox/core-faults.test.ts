// Fault injection and the admin endpoints, over HTTPS.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let demo: Session;
before(async () => {
  t = await startTestSandbox();
  demo = await t.loginAs('demo');
});
afterEach(() => {
  t.sandbox.setFaults({ faults: {}, latencyMs: 0 });
});
after(() => t.close());

const statusPath = () => `/admin/v3/lenders/${demo.lenderPublicId}/accounts/update-status`;
const catalogPath = () => `/admin/v3/lenders/${demo.lenderPublicId}/exports/catalog`;

describe('injected failures', () => {
  it('answers 500 in the shape of each route kind', async () => {
    t.sandbox.setFaults({ faults: { '500': 1 } });
    const login = await t.request('POST', '/admin/auth/demo/login', { body: t.sandbox.credentials('demo') });
    assert.equal(login.status, 500);
    assert.deepEqual(login.body, { error: 'Something went wrong. Please try again later.' });
    const accounts = await t.request('POST', statusPath(), { token: demo.token, body: { accounts: [] } });
    assert.equal(accounts.status, 500);
    assert.deepEqual(accounts.body, { error: 'Something went wrong. Please try again later.' });
    const exported = await t.request('GET', catalogPath(), { token: demo.token });
    assert.equal(exported.status, 500);
    assert.equal(exported.body.success, false);
    assert.equal(exported.body.requestId, exported.headers['x-request-id']);
  });

  it('answers 503 and 504 as JSON', async () => {
    for (const kind of ['503', '504'] as const) {
      t.sandbox.setFaults({ faults: { [kind]: 1 } });
      const accounts = await t.request('POST', statusPath(), { token: demo.token, body: { accounts: [] } });
      assert.equal(accounts.status, Number(kind));
      assert.equal(typeof accounts.body.error, 'string');
      const exported = await t.request('GET', catalogPath(), { token: demo.token });
      assert.equal(exported.status, Number(kind));
      assert.equal(exported.body.success, false);
      assert.equal(typeof exported.body.message, 'string');
    }
  });

  it('answers 429 with Retry-After: 1, in the shape of each route kind', async () => {
    t.sandbox.setFaults({ faults: { '429': 1 } });
    const accounts = await t.request('POST', statusPath(), { token: demo.token, body: { accounts: [] } });
    assert.equal(accounts.status, 429);
    assert.equal(accounts.headers['retry-after'], '1');
    assert.equal(typeof accounts.body.error, 'string');
    const exported = await t.request('GET', catalogPath(), { token: demo.token });
    assert.equal(exported.status, 429);
    assert.equal(exported.headers['retry-after'], '1');
    assert.equal(exported.body.success, false);
    assert.equal(exported.body.requestId, exported.headers['x-request-id']);
  });

  it('drops the connection mid-response on reset', async () => {
    t.sandbox.setFaults({ faults: { reset: 1 } });
    await assert.rejects(t.request('GET', catalogPath(), { token: demo.token }), (error: Error & { code?: string }) => {
      assert.match(`${error.code} ${error.message}`, /UND_ERR_SOCKET|other side closed|ECONNRESET|terminated/i);
      return true;
    });
    t.sandbox.setFaults({ faults: {} });
    assert.equal((await t.request('GET', catalogPath(), { token: demo.token })).status, 200);
  });

  it('never faults the admin routes, and counts what it injected', async () => {
    const before = t.sandbox.stats().faultsInjected;
    t.sandbox.setFaults({ faults: { '500': 0.5, reset: 0.5 } });
    for (let i = 0; i < 5; i++) {
      const stats = await t.request('GET', '/__sandbox/stats');
      assert.equal(stats.status, 200);
      assert.equal((await t.request('POST', '/__sandbox/faults', { body: {} })).status, 200);
      assert.equal((await t.request('POST', '/__sandbox/drain')).status, 200);
    }
    assert.equal(t.sandbox.stats().faultsInjected, before);
    await t.request('GET', catalogPath(), { token: demo.token }).catch(() => undefined);
    assert.equal(t.sandbox.stats().faultsInjected, before + 1);
  });

  it('applies no fault when the rates are 0', async () => {
    t.sandbox.setFaults({ faults: { '500': 0, reset: 0 } });
    for (let i = 0; i < 10; i++) assert.equal((await t.request('GET', catalogPath(), { token: demo.token })).status, 200);
  });
});

describe('admin endpoints', () => {
  it('GET /__sandbox/stats has at least the contract counters', async () => {
    const res = await t.request('GET', '/__sandbox/stats');
    assert.equal(res.status, 200);
    for (const key of ['logins', 'refreshes', 'requests', 'accountsProcessed', 'queueDepth', 'faultsInjected']) {
      assert.equal(typeof res.body[key], 'number', key);
    }
  });

  it('POST /__sandbox/faults changes the settings live and validates them', async () => {
    const res = await t.request('POST', '/__sandbox/faults', { body: { latencyMs: 1, faults: { '503': 0.25 }, tokenTtlSeconds: 30 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { latencyMs: 1, faults: { '503': 0.25 }, tokenTtlSeconds: 30 });
    // A quarter of the logins answer 503 now: try until one gets through (one in 4^40 never does).
    let session;
    for (let attempt = 0; session === undefined; attempt++) {
      session = await t.loginAs('other').catch((error: unknown) => {
        if (attempt >= 40) throw error;
        return undefined;
      });
    }
    const claims = JSON.parse(Buffer.from(session.token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 30);

    for (const bad of [{ faults: { '502': 1 } }, { faults: { '500': 2 } }, { latencyMs: -1 }, { tokenTtlSeconds: 'x' }, { ttl: 5 }]) {
      const refused = await t.request('POST', '/__sandbox/faults', { body: bad });
      assert.equal(refused.status, 400, JSON.stringify(bad));
      assert.equal(typeof refused.body.error, 'string');
    }
    const unchanged = await t.request('POST', '/__sandbox/faults', { body: { tokenTtlSeconds: 900 } });
    assert.deepEqual(unchanged.body, { latencyMs: 1, faults: { '503': 0.25 }, tokenTtlSeconds: 900 });
  });

  it('POST /__sandbox/drain returns once the accounts queue is empty', async () => {
    const record = {
      status: 1, debtorCompanyId: 'C-drain', firstName: 'Dana', lastName: 'Rain', language: 'en',
      accountId: 'A-drain', subAccountId: 'S-drain-1', principal: '100',
      birthDate: '02/05/1988', dateDue: '01/12/2026', phones: [{ number: '+971500000001' }], loanType: 3,
    };
    const pushed = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/accounts`, { token: demo.token, body: { accounts: [record] } });
    assert.equal(pushed.status, 200, pushed.text);
    const before = t.sandbox.stats().accountsProcessed;
    const res = await t.request('POST', '/__sandbox/drain');
    assert.equal(res.status, 200);
    assert.equal(res.body.drained, true);
    assert.equal(res.body.stats.queueDepth, 0);
    assert.ok(res.body.stats.accountsProcessed >= before);
    assert.ok(res.body.stats.accountsProcessed >= 1);
  });
});

describe('injected latency', () => {
  const account = {
    status: 1, debtorCompanyId: 'LAT-C-1', firstName: 'Mona', lastName: 'Aziz', language: 'en',
    accountId: 'LAT-A-1', subAccountId: 'S-1', principal: '90', birthDate: '03/03/1993', dateDue: '01/03/2027',
    phones: [{ number: '+971500000003' }], loanType: 1,
  };

  it('a write given up while its latency runs changes nothing (it is worked out during the wait, applied after it); waited for, it is applied', async () => {
    const LATENCY_MS = 400;
    t.sandbox.setFaults({ faults: {}, latencyMs: LATENCY_MS });
    await t.sandbox.drain();
    const before = t.sandbox.stats().accountsProcessed;
    const url = `${t.sandbox.authUrl}/admin/v3/lenders/${demo.lenderPublicId}/accounts`;
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${demo.token}` };
    const body = JSON.stringify({ accounts: [account] });
    await assert.rejects(request(url, { method: 'POST', headers, body, dispatcher: t.agent, signal: AbortSignal.timeout(50) }), { name: /Abort|Timeout/ });
    // Past the latency, the abandoned request would have been applied by now if it were going to be.
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS * 2));
    await t.sandbox.drain();
    assert.equal(t.sandbox.stats().accountsProcessed, before, 'nothing applied');
    const res = await request(url, { method: 'POST', headers, body, dispatcher: t.agent });
    assert.equal(res.statusCode, 200, await res.body.text());
    await t.sandbox.drain();
    assert.equal(t.sandbox.stats().accountsProcessed, before + 1);
  });

  it('a read answers after its latency with its page', async () => {
    const LATENCY_MS = 150;
    t.sandbox.setFaults({ faults: {}, latencyMs: LATENCY_MS });
    const started = performance.now();
    const res = await t.request('GET', catalogPath(), { token: demo.token });
    const waited = performance.now() - started;
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body.body.sections));
    // A lower bound only (timers may fire a tick early against this clock): never an upper one.
    assert.ok(waited >= LATENCY_MS - 20, `answered after ${waited.toFixed(0)} ms`);
  });
});
