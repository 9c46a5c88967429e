// The login and token refresh endpoints, with every documented status, shape and message.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Route, RouteRequest, RouteResponse, SandboxContext, Tenant } from './contracts.ts';
import { json } from './responses.ts';
import type { TokenIssuer } from './tokens.ts';

export const LOGIN_PATTERN = '/admin/auth/:lender/login';
export const REFRESH_PATTERN = '/admin/auth/:lender/refresh-token';

const BAD_CREDENTIALS = { error: 'Incorrect username or password.' } as const;
const NOT_REFRESH = { code: 401, message: 'Token Type is not refresh', body: null } as const;
/** A refresh token that is forged, expired, or issued for another lender. The service documents
 * only the wrong-type message; this one keeps the same `{ code, message, body }` shape. */
const INVALID_REFRESH = { code: 401, message: 'Refresh token is invalid or expired', body: null } as const;

function problem(instance: string): RouteResponse {
  return json(400, {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: 'Failed to read request',
    instance,
    properties: null,
  });
}

function sameSecret(given: string, expected: string): boolean {
  // Hashing first gives equal lengths, which timingSafeEqual needs, without leaking the length.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

export function createAuthRoutes(ctx: SandboxContext, tokens: TokenIssuer): Route[] {
  const byLender = new Map<string, Tenant>(ctx.tenants.map((t) => [t.lender, t]));

  // Any reason a login fails (unknown lender, missing fields, wrong email or password) gives the
  // one documented 401, so the answer tells nothing about which part was wrong.
  const login = (req: RouteRequest): RouteResponse => {
    const tenant = byLender.get(req.params.lender ?? '');
    const email = field(req.body, 'email');
    const password = field(req.body, 'password');
    const emailOk = tenant !== undefined && email !== undefined && email.trim().toLowerCase() === tenant.email.toLowerCase();
    const passwordOk = sameSecret(password ?? '', tenant?.password ?? '\u0000unused');
    if (tenant === undefined || !emailOk || password === undefined || !passwordOk) {
      ctx.stats.loginFailures = (ctx.stats.loginFailures ?? 0) + 1;
      return json(401, BAD_CREDENTIALS);
    }
    return {
      ...json(200, {
        token: tokens.issue(tenant, 'access'),
        refreshToken: tokens.issue(tenant, 'refresh'),
        lenderPublicId: tenant.lenderPublicId,
      }),
      commit: () => void (ctx.stats.logins += 1),
    };
  };

  const refresh = (req: RouteRequest): RouteResponse => {
    const refreshToken = field(req.body, 'refreshToken');
    if (refreshToken === undefined || refreshToken === '') return problem(req.url.pathname);
    const verified = tokens.verify(refreshToken, 'refresh');
    const fail = (body: RouteResponse['body']): RouteResponse => {
      ctx.stats.refreshFailures = (ctx.stats.refreshFailures ?? 0) + 1;
      return json(401, body);
    };
    if (!verified.ok) return fail(verified.reason === 'wrong-type' ? NOT_REFRESH : INVALID_REFRESH);
    const tenant = ctx.tenantByPublicId(verified.claims.lenderId);
    if (tenant === undefined || tenant.lender !== req.params.lender) return fail(INVALID_REFRESH);
    return { ...json(200, { token: tokens.issue(tenant, 'access') }), commit: () => void (ctx.stats.refreshes += 1) };
  };

  return [
    { method: 'POST', pattern: LOGIN_PATTERN, auth: 'none', handler: login },
    { method: 'POST', pattern: REFRESH_PATTERN, auth: 'none', handler: refresh },
  ];
}

/** Refresh answers an unreadable body with its problem details (as the token refresh endpoint documents); login
 * keeps the default `{ error }` 400, the error shape of its documented responses. */
export function authInvalidBody(route: Route, url: URL): RouteResponse | undefined {
  return route.pattern === REFRESH_PATTERN ? problem(url.pathname) : undefined;
}
