// Error mapping from status + body alone, for every documented shape (docs/service-contract.md, errors).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AuthenticationError, DatasetUnavailableError, GatewayTimeoutError, LenderError, LenderMismatchError,
  ProtocolError, RateLimitError, ServerError, UnknownDatasetError, UnknownSectionError, ValidationError,
} from '../../src/core/errors.ts';
import { envelopeBody, errorFromResponse, excerpt, successObject, type ResponseContext } from '../../src/core/responses.ts';
import { resolveDataset } from '../../src/core/resolve-dataset.ts';

const exportCtx: ResponseContext = { endpoint: 'export', method: 'GET', path: '/admin/v3/lenders/x/exports/S2/D07', section: 'S2', dataset: 'D07' };
const accountsCtx: ResponseContext = { endpoint: 'accounts', method: 'POST', path: '/admin/v3/lenders/x/accounts' };

function res(status: number, body: unknown, headers: Record<string, string> = {}) {
  return { status, headers, text: typeof body === 'string' ? body : JSON.stringify(body) };
}

describe('error mapping', () => {
  it('400 on accounts → ValidationError with the per-account failures', () => {
    const error = errorFromResponse(res(400, {
      code: 400, message: null, body: '',
      errors: [{ accountId: 'A-1', errors: ['firstName is required'] }, { accountId: 'A-2', errors: ['principal must be a valid number'] }],
    }), accountsCtx);
    assert.ok(error instanceof ValidationError);
    assert.deepEqual(error.failures, [
      { accountId: 'A-1', errors: ['firstName is required'] }, { accountId: 'A-2', errors: ['principal must be a valid number'] },
    ]);
    assert.equal(error.status, 400);
    assert.match(error.message, /A-1: firstName is required/);
    assert.match(error.message, /nothing in it was processed/);
  });

  it('401 on login → AuthenticationError with the server message', () => {
    const error = errorFromResponse(res(401, { error: 'Incorrect username or password.' }), { endpoint: 'login', method: 'POST', path: '/l', lender: 'demo' });
    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.serverMessage, 'Incorrect username or password.');
    assert.match(error.message, /lender 'demo'/);
  });

  it('401 and 400 on refresh → AuthenticationError (the refresh token was refused)', () => {
    const ctx: ResponseContext = { endpoint: 'refresh', method: 'POST', path: '/r' };
    const e401 = errorFromResponse(res(401, { code: 401, message: 'Token Type is not refresh', body: null }), ctx);
    assert.ok(e401 instanceof AuthenticationError);
    assert.equal(e401.serverMessage, 'Token Type is not refresh');
    const e400 = errorFromResponse(res(400, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'Failed to read request', instance: '/r', properties: null }), ctx);
    assert.ok(e400 instanceof AuthenticationError);
    assert.equal(e400.serverMessage, 'Failed to read request');
  });

  it('401 on exports and accounts → AuthenticationError with status 401', () => {
    const e = errorFromResponse(res(401, { success: false, message: 'Access denied. Invalid token.', requestId: 'r-1' }), exportCtx);
    assert.ok(e instanceof AuthenticationError);
    assert.equal(e.status, 401);
    assert.equal(e.requestId, 'r-1');
    assert.ok(errorFromResponse(res(401, { error: 'Unauthorized' }), accountsCtx) instanceof AuthenticationError);
  });

  it('403 Lender ID mismatch → LenderMismatchError', () => {
    const e = errorFromResponse(res(403, { success: false, message: 'Lender ID mismatch', requestId: 'r-2' }), exportCtx);
    assert.ok(e instanceof LenderMismatchError);
    assert.equal(e.serverMessage, 'Lender ID mismatch');
    assert.equal(e.requestId, 'r-2');
  });

  it('404s → UnknownSection / UnknownDataset / DatasetUnavailable(code)', () => {
    const section = errorFromResponse(res(404, { success: false, message: 'Unknown section', requestId: 'a' }), { ...exportCtx, section: 'S9' });
    assert.ok(section instanceof UnknownSectionError);
    assert.match(section.message, /S9/);
    assert.ok(errorFromResponse(res(404, { success: false, message: 'Unknown dataset', requestId: 'b' }), exportCtx) instanceof UnknownDatasetError);
    const message = 'Dataset D04 is listed in the catalog but not available for export at this time.';
    const unavailable = errorFromResponse(res(404, { success: false, message, requestId: 'c' }), exportCtx);
    assert.ok(unavailable instanceof DatasetUnavailableError);
    assert.equal(unavailable.dataset, 'D04');
    assert.equal(unavailable.serverMessage, message);
  });

  it('500 → ServerError with message and requestId; a cursor request hints at the cursor', () => {
    const e = errorFromResponse(res(500, { success: false, message: 'Internal error', requestId: 'r-9' }), { ...exportCtx, hadCursor: true });
    assert.ok(e instanceof ServerError);
    assert.equal(e.serverMessage, 'Internal error');
    assert.equal(e.requestId, 'r-9');
    assert.match(e.message, /cursor/);
    const login = errorFromResponse(res(500, { error: 'Something went wrong. Please try again later.' }), accountsCtx);
    assert.equal(login.serverMessage, 'Something went wrong. Please try again later.');
    assert.ok(login.retryable);
  });

  it('502/503 → ServerError and 504 → GatewayTimeoutError whatever the body', () => {
    assert.ok(errorFromResponse(res(502, '<html>bad gateway</html>'), exportCtx) instanceof ServerError);
    const e503 = errorFromResponse(res(503, '', { 'retry-after': '7' }), { ...exportCtx, hadCursor: true });
    assert.ok(e503 instanceof ServerError);
    assert.equal(e503.retryAfterMs, 7000);
    assert.doesNotMatch(e503.message, /cursor/, 'only a 500 is what a malformed cursor gives');
    const e504 = errorFromResponse(res(504, '<html>gateway timeout</html>'), exportCtx);
    assert.ok(e504 instanceof GatewayTimeoutError);
    assert.match(e504.message, /smaller since\/until windows/);
  });

  it('429 → RateLimitError, retried after its Retry-After, whatever the body (a gateway\'s HTML too)', () => {
    const html = errorFromResponse(res(429, '<html>slow down</html>', { 'retry-after': '3' }), accountsCtx);
    assert.ok(html instanceof RateLimitError, String(html));
    assert.equal(html.retryable, true);
    assert.equal(html.retryAfterMs, 3000);
    assert.equal(html.status, 429);
    assert.match(html.message, /asked to slow down on POST \S+\/accounts \(429\); nothing in that request was processed/);
    const json = errorFromResponse(res(429, { success: false, message: 'Too many requests', requestId: 'r-9' }), exportCtx);
    assert.ok(json instanceof RateLimitError);
    assert.equal(json.retryAfterMs, undefined, 'no Retry-After: the jittered backoff applies');
    assert.match(json.message, /\(429: Too many requests\) \(request r-9\)/);
  });

  it('a 4xx that is not JSON → ProtocolError naming status and a short excerpt', () => {
    const e = errorFromResponse(res(404, '<!doctype html><html><body>Not Found</body></html>'), exportCtx);
    assert.ok(e instanceof ProtocolError);
    assert.match(e.message, /status 404/);
    assert.match(e.message, /<!doctype html>/);
  });

  it('any other status → a LenderError that is not retried', () => {
    const e = errorFromResponse(res(409, { message: 'Conflict' }), exportCtx);
    assert.equal(e.constructor, LenderError);
    assert.equal(e.retryable, false);
  });

  it('success bodies: not JSON, truncated, or without envelope body → ProtocolError', () => {
    assert.throws(() => successObject(res(200, '<html>hi</html>'), exportCtx), ProtocolError);
    assert.throws(() => successObject(res(200, '{"code":200,"body":{"schemaVer'), exportCtx), /not JSON \(or was cut short\)/);
    assert.throws(() => successObject(res(200, '[1,2]'), exportCtx), ProtocolError);
    assert.throws(() => envelopeBody(res(200, { code: 200, body: 'x' }), exportCtx), ProtocolError);
  });

  it('login bodies are never quoted in a ProtocolError (they hold tokens)', () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    assert.throws(() => successObject(res(200, `{"token":"${token}"`), { endpoint: 'login', method: 'POST', path: '/l' }), (e: Error) => {
      assert.doesNotMatch(e.message, /eyJ/);
      return e instanceof ProtocolError;
    });
  });

  it('excerpts mask tokens and long opaque strings', () => {
    const text = excerpt('{"a":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln","b":"' + 'Q'.repeat(40) + '"}');
    assert.doesNotMatch(text, /eyJ|QQQQ/);
  });
});

describe('dataset addressing', () => {
  it("resolves a code alone through the static catalog ('D07' ⇒ S2/D07)", () => {
    assert.deepEqual(resolveDataset('D07'), { section: 'S2', dataset: 'D07' });
    assert.deepEqual(resolveDataset('d23'), { section: 'S4', dataset: 'D23' });
    assert.deepEqual(resolveDataset({ section: 'S9', dataset: 'D99' }), { section: 'S9', dataset: 'D99' });
  });

  it('refuses an unknown code before any request', () => {
    assert.throws(() => resolveDataset('D25'), UnknownDatasetError);
  });
});
