// The accounts and update-status endpoints over real HTTPS: envelopes, messages, background processing seen
// through /__sandbox/stats and the D01/D02/D03/D05 exports, flags, and tenant isolation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { startTestSandbox, type JsonResponse, type Session, type TestSandbox } from '../helpers/sandbox.ts';

const OK = { code: 200, message: 'success', body: 'Processing started successfully', errors: [] };
const bad = (errors: unknown[]): unknown => ({ code: 400, message: null, body: '', errors });

let t: TestSandbox;
let demo: Session;
let other: Session;

before(async () => {
  t = await startTestSandbox({ scale: 20 });
  demo = await t.loginAs('demo');
  other = await t.loginAs('other');
});
after(() => t.close());

// Unique ids per test so tests never see each other's records.
let unique = 0;
const ids = (): { debtor: string; account: string } => {
  unique += 1;
  return { debtor: `HTTP-C-${unique}`, account: `HTTP-A-${unique}` };
};

// Every field either documented list requires: the tests run against the strict sandbox.
const account = (patch: Record<string, unknown>): Record<string, unknown> => ({
  status: 1, firstName: 'Aisha', lastName: 'Rahman', language: 'en', subAccountId: 'S-1', principal: '100',
  birthDate: '02/05/1988', dateDue: '01/12/2026', phones: [{ number: '+971500000001' }], loanType: 3, ...patch,
});

function push(session: Session, accounts: unknown[], path = 'accounts'): Promise<JsonResponse> {
  return t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/${path}`, { token: session.token, body: { accounts } });
}
const flag = (session: Session, accounts: unknown[]): Promise<JsonResponse> => push(session, accounts, 'accounts/update-status');

async function drain(): Promise<void> {
  const res = await t.request('POST', '/__sandbox/drain');
  assert.equal(res.status, 200);
}

async function processed(): Promise<number> {
  await drain();
  const res = await t.request('GET', '/__sandbox/stats');
  assert.equal(res.body.queueDepth, 0);
  return res.body.accountsProcessed as number;
}

/** Every row of a dataset written after the seeded data (pushes are stamped after DATA_SPAN). */
async function rowsSincePushes(session: Session, dataset: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | null | undefined;
  do {
    const query = new URLSearchParams({ since: DATA_SPAN.end, limit: '1000' });
    if (cursor) query.set('cursor', cursor);
    const res = await t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/exports/S1/${dataset}?${query}`, { token: session.token });
    assert.equal(res.status, 200, res.text);
    rows.push(...res.body.body.rows);
    cursor = res.body.body.pagination.nextCursor;
  } while (cursor);
  return rows;
}

/** The newest row per public_id of one account. */
async function latest(session: Session, dataset: string, accountId: string): Promise<Record<string, unknown>[]> {
  const rows = (await rowsSincePushes(session, dataset)).filter((r) => r.account_id === accountId);
  const byId = new Map<unknown, Record<string, unknown>>();
  for (const row of rows) {
    const seen = byId.get(row.public_id);
    if (!seen || String(row.updated_at ?? row.created_at) >= String(seen.updated_at ?? seen.created_at)) byId.set(row.public_id, row);
  }
  return [...byId.values()];
}

describe('POST /accounts', () => {
  it('200 with the documented envelope; the records are applied in the background', async () => {
    const { debtor, account: accountId } = ids();
    const before = await processed();
    const res = await push(demo, [
      account({ debtorCompanyId: debtor, accountId, subAccountId: 'S-1' }),
      account({ debtorCompanyId: debtor, accountId, subAccountId: 'S-2' }),
    ]);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, OK);
    assert.equal(await processed(), before + 2);
  });

  it('400 with one entry per failed accountId, and nothing of that request is processed', async () => {
    const good = ids();
    const badOne = ids();
    const before = await processed();
    const res = await push(demo, [
      account({ debtorCompanyId: good.debtor, accountId: good.account }),
      account({ debtorCompanyId: badOne.debtor, accountId: badOne.account, firstName: '', principal: 100 }),
      account({ debtorCompanyId: badOne.debtor, accountId: badOne.account, subAccountId: 'S-2', birthDate: '31/02/1990' }),
      account({ debtorCompanyId: badOne.debtor, accountId: '', addresses: [{ country: 'UAE' }] }),
    ]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, bad([
      {
        accountId: badOne.account,
        errors: ['firstName is required', 'principal must be a valid number', 'birthDate must be a valid date in dd/MM/yyyy format'],
      },
      { accountId: '', errors: ['addresses[0].country must be a valid ISO 3166-1 alpha-3 code', 'accountId is required'] },
    ]));
    assert.equal(await processed(), before, 'no record of a rejected request is applied');
    assert.deepEqual(await latest(demo, 'D02', good.account), [], 'the valid record of the rejected request is absent');
  });

  it('400 for a body without an accounts array', async () => {
    const none = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/accounts`, { token: demo.token, body: {} });
    assert.equal(none.status, 400);
    assert.deepEqual(none.body, bad([{ accountId: '', errors: ['accounts is required'] }]));
    const notArray = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/accounts`, { token: demo.token, body: { accounts: 'x' } });
    assert.deepEqual(notArray.body, bad([{ accountId: '', errors: ['accounts must be an array'] }]));
  });

  it('balance rule of the service: 100 paid 30 -> 70, then paid 50 -> 50', async () => {
    const { debtor, account: accountId } = ids();
    assert.equal((await push(demo, [account({ debtorCompanyId: debtor, accountId, paidAmount: '30' })])).status, 200);
    await drain();
    assert.deepEqual((await latest(demo, 'D03', accountId)).map((r) => String(r.balance)), ['70']);
    assert.deepEqual((await latest(demo, 'D02', accountId)).map((r) => String(r.outstanding_balance)), ['70']);
    assert.equal((await push(demo, [account({ debtorCompanyId: debtor, accountId, status: 2, paidAmount: '50' })])).status, 200);
    await drain();
    assert.deepEqual((await latest(demo, 'D03', accountId)).map((r) => String(r.balance)), ['50']);
    assert.deepEqual((await latest(demo, 'D02', accountId)).map((r) => String(r.outstanding_balance)), ['50']);
  });

  it('withdraw: the sub-account is withdrawn and the aggregate excludes it', async () => {
    const { debtor, account: accountId } = ids();
    await push(demo, [
      account({ debtorCompanyId: debtor, accountId, subAccountId: 'S-1', principal: '100' }),
      account({ debtorCompanyId: debtor, accountId, subAccountId: 'S-2', principal: '40.25' }),
    ]);
    await push(demo, [account({ debtorCompanyId: debtor, accountId, subAccountId: 'S-1', status: 3 })]);
    await drain();
    const [agg] = await latest(demo, 'D02', accountId);
    assert.ok(agg);
    assert.deepEqual(
      [String(agg.outstanding_balance), agg.sub_account_count, agg.active_sub_account_count, agg.status],
      ['40.25', 2, 1, 'active'],
    );
    const subs = await latest(demo, 'D03', accountId);
    assert.deepEqual(subs.map((s) => [s.sub_account_id, s.status]).sort(), [['S-1', 'withdrawn'], ['S-2', 'active']]);
    const events = (await rowsSincePushes(demo, 'D05')).filter((e) => e.account_id === accountId).map((e) => e.event_type);
    assert.deepEqual(events.sort(), ['created', 'created', 'withdrawn']);
  });
});

describe('POST /accounts/update-status', () => {
  it('5 flags one account disputed; 6 flags the debtor and every account of it do-not-contact', async () => {
    const { debtor, account: a1 } = ids();
    const a2 = `${a1}-second`;
    const stranger = ids();
    await push(demo, [
      account({ debtorCompanyId: debtor, accountId: a1 }),
      account({ debtorCompanyId: debtor, accountId: a2 }),
      account({ debtorCompanyId: stranger.debtor, accountId: stranger.account }),
    ]);
    const res = await flag(demo, [
      { status: 5, debtorCompanyId: debtor, accountId: a2 },
      { status: 6, debtorCompanyId: debtor, accountId: a1 },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, OK);
    await drain();
    const [first] = await latest(demo, 'D02', a1);
    const [second] = await latest(demo, 'D02', a2);
    const [unrelated] = await latest(demo, 'D02', stranger.account);
    assert.deepEqual([first?.disputed, first?.do_not_contact], [false, true]);
    assert.deepEqual([second?.disputed, second?.do_not_contact], [true, true]);
    assert.deepEqual([unrelated?.disputed, unrelated?.do_not_contact], [false, false]);
    const borrower = (await rowsSincePushes(demo, 'D01')).filter((r) => r.debtor_company_id === debtor).at(-1);
    assert.equal(borrower?.do_not_contact, true);
  });

  it('an invalid status gets the spec sentence; an unknown account a clear entry; nothing is processed', async () => {
    const { debtor, account: accountId } = ids();
    await push(demo, [account({ debtorCompanyId: debtor, accountId })]);
    const before = await processed();
    const res = await flag(demo, [
      { status: 5, debtorCompanyId: debtor, accountId },
      { status: 3, debtorCompanyId: debtor, accountId: 'X-1' },
      { status: 6, debtorCompanyId: debtor, accountId: 'NOPE' },
    ]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, bad([
      { accountId: 'X-1', errors: ['Invalid status value. Accepted values: 5, 6', `account X-1 not found for debtor ${debtor}`] },
      { accountId: 'NOPE', errors: [`account NOPE not found for debtor ${debtor}`] },
    ]));
    assert.equal(await processed(), before);
    const [row] = await latest(demo, 'D02', accountId);
    assert.equal(row?.disputed, false);
  });
});

describe('tenant isolation', () => {
  it("records pushed for demo are invisible to other and cannot be flagged by it", async () => {
    const { debtor, account: accountId } = ids();
    assert.equal((await push(demo, [account({ debtorCompanyId: debtor, accountId })])).status, 200);
    await drain();
    assert.equal((await latest(demo, 'D02', accountId)).length, 1);
    assert.deepEqual(await latest(other, 'D02', accountId), []);
    assert.deepEqual((await rowsSincePushes(other, 'D01')).filter((r) => r.debtor_company_id === debtor), []);
    const res = await flag(other, [{ status: 6, debtorCompanyId: debtor, accountId }]);
    assert.deepEqual(res.body, bad([{ accountId, errors: [`account ${accountId} not found for debtor ${debtor}`] }]));
  });

  it("a token of demo cannot push into other's path", async () => {
    const res = await t.request('POST', `/admin/v3/lenders/${other.lenderPublicId}/accounts`, {
      token: demo.token, body: { accounts: [account({ debtorCompanyId: 'C', accountId: 'A' })] },
    });
    assert.notEqual(res.status, 200);
  });
});
