// What a pipeline meets on the real service and the sandbox models over real HTTPS: a gateway that
// answers 504 only after its timeout, a replica that shows writes late, datasets that ship while
// clients run, faults only where the request would have succeeded, and the export error shape on
// every path under /exports.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { type JsonResponse, type Session, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const exportsPath = (s: Session, rest: string): string => `/admin/v3/lenders/${s.lenderPublicId}/exports/${rest}`;

function assertExportError(res: JsonResponse, status: number, message: string | RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['message', 'requestId', 'success']);
  assert.equal(res.body.success, false);
  if (typeof message === 'string') assert.equal(res.body.message, message);
  else assert.match(res.body.message, message);
}

const record = (n: number): Record<string, unknown> => ({
  status: 1, debtorCompanyId: `REAL-C-${n}`, firstName: 'Mona', lastName: 'Aziz', language: 'en',
  accountId: `REAL-A-${n}`, subAccountId: 'S-1', principal: '90', birthDate: '03/03/1993', dateDue: '01/03/2027',
  phones: [{ number: '+971500000003' }], loanType: 1,
});

describe('the gateway', () => {
  const GATEWAY_MS = 400;
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox({ scale: 300, viaBudget: 100, gatewayTimeoutMs: GATEWAY_MS });
    demo = await t.loginAs('demo');
  });
  after(() => t.close());

  it('answers a read over its budget with a 504 only after its timeout, whatever the bounds', async () => {
    for (const query of ['', 'since=1970-01-01T00:00:00Z&limit=1', 'since=2015-01-01&until=2035-01-01']) {
      const started = performance.now();
      const res = await t.request('GET', exportsPath(demo, `S4/D23?${query}`), { token: demo.token });
      const waited = performance.now() - started;
      assertExportError(res, 504, 'Gateway timeout');
      // A lower bound only (timers may fire up to a tick early against this clock): never an upper one.
      assert.ok(waited >= GATEWAY_MS - 20, `the 504 of '${query}' came after ${waited.toFixed(0)} ms, before the gateway's ${GATEWAY_MS}`);
    }
  });

  it('serves a month window of the same dataset', async () => {
    const res = await t.request('GET', exportsPath(demo, 'S4/D23?since=2026-03-01&until=2026-04-01'), { token: demo.token });
    assert.equal(res.status, 200, res.text);
  });
});

describe('a replica that lags', () => {
  const LAG_MS = 1500;
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox({ replicaLagMs: LAG_MS });
    demo = await t.loginAs('demo');
  });
  after(() => t.close());

  const debtorIds = async (): Promise<{ ids: string[]; readFrom: string }> => {
    const res = await t.request('GET', exportsPath(demo, `S1/D01?since=${DATA_SPAN.end}&limit=1000`), { token: demo.token });
    assert.equal(res.status, 200, res.text);
    return { ids: res.body.body.rows.map((r: { debtor_company_id: string }) => r.debtor_company_id), readFrom: res.body.body.meta.readFrom };
  };

  it('answers pages from the secondary, which shows an accepted push only after the lag', async () => {
    const seeded = await t.request('GET', exportsPath(demo, 'S1/D01?limit=5'), { token: demo.token });
    assert.equal(seeded.body.body.rows.length, 5, 'the seeded portfolio is there from the start');
    const pushedAt = performance.now();
    const res = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/accounts`, { token: demo.token, body: { accounts: [record(1)] } });
    assert.equal(res.status, 200, res.text);
    await t.sandbox.drain();
    let seenAt: number | undefined;
    for (let i = 0; i < 200 && seenAt === undefined; i++) {
      const { ids, readFrom } = await debtorIds();
      assert.equal(readFrom, 'secondary');
      const arrived = performance.now();
      if (ids.includes('REAL-C-1')) seenAt = arrived;
      else await sleep(100);
    }
    assert.ok(seenAt !== undefined, 'the push reached the replica');
    // Lower bound only: whatever the machine's speed, it cannot show before the lag has passed.
    assert.ok(seenAt - pushedAt >= LAG_MS - 20, `shown ${(seenAt - pushedAt).toFixed(0)} ms after the push, before the ${LAG_MS} ms lag`);
  });
});

describe('availability while clients run', () => {
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox({ available: { D06: true } });
    demo = await t.loginAs('demo');
  });
  after(() => t.close());

  const listed = async (code: string): Promise<boolean> => {
    const res = await t.request('GET', exportsPath(demo, 'catalog'), { token: demo.token });
    return res.body.body.sections.flatMap((s: { datasets: { code: string; available: boolean }[] }) => s.datasets).find((d: { code: string }) => d.code === code).available;
  };

  it('a dataset ships: the catalog and the fetch follow at once; one can be withdrawn too', async () => {
    assert.equal(await listed('D06'), true, 'the start option is applied');
    assert.equal(await listed('D04'), false);
    assertExportError(await t.request('GET', exportsPath(demo, 'S1/D04'), { token: demo.token }), 404,
      'Dataset D04 is listed in the catalog but not available for export at this time.');

    const set = await t.request('POST', '/__sandbox/availability', { body: { D04: true, D07: false } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { available: { D06: true, D04: true, D07: false } });
    assert.equal(await listed('D04'), true);
    assert.equal((await t.request('GET', exportsPath(demo, 'S1/D04?limit=3'), { token: demo.token })).status, 200);
    assert.equal(await listed('D07'), false);
    assertExportError(await t.request('GET', exportsPath(demo, 'S2/D07'), { token: demo.token }), 404, /D07 is listed in the catalog but not available/);

    assert.deepEqual(t.sandbox.setAvailability({ D07: true }), { D06: true, D04: true, D07: true });
    assert.equal((await t.request('GET', exportsPath(demo, 'S2/D07?limit=1'), { token: demo.token })).status, 200);
  });

  it('refuses an unknown code or a non-boolean, changing nothing', async () => {
    for (const body of [{ D25: true }, { D04: 'yes' }, [1]]) {
      const res = await t.request('POST', '/__sandbox/availability', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal(await listed('D06'), true);
  });
});

describe('faults after authentication', () => {
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox({});
    demo = await t.loginAs('demo');
    t.sandbox.setFaults({ faults: { '500': 1 } });
  });
  after(() => t.close());

  it('a request the service refuses gets its refusal; one it would serve gets the fault, unapplied', async () => {
    const before = t.sandbox.stats();
    assertExportError(await t.request('GET', exportsPath(demo, 'catalog')), 401, 'Access denied. Invalid token.');
    assertExportError(await t.request('GET', exportsPath(demo, 'catalog'), { token: 'forged' }), 401, 'Access denied. Invalid token.');
    const accountsPath = `/admin/v3/lenders/${demo.lenderPublicId}/accounts`;
    assert.deepEqual((await t.request('POST', accountsPath, { body: { accounts: [record(2)] } })).body, { error: 'Unauthorized' });
    const login = await t.request('POST', '/admin/auth/demo/login', { body: { email: 'nobody@example.com', password: 'wrong' } });
    assert.deepEqual([login.status, login.body], [401, { error: 'Incorrect username or password.' }]);
    assertExportError(await t.request('GET', exportsPath(demo, 'S1/D99'), { token: demo.token }), 404, 'Unknown dataset');
    assertExportError(await t.request('GET', exportsPath(demo, 'S1/D04'), { token: demo.token }), 404, /not available/);
    const invalid = await t.request('POST', accountsPath, { token: demo.token, body: { accounts: [{ ...record(3), principal: 'x' }] } });
    assert.equal(invalid.status, 400);
    assert.equal(t.sandbox.stats().faultsInjected, before.faultsInjected, 'no refusal was faulted');

    assertExportError(await t.request('GET', exportsPath(demo, 'S2/D07?limit=1'), { token: demo.token }), 500, 'Internal server error');
    const pushed = await t.request('POST', accountsPath, { token: demo.token, body: { accounts: [record(4)] } });
    assert.deepEqual([pushed.status, pushed.body], [500, { error: 'Something went wrong. Please try again later.' }]);
    await t.sandbox.drain();
    const after = t.sandbox.stats();
    assert.equal(after.faultsInjected, before.faultsInjected + 2);
    assert.equal(after.accountsProcessed, before.accountsProcessed, 'the faulted push was never applied');
  });
});

describe('paths under /exports', () => {
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox({});
    demo = await t.loginAs('demo');
  });
  after(() => t.close());

  it('an unmatched one answers 404 in the export shape; elsewhere { error }', async () => {
    for (const path of [`/admin/v3/lenders/${demo.lenderPublicId}/exports`, exportsPath(demo, 'S2'), exportsPath(demo, 'S2/D07/rows'), exportsPath(demo, 'S2/D07/')]) {
      assertExportError(await t.request('GET', path, { token: demo.token }), 404, /^No endpoint matches GET /);
    }
    const other = await t.request('GET', '/admin/v3/nothing');
    assert.equal(other.status, 404);
    assert.deepEqual(Object.keys(other.body), ['error']);
  });
});
