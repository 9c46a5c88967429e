// The scrubbing every message of the client goes through: known secrets and credential-shaped
// text are cut out of text, of errors (message, stack, fields, causes) and of what errors are
// built from, whoever builds them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { LenderClient } from '../../src/client/client.ts';
import {
  DatasetUnavailableError, LenderError, NetworkError, ServerError, ValidationError,
} from '../../src/core/errors.ts';
import { REDACTED, redactError, redactText } from '../../src/core/redact.ts';
import { errorFromResponse, excerpt } from '../../src/core/responses.ts';
import { oneLine, stackOf } from '../../repl/errors.ts';
import { findLeaks } from '../../src/session/secrets.ts';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJsZW5kZXJJZCI6IngiLCJ0eXAiOiJhY2Nlc3MifQ.c2lnbmF0dXJlLXZhbHVl';
const BEARER_LIKE = /Bearer\s+\S{8,}/i;
const JWT_LIKE = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;

/** Everything a user might print of an error. */
function rendered(error: unknown): string {
  const parts = [String(error), inspect(error, { depth: null }), inspect(error, { depth: null, showHidden: true }), JSON.stringify(error) ?? ''];
  for (let e: unknown = error; e instanceof Error; e = e.cause) parts.push(e.message, e.stack ?? '');
  return parts.join('\n');
}

function assertClean(text: string, secrets: readonly string[] = []): void {
  for (const s of secrets) assert.ok(!text.includes(s), 'a known secret survived');
  assert.doesNotMatch(text, BEARER_LIKE);
  assert.doesNotMatch(text, JWT_LIKE);
}

describe('redactText', () => {
  it('cuts known secrets, raw, inside JSON strings and URL-encoded', () => {
    const password = 'pa"ss w/ord\\1';
    const text = `raw=${password} json=${JSON.stringify({ password })} url=${encodeURIComponent(password)}`;
    const out = redactText(text, [password]);
    assert.equal(out, `raw=${REDACTED} json={"password":"${REDACTED}"} url=${REDACTED}`);
  });

  it('cuts bearer credentials of any case, scheme included, and JWTs whole or cut short', () => {
    for (const text of [`Authorization: Bearer ${JWT}`, 'authorization: bearer opaque-token-value-123', 'BEARER\tabcdefghijkl', `t=${JWT}`, `t=${JWT.split('.').slice(0, 2).join('.')}`]) {
      const out = redactText(text);
      assertClean(out);
      assert.ok(out.includes(REDACTED), out);
    }
  });

  it('keeps the rest of an echoed header dump readable', () => {
    const dump = JSON.stringify({ authorization: 'Bearer opaque-token-value-123', 'user-agent': 'lender-streams/0.1.0' });
    const out = redactText(dump);
    assert.equal(out, `{"authorization":"${REDACTED}","user-agent":"lender-streams/0.1.0"}`);
  });

  it('leaves ordinary text and short "secrets" alone', () => {
    const text = 'The service refused GET /admin/v3/lenders/x/exports/catalog (403: Forbidden); token renewed.';
    assert.equal(redactText(text, ['abc', undefined, '']), text);
    assert.equal(redactText('demo lender', ['demo']), 'demo lender');
  });

  it('a longer secret that contains a shorter one is cut whole', () => {
    assert.equal(redactText('x secret-value-long y', ['secret-value', 'secret-value-long']), `x ${REDACTED} y`);
  });
});

describe('what counts as a bearer credential', () => {
  // Prose that names the scheme: every LenderError message and REPL value goes through redactText.
  const ORDINARY = ['Missing bearer token.', 'The Bearer scheme is required', 'bearer bonds held: 5', 'Bearer abc1234', 'Bearer %20'];
  const CUT: [string, string][] = [
    ['Authorization: Bearer "tok123456"', `Authorization: ${REDACTED}`],
    ["Authorization: Bearer 'tok123456', next", `Authorization: ${REDACTED}, next`],
    ['{"echo":"Authorization: Bearer \\"tok123456\\""}', `{"echo":"Authorization: ${REDACTED}"}`],
    ['GET /cb?auth=Bearer%20tok123456&x=1', `GET /cb?auth=${REDACTED}&x=1`],
    ['GET /cb?auth=Bearer%20%22tok123456%22&x=1', `GET /cb?auth=${REDACTED}&x=1`],
    ['GET /cb?auth=Bearer%20tok%2Fabc%2B123%3D%3D&x=1', `GET /cb?auth=${REDACTED}&x=1`],
    ['Bearer abcdefgh==;', `${REDACTED};`],
    [`Authorization: Bearer ${REDACTED}`, `Authorization: ${REDACTED}`],
  ];

  it('leaves ordinary messages that name the scheme as they are, in errors and REPL output too', () => {
    for (const text of ORDINARY) {
      assert.equal(redactText(text), text);
      assert.equal(new LenderError(text).message, text);
      assert.equal(oneLine(new Error(text)), `Error: ${text}`);
      assert.deepEqual(findLeaks(text), [], text);
    }
  });

  it('cuts quoted and URL-encoded credentials, scheme and closing quote included', () => {
    for (const [text, expected] of CUT) {
      assert.equal(redactText(text), expected, text);
      assert.deepEqual(findLeaks(text), ['a bearer token'], text);
      assert.deepEqual(findLeaks(expected), [], expected);
    }
  });

  it('a secret known by value inside a quoted header goes with its scheme and quotes', () => {
    assert.equal(redactText('Authorization: Bearer "pa ss;word!"', ['pa ss;word!']), `Authorization: ${REDACTED}`);
  });

  it('findLeaks reports exactly what redactText cuts', () => {
    for (const text of [...ORDINARY, ...CUT.map(([t]) => t), `t=${JWT}`, `t=${JWT.split('.').slice(0, 2).join('.')}`, 'eyJhbGciOiJIUzI1NiJ9']) {
      assert.equal(findLeaks(text).length > 0, redactText(text) !== text, text);
    }
  });
});

describe('errors are scrubbed when they are made', () => {
  it('message, serverMessage and requestId of any LenderError', () => {
    const error = new LenderError(`refused (403: echo Bearer ${JWT})`, { serverMessage: `echo Bearer ${JWT}`, requestId: JWT });
    assertClean(rendered(error));
    assert.equal(error.serverMessage, `echo ${REDACTED}`);
    assert.equal(error.requestId, REDACTED);
  });

  it("a ValidationError's failures and a DatasetUnavailableError's code", () => {
    const v = new ValidationError('rejected', [{ accountId: JWT, errors: [`Authorization: Bearer ${JWT}`] }]);
    assert.deepEqual(v.failures, [{ accountId: REDACTED, errors: [`Authorization: ${REDACTED}`] }]);
    const d = new DatasetUnavailableError(JWT, 'not available');
    assert.equal(d.dataset, REDACTED);
  });

  it('a cause that is not a LenderError is kept as name, code, message and stack only, scrubbed', () => {
    const undiciLike = Object.assign(new Error(`socket closed after sending Bearer ${JWT}`), {
      name: 'SocketError', code: 'UND_ERR_SOCKET', headers: { authorization: `Bearer ${JWT}` }, socket: { remote: '127.0.0.1' },
    });
    undiciLike.cause = new Error(`inner ${JWT}`);
    const error = new NetworkError('Could not reach the service.', { cause: undiciLike });
    const cause = error.cause as Error & { code?: string; headers?: unknown };
    assert.equal(cause.name, 'SocketError');
    assert.equal(cause.code, 'UND_ERR_SOCKET');
    assert.equal(cause.headers, undefined);
    assert.match(cause.message, /socket closed after sending \[redacted\]/);
    assertClean(rendered(error));
  });

  it('a cause that is neither an error nor text is kept as its inspected text, scrubbed', () => {
    const error = new LenderError('failed', { cause: { reason: 'echo', headers: { authorization: `Bearer ${JWT}` }, attempt: 3 } });
    assert.equal(typeof error.cause, 'string');
    assert.match(error.cause as string, /reason: 'echo'/);
    assert.match(error.cause as string, /attempt: 3/);
    assertClean(String(error.cause));
  });

  it('a LenderError cause is kept as it is', () => {
    const inner = new ServerError('failed', { status: 500 });
    assert.equal(new LenderError('outer', { cause: inner }).cause, inner);
  });

  it('errorFromResponse on an echoing gateway: every status, JSON or not', () => {
    const echo = `Forbidden: authorization=Bearer ${JWT} body={"refreshToken":"${JWT}"}`;
    for (const status of [400, 401, 403, 404, 409, 500, 502, 504]) {
      for (const text of [JSON.stringify({ message: echo, requestId: JWT, errors: [{ accountId: JWT, errors: [echo] }] }), echo]) {
        for (const endpoint of ['login', 'refresh', 'accounts', 'export'] as const) {
          const error = errorFromResponse({ status, headers: { 'x-request-id': `Bearer ${JWT}` }, text }, { endpoint, method: 'GET', path: '/p' });
          assertClean(rendered(error));
        }
      }
    }
    assert.match(excerpt(echo), /\[redacted\]/);
  });
});

describe('redactError with known secrets', () => {
  it('rewrites message, stack, fields and the whole cause chain in place, and returns the error', () => {
    const password = 'hunter2-but-longer';
    const inner = new ValidationError(`bad ${password}`, [{ accountId: 'A-1', errors: [`echo ${password}`] }], { serverMessage: `echo ${password}` });
    const outer = new LenderError(`outer ${password}`, { cause: inner });
    assert.equal(redactError(outer, [password]), outer);
    const text = rendered(outer);
    assert.ok(!text.includes(password));
    assert.equal(inner.serverMessage, `echo ${REDACTED}`);
    assert.deepEqual(inner.failures[0]!.errors, [`echo ${REDACTED}`]);
    assert.ok(text.includes(REDACTED));
  });

  it('survives a cause cycle and values that are not errors', () => {
    const a = new Error('a secret-value-1');
    const b = new Error('b secret-value-1', { cause: a });
    a.cause = b;
    redactError(a, ['secret-value-1']);
    assert.equal(a.message, `a ${REDACTED}`);
    assert.equal(b.message, `b ${REDACTED}`);
    assert.equal(redactError('text', ['secret-value-1']), 'text');
    assert.equal(redactError(undefined, ['secret-value-1']), undefined);
  });
});

describe('the client knows its own secrets', () => {
  it('client.redact cuts the password and opaque (non-JWT) tokens it holds', async () => {
    const session = { token: 'opaque-access-token-0001', refreshToken: 'opaque-refresh-token-0002', lenderPublicId: 'L-1' };
    const client = LenderClient.resume({ authUrl: 'https://127.0.0.1:9', lender: 'demo', email: 'a@b.c', password: 'client-password-7', session });
    try {
      const out = client.redact(`pw=client-password-7 at=${session.token} rt=${session.refreshToken} jwt=${JWT}`);
      assert.equal(out, `pw=${REDACTED} at=${REDACTED} rt=${REDACTED} jwt=${REDACTED}`);
    } finally {
      await client.close();
    }
  });
});

describe('detection and REPL lines', () => {
  it('findLeaks reports a bearer credential; redacted text has none', () => {
    assert.deepEqual(findLeaks('Authorization: Bearer abcdefghijkl'), ['a bearer token']);
    assert.deepEqual(findLeaks(redactText('Authorization: Bearer abcdefghijkl')), []);
  });

  it("the REPL's one-line and stack forms scrub errors of any origin", () => {
    const error = new Error(`user code threw Bearer ${JWT}`, { cause: new Error(JWT) });
    for (const text of [oneLine(error), stackOf(error)]) {
      assertClean(text);
      assert.ok(text.includes(REDACTED));
    }
  });
});
