// A push through the accounts endpoints appears in D01, D02, D03 and D05 once processed, with
// the right balances and flags, and an updated row moves to the end of an ascending walk.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { type Session, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let demo: Session;

before(async () => {
  t = await startTestSandbox({ scale: 60 });
  demo = await t.loginAs('demo');
  await t.sandbox.drain();
});
after(() => t.close());

const DEBTOR = 'CUS-EXPORT-1';
const ACCOUNT = 'ACC-EXPORT-1';

function record(subAccountId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    debtorCompanyId: DEBTOR, firstName: 'Leila', lastName: 'Haddad', language: 'ar', accountId: ACCOUNT, subAccountId,
    idNumber: '784-1990-1234567-8', passportNumber: 'N98765432', birthDate: '17/03/1990', loanType: 3,
    dateDue: '01/09/2026', phones: [{ number: '+971501234567', type: 'mobile' }], ...fields,
  };
}

async function post(path: string, accounts: unknown[]): Promise<void> {
  const res = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/${path}`, { token: demo.token, body: { accounts } });
  assert.equal(res.status, 200, res.text);
  await t.sandbox.drain();
}

/** Rows written after start (stamped after DATA_SPAN.end), read as an incremental load would. */
async function recent(section: string, code: string): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await t.request('GET', `/admin/v3/lenders/${demo.lenderPublicId}/exports/${section}/${code}?since=${DATA_SPAN.end}&limit=50${cursor ? `&cursor=${cursor}` : ''}`, { token: demo.token });
    assert.equal(res.status, 200, res.text);
    rows.push(...res.body.body.rows);
    cursor = res.body.body.pagination.nextCursor;
  } while (cursor !== null);
  return rows;
}

test('pushed accounts, payments and flags show in D01/D02/D03/D05 with balances', async () => {
  await post('accounts', [
    record(`${ACCOUNT}-01`, { status: 1, principal: '100', paidAmount: '30' }),
    record(`${ACCOUNT}-02`, { status: 1, principal: '250.50' }),
  ]);
  let subs = await recent('S1', 'D03');
  assert.deepEqual(subs.map((s) => [s.sub_account_id, s.status]).sort(), [[`${ACCOUNT}-01`, 'active'], [`${ACCOUNT}-02`, 'active']]);
  const balance = (id: string) => Number(subs.find((s) => s.sub_account_id === id)!.balance);
  assert.equal(balance(`${ACCOUNT}-01`), 70);
  assert.equal(balance(`${ACCOUNT}-02`), 250.5);
  let [account] = await recent('S1', 'D02');
  assert.equal(account.account_id, ACCOUNT);
  assert.equal(Number(account.outstanding_balance), 320.5);
  assert.equal(account.sub_account_count, 2);

  const [borrower] = await recent('S1', 'D01');
  assert.equal(borrower.debtor_company_id, DEBTOR);
  assert.equal(borrower.preferred_language, 'ar');
  assert.equal(borrower.id_number, '*****67-8');
  assert.equal(borrower.passport_number, '*****5432');
  assert.equal(borrower.dob, 1990);
  assert.deepEqual(borrower.phones, [{ key_masked: '+971******567', dnc: false }]);
  assert.equal(borrower.do_not_contact, false);
  assert.match(borrower.public_id, /^\d+$/);

  // A later payment: balance follows principal - paidAmount, and the row moves forward.
  const firstD03 = subs.find((s) => s.sub_account_id === `${ACCOUNT}-01`)!;
  await post('accounts', [record(`${ACCOUNT}-01`, { status: 2, principal: '100', paidAmount: '50' })]);
  subs = await recent('S1', 'D03');
  const updated = subs.filter((s) => s.sub_account_id === `${ACCOUNT}-01`);
  assert.equal(updated.length, 1, 'one row per sub-account: upserted, not appended');
  assert.equal(Number(updated[0].balance), 50);
  assert.equal(updated[0].public_id, firstD03.public_id);
  assert.ok(updated[0].updated_at > firstD03.updated_at);
  assert.equal(subs.at(-1).sub_account_id, `${ACCOUNT}-01`, 'the updated row is last in ascending order');
  [account] = await recent('S1', 'D02');
  assert.equal(Number(account.outstanding_balance), 300.5);

  await post('accounts/update-status', [
    { status: 6, debtorCompanyId: DEBTOR, accountId: ACCOUNT },
    { status: 5, debtorCompanyId: DEBTOR, accountId: ACCOUNT },
  ]);
  const [flagged] = await recent('S1', 'D01');
  assert.equal(flagged.do_not_contact, true);
  assert.deepEqual(flagged.phones, [{ key_masked: '+971******567', dnc: true }]);
  [account] = await recent('S1', 'D02');
  assert.equal(account.disputed, true);
  assert.equal(account.do_not_contact, true);

  const events = await recent('S1', 'D05');
  const types = events.filter((e) => e.account_id === ACCOUNT).map((e) => e.event_type);
  for (const type of ['created', 'updated', 'do_not_contact', 'disputed']) assert.ok(types.includes(type), `D05 has ${type}: ${types}`);
  assert.ok(events.every((e) => /^[0-9a-f-]{36}$/.test(e.public_id)), 'D05 carries native UUIDs');
  assert.equal(new Set(events.map((e) => e.public_id)).size, events.length);
});
