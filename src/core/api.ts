// The service calls the streams are built on. LenderClient (client.ts) implements this; the
// export and account streams depend only on this interface, so each can be tested on its own.
import type { AccountsAccepted, Catalog, DatasetRef, ExportPageBody, PageQuery } from './types.ts';
import type { LenderError } from './errors.ts';

/** How failed requests are retried: attempts, jittered backoff bounds and a total time budget. See {@link DEFAULT_RETRY_POLICY}. */
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

/** Per-call options of the client's calls: abort signal, retry policy and timeout overrides, and retry/renewal callbacks. */
export interface RequestOptions {
  signal?: AbortSignal;
  retry?: Partial<RetryPolicy>;
  /** Time allowed for each attempt (headers and body); default the client's (30 s). */
  timeoutMs?: number;
  /** Called before each retry of this call (not of a token renewal it waits for). */
  onRetry?: (event: RetryEvent) => void;
  /**
   * Called when this call waited for a token renewal, once it succeeded. A renewal is shared by
   * every call that needs it at the time, so each of them is told.
   */
  onRefresh?: (event: RefreshEvent) => void;
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

/** Given to the call's onRetry, and emitted as 'retry' by the client, before each retry is sent. */
export interface RetryEvent {
  /** The attempt that failed, 1-based. */
  attempt: number;
  delayMs: number;
  error: LenderError;
  method: string;
  /** Path of the request, without query string (cursors are not secrets, but are long). */
  path: string;
}

/** Given to onRefresh of the calls that waited for it, and emitted as 'refresh' by the client,
 * each time the access token is renewed. */
export interface RefreshEvent {
  reason: 'expired' | 'proactive' | 'relogin';
}

// No client-wide events here: retries and renewals are reported per call (onRetry, onRefresh),
// so two streams sharing a client each count only their own.
/**
 * The service calls the streams and writers need; {@link LenderClient} implements it, and so can a
 * test double or a client wrapped in your own middleware.
 */
export interface ServiceApi {
  readonly lenderPublicId: string;
  catalog(opts?: RequestOptions): Promise<Catalog>;
  /** One page of Endpoint 6. 404s map to UnknownSectionError/UnknownDatasetError/DatasetUnavailableError. */
  fetchPage(dataset: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody>;
  /** Endpoint 3. A 400 throws ValidationError with the per-account failures. */
  upsertAccounts(accounts: readonly object[], opts?: AccountsRequestOptions): Promise<AccountsAccepted>;
  /** Endpoint 4. A 400 throws ValidationError. */
  updateStatus(records: readonly object[], opts?: AccountsRequestOptions): Promise<AccountsAccepted>;
}
