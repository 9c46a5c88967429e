// LenderClient: the one client every stream, command, REPL helper and notebook goes through.
// Thin typed calls for each endpoint of the service on top of the transport, the token session
// (renewal) and the retry policy. Each call reports its own retries and the renewals it waited for
// (RequestOptions.onRetry/onRefresh); the client also emits every one as 'retry' and 'refresh'.
import { EventEmitter } from 'node:events';
import { inspect, type InspectOptionsStylized } from 'node:util';
import type { Dispatcher } from 'undici';
import { requestLogin } from '../auth/endpoints.ts';
import { TokenSession } from '../auth/token-session.ts';
import { createAccountWriter, type AccountWriter, type AccountWriterOptions } from '../accounts/account-writer.ts';
import { createFlagWriter, setFlags, type FlagWriter, type SetFlagsResult } from '../accounts/flags.ts';
import type { StatusUpdateInput } from '../accounts/schema.ts';
import type { RecordWriterOptions } from '../accounts/writer.ts';
import { isCodeShaped } from '../core/catalog.ts';
import { resolveDataset } from '../core/resolve-dataset.ts';
import { exportPages, exportRows, type ExportOptions, type ExportStream } from '../exports/export-stream.ts';
import { sync, type DatasetSyncSummary, type SyncOptions } from '../sinks/sync.ts';
import type { AccountsRequestOptions, RefreshEvent, RequestOptions, RetryEvent, RetryPolicy, ServiceApi } from '../core/api.ts';
import { baseUrlOf, resolveConfig, normalizeAuthUrl, type ConnectionOptions } from './config.ts';
import { AuthenticationError, LenderError } from '../core/errors.ts';
import { redactError } from '../core/redact.ts';
import { envelopeBody, errorFromResponse, isObject, protocolError, successObject, type ResponseContext } from '../core/responses.ts';
import { resolvePolicy, withRetry } from '../core/retry.ts';
import { RawJsonBody, Transport, inMemoryService, type TransportResponse } from '../core/transport.ts';
import type { AccountsAccepted, Catalog, DatasetRef, ExportPageBody, LoginSession, PageQuery } from '../core/types.ts';

export { version, userAgent } from '../core/version.ts';

/** Connection settings every way of creating a client takes: trusted CA, timeouts, retry policy, token renewal and pool size. */
export interface ClientOptions {
  /** Extra trusted CA certificate(s), PEM (the sandbox's, or a private CA). */
  ca?: string | Buffer | undefined;
  /** Time allowed for one request attempt, headers and body together. Default 30 s. */
  timeoutMs?: number;
  /** Defaults for every call; RequestOptions.retry overrides per call. */
  retry?: Partial<RetryPolicy>;
  /** Renew the access token shortly before its exp. Default true; off, only a 401 renews it. */
  proactiveRefresh?: boolean;
  /** Keep the password in memory to log in again when the refresh token is refused. Default true. */
  keepPassword?: boolean;
  /** Sockets per origin. Default 16. */
  connections?: number;
  /** Tests only (see TransportOptions); the key is not exported from the package. */
  [inMemoryService]?: Dispatcher;
}

/** What {@link LenderClient.login} needs: the service root, the lender, the user's email and password, and any client options. */
export interface LoginOptions extends ClientOptions {
  authUrl: string;
  lender: string;
  email: string;
  password: string;
  signal?: AbortSignal;
}

/** Continue a session obtained elsewhere (e.g. saved by a notebook) without logging in. */
export interface ResumeOptions extends ClientOptions {
  authUrl: string;
  lender: string;
  session: LoginSession;
  /** With both, the client can log in again when the refresh token is refused. */
  email?: string;
  password?: string;
}

/** Running totals of a client's traffic, as `client.stats` returns them. */
export interface ClientStats {
  /** HTTP requests sent, including retries, logins and refreshes. */
  requests: number;
  retries: number;
  /** Access-token renewals: refreshes and logins again. */
  refreshes: number;
}

interface ClientEvents {
  retry: [RetryEvent];
  refresh: [RefreshEvent];
}

/**
 * The client of the lender service: logs in, keeps its tokens fresh, and offers each
 * endpoint as a typed call plus the export streams, `sync` and the account and flag writers as methods.
 * One client serves any number of concurrent calls; `close()` it when done.
 */
export class LenderClient extends EventEmitter<ClientEvents> implements ServiceApi {
  readonly authUrl: string;
  readonly baseUrl: string;
  readonly lender: string;
  readonly #transport: Transport;
  readonly #tokenSession: TokenSession;
  readonly #retry: Partial<RetryPolicy> | undefined;
  #retries = 0;
  #refreshes = 0;
  #closed = false;

  private constructor(transport: Transport, init: ResumeOptions) {
    super();
    // login() and resume() have normalised it already (refusing http:// before any I/O).
    this.authUrl = init.authUrl;
    this.baseUrl = baseUrlOf(init.authUrl);
    this.lender = init.lender;
    this.#transport = transport;
    this.#retry = init.retry;
    const keepPassword = init.keepPassword ?? true;
    this.#tokenSession = new TokenSession(
      {
        authUrl: this.authUrl,
        lender: init.lender,
        email: init.email,
        password: keepPassword ? init.password : undefined,
        tokens: init.session,
        proactiveRefresh: init.proactiveRefresh ?? true,
      },
      {
        transport,
        policy: () => resolvePolicy(this.#retry),
        onRetry: (event) => this.#onRetry(event),
        onRefresh: (event) => {
          this.#refreshes += 1;
          this.emit('refresh', event);
        },
      },
    );
  }

  /**
   * Logs in and returns a client holding the session; the usual way to start.
   *
   * @example
   * ```ts
   * const client = await LenderClient.login({
   *   authUrl: 'https://auth.example.com', lender: 'acme', email: 'ops@acme.example', password,
   * });
   * try {
   *   console.log(await client.catalog());
   * } finally {
   *   await client.close();
   * }
   * ```
   */
  static async login(options: LoginOptions): Promise<LenderClient> {
    const authUrl = normalizeAuthUrl(options.authUrl);
    const transport = new Transport(transportOptions(options));
    const retries: RetryEvent[] = [];
    try {
      const tokens = await requestLogin(
        transport,
        { authUrl, lender: options.lender, email: options.email, password: options.password },
        { policy: resolvePolicy(options.retry), signal: options.signal, onRetry: (e) => retries.push(e) },
      );
      const client = new LenderClient(transport, { ...options, authUrl, session: tokens });
      client.#retries += retries.length;
      return client;
    } catch (error) {
      await transport.close();
      // A gateway may have echoed the login body: the password must not ride out on the error.
      throw redactError(error, [options.password]);
    }
  }

  /** Options, else the environment, else the credentials file (see config.ts); then login. */
  static async fromConfig(options: ConnectionOptions & ClientOptions & { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<LenderClient> {
    const config = await resolveConfig(options, options.env ?? process.env);
    return LenderClient.login({
      ...options,
      authUrl: config.authUrl,
      lender: config.lender,
      email: config.email,
      password: config.revealPassword(),
      ca: config.ca,
    });
  }

  /** LENDER_AUTH_URL, LENDER_SUBDOMAIN, LENDER_EMAIL, LENDER_PASSWORD, LENDER_CA_FILE (else the credentials file). */
  static async fromEnv(options: ClientOptions & { signal?: AbortSignal } = {}): Promise<LenderClient> {
    return LenderClient.fromConfig(options);
  }

  /** A client for tokens obtained elsewhere; no request is made until the first call. */
  static resume(options: ResumeOptions): LenderClient {
    const authUrl = normalizeAuthUrl(options.authUrl);
    return new LenderClient(new Transport(transportOptions(options)), { ...options, authUrl });
  }

  get lenderPublicId(): string {
    return this.#tokenSession.lenderPublicId;
  }

  get stats(): ClientStats {
    return { requests: this.#transport.sent, retries: this.#retries, refreshes: this.#refreshes };
  }

  /** Renews the access token now (the token refresh endpoint), or logs in again if the refresh token is refused. */
  async refresh(opts: Pick<RequestOptions, 'signal'> = {}): Promise<void> {
    this.#assertOpen();
    try {
      await this.#tokenSession.renew(opts.signal);
    } catch (error) {
      throw this.#tokenSession.redact(error);
    }
  }

  /**
   * `text` with this client's password, access and refresh tokens, and anything that looks like a
   * bearer token or JWT, replaced by "[redacted]": for logging text that may quote a server.
   * Errors from the client are already scrubbed this way.
   */
  redact(text: string): string {
    return this.#tokenSession.redactText(text);
  }

  /** The live catalog (Endpoint 5): availability comes from the service, not the static table. */
  async catalog(opts: RequestOptions = {}): Promise<Catalog> {
    const path = `/lenders/${this.#lenderSegment()}/exports/catalog`;
    const ctx: ResponseContext = { endpoint: 'export', method: 'GET', path: '' };
    return this.#call('GET', path, undefined, undefined, ctx, opts, (res) => {
      const body = envelopeBody(res, ctx);
      if (typeof body.schemaVersion !== 'string' || !Array.isArray(body.sections) ||
        !body.sections.every((s) => isObject(s) && typeof s.code === 'string' && Array.isArray(s.datasets))) {
        throw protocolError(res, ctx, 'the catalog body lacks schemaVersion or a sections list with datasets');
      }
      // Its codes name URLs, files, tables and state keys: each must look like one (S2, D07).
      const sections = body.sections as { code: unknown; datasets: unknown[] }[];
      const codes = sections.flatMap((s) => [s.code, ...s.datasets.map((d) => (isObject(d) ? d.code : d))]);
      const odd = codes.findIndex((code) => !isCodeShaped(code));
      if (odd !== -1) {
        const named = codes[odd] === undefined ? 'nothing' : JSON.stringify(codes[odd])?.slice(0, 60);
        throw protocolError(res, ctx, `the catalog names ${named} where a code such as S2 or D07 belongs`);
      }
      return body as unknown as Catalog;
    });
  }

  /** One page of Endpoint 6. A code alone is resolved through the static catalog ('D07' => S2/D07). */
  async fetchPage(dataset: DatasetRef, query: PageQuery = {}, opts: RequestOptions = {}): Promise<ExportPageBody> {
    const address = resolveDataset(dataset);
    const path = `/lenders/${this.#lenderSegment()}/exports/${encodeURIComponent(address.section)}/${encodeURIComponent(address.dataset)}`;
    const ctx: ResponseContext = {
      endpoint: 'export', method: 'GET', path: '', section: address.section, dataset: address.dataset,
      hadCursor: query.cursor !== undefined,
    };
    return this.#call('GET', path, pageQueryString(query), undefined, ctx, opts, (res) => {
      const body = envelopeBody(res, ctx);
      const pagination = body.pagination;
      if (!Array.isArray(body.rows) || !isObject(pagination) || !isObject(body.meta) ||
        !(typeof pagination.nextCursor === 'string' || pagination.nextCursor === null)) {
        throw protocolError(res, ctx, 'the page body lacks rows, pagination.nextCursor or meta');
      }
      return body as unknown as ExportPageBody;
    });
  }

  /** Endpoint 3: create, update or withdraw accounts. Upserts, so a retried request is harmless. */
  async upsertAccounts(accounts: readonly object[], opts: AccountsRequestOptions = {}): Promise<AccountsAccepted> {
    const path = `/lenders/${this.#lenderSegment()}/accounts`;
    return this.#accountsCall(path, accounts, opts);
  }

  /** Endpoint 4: set disputed (5) / do-not-contact (6) flags. */
  async updateStatus(records: readonly object[], opts: AccountsRequestOptions = {}): Promise<AccountsAccepted> {
    const path = `/lenders/${this.#lenderSegment()}/accounts/update-status`;
    return this.#accountsCall(path, records, opts);
  }

  // The streams live in src/exports and src/accounts and build on ServiceApi alone; these
  // methods are the entry points users reach for on the client.

  /** Pages of a dataset as an object-mode Readable, fetched only as fast as they are read. */
  exportPages(dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
    return exportPages(this, dataset, opts);
  }

  /** Rows of a dataset as an object-mode Readable (checkpointed per page like exportPages). */
  exportRows(dataset: DatasetRef, opts: ExportOptions = {}): ExportStream {
    return exportRows(this, dataset, opts);
  }

  /** Initial, then incremental loads of datasets (default: every available one) into NDJSON files. */
  sync(datasets: readonly DatasetRef[] | undefined, opts: SyncOptions): Promise<Record<string, DatasetSyncSummary>> {
    return sync(this, datasets, opts);
  }

  /** A Writable of account records: validates, batches, sends, retries and reports every reject. */
  accountWriter(opts: AccountWriterOptions = {}): AccountWriter {
    return createAccountWriter(this, opts);
  }

  /** A Writable of status updates (disputed / do-not-contact) with the account writer's guarantees. */
  flagWriter(opts: RecordWriterOptions = {}): FlagWriter {
    return createFlagWriter(this, opts);
  }

  /** Sets flags on a list of records; rejections are in the result, not thrown. */
  setFlags(
    records: Iterable<StatusUpdateInput | unknown> | AsyncIterable<StatusUpdateInput | unknown>,
    opts: RecordWriterOptions = {},
  ): Promise<SetFlagsResult> {
    return setFlags(this, records, opts);
  }

  /** Closes the connection pool. Calls after close fail with a clear error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#transport.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  toJSON(): object {
    return { lender: this.lender, authUrl: this.authUrl, lenderPublicId: this.lenderPublicId };
  }

  [inspect.custom](_depth: number, options: InspectOptionsStylized, inspectFn: typeof inspect): string {
    return `LenderClient ${inspectFn(this.toJSON(), options)}`;
  }

  async #accountsCall(path: string, accounts: readonly object[], opts: AccountsRequestOptions): Promise<AccountsAccepted> {
    const ctx: ResponseContext = { endpoint: 'accounts', method: 'POST', path: '' };
    const json = opts.recordsJson;
    if (json !== undefined && json.length !== accounts.length) {
      throw new RangeError(`recordsJson has ${json.length} entries for ${accounts.length} records; it must hold one JSON text per record.`);
    }
    // The same JSON as JSON.stringify({ accounts }) would give, built from the caller's texts.
    const body = json === undefined ? { accounts } : RawJsonBody.ofArray('accounts', json);
    return this.#call('POST', path, undefined, body, ctx, opts, (res) => successObject(res, ctx) as unknown as AccountsAccepted);
  }

  #lenderSegment(): string {
    return encodeURIComponent(this.lenderPublicId);
  }

  #assertOpen(): void {
    if (this.#closed) throw new LenderError('This client is closed; create a new one with LenderClient.login().');
  }

  #onRetry(event: RetryEvent): void {
    this.#retries += 1;
    this.#tokenSession.redact(event.error);
    this.emit('retry', event);
  }

  /**
   * Every authenticated call, its 2xx body read by `read`. Every error of the call, the body's
   * included, leaves through here and so is scrubbed of the token session's secrets.
   */
  async #call<T>(
    method: 'GET' | 'POST', path: string, query: string | undefined, body: unknown,
    ctx: ResponseContext, opts: RequestOptions, read: (res: TransportResponse) => T,
  ): Promise<T> {
    try {
      return read(await this.#send(method, path, query, body, ctx, opts));
    } catch (error) {
      throw this.#tokenSession.redact(error);
    }
  }

  /**
   * One authenticated call: retried per policy on transient failures; a 401 renews the token
   * (single-flight, shared with concurrent calls) and the call is sent once more.
   */
  async #send(
    method: 'GET' | 'POST', path: string, query: string | undefined, body: unknown,
    ctx: ResponseContext, opts: RequestOptions,
  ): Promise<TransportResponse> {
    this.#assertOpen();
    const url = `${this.baseUrl}${path}${query ? `?${query}` : ''}`;
    const pathname = new URL(url).pathname;
    ctx.path = pathname;
    const policy = resolvePolicy(this.#retry, opts.retry);
    // The token is asked for on every attempt, not once per call: backoffs can outlast a short
    // token lifetime, and a retry sent with the token the call started with would meet a 401.
    let sentWith = '';
    const send = () => withRetry(
      policy,
      {
        method, path: pathname, signal: opts.signal,
        onRetry: (e) => {
          this.#onRetry(e);
          opts.onRetry?.(e);
        },
      },
      async () => {
        sentWith = await this.#tokenSession.accessToken(opts.signal, opts.onRefresh);
        const res = await this.#transport.request({
          method, url, body, signal: opts.signal, timeoutMs: opts.timeoutMs,
          headers: { authorization: `Bearer ${sentWith}` },
        });
        if (res.status >= 200 && res.status <= 299) return res;
        throw errorFromResponse(res, ctx);
      },
    );
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof AuthenticationError) || error.status !== 401) throw error;
    }
    await this.#tokenSession.renewAfterRejection(sentWith, opts.signal, opts.onRefresh);
    return send();
  }
}

/** Endpoint 6's query string. The cursor is passed back exactly as received. */
export function pageQueryString(query: PageQuery): string {
  const params = new URLSearchParams();
  if (query.since !== undefined) params.set('since', query.since);
  if (query.until !== undefined) params.set('until', query.until);
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.sort !== undefined) params.set('sort', query.sort);
  if (query.includeTotal === true) params.set('includeTotal', 'true');
  return params.toString();
}

function transportOptions(options: ClientOptions): ConstructorParameters<typeof Transport>[0] {
  return {
    ca: options.ca,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
    ...(options[inMemoryService] !== undefined ? { [inMemoryService]: options[inMemoryService] } : {}),
  };
}
