// Token state of one logged-in lender: the access token, the refresh token and (optionally) the
// password to log in again. Renewal is single-flight: however many calls find the token expired
// at once, one refresh request goes out and all of them wait for it. Secrets live in private
// fields and are left out of inspect and JSON output.
import { inspect, type InspectOptionsStylized } from 'node:util';
import type { RefreshEvent, RetryEvent, RetryPolicy } from '../core/api.ts';
import { raceAbort } from '../core/abort.ts';
import { AuthenticationError, LenderError, SessionExpiredError } from '../core/errors.ts';
import { redactError, redactText } from '../core/redact.ts';
import type { Transport } from '../core/transport.ts';
import type { LoginSession } from '../core/types.ts';
import { requestLogin, requestRefresh } from './endpoints.ts';
import { refreshDueAt } from './jwt.ts';

const RETRY_PROACTIVE_AFTER_MS = 5_000;
/** Tokens replaced by a renewal still count as secrets for a while: a request sent with one
 * may fail after the renewal, and its error may quote it. */
const RETIRED_KEPT = 4;

/** A completed renewal: the new token, and the event each waiting call is told of. */
interface Renewal {
  token: string;
  event: RefreshEvent;
}

/**
 * Waits for a shared renewal under the caller's own signal; tells the caller only if it got it.
 * Every caller is handed the same frozen event, so a stream or writer with several calls waiting
 * on one renewal can tell it is one renewal.
 */
async function awaitRenewal(pending: Promise<Renewal>, signal: AbortSignal | undefined, onRefresh: ((event: RefreshEvent) => void) | undefined): Promise<string> {
  const { token, event } = await raceAbort(pending, signal);
  onRefresh?.(event);
  return token;
}

export interface TokenSessionDeps {
  transport: Transport;
  policy: () => RetryPolicy;
  onRefresh: (event: RefreshEvent) => void;
  onRetry: (event: RetryEvent) => void;
  now?: () => number;
}

export interface TokenSessionInit {
  authUrl: string;
  lender: string;
  email?: string | undefined;
  /** Kept only to log in again when the refresh token is refused. */
  password?: string | undefined;
  tokens: LoginSession;
  /** Renew shortly before the access token's exp. Default true. */
  proactiveRefresh?: boolean;
}

export class TokenSession {
  readonly authUrl: string;
  readonly lender: string;
  readonly email: string | undefined;
  #lenderPublicId: string;
  #token: string;
  #refreshToken: string;
  readonly #password: string | undefined;
  readonly #proactive: boolean;
  readonly #deps: TokenSessionDeps;
  #refreshAt: number | undefined;
  #inflight: Promise<Renewal> | undefined;
  #retired: string[] = [];

  constructor(init: TokenSessionInit, deps: TokenSessionDeps) {
    this.authUrl = init.authUrl;
    this.lender = init.lender;
    this.email = init.email;
    this.#password = init.password;
    this.#proactive = init.proactiveRefresh ?? true;
    this.#deps = deps;
    this.#lenderPublicId = init.tokens.lenderPublicId;
    this.#token = init.tokens.token;
    this.#refreshToken = init.tokens.refreshToken;
    this.#refreshAt = refreshDueAt(this.#token, this.#now());
  }

  get lenderPublicId(): string {
    return this.#lenderPublicId;
  }

  get canRelogin(): boolean {
    return this.#password !== undefined && this.email !== undefined;
  }

  /**
   * The access token to send now, renewed first when it is about to expire. `onRefresh` is told
   * of a renewal this call waited for, whoever started it.
   */
  async accessToken(signal?: AbortSignal, onRefresh?: (event: RefreshEvent) => void): Promise<string> {
    const due = this.#proactive && this.#refreshAt !== undefined && this.#now() >= this.#refreshAt;
    const pending = this.#inflight ?? (due ? this.#renew('proactive') : undefined);
    if (pending === undefined) return this.#token;
    try {
      return await awaitRenewal(pending, signal, onRefresh);
    } catch (error) {
      // A renewal that failed for a transient reason does not doom the call: the current token
      // may still be valid, and if it is not, the 401 path renews again.
      if (error instanceof LenderError && error.retryable) return this.#token;
      throw error;
    }
  }

  /**
   * Called after a 401 on a request sent with `rejected`. When another call already renewed the
   * token, the new one is returned without a second refresh.
   */
  async renewAfterRejection(rejected: string, signal?: AbortSignal, onRefresh?: (event: RefreshEvent) => void): Promise<string> {
    if (this.#inflight !== undefined) return awaitRenewal(this.#inflight, signal, onRefresh);
    if (rejected !== this.#token) return this.#token;
    return awaitRenewal(this.#renew('expired'), signal, onRefresh);
  }

  /** `error` (and its causes) with this session's password and tokens cut out, in place. */
  redact<T>(error: T): T {
    return redactError(error, this.#secrets());
  }

  /** `text` with this session's password and tokens, and any bearer token or JWT, cut out. */
  redactText(text: string): string {
    return redactText(text, this.#secrets());
  }

  #secrets(): string[] {
    return [this.#token, this.#refreshToken, this.#password, ...this.#retired].filter((s): s is string => s !== undefined);
  }

  #retire(secret: string): void {
    this.#retired = [secret, ...this.#retired.filter((s) => s !== secret)].slice(0, RETIRED_KEPT);
  }

  /** Renews now (e.g. an explicit client.refresh()), joining a renewal already under way. */
  async renew(signal?: AbortSignal): Promise<void> {
    await awaitRenewal(this.#inflight ?? this.#renew('proactive'), signal, undefined);
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }

  // The shared renewal runs without any one caller's signal: if the first caller gives up, the
  // others still need the new token. Each caller waits through awaitRenewal with its own signal.
  #renew(reason: 'expired' | 'proactive'): Promise<Renewal> {
    const run = this.#refreshOrRelogin(reason)
      .catch((error: unknown) => {
        // Back off proactive attempts so a flaky refresh endpoint is not hit on every call.
        if (this.#refreshAt !== undefined) this.#refreshAt = this.#now() + RETRY_PROACTIVE_AFTER_MS;
        throw error;
      })
      .finally(() => {
        this.#inflight = undefined;
      });
    this.#inflight = run;
    return run;
  }

  async #refreshOrRelogin(reason: 'expired' | 'proactive'): Promise<Renewal> {
    const { transport, policy, onRetry, onRefresh } = this.#deps;
    try {
      const token = await requestRefresh(transport, this.authUrl, this.lender, this.#refreshToken, { policy: policy(), onRetry });
      this.#setToken(token);
      const event: RefreshEvent = Object.freeze({ reason });
      onRefresh(event);
      return { token, event };
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      if (!this.canRelogin) {
        throw new SessionExpiredError(
          'The session has expired and the refresh token was refused; log in again (this client holds no password to do it itself).',
          { status: error.status, serverMessage: error.serverMessage, cause: error },
        );
      }
    }
    let tokens: LoginSession;
    try {
      tokens = await requestLogin(
        transport,
        { authUrl: this.authUrl, lender: this.lender, email: this.email!, password: this.#password! },
        { policy: policy(), onRetry },
      );
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      throw new SessionExpiredError(
        'The session has expired and logging in again was refused; check the email and password of this lender.',
        { status: error.status, serverMessage: error.serverMessage, cause: error },
      );
    }
    if (tokens.refreshToken !== this.#refreshToken) this.#retire(this.#refreshToken);
    this.#refreshToken = tokens.refreshToken;
    this.#lenderPublicId = tokens.lenderPublicId;
    this.#setToken(tokens.token);
    const event: RefreshEvent = Object.freeze({ reason: 'relogin' as const });
    onRefresh(event);
    return { token: tokens.token, event };
  }

  #setToken(token: string): void {
    if (token !== this.#token) this.#retire(this.#token);
    this.#token = token;
    this.#refreshAt = refreshDueAt(token, this.#now());
  }

  toJSON(): object {
    return { lender: this.lender, authUrl: this.authUrl, lenderPublicId: this.#lenderPublicId };
  }

  [inspect.custom](_depth: number, options: InspectOptionsStylized, inspectFn: typeof inspect): string {
    return `TokenSession ${inspectFn(this.toJSON(), options)}`;
  }
}
