import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwtPayload, jwtTimes, refreshDueAt, REFRESH_MARGIN_MS } from '../../src/auth/jwt.ts';

function jwt(payload: object): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}.c2ln`;
}

describe('JWT exp decoding', () => {
  it('reads exp and iat without verifying', () => {
    assert.deepEqual(jwtTimes(jwt({ exp: 2000, iat: 1100, lenderId: 'x' })), { exp: 2000, iat: 1100 });
    assert.equal(decodeJwtPayload(jwt({ lenderId: 'abc' }))?.lenderId, 'abc');
  });

  it('returns nothing for tokens that are not JWTs', () => {
    for (const token of ['', 'opaque', 'a.b', 'a.!!!.c', `a.${Buffer.from('[1]').toString('base64url')}.c`]) {
      assert.equal(decodeJwtPayload(token), undefined, token);
      assert.equal(refreshDueAt(token, 0), undefined);
    }
  });

  it('schedules renewal from the lifetime, independent of clock skew', () => {
    const received = 5_000_000;
    // 15 minutes: renew 30 s before the end, counting from a second less (iat is rounded down to
    // whole seconds, so up to a second may be gone on arrival).
    assert.equal(refreshDueAt(jwt({ iat: 100, exp: 100 + 900 }), received), received + 899_000 - REFRESH_MARGIN_MS);
    // 2 seconds, of which one is sure: renew at 80% of that, not 30 s before (at once, forever).
    assert.equal(refreshDueAt(jwt({ iat: 7, exp: 9 }), received), received + 800);
    // 1 second may already be over: renew at the first use.
    assert.equal(refreshDueAt(jwt({ iat: 7, exp: 8 }), received), received);
  });

  it('without iat, compares exp with the local clock', () => {
    assert.equal(refreshDueAt(jwt({ exp: 1000 }), 400_000), 400_000 + 600_000 - 30_000);
    assert.equal(refreshDueAt(jwt({ exp: 1 }), 400_000), undefined);
  });
});
