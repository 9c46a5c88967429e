// The accounts state of every tenant and the processing that changes it. No I/O and no clock:
// the caller passes the timestamp, so pushed records (stamped by ctx.now()) and the seeded
// portfolio (stamped inside DATA_SPAN) go through exactly the same code.
//
// Every change replaces the affected records with new frozen snapshots and hands them to the
// listener in the order debtor, account, sub-account, event, so the export half can keep them
// without copying.
import type {
  AccountEventRecord,
  AccountEventType,
  AccountRecord,
  DebtorRecord,
  PortfolioListener,
  SubAccountRecord,
  Tenant,
} from '../contracts.ts';
import { aggregateAccount, subAccountBalance } from './aggregate.ts';
import type { AccountInput, StatusUpdateInput } from './types.ts';

interface IdCounters {
  debtor: number;
  account: number;
  subAccount: number;
  event: number;
}

/** One tenant's records. Layer one of tenant isolation: nothing here is shared between tenants. */
export interface TenantPortfolio {
  readonly debtors: Map<string, DebtorRecord>;
  readonly accounts: Map<string, AccountRecord>;
  /** accountKey -> subAccountId -> record. */
  readonly subAccounts: Map<string, Map<string, SubAccountRecord>>;
  /** debtorCompanyId -> accountKeys, for do-not-contact across every account of a debtor. */
  readonly accountsByDebtor: Map<string, Set<string>>;
  readonly ids: IdCounters;
}

/** Length-prefixed so no pair of ids can collide, whatever characters they contain. */
export function accountKey(debtorCompanyId: string, accountId: string): string {
  return `${debtorCompanyId.length}:${debtorCompanyId}${accountId}`;
}

export function createTenantPortfolio(): TenantPortfolio {
  return {
    debtors: new Map(),
    accounts: new Map(),
    subAccounts: new Map(),
    accountsByDebtor: new Map(),
    ids: { debtor: 0, account: 0, subAccount: 0, event: 0 },
  };
}

/** All tenants' portfolios, keyed by lenderPublicId. */
export class Portfolio {
  readonly #tenants = new Map<string, TenantPortfolio>();

  of(tenant: Tenant): TenantPortfolio {
    let portfolio = this.#tenants.get(tenant.lenderPublicId);
    if (!portfolio) this.#tenants.set(tenant.lenderPublicId, (portfolio = createTenantPortfolio()));
    return portfolio;
  }

  hasAccount(tenant: Tenant, debtorCompanyId: string, accountId: string): boolean {
    return this.#tenants.get(tenant.lenderPublicId)?.accounts.has(accountKey(debtorCompanyId, accountId)) ?? false;
  }
}

export function findAccount(p: TenantPortfolio, debtorCompanyId: string, accountId: string): AccountRecord | undefined {
  return p.accounts.get(accountKey(debtorCompanyId, accountId));
}

export function findSubAccount(
  p: TenantPortfolio, debtorCompanyId: string, accountId: string, subAccountId: string,
): SubAccountRecord | undefined {
  return p.subAccounts.get(accountKey(debtorCompanyId, accountId))?.get(subAccountId);
}

function recordEvent(
  p: TenantPortfolio, tenant: Tenant, listener: PortfolioListener, type: AccountEventType,
  at: string, debtorCompanyId: string, accountId: string, subAccountId?: string,
): void {
  p.ids.event += 1;
  const event: AccountEventRecord = subAccountId === undefined
    ? { id: p.ids.event, debtorCompanyId, accountId, type, createdAt: at }
    : { id: p.ids.event, debtorCompanyId, accountId, subAccountId, type, createdAt: at };
  listener.event(tenant, Object.freeze(event));
}

// ---- debtor

type DebtorDetails = Omit<DebtorRecord, 'id' | 'debtorCompanyId' | 'doNotContact' | 'createdAt' | 'updatedAt'>;

/** The latest record's details over the stored ones: a field the record carries replaces the
 * stored value, a field it omits keeps it (the service's upserts are partial). */
function mergedDebtorDetails(previous: DebtorRecord | undefined, input: AccountInput): DebtorDetails {
  const freezeList = <T extends object>(items: readonly T[]): readonly T[] =>
    Object.freeze(items.map((item) => Object.freeze({ ...item })));
  const details: Record<string, unknown> = {
    firstName: input.firstName,
    lastName: input.lastName,
    language: input.language,
    phones: input.phones ? freezeList(input.phones) : (previous?.phones ?? Object.freeze([])),
    emails: input.emails ? freezeList(input.emails) : (previous?.emails ?? Object.freeze([])),
    addresses: input.addresses ? freezeList(input.addresses) : (previous?.addresses ?? Object.freeze([])),
  };
  // emiratesId is the UAE form of the national id (the Account object's idNumber), so it fills idNumber when
  // idNumber itself is not sent.
  const idNumber = input.idNumber ?? input.emiratesId;
  const optional: [keyof DebtorDetails, string | undefined][] = [
    ['idNumber', idNumber], ['passportNumber', input.passportNumber], ['birthDate', input.birthDate],
    ['gender', input.gender], ['nationality', input.nationality],
  ];
  for (const [field, value] of optional) {
    const kept = value ?? previous?.[field];
    if (kept !== undefined) details[field] = kept;
  }
  return details as unknown as DebtorDetails;
}

function sameList(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((item, i) => {
    const other = b[i] as Record<string, unknown>;
    const entries = Object.entries(item);
    return entries.length === Object.keys(other).length && entries.every(([k, v]) => other[k] === v);
  });
}

/** Whether the record would change the stored debtor; checked before building anything, since
 * most records of a push repeat their debtor's details unchanged. */
function changesDebtor(previous: DebtorRecord, input: AccountInput): boolean {
  if (previous.firstName !== input.firstName || previous.lastName !== input.lastName
    || previous.language !== input.language) return true;
  const idNumber = input.idNumber ?? input.emiratesId;
  if (idNumber !== undefined && idNumber !== previous.idNumber) return true;
  for (const field of ['passportNumber', 'birthDate', 'gender', 'nationality'] as const) {
    if (input[field] !== undefined && input[field] !== previous[field]) return true;
  }
  return (input.phones !== undefined && !sameList(input.phones, previous.phones))
    || (input.emails !== undefined && !sameList(input.emails, previous.emails))
    || (input.addresses !== undefined && !sameList(input.addresses, previous.addresses));
}

/** Upserts the debtor; returns the new snapshot, or undefined when nothing changed. */
function upsertDebtor(p: TenantPortfolio, input: AccountInput, at: string): DebtorRecord | undefined {
  const previous = p.debtors.get(input.debtorCompanyId);
  if (previous && !changesDebtor(previous, input)) return undefined;
  const details = mergedDebtorDetails(previous, input);
  let id = previous?.id;
  if (id === undefined) id = p.ids.debtor += 1;
  const record: DebtorRecord = Object.freeze({
    id,
    debtorCompanyId: input.debtorCompanyId,
    ...details,
    doNotContact: previous?.doNotContact ?? false,
    createdAt: previous?.createdAt ?? at,
    updatedAt: at,
  });
  p.debtors.set(input.debtorCompanyId, record);
  return record;
}

// ---- sub-account and account

const SUB_ACCOUNT_OPTIONALS = [
  'interest', 'fees', 'paidAmount', 'paidDate', 'dateDue', 'loanType', 'merchant', 'additionalData',
] as const;

function upsertSubAccount(p: TenantPortfolio, input: AccountInput, at: string): { record: SubAccountRecord; created: boolean } {
  const key = accountKey(input.debtorCompanyId, input.accountId);
  let subs = p.subAccounts.get(key);
  if (!subs) p.subAccounts.set(key, (subs = new Map()));
  const previous = subs.get(input.subAccountId);
  const record: Record<string, unknown> = {
    id: previous?.id ?? (p.ids.subAccount += 1),
    debtorCompanyId: input.debtorCompanyId,
    accountId: input.accountId,
    subAccountId: input.subAccountId,
    principal: input.principal,
  };
  for (const field of SUB_ACCOUNT_OPTIONALS) {
    const value = input[field] ?? previous?.[field];
    if (value !== undefined) record[field] = field === 'additionalData' ? Object.freeze({ ...(value as object) }) : value;
  }
  record.balance = subAccountBalance(input.principal, record.paidAmount as string | undefined);
  // Any upsert makes the sub-account active again, including one that was withdrawn: the lender
  // has just told us the obligation exists.
  record.status = 'active';
  record.createdAt = previous?.createdAt ?? at;
  record.updatedAt = at;
  const frozen = Object.freeze(record) as unknown as SubAccountRecord;
  subs.set(input.subAccountId, frozen);
  return { record: frozen, created: previous === undefined };
}

/** Recomputes and stores the account aggregate after a sub-account change. */
function refreshAccount(
  p: TenantPortfolio, debtorCompanyId: string, accountId: string, at: string,
  from?: Pick<AccountInput, 'loanType' | 'merchant'>,
): AccountRecord {
  const key = accountKey(debtorCompanyId, accountId);
  const previous = p.accounts.get(key);
  const aggregate = aggregateAccount(p.subAccounts.get(key)?.values() ?? []);
  const record: Record<string, unknown> = {
    id: previous?.id ?? (p.ids.account += 1),
    debtorCompanyId,
    accountId,
  };
  const loanType = from?.loanType ?? previous?.loanType;
  if (loanType !== undefined) record.loanType = loanType;
  const merchant = from?.merchant ?? previous?.merchant;
  if (merchant !== undefined) record.merchant = merchant;
  Object.assign(record, aggregate, {
    disputed: previous?.disputed ?? false,
    // A new account of a do-not-contact debtor is do-not-contact too: the flag covers every
    // account of the debtorCompanyId and stays until removed.
    doNotContact: previous?.doNotContact ?? p.debtors.get(debtorCompanyId)?.doNotContact ?? false,
    createdAt: previous?.createdAt ?? at,
    updatedAt: at,
  });
  const frozen = Object.freeze(record) as unknown as AccountRecord;
  p.accounts.set(key, frozen);
  if (!previous) {
    let keys = p.accountsByDebtor.get(debtorCompanyId);
    if (!keys) p.accountsByDebtor.set(debtorCompanyId, (keys = new Set()));
    keys.add(key);
  }
  return frozen;
}

/**
 * Applies one validated Account record (the documented account operations).
 * Status 1 and 2 both upsert: 1 on an existing sub-account updates it and 2 on a missing one
 * creates it, because records of one sub-account may be split across batches and the spec's
 * outcome ("sub-account exists" with these values) is the same either way. Status 3 withdraws;
 * withdrawing a sub-account that does not exist records the event and changes nothing else.
 * A withdrawal leaves the debtor's details alone: it carries no new information about them.
 */
export function applyAccountRecord(
  p: TenantPortfolio, tenant: Tenant, input: AccountInput, at: string, listener: PortfolioListener,
): void {
  const { debtorCompanyId, accountId, subAccountId } = input;
  if (input.status === 3) {
    const subs = p.subAccounts.get(accountKey(debtorCompanyId, accountId));
    const previous = subs?.get(subAccountId);
    if (subs && previous) {
      const withdrawn: SubAccountRecord = Object.freeze({ ...previous, status: 'withdrawn', updatedAt: at });
      subs.set(subAccountId, withdrawn);
      listener.account(tenant, refreshAccount(p, debtorCompanyId, accountId, at));
      listener.subAccount(tenant, withdrawn);
    }
    recordEvent(p, tenant, listener, 'withdrawn', at, debtorCompanyId, accountId, subAccountId);
    return;
  }
  const debtor = upsertDebtor(p, input, at);
  if (debtor) listener.debtor(tenant, debtor);
  const { record, created } = upsertSubAccount(p, input, at);
  listener.account(tenant, refreshAccount(p, debtorCompanyId, accountId, at, input));
  listener.subAccount(tenant, record);
  recordEvent(p, tenant, listener, created ? 'created' : 'updated', at, debtorCompanyId, accountId, subAccountId);
}

/**
 * Applies one validated status update (the documented operational flags). 5 flags the account disputed;
 * 6 flags the debtor do-not-contact and every account of that debtorCompanyId, with one event per
 * flagged account. Flagging again re-records the event: the request happened. An account that no
 * longer resolves (validation saw it only as queued, and the queued record did not create it) is
 * left alone.
 */
export function applyStatusUpdate(
  p: TenantPortfolio, tenant: Tenant, input: StatusUpdateInput, at: string, listener: PortfolioListener,
): void {
  const { debtorCompanyId, accountId } = input;
  if (input.status === 5) {
    const key = accountKey(debtorCompanyId, accountId);
    const previous = p.accounts.get(key);
    if (!previous) return;
    const record: AccountRecord = Object.freeze({ ...previous, disputed: true, updatedAt: at });
    p.accounts.set(key, record);
    listener.account(tenant, record);
    recordEvent(p, tenant, listener, 'disputed', at, debtorCompanyId, accountId);
    return;
  }
  const debtor = p.debtors.get(debtorCompanyId);
  if (debtor) {
    const record: DebtorRecord = Object.freeze({ ...debtor, doNotContact: true, updatedAt: at });
    p.debtors.set(debtorCompanyId, record);
    listener.debtor(tenant, record);
  }
  for (const key of p.accountsByDebtor.get(debtorCompanyId) ?? []) {
    const previous = p.accounts.get(key);
    if (!previous) continue;
    const record: AccountRecord = Object.freeze({ ...previous, doNotContact: true, updatedAt: at });
    p.accounts.set(key, record);
    listener.account(tenant, record);
    recordEvent(p, tenant, listener, 'do_not_contact', at, debtorCompanyId, previous.accountId);
  }
}
