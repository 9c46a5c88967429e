// The account writer: RecordWriter on Endpoint 3 with the Account schema.
import type { ServiceApi } from '../client/api.ts';
import { accountKind } from './record-kinds.ts';
import type { Account } from './schema.ts';
import { RecordWriter, type RecordWriterOptions } from './writer.ts';

export interface AccountWriterOptions extends RecordWriterOptions {
  /** Also require the machine-readable schema's fields (birthDate, dateDue, phones, loanType). */
  strict?: boolean;
}

export class AccountWriter extends RecordWriter<Account> {
  constructor(api: ServiceApi, opts: AccountWriterOptions = {}) {
    super(api, accountKind({ strict: opts.strict === true }), opts);
  }
}

export function createAccountWriter(api: ServiceApi, opts: AccountWriterOptions = {}): AccountWriter {
  return new AccountWriter(api, opts);
}
