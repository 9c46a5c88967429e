import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AccountEventRecord,
  AccountRecord,
  DebtorRecord,
  PortfolioListener,
  SubAccountRecord,
  Tenant,
} from '../../src/sandbox/contracts.ts';
import { aggregateAccount } from '../../src/sandbox/accounts/aggregate.ts';
import {
  applyAccountRecord,
  applyStatusUpdate,
  createTenantPortfolio,
  findAccount,
  findSubAccount,
  type TenantPortfolio,
} from '../../src/sandbox/accounts/portfolio.ts';
import type { AccountInput } from '../../src/sandbox/accounts/types.ts';

const tenant: Tenant = { lender: 'demo', email: 'e', password: 'p', lenderPublicId: 'L-1', index: 0 };

type Call =
  | ['debtor', DebtorRecord] | ['account', AccountRecord] | ['subAccount', SubAccountRecord] | ['event', AccountEventRecord];

function recorder(): PortfolioListener & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    debtor: (t, r) => { assert.equal(t, tenant); calls.push(['debtor', r]); },
    account: (t, r) => { assert.equal(t, tenant); calls.push(['account', r]); },
    subAccount: (t, r) => { assert.equal(t, tenant); calls.push(['subAccount', r]); },
    event: (t, r) => { assert.equal(t, tenant); calls.push(['event', r]); },
    seeding: (apply) => apply(),
  };
}

const base: AccountInput = {
  status: 1, debtorCompanyId: 'C-1', accountId: 'A-1', subAccountId: 'S-1',
  firstName: 'Layla', lastName: 'Haddad', language: 'ar', principal: '100',
};

let clock = 0;
const at = (): string => new Date(Date.UTC(2026, 0, 1) + (clock += 1000)).toISOString();

function setup(): { p: TenantPortfolio; l: ReturnType<typeof recorder>; apply: (patch: Partial<AccountInput>) => void } {
  const p = createTenantPortfolio();
  const l = recorder();
  return { p, l, apply: (patch) => applyAccountRecord(p, tenant, { ...base, ...patch }, at(), l) };
}

describe('account processing', () => {
  it('balance rule: 100 with paid 30 gives 70; a later paid 50 gives 50', () => {
    const { p, apply } = setup();
    apply({ paidAmount: '30' });
    assert.equal(findSubAccount(p, 'C-1', 'A-1', 'S-1')?.balance, '70');
    assert.equal(findAccount(p, 'C-1', 'A-1')?.outstandingBalance, '70');
    apply({ status: 2, paidAmount: '50' });
    assert.equal(findSubAccount(p, 'C-1', 'A-1', 'S-1')?.balance, '50');
    assert.equal(findAccount(p, 'C-1', 'A-1')?.outstandingBalance, '50');
  });

  it('create: listener gets debtor, account, sub-account, event, as frozen snapshots', () => {
    const { l, apply } = setup();
    apply({ phones: [{ number: '+971500000001', type: 'mobile' }], loanType: 3, merchant: 'Noon', interest: '5' });
    assert.deepEqual(l.calls.map((c) => c[0]), ['debtor', 'account', 'subAccount', 'event']);
    const [debtor, account, sub, event] = l.calls.map((c) => c[1]);
    assert.ok(Object.isFrozen(debtor) && Object.isFrozen(account) && Object.isFrozen(sub) && Object.isFrozen(event));
    assert.deepEqual({ ...(debtor as DebtorRecord), createdAt: '', updatedAt: '' }, {
      id: 1, debtorCompanyId: 'C-1', firstName: 'Layla', lastName: 'Haddad', language: 'ar',
      phones: [{ number: '+971500000001', type: 'mobile' }], emails: [], addresses: [],
      doNotContact: false, createdAt: '', updatedAt: '',
    });
    assert.deepEqual((debtor as DebtorRecord).phones, [{ number: '+971500000001', type: 'mobile' }]);
    assert.deepEqual(
      { ...(account as AccountRecord), createdAt: '', updatedAt: '' },
      {
        id: 1, debtorCompanyId: 'C-1', accountId: 'A-1', loanType: 3, merchant: 'Noon', outstandingBalance: '100',
        subAccountCount: 1, activeSubAccountCount: 1, status: 'active', disputed: false, doNotContact: false,
        createdAt: '', updatedAt: '',
      },
    );
    assert.equal((sub as SubAccountRecord).interest, '5');
    assert.equal((sub as SubAccountRecord).status, 'active');
    assert.deepEqual({ ...(event as AccountEventRecord), createdAt: '' }, {
      id: 1, debtorCompanyId: 'C-1', accountId: 'A-1', subAccountId: 'S-1', type: 'created', createdAt: '',
    });
    const stamp = (event as AccountEventRecord).createdAt;
    for (const r of [debtor, account, sub] as (DebtorRecord | AccountRecord | SubAccountRecord)[]) {
      assert.deepEqual([r.createdAt, r.updatedAt], [stamp, stamp]);
    }
  });

  it('an update keeps ids and createdAt, moves updatedAt, keeps omitted optional fields', () => {
    const { p, l, apply } = setup();
    apply({ fees: '10', dateDue: '01/02/2026' });
    const before = findSubAccount(p, 'C-1', 'A-1', 'S-1');
    apply({ status: 2, paidAmount: '20' });
    const after = findSubAccount(p, 'C-1', 'A-1', 'S-1');
    assert.ok(before && after);
    assert.equal(after.id, before.id);
    assert.equal(after.createdAt, before.createdAt);
    assert.ok(after.updatedAt > before.updatedAt);
    assert.equal(after.fees, '10');
    assert.equal(after.dateDue, '01/02/2026');
    assert.equal(after.balance, '80');
    // Unchanged debtor details: no new debtor snapshot on the second record.
    assert.deepEqual(l.calls.slice(4).map((c) => c[0]), ['account', 'subAccount', 'event']);
    assert.equal((l.calls[6]?.[1] as AccountEventRecord).type, 'updated');
  });

  it('status 1 on an existing sub-account updates it; status 2 on a missing one creates it', () => {
    const { p, l, apply } = setup();
    apply({ status: 2, subAccountId: 'S-9' });
    apply({ status: 1, subAccountId: 'S-9', principal: '40' });
    const events = l.calls.filter((c) => c[0] === 'event').map((c) => (c[1] as AccountEventRecord).type);
    assert.deepEqual(events, ['created', 'updated']);
    assert.equal(findSubAccount(p, 'C-1', 'A-1', 'S-9')?.principal, '40');
  });

  it('debtor details follow the latest record', () => {
    const { p, l, apply } = setup();
    apply({ emails: [{ email: 'a@b.co' }] });
    apply({ subAccountId: 'S-2', lastName: 'Nasser', addresses: [{ city: 'Dubai', country: 'ARE' }], emiratesId: '784-1990-1234567-1' });
    const debtors = l.calls.filter((c) => c[0] === 'debtor').map((c) => c[1] as DebtorRecord);
    assert.equal(debtors.length, 2);
    const latest = p.debtors.get('C-1');
    assert.equal(latest, debtors[1]);
    assert.equal(latest?.id, 1);
    assert.equal(latest?.lastName, 'Nasser');
    assert.deepEqual(latest?.emails, [{ email: 'a@b.co' }]);
    assert.deepEqual(latest?.addresses, [{ city: 'Dubai', country: 'ARE' }]);
    assert.equal(latest?.idNumber, '784-1990-1234567-1');
  });

  it('withdraw: sub-account withdrawn, aggregate over the remaining ones, status withdrawn when none remain', () => {
    const { p, l, apply } = setup();
    apply({ subAccountId: 'S-1', principal: '100', paidAmount: '30' });
    apply({ subAccountId: 'S-2', principal: '25.50' });
    assert.deepEqual(pick(findAccount(p, 'C-1', 'A-1')), ['95.50', 2, 2, 'active']);
    l.calls.length = 0;
    apply({ status: 3, subAccountId: 'S-2' });
    assert.deepEqual(l.calls.map((c) => c[0]), ['account', 'subAccount', 'event']);
    assert.equal((l.calls[1]?.[1] as SubAccountRecord).status, 'withdrawn');
    assert.equal((l.calls[2]?.[1] as AccountEventRecord).type, 'withdrawn');
    assert.deepEqual(pick(findAccount(p, 'C-1', 'A-1')), ['70', 2, 1, 'active']);
    apply({ status: 3, subAccountId: 'S-1' });
    assert.deepEqual(pick(findAccount(p, 'C-1', 'A-1')), ['0', 2, 0, 'withdrawn']);
    // An upsert brings a withdrawn sub-account back.
    apply({ status: 2, subAccountId: 'S-1', principal: '100', paidAmount: '100' });
    assert.deepEqual(pick(findAccount(p, 'C-1', 'A-1')), ['0', 2, 1, 'settled']);
  });

  it('withdrawing a sub-account that does not exist records the event only', () => {
    const { p, l, apply } = setup();
    apply({ status: 3, accountId: 'A-404', subAccountId: 'S-404' });
    assert.deepEqual(l.calls.map((c) => c[0]), ['event']);
    assert.equal((l.calls[0]?.[1] as AccountEventRecord).subAccountId, 'S-404');
    assert.equal(findAccount(p, 'C-1', 'A-404'), undefined);
    assert.equal(p.debtors.size, 0);
  });

  it('disputed flags one account', () => {
    const { p, l, apply } = setup();
    apply({ accountId: 'A-1' });
    apply({ accountId: 'A-2' });
    l.calls.length = 0;
    applyStatusUpdate(p, tenant, { status: 5, debtorCompanyId: 'C-1', accountId: 'A-2' }, at(), l);
    assert.deepEqual(l.calls.map((c) => c[0]), ['account', 'event']);
    assert.equal(findAccount(p, 'C-1', 'A-2')?.disputed, true);
    assert.equal(findAccount(p, 'C-1', 'A-1')?.disputed, false);
    assert.equal((l.calls[1]?.[1] as AccountEventRecord).type, 'disputed');
  });

  it('do-not-contact covers the debtor and every account of that debtorCompanyId, and later ones', () => {
    const { p, l, apply } = setup();
    apply({ accountId: 'A-1' });
    apply({ accountId: 'A-2' });
    apply({ debtorCompanyId: 'C-2', accountId: 'A-3' });
    l.calls.length = 0;
    applyStatusUpdate(p, tenant, { status: 6, debtorCompanyId: 'C-1', accountId: 'A-1' }, at(), l);
    assert.deepEqual(l.calls.map((c) => c[0]), ['debtor', 'account', 'event', 'account', 'event']);
    assert.deepEqual(
      l.calls.filter((c) => c[0] === 'event').map((c) => [(c[1] as AccountEventRecord).type, (c[1] as AccountEventRecord).accountId]),
      [['do_not_contact', 'A-1'], ['do_not_contact', 'A-2']],
    );
    assert.equal(p.debtors.get('C-1')?.doNotContact, true);
    assert.equal(findAccount(p, 'C-1', 'A-1')?.doNotContact, true);
    assert.equal(findAccount(p, 'C-1', 'A-2')?.doNotContact, true);
    assert.equal(findAccount(p, 'C-2', 'A-3')?.doNotContact, false);
    apply({ accountId: 'A-4', firstName: 'Renamed' });
    assert.equal(findAccount(p, 'C-1', 'A-4')?.doNotContact, true);
    assert.equal(p.debtors.get('C-1')?.doNotContact, true);
  });

  it('ids are increasing per record type; old snapshots never change', () => {
    const { p, l, apply } = setup();
    apply({ accountId: 'A-1' });
    const first = findAccount(p, 'C-1', 'A-1');
    apply({ accountId: 'A-1', subAccountId: 'S-2', principal: '5' });
    apply({ debtorCompanyId: 'C-2', accountId: 'A-2' });
    assert.equal(first?.outstandingBalance, '100');
    assert.equal(findAccount(p, 'C-1', 'A-1')?.outstandingBalance, '105');
    assert.deepEqual([findAccount(p, 'C-2', 'A-2')?.id, p.debtors.get('C-2')?.id], [2, 2]);
    const eventIds = l.calls.filter((c) => c[0] === 'event').map((c) => c[1].id);
    assert.deepEqual(eventIds, [1, 2, 3]);
  });
});

describe('aggregate', () => {
  const sub = (balance: string, status: 'active' | 'withdrawn'): SubAccountRecord =>
    ({ balance, status }) as SubAccountRecord;

  it('outstanding over active sub-accounts; status by the sandbox rules', () => {
    assert.deepEqual(aggregateAccount([sub('10.5', 'active'), sub('99', 'withdrawn'), sub('0.5', 'active')]), {
      outstandingBalance: '11.0', subAccountCount: 3, activeSubAccountCount: 2, status: 'active',
    });
    assert.equal(aggregateAccount([sub('0', 'active'), sub('5', 'withdrawn')]).status, 'settled');
    assert.equal(aggregateAccount([sub('-1', 'active')]).status, 'settled');
    assert.equal(aggregateAccount([sub('5', 'withdrawn')]).status, 'withdrawn');
  });
});

function pick(a: AccountRecord | undefined): unknown[] {
  return [a?.outstandingBalance, a?.subAccountCount, a?.activeSubAccountCount, a?.status];
}
