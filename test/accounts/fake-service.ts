// A ServiceApi for the writer mechanics: records every request, and answers through a handler the
// test sets (succeed, throw a ValidationError/ServerError, or wait on a gate). With `clientRetry`
// set, each call is retried as LenderClient retries it (the client's own retry loop, under that
// policy and the call's `retry`, each retry told to the call's onRetry), so the retry settings the
// writer passes take effect. The HTTPS
// tests in writer-sandbox.test.ts use the real client and sandbox.
import type { RequestOptions, RetryPolicy, ServiceApi } from '../../src/core/api.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { resolvePolicy, withRetry } from '../../src/core/retry.ts';
import type { AccountsAccepted, Catalog, ExportPageBody } from '../../src/core/types.ts';

export type Endpoint = 'accounts' | 'update-status';
export type Handler = (records: readonly Record<string, unknown>[], endpoint: Endpoint, opts: RequestOptions) => void | Promise<void>;

export const ACCEPTED: AccountsAccepted = { code: 200, message: 'success', body: 'Processing started successfully', errors: [] };

export class FakeService implements ServiceApi {
  readonly lenderPublicId = 'fake';
  /** Every attempt, retries included. */
  readonly calls: { endpoint: Endpoint; records: Record<string, unknown>[]; retry: Partial<RetryPolicy> | undefined }[] = [];
  /** Records of the requests that succeeded, in the order the responses came back: what a service
   * that applies each request on arrival of its last byte would have applied. */
  readonly processed: Record<string, unknown>[] = [];
  handler: Handler = () => {};
  /** The client-level retry policy; undefined: each call is attempted once, as before. */
  clientRetry: Partial<RetryPolicy> | undefined;
  inFlight = 0;
  maxInFlight = 0;

  async catalog(): Promise<Catalog> {
    throw new Error('not in the fake');
  }
  async fetchPage(): Promise<ExportPageBody> {
    throw new Error('not in the fake');
  }

  upsertAccounts(records: readonly object[], opts: RequestOptions = {}): Promise<AccountsAccepted> {
    return this.#call('accounts', records, opts);
  }
  updateStatus(records: readonly object[], opts: RequestOptions = {}): Promise<AccountsAccepted> {
    return this.#call('update-status', records, opts);
  }

  #call(endpoint: Endpoint, records: readonly object[], opts: RequestOptions): Promise<AccountsAccepted> {
    if (this.clientRetry === undefined) return this.#attempt(endpoint, records, opts);
    const path = `/admin/v3/lenders/fake/${endpoint === 'accounts' ? 'accounts' : 'accounts/update-status'}`;
    return withRetry(
      resolvePolicy(this.clientRetry, opts.retry),
      { method: 'POST', path, signal: opts.signal, onRetry: opts.onRetry },
      () => this.#attempt(endpoint, records, opts),
    );
  }

  async #attempt(endpoint: Endpoint, records: readonly object[], opts: RequestOptions): Promise<AccountsAccepted> {
    const copy = records.map((r) => ({ ...r }) as Record<string, unknown>);
    this.calls.push({ endpoint, records: copy, retry: opts.retry });
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.handler(copy, endpoint, opts);
      this.processed.push(...copy);
      return ACCEPTED;
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Every record sent, in send order, with the requests that a 400 refused left out. */
  sentRecords(): Record<string, unknown>[] {
    return this.calls.flatMap((c) => c.records);
  }
}

/** A 400 like the service's: one entry per accountId whose records fail `bad`. */
export function rejectWhere(bad: (record: Record<string, unknown>) => string | undefined): Handler {
  return (records) => {
    const failures = new Map<string, string[]>();
    for (const r of records) {
      const message = bad(r);
      if (message !== undefined) failures.set(String(r.accountId), [message]);
    }
    if (failures.size > 0) {
      throw new ValidationError('The service refused the request.', [...failures].map(([accountId, errors]) => ({ accountId, errors })), { status: 400 });
    }
  };
}

export interface Gate {
  readonly promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

let counter = 0;
/** A record both this library and the service accept, under either list of required fields. */
export function account(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    status: 1,
    debtorCompanyId: `C-${counter}`,
    firstName: 'Amal',
    lastName: 'Haddad',
    language: 'en',
    birthDate: '04/04/1984',
    phones: [{ number: '+971500000004' }],
    accountId: `A-${counter}`,
    subAccountId: 'S-1',
    dateDue: '01/06/2027',
    principal: '100',
    loanType: 3,
    ...overrides,
  };
}
