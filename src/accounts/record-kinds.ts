// What differs between the account writer and the flag writer: the schema, the ordering key and
// the endpoint. The writer mechanics (writer.ts) are written once against this.
import type { AccountsRequestOptions, ServiceApi } from '../core/api.ts';
import type { Account, StatusUpdate, Validation } from './schema.ts';

/** Normalises friendly input and validates it; on success `value` is what is sent. */
export type Validator<T> = (input: unknown) => Validation<T>;

// The schemas are built with zod, which takes some 40 ms and 14 MB to load: a client that only
// exports never needs it. A writer loads them before its first record (writer.ts _construct).
let schemas: Promise<typeof import('./schema.ts')> | undefined;
const loadSchemas = (): Promise<typeof import('./schema.ts')> => (schemas ??= import('./schema.ts'));

export interface RecordKind<T> {
  /** For messages: "accounts", "status updates". */
  readonly noun: string;
  /** The validator, once its schema is loaded. */
  validator(): Promise<Validator<T>>;
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
    validator: async () => {
      const { validateAccountForSend } = await loadSchemas();
      return (input) => validateAccountForSend(input, { strict });
    },
    key: (r) => r.debtorCompanyId + SEP + r.accountId + SEP + r.subAccountId,
    accountId: (r) => r.accountId,
    send: (api, records, requestOpts) => api.upsertAccounts(records, requestOpts),
  };
}

export function statusUpdateKind(): RecordKind<StatusUpdate> {
  return {
    noun: 'status updates',
    validator: async () => (await loadSchemas()).validateStatusUpdate,
    key: (r) => r.debtorCompanyId + SEP + r.accountId,
    accountId: (r) => r.accountId,
    send: (api, records, requestOpts) => api.updateStatus(records, requestOpts),
  };
}
