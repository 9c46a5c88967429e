// What differs between the account writer and the flag writer: the schema, the ordering key and
// the endpoint. The writer mechanics (writer.ts) are written once against this.
import type { AccountsRequestOptions, ServiceApi } from '../core/api.ts';
import { validateAccountForSend, validateStatusUpdate, type Account, type StatusUpdate, type Validation } from './schema.ts';

export interface RecordKind<T> {
  /** For messages: "accounts", "status updates". */
  readonly noun: string;
  /** Normalises friendly input and validates it; on success `value` is what is sent. */
  validate(input: unknown): Validation<T>;
  /** Records with equal keys reach the service in write order. */
  key(record: T): string;
  /** What the service names a failed record by in a 400. */
  accountId(record: T): string;
  /** `opts.recordsJson` carries the records' JSON texts, made once by the writer. */
  send(api: ServiceApi, records: readonly T[], opts: AccountsRequestOptions): Promise<unknown>;
}

// NUL cannot appear in the ids the key is built from without being an obvious data error, and
// joining is cheaper than JSON.stringify on the hot path.
const SEP = '\u0000';

export interface AccountKindOptions {
  /** Also require the machine-readable schema's fields (birthDate, dateDue, phones, loanType). */
  strict?: boolean;
}

export function accountKind(opts: AccountKindOptions = {}): RecordKind<Account> {
  const strict = opts.strict === true;
  return {
    noun: 'accounts',
    // The writer serialises each value as soon as it is validated, so no defensive copy is needed.
    validate: (input) => validateAccountForSend(input, { strict }),
    key: (r) => r.debtorCompanyId + SEP + r.accountId + SEP + r.subAccountId,
    accountId: (r) => r.accountId,
    send: (api, records, requestOpts) => api.upsertAccounts(records, requestOpts),
  };
}

export function statusUpdateKind(): RecordKind<StatusUpdate> {
  return {
    noun: 'status updates',
    validate: validateStatusUpdate,
    key: (r) => r.debtorCompanyId + SEP + r.accountId,
    accountId: (r) => r.accountId,
    send: (api, records, requestOpts) => api.updateStatus(records, requestOpts),
  };
}
