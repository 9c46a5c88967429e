// The account writer: RecordWriter on Endpoint 3 with the Account schema.
import type { ServiceApi } from '../core/api.ts';
import { checkOptionNames } from '../core/option-names.ts';
import { parseBoolean } from '../core/options.ts';
import { accountKind } from './record-kinds.ts';
import type { Account } from './schema.ts';
import { RECORD_WRITER_OPTION_NAMES, RecordWriter, type RecordWriterOptions } from './writer.ts';

/** Options of {@link createAccountWriter}: the writer options, and `strict` validation. */
export interface AccountWriterOptions extends RecordWriterOptions {
  /** Also require the machine-readable schema's fields (birthDate, dateDue, phones, loanType). */
  strict?: boolean;
}

/**
 * An object-mode Writable that validates account records, sends them to the service in batches and
 * accounts for every one (`summary`, `reject` events); made by {@link createAccountWriter} or `client.accountWriter()`.
 */
export class AccountWriter extends RecordWriter<Account> {
  constructor(api: ServiceApi, opts: AccountWriterOptions = {}) {
    checkOptionNames(opts, { ...RECORD_WRITER_OPTION_NAMES, strict: true }, 'the account writer');
    super(api, accountKind({ strict: parseBoolean(opts.strict, 'strict', false) }), opts);
  }
}

/**
 * Pushes account records to the service: a Writable to pipe records into, which validates, batches
 * and retries them and ends with every record accepted or rejected with a reason.
 *
 * @example
 * ```ts
 * const writer = createAccountWriter(client, { batchSize: 500, rejects: 'rejects.ndjson' });
 * writer.on('reject', (r) => console.error(r.index, r.reason, r.errors));
 * await pipeline(readNdjson(createReadStream('accounts.ndjson')), writer);
 * console.log(writer.summary);   // { received, accepted, rejected, … }
 * ```
 */
export function createAccountWriter(api: ServiceApi, opts: AccountWriterOptions = {}): AccountWriter {
  return new AccountWriter(api, opts);
}
