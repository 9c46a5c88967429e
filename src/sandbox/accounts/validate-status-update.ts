// Validation of the Account status update object of the update-status endpoint. Pure: whether an account
// exists is asked through a predicate, so the rule is tested without any state.
import { checkRequiredString, isAbsent } from './field-checks.ts';
import { type Outcome, validateRecord, validateRequest } from './validate-account.ts';
import type { FlagOperation, StatusUpdateInput, Validated } from './types.ts';

export const FLAG_STATUS_MESSAGE = 'Invalid status value. Accepted values: 5, 6';

export type AccountExists = (debtorCompanyId: string, accountId: string) => boolean;

export function notFoundMessage(debtorCompanyId: string, accountId: string): string {
  return `account ${accountId} not found for debtor ${debtorCompanyId}`;
}

export function statusUpdateErrors(raw: Record<string, unknown>, exists: AccountExists): string[] {
  const errors: string[] = [];
  if (isAbsent(raw.status)) errors.push('status is required');
  else if (raw.status !== 5 && raw.status !== 6) errors.push(FLAG_STATUS_MESSAGE);
  const debtor = checkRequiredString('debtorCompanyId', raw.debtorCompanyId);
  if (debtor) errors.push(debtor);
  const account = checkRequiredString('accountId', raw.accountId);
  if (account) errors.push(account);
  // Looked up only once both keys are well-formed, so a typo is reported once, as itself.
  if (!debtor && !account) {
    const debtorCompanyId = raw.debtorCompanyId as string;
    const accountId = raw.accountId as string;
    if (!exists(debtorCompanyId, accountId)) errors.push(notFoundMessage(debtorCompanyId, accountId));
  }
  return errors;
}

/** One element of an update-status body: its errors, or the status update it asks for. */
export function statusUpdateValidator(exists: AccountExists): (raw: unknown) => Outcome<StatusUpdateInput> {
  return (raw) =>
    validateRecord(raw, (item) => statusUpdateErrors(item, exists), (item) => ({
      status: item.status as FlagOperation,
      debtorCompanyId: item.debtorCompanyId as string,
      accountId: item.accountId as string,
    }));
}

export function validateStatusUpdateRequest(body: unknown, exists: AccountExists): Validated<StatusUpdateInput> {
  return validateRequest(body, statusUpdateValidator(exists));
}
