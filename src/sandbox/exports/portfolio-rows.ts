// Raw records of D01, D02, D03 and D05, built from the accounts state the accounts half reports
// through the PortfolioListener. Raw means "as the service's database would hold it", internal
// fields included; redact.ts decides what leaves.
import type { AccountEventRecord, AccountRecord, DebtorRecord, SubAccountRecord } from '../contracts.ts';
import { uuidFor } from './row-hash.ts';
import type { RawRecord } from './redact.ts';

export function debtorRaw(record: DebtorRecord, lenderId: number): RawRecord {
  return {
    id: record.id,
    lender_id: lenderId,
    public_id: String(record.id),
    debtor_company_id: record.debtorCompanyId,
    first_name: record.firstName,
    last_name: record.lastName,
    preferred_language: record.language,
    id_number: record.idNumber,
    passport_number: record.passportNumber,
    dob: record.birthDate,
    gender: record.gender,
    nationality: record.nationality,
    // Do-not-contact blocks every channel of the debtor, so each number carries the flag.
    phones: record.phones.map((phone) => ({ number: phone.number, type: phone.type, dnc: record.doNotContact })),
    emails: record.emails,
    addresses: record.addresses,
    do_not_contact: record.doNotContact,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

export function accountRaw(record: AccountRecord, lenderId: number): RawRecord {
  return {
    id: record.id,
    lender_id: lenderId,
    public_id: String(record.id),
    debtor_company_id: record.debtorCompanyId,
    account_id: record.accountId,
    loan_type: record.loanType,
    merchant: record.merchant,
    outstanding_balance: record.outstandingBalance,
    sub_account_count: record.subAccountCount,
    active_sub_account_count: record.activeSubAccountCount,
    status: record.status,
    disputed: record.disputed,
    do_not_contact: record.doNotContact,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

export function subAccountRaw(record: SubAccountRecord, lenderId: number): RawRecord {
  return {
    id: record.id,
    lender_id: lenderId,
    public_id: String(record.id),
    debtor_company_id: record.debtorCompanyId,
    account_id: record.accountId,
    sub_account_id: record.subAccountId,
    principal: record.principal,
    interest: record.interest,
    fees: record.fees,
    paid_amount: record.paidAmount,
    // The Account object allows an empty paidDate; the export says "no date" as null.
    paid_date: record.paidDate === '' ? null : record.paidDate,
    date_due: record.dateDue,
    balance: record.balance,
    status: record.status,
    loan_type: record.loanType,
    merchant: record.merchant,
    additional_data: record.additionalData,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

/** D05 carries a native identifier: a UUID of the event, derived from `key` (per seed and
 * tenant) and the record id so it is stable across starts. */
export function eventRaw(record: AccountEventRecord, lenderId: number, key: number): RawRecord {
  return {
    id: record.id,
    lender_id: lenderId,
    public_id: uuidFor(key, record.id),
    event_type: record.type,
    debtor_company_id: record.debtorCompanyId,
    account_id: record.accountId,
    sub_account_id: record.subAccountId,
    created_at: record.createdAt,
  };
}
