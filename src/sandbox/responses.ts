// Error bodies in the shape each kind of route documents: account and auth
// routes answer `{ error }`, export routes `{ success: false, message, requestId }`.
import { rejected } from './accounts/envelopes.ts';
import type { RouteAuth, RouteResponse } from './contracts.ts';

export const SERVER_ERROR_MESSAGE = 'Something went wrong. Please try again later.';

export function json(status: number, body: unknown, headers?: Readonly<Record<string, string>>): RouteResponse {
  return headers === undefined ? { status, body } : { status, body, headers };
}

/** The error body of the export routes (the account and auth routes answer `{ error }`). */
export function exportError(
  status: number, message: string, requestId: string, headers?: Readonly<Record<string, string>>,
): RouteResponse {
  return json(status, { success: false, message, requestId }, headers);
}

export function unauthorized(auth: RouteAuth, requestId: string): RouteResponse {
  return auth === 'export'
    ? exportError(401, 'Access denied. Invalid token.', requestId)
    : json(401, { error: 'Unauthorized' });
}

/** A path lenderPublicId that is not the token's lender. Export routes document 403. The account
 * endpoints document no 403 (only 200/400/401/500), so they answer the documented 401: a client
 * that follows the documented contract treats it as "this token does not open that resource". */
export function lenderMismatch(auth: RouteAuth, requestId: string): RouteResponse {
  return auth === 'export' ? exportError(403, 'Lender ID mismatch', requestId) : json(401, { error: 'Unauthorized' });
}

const FAILURE_TEXT: Record<number, { error: string; message: string }> = {
  429: { error: 'Too many requests. Please try again later.', message: 'Too many requests' },
  500: { error: SERVER_ERROR_MESSAGE, message: 'Internal server error' },
  503: { error: 'Service unavailable. Please try again later.', message: 'Service unavailable' },
  504: { error: 'Gateway timeout. Please try again later.', message: 'Gateway timeout' },
};

/** 429/500/503/504 for a route kind; the service documents the 500 text of account and auth routes. */
export function failure(
  auth: RouteAuth, status: 429 | 500 | 503 | 504, requestId: string, headers?: Readonly<Record<string, string>>,
): RouteResponse {
  const text = FAILURE_TEXT[status]!;
  return auth === 'export' ? exportError(status, text.message, requestId, headers) : json(status, { error: text.error }, headers);
}

/** Seconds a client is asked to wait (Retry-After) when the sandbox is at its connection or buffer
 * limit, and by an injected 429. */
export const RETRY_AFTER_SECONDS = 1;

/** The documented 503 of the route kind, with Retry-After: the sandbox is at one of its limits. */
export function busy(auth: RouteAuth, requestId: string): RouteResponse {
  return failure(auth, 503, requestId, { 'retry-after': String(RETRY_AFTER_SECONDS) });
}

export function tooLarge(auth: RouteAuth, limit: number, requestId: string): RouteResponse {
  const message = `Request body is larger than the limit of ${limit} bytes.`;
  return auth === 'export' ? exportError(413, message, requestId) : json(413, { error: message });
}

/** Non-JSON body on an account route: the documented 400 of the account endpoints
 * (`message` null, body '', one entry per failed account), with the reason in an entry
 * under accountId '' because no account could be read (as for a body without `accounts`).
 * Admin routes answer `{ error }`. A body that is not UTF-8, or (strict) not sent as
 * `Content-Type: application/json`, is answered the same way, with its own reason. */
export function invalidJson(auth: RouteAuth, reason: 'syntax' | 'encoding' | 'content-type' = 'syntax'): RouteResponse {
  const message = INVALID_BODY_MESSAGES[reason];
  return auth === 'accounts'
    ? rejected([{ accountId: '', errors: [message] }])
    : json(400, { error: message });
}

const INVALID_BODY_MESSAGES = {
  syntax: 'Request body must be valid JSON.',
  encoding: 'Request body must be UTF-8 encoded.',
  'content-type': 'Request body must be sent as Content-Type: application/json.',
} as const;

/** Matches the export paths (`…/lenders/:id/exports` and below), which answer in their own shape. */
const EXPORT_PATH = /^\/admin\/v3\/lenders\/[^/]+\/exports(\/|$)/;

/** No route at the path. Under the export paths it is one of the documented "other failures on
 * export endpoints", so it takes their `{ success: false, message, requestId }` shape. */
export function notFound(method: string, path: string, requestId: string): RouteResponse {
  const message = `No endpoint matches ${method} ${path}.`;
  return EXPORT_PATH.test(path) ? exportError(404, message, requestId) : json(404, { error: message });
}

/** A known path with another method. On export paths it is one of the documented "other failures on
 * export endpoints", so it takes their `{ success: false, message, requestId }` shape. */
export function methodNotAllowed(
  method: string, path: string, allowed: readonly string[], auth: RouteAuth, requestId: string,
): RouteResponse {
  const message = `Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}.`;
  const headers = { allow: allowed.join(', ') };
  return auth === 'export'
    ? exportError(405, message, requestId, headers)
    : json(405, { error: message }, headers);
}

export function badRequestTarget(): RouteResponse {
  return json(400, { error: 'The request target is not a valid path.' });
}
