// From an HTTP response to a value or a typed error (the service's documented error shapes). Pure functions of
// status, headers and text, so every documented case is testable without a server.
import {
  AuthenticationError, DatasetUnavailableError, GatewayTimeoutError, LenderError, LenderMismatchError,
  ProtocolError, RateLimitError, ServerError, UnknownDatasetError, UnknownSectionError, ValidationError,
  type AccountFailure, type LenderErrorDetails,
} from './errors.ts';
import { redactText } from './redact.ts';
import { parseRetryAfter } from './retry.ts';
import type { TransportResponse } from './transport.ts';

/** Which documented endpoint answered: decides how error bodies are read. */
export type Endpoint = 'login' | 'refresh' | 'accounts' | 'export';

export interface ResponseContext {
  endpoint: Endpoint;
  method: string;
  /** Path without query string. */
  path: string;
  lender?: string;
  section?: string;
  dataset?: string;
  /** Whether the request carried a cursor: a 500 then most likely means a malformed one. */
  hadCursor?: boolean;
}

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

// Bearer tokens, JWTs and other long opaque strings are masked so an excerpt can never carry a
// token, even one the client does not know (a token of another session echoed by a gateway).
const OPAQUE = /[A-Za-z0-9+/_=-]{32,}/g;

/** A short, single-line, secret-free excerpt of a body for an error message. */
export function excerpt(text: string, max = 80): string {
  const flat = redactText(text).replace(OPAQUE, '[…]').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function where(ctx: ResponseContext): string {
  return `${ctx.method} ${ctx.path}`;
}

/** A ProtocolError for a body that is not what the service documents. */
export function protocolError(res: TransportResponse, ctx: ResponseContext, problem: string): ProtocolError {
  // Login and refresh bodies hold tokens by design: never quote them, even masked.
  const quote = ctx.endpoint === 'login' || ctx.endpoint === 'refresh' || res.text.trim() === ''
    ? ''
    : ` (body starts: "${excerpt(res.text)}")`;
  return new ProtocolError(`The service answered ${where(ctx)} with status ${res.status} but ${problem}${quote}.`, { status: res.status });
}

function header(res: TransportResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Maps a non-2xx response to its typed error. */
export function errorFromResponse(res: TransportResponse, ctx: ResponseContext): LenderError {
  const { status } = res;
  const parsed = tryParseJson(res.text);
  const body = parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
  const serverMessage = str(body?.error) ?? str(body?.message) ?? str(body?.detail) ?? str(body?.title);
  const requestId = str(body?.requestId) ?? header(res, 'x-request-id');
  const details: LenderErrorDetails = { status };
  if (serverMessage !== undefined) details.serverMessage = serverMessage;
  if (requestId !== undefined) details.requestId = requestId;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  const ref = requestId !== undefined ? ` (request ${requestId})` : '';

  // Gateways answer 5xx with HTML or nothing at all (the 504 body is not documented), so a
  // 5xx is typed by its status alone; the body only adds the server's message when it has one.
  if (status === 504) {
    return new GatewayTimeoutError(
      `The service's gateway timed out on ${where(ctx)} (504)${ref}; for a large dataset, read it in smaller since/until windows.`,
      details,
    );
  }
  if (status >= 500) {
    const said = serverMessage !== undefined ? `: ${serverMessage}` : '';
    // The service documents a malformed cursor as surfacing as a 500, and only as that.
    const hint = ctx.hadCursor && status === 500 ? ' If it persists, check that the cursor is passed back exactly as received.' : ' Try again later.';
    return new ServerError(`The service failed on ${where(ctx)} with status ${status}${said}${ref}.${hint}`, details);
  }
  // Typed by its status alone too: a gateway's or proxy's answer, whatever its body.
  if (status === 429) {
    const said = serverMessage !== undefined ? `: ${serverMessage}` : '';
    return new RateLimitError(`The service asked to slow down on ${where(ctx)} (429${said})${ref}; nothing in that request was processed.`, details);
  }
  if (body === undefined) {
    return protocolError(res, ctx, parsed.ok ? 'the body is not a JSON object' : 'the body is not JSON');
  }

  switch (status) {
    case 400:
      return badRequest(body, ctx, details);
    case 401:
      if (ctx.endpoint === 'login') {
        return new AuthenticationError(
          `Login failed for lender '${ctx.lender ?? '?'}': the service rejected the email or password (or the lender name).`,
          details,
        );
      }
      if (ctx.endpoint === 'refresh') {
        return new AuthenticationError('The service refused the refresh token, so the session cannot be renewed without logging in again.', details);
      }
      return new AuthenticationError(`The service rejected the access token on ${where(ctx)} (401); log in again.`, details);
    case 403:
      if (serverMessage === 'Lender ID mismatch') {
        return new LenderMismatchError(
          'The lenderPublicId in the URL is not the lender of the access token (403 Lender ID mismatch); use the lenderPublicId returned by login.',
          details,
        );
      }
      return new LenderError(`The service refused ${where(ctx)} (403${serverMessage ? `: ${serverMessage}` : ''})${ref}.`, details);
    case 404: {
      if (serverMessage === 'Unknown section') {
        return new UnknownSectionError(`Section ${ctx.section ?? '?'} does not exist; sections are S1 to S5 (see 'lender catalog').`, details);
      }
      if (serverMessage === 'Unknown dataset') {
        return new UnknownDatasetError(
          `Dataset ${ctx.dataset ?? '?'} does not exist in section ${ctx.section ?? '?'}; check the code with 'lender catalog'.`,
          details,
        );
      }
      const unavailable = serverMessage?.match(/^Dataset (\S+) is listed in the catalog but not available/);
      if (unavailable) {
        const code = unavailable[1]!;
        return new DatasetUnavailableError(
          code,
          `Dataset ${code} is listed in the catalog but not available for export yet; 'lender catalog' shows which datasets are.`,
          details,
        );
      }
      return new LenderError(`The service has no ${where(ctx)} (404${serverMessage ? `: ${serverMessage}` : ''}); check the auth URL.`, details);
    }
    default:
      return new LenderError(`The service answered ${where(ctx)} with status ${status}${serverMessage ? `: ${serverMessage}` : ''}${ref}.`, details);
  }
}

function badRequest(body: Json, ctx: ResponseContext, details: LenderErrorDetails): LenderError {
  if (ctx.endpoint === 'refresh') {
    // Problem-details "Failed to read request": the refresh token was missing or unreadable.
    return new AuthenticationError('The service could not read the refresh token (400), so the session cannot be renewed without logging in again.', details);
  }
  const failures = readFailures(body.errors);
  if (failures.length > 0) {
    const first = failures[0]!;
    const more = failures.length > 1 ? ` and ${failures.length - 1} more` : '';
    return new ValidationError(
      `The service rejected the whole request because ${failures.length} account(s) failed validation (account ${first.accountId}: ${first.errors.join('; ')}${more}); nothing in it was processed.`,
      failures,
      details,
    );
  }
  const said = details.serverMessage !== undefined ? `: ${details.serverMessage}` : '';
  return new ValidationError(`The service rejected ${where(ctx)} as invalid (400${said}); nothing in it was processed.`, [], details);
}

function readFailures(value: unknown): AccountFailure[] {
  if (!Array.isArray(value)) return [];
  const out: AccountFailure[] = [];
  for (const entry of value) {
    if (!isObject(entry)) continue;
    const errors = Array.isArray(entry.errors) ? entry.errors.filter((e): e is string => typeof e === 'string') : [];
    const accountId = entry.accountId === undefined || entry.accountId === null ? '' : String(entry.accountId);
    out.push({ accountId, errors });
  }
  return out;
}

/** The parsed JSON object of a 2xx response, or a ProtocolError. */
export function successObject(res: TransportResponse, ctx: ResponseContext): Json {
  const parsed = tryParseJson(res.text);
  if (!parsed.ok) return fail(protocolError(res, ctx, res.text.trim() === '' ? 'an empty body' : 'a body that is not JSON (or was cut short)'));
  if (!isObject(parsed.value)) return fail(protocolError(res, ctx, 'a body that is not a JSON object'));
  return parsed.value;
}

/** `body` of a `{code, message, body, errors}` envelope, checked to be an object. */
export function envelopeBody(res: TransportResponse, ctx: ResponseContext): Json {
  const envelope = successObject(res, ctx);
  if (!isObject(envelope.body)) return fail(protocolError(res, ctx, 'the response envelope has no "body" object'));
  return envelope.body;
}

function fail(error: Error): never {
  throw error;
}
