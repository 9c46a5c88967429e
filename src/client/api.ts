// The service calls the streams are built on. LenderClient (client.ts) implements this; the
// export and account streams depend only on this interface, so each can be tested on its own.
import type { AccountsAccepted, Catalog, DatasetRef, ExportPageBody, PageQuery } from './types.ts';
import type { LenderError } from './errors.ts';

export interface RetryPolicy {
  /** Total attempts including the first. Default 5. */
  attempts: number;
  /** First backoff ceiling; full jitter picks a delay in [0, min(maxDelayMs, base * 2^n)]. Default 200. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up once this much time has passed since the first attempt. Default 60000. */
  maxElapsedMs: number;
  /** Whether a 504 is retried as it is. The export streams turn this off while a window can
   * still be split, because a 504 there means "ask for less", not "ask again". Default true. */
  retryGatewayTimeout: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  retry?: Partial<RetryPolicy>;
  /** Time allowed for each attempt (headers and body); default the client's (30 s). */
  timeoutMs?: number;
}

/** Options of the two accounts endpoints (upsertAccounts, updateStatus). */
export interface AccountsRequestOptions extends RequestOptions {
  /**
   * The JSON text of each record, in the order of `records` (what `JSON.stringify(record)`
   * gives). When present the client sends these texts verbatim instead of serialising the records
   * again: a writer that already serialised each record to size its batches pays for it once.
   * The caller vouches that they match `records`; a count that differs is a usage error.
   */
  recordsJson?: readonly string[];
}

/** Emitted as 'retry' before each retry is sent. */
export interface RetryEvent {
  /** The attempt that failed, 1-based. */
  attempt: number;
  delayMs: number;
  error: LenderError;
  method: string;
  /** Path of the request, without query string (cursors are not secrets, but are long). */
  path: string;
}

/** Emitted as 'refresh' each time the access token is renewed. */
export interface RefreshEvent {
  reason: 'expired' | 'proactive' | 'relogin';
}

export interface ServiceApi {
  readonly lenderPublicId: string;
  catalog(opts?: RequestOptions): Promise<Catalog>;
  /** One page of Endpoint 6. 404s map to UnknownSectionError/UnknownDatasetError/DatasetUnavailableError. */
  fetchPage(dataset: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody>;
  /** Endpoint 3. A 400 throws ValidationError with the per-account failures. */
  upsertAccounts(accounts: readonly object[], opts?: AccountsRequestOptions): Promise<AccountsAccepted>;
  /** Endpoint 4. A 400 throws ValidationError. */
  updateStatus(records: readonly object[], opts?: AccountsRequestOptions): Promise<AccountsAccepted>;
  on(event: 'retry', listener: (event: RetryEvent) => void): this;
  on(event: 'refresh', listener: (event: RefreshEvent) => void): this;
  off(event: 'retry' | 'refresh', listener: (...args: never[]) => void): this;
}
