// Layer one of tenant isolation: the tenant comes from the access token, never from the path.
// The path's lenderPublicId must then name that same tenant.
import type { IncomingHttpHeaders } from 'node:http';
import type { Route, RouteResponse, SandboxContext, Tenant } from './contracts.ts';
import { lenderMismatch, unauthorized } from './responses.ts';
import type { TokenIssuer } from './tokens.ts';

export type AuthOutcome = { readonly tenant: Tenant } | { readonly response: RouteResponse };

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headers.authorization;
  return value === undefined ? undefined : BEARER.exec(value)?.[1];
}

/** For routes with auth 'accounts' or 'export'. A refresh token is refused like a forged one. */
export function authorize(
  route: Route,
  params: Readonly<Record<string, string>>,
  headers: IncomingHttpHeaders,
  requestId: string,
  tokens: TokenIssuer,
  ctx: SandboxContext,
): AuthOutcome {
  const deny = (response: RouteResponse): AuthOutcome => {
    ctx.stats.unauthorized = (ctx.stats.unauthorized ?? 0) + 1;
    return { response };
  };
  const token = bearerToken(headers);
  if (token === undefined) return deny(unauthorized(route.auth, requestId));
  const verified = tokens.verify(token, 'access');
  if (!verified.ok) return deny(unauthorized(route.auth, requestId));
  const tenant = ctx.tenantByPublicId(verified.claims.lenderId);
  if (tenant === undefined) return deny(unauthorized(route.auth, requestId));
  const pathLender = params.lenderPublicId;
  if (pathLender !== undefined && pathLender !== tenant.lenderPublicId) return deny(lenderMismatch(route.auth, requestId));
  return { tenant };
}
