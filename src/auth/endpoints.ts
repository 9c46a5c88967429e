// The two authentication calls (login and token refresh), over a Transport. Both are
// safe to retry on 5xx and resets: a login or refresh that is sent twice only mints a token.
import type { RetryEvent, RetryPolicy } from '../core/api.ts';
import { errorFromResponse, protocolError, successObject, type ResponseContext } from '../core/responses.ts';
import { withRetry } from '../core/retry.ts';
import type { Transport, TransportResponse } from '../core/transport.ts';
import type { LoginSession } from '../core/types.ts';

export interface AuthCallOptions {
  policy: RetryPolicy;
  signal?: AbortSignal | undefined;
  onRetry?: (event: RetryEvent) => void;
}

export interface LoginCredentials {
  authUrl: string;
  lender: string;
  email: string;
  password: string;
}

function authPath(authUrl: string, lender: string, action: 'login' | 'refresh-token'): URL {
  return new URL(`${authUrl}/admin/auth/${encodeURIComponent(lender)}/${action}`);
}

/** POSTs `body` to an auth endpoint, retried per policy; `read` checks the 2xx JSON object. */
function postAuth<T>(
  transport: Transport, url: URL, ctx: ResponseContext, body: object, opts: AuthCallOptions,
  read: (body: Record<string, unknown>, res: TransportResponse) => T,
): Promise<T> {
  return withRetry(opts.policy, { method: 'POST', path: url.pathname, signal: opts.signal, onRetry: opts.onRetry }, async () => {
    const res = await transport.request({ method: 'POST', url: url.href, body, signal: opts.signal });
    if (res.status < 200 || res.status > 299) throw errorFromResponse(res, ctx);
    return read(successObject(res, ctx), res);
  });
}

export async function requestLogin(transport: Transport, creds: LoginCredentials, opts: AuthCallOptions): Promise<LoginSession> {
  const url = authPath(creds.authUrl, creds.lender, 'login');
  const ctx: ResponseContext = { endpoint: 'login', method: 'POST', path: url.pathname, lender: creds.lender };
  return postAuth(transport, url, ctx, { email: creds.email, password: creds.password }, opts, (body, res) => {
    const { token, refreshToken, lenderPublicId } = body;
    if (typeof token !== 'string' || token === '' || typeof refreshToken !== 'string' || refreshToken === '' ||
      typeof lenderPublicId !== 'string' || lenderPublicId === '') {
      throw protocolError(res, ctx, 'the body lacks one of token, refreshToken or lenderPublicId');
    }
    return { token, refreshToken, lenderPublicId };
  });
}

/** Exchanges the refresh token for a new access token. */
export async function requestRefresh(
  transport: Transport, authUrl: string, lender: string, refreshToken: string, opts: AuthCallOptions,
): Promise<string> {
  const url = authPath(authUrl, lender, 'refresh-token');
  const ctx: ResponseContext = { endpoint: 'refresh', method: 'POST', path: url.pathname, lender };
  return postAuth(transport, url, ctx, { refreshToken }, opts, (body, res) => {
    if (typeof body.token !== 'string' || body.token === '') throw protocolError(res, ctx, 'the body has no token');
    return body.token;
  });
}
