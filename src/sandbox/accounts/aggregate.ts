// The main account aggregate (kept up to date by any operation on a sub-account), recomputed from scratch on every
// change: accounts hold a handful of sub-accounts, and recomputing cannot drift the way an
// incrementally maintained sum can after updates and withdrawals.
import type { AccountRecord, SubAccountRecord } from '../contracts.ts';
import { signOfDecimal, subtractDecimal, sumDecimals } from './decimal.ts';

export type AccountAggregate = Pick<
  AccountRecord,
  'outstandingBalance' | 'subAccountCount' | 'activeSubAccountCount' | 'status'
>;

/** The service's balance rule: principal less paidAmount. Interest and fees are not part of it. */
export function subAccountBalance(principal: string, paidAmount: string | undefined): string {
  return subtractDecimal(principal, paidAmount ?? '0');
}

/** The aggregate status names are the sandbox's own (the service does not document them): withdrawn once
 * every sub-account is withdrawn, settled once nothing is outstanding, otherwise active. */
export function aggregateAccount(subAccounts: Iterable<SubAccountRecord>): AccountAggregate {
  const balances: string[] = [];
  let subAccountCount = 0;
  for (const sub of subAccounts) {
    subAccountCount += 1;
    if (sub.status === 'active') balances.push(sub.balance);
  }
  const outstandingBalance = sumDecimals(balances);
  const activeSubAccountCount = balances.length;
  const status: AccountRecord['status'] =
    subAccountCount > 0 && activeSubAccountCount === 0
      ? 'withdrawn'
      : signOfDecimal(outstandingBalance) <= 0
        ? 'settled'
        : 'active';
  return { outstandingBalance, subAccountCount, activeSubAccountCount, status };
}
